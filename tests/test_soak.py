"""The soak benchmark's memory verdict (``benchmarks/soak.py``) on samples whose answer is known:
growth is judged over the last half, only in runs long enough and only once a reader's log is
full; and how it finds the connections a node kill cuts. The soak itself lives in the
benchmark."""

from __future__ import annotations

import os
import socket
from contextlib import closing

import pytest

from benchmarks.soak import (
    JUDGED_MINUTES,
    MAX_GROWTH_MB,
    WARM_ROWS,
    Capture,
    established,
    peer_ports,
    resource_table,
    sockets,
    warm_up,
)

START = 1_000_000.0


def samples(
    role: str, minutes: float, growth: float, every: float = 5.0
) -> list[tuple[float, str, float, int]]:
    """Samples of ``role`` every ``every`` s for ``minutes``, resident memory rising
    steadily by ``growth`` MB over the run, open files level."""
    count = round(minutes * 60 / every) + 1
    return [(START + i * every, role, 150.0 + growth * i / (count - 1), 12) for i in range(count)]


def verdict(
    minutes: float, growth: float, warm: dict[str, float | None], role: str = "recorder"
) -> str:
    return resource_table(samples(role, minutes, growth), START, START + minutes * 60, warm)


def test_warm_reader_level_memory_passes(capsys: pytest.CaptureFixture[str]) -> None:
    """A reader whose log was full early and whose memory is level passes."""
    line = verdict(60, 1.0, {"recorder": START + 600})
    assert line == "memory and files flat over the last half"
    assert "PASS" in capsys.readouterr().out


def test_warm_reader_growing_memory_fails() -> None:
    """A warm reader growing by more than the goal over the last half fails."""
    line = verdict(60, 4 * MAX_GROWTH_MB, {"recorder": START + 600})
    assert line == "memory and files NOT flat over the last half"


def test_short_run_is_not_judged(capsys: pytest.CaptureFixture[str]) -> None:
    """A run shorter than JUDGED_MINUTES prints its growth but is not judged, not FAIL."""
    line = verdict(2, 4 * MAX_GROWTH_MB, {}, role="rest")
    out = capsys.readouterr().out
    assert line.startswith("memory and files not judged")
    assert f"not judged: run shorter than {JUDGED_MINUTES:g} minutes" in out
    assert "FAIL" not in out


def test_reader_full_after_the_half_is_not_judged(capsys: pytest.CaptureFixture[str]) -> None:
    """A reader whose log filled only after the half began is not judged, and the report says
    when it filled and how long a run would be judged."""
    line = verdict(20, 4 * MAX_GROWTH_MB, {"recorder": START + 14 * 60})
    out = capsys.readouterr().out
    assert "full only at 14.0 min, after the half (at this rate, run 28 minutes" in out
    assert "recorder" in line and "FAIL" not in out


def test_reader_never_full_is_not_judged() -> None:
    """A reader whose log never filled is not judged, beside processes that are."""
    rows = samples("recorder", 30, 4 * MAX_GROWTH_MB) + samples("rest", 30, 0.5)
    line = resource_table(rows, START, START + 1800, {"recorder": None})
    assert line == (
        "memory and files flat over the last half (not judged, still warming up: recorder)"
    )


def capture(warm: float | None, rows: int) -> Capture:
    return Capture("record", {}, set(), [], [], 0, [], 0.0, warm, rows)


def test_warm_up_says_when_the_log_was_full() -> None:
    """A capture whose log filled reports the minute it did."""
    assert warm_up(capture(START + 90, WARM_ROWS + 5), START, START + 600) == (
        f"record's log full ({WARM_ROWS:,} rows) at 1.5 min"
    )


def test_warm_up_of_a_log_never_full_says_what_run_would_judge_it() -> None:
    """A capture whose log never filled says how far it got and how long a run at this rate
    would be judged."""
    line = warm_up(capture(None, WARM_ROWS // 4), START, START + 600)
    assert f"{WARM_ROWS // 4:,} of {WARM_ROWS:,} rows in 10.0 min" in line
    assert "full at about 40 min, so its memory is judged in runs of 80 minutes" in line


def test_a_process_connections_are_counted_by_peer_port() -> None:
    """Two connections this process opened to a loopback port are counted against that port
    (the accepted ends, whose peers are ephemeral ports, are not)."""
    with closing(socket.create_server(("127.0.0.1", 0))) as server:
        port = server.getsockname()[1]
        with (
            closing(socket.create_connection(("127.0.0.1", port))) as one,
            closing(socket.create_connection(("127.0.0.1", port))) as two,
        ):
            accepted = [server.accept()[0] for _ in (one, two)]
            try:
                ports = peer_ports(sockets(os.getpid()))
            finally:
                for sock in accepted:
                    sock.close()
    assert ports[port] == 2


TABLE = """\
  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
   0: 0100007F:A001 0100007F:1F90 01 00000000:00000000 00:00000000 00000000     0        0 501 1 0
   1: 0100007F:A002 0100007F:1F90 01 00000000:00000000 00:00000000 00000000     0        0 502 1 0
   1: 0100007F:A002 0100007F:1F90 01 00000000:00000000 00:00000000 00000000     0        0 502 1 0
   2: 0100007F:A003 0100007F:1F90 06 00000000:00000000 03:00000451 00000000     0        0 0 3 0
   3: 0100007F:1F90 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 503 1 0
"""


def test_a_connection_listed_twice_in_the_table_is_counted_once() -> None:
    """A connection a table read lists twice (sockets came and went during the read) counts
    once; closing and listening sockets do not count."""
    assert established(TABLE) == {501: 0x1F90, 502: 0x1F90}
