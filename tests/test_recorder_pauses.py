"""Issue 36: a recorder paused again and again (its backlog read in a burst after each pause)
does not ratchet its resident memory up pause after pause.

In a 40-minute soak the recorder's resident size stepped up 16 MB after its third 20-second
pause and stayed. Here two ``explorer record`` processes record the same channels of one
platform at the same time, with a small tail so both are warm at once: one is paused with
SIGSTOP again and again, the other never. Measured on a shared 2-core machine (8 pauses of
20 s): the paused one rose from 179 to 195 MB by the fifth pause, then came back to 189 MB
(the unpaused one 178 to 182 MB): the allocators grow to the largest burst, then reuse it.

The world runs three times as fast as that measurement's (speed 90, three times the chat
budgets), so pauses of a third as long build the same backlog: the bytes waiting in a paused
recorder's sockets at the end of each pause, measured side by side on a loaded shared machine,
were 36 to 88 KB after 4 s in this world and 51 to 71 KB after 12 s in the old one (speed 30,
default budgets), and both drained within the settling seconds.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests import databases

pytestmark = pytest.mark.any_engine("a recorder's memory over pauses: the platform only feeds it")


#: Pauses of each half of the run, seconds each, and seconds to settle after each.
HALF, PAUSE, SETTLE = 3, 4.0, 3.0
#: The world's speed and chat budgets (messages a second, all channels and the busiest one):
#: three times speed 30's and the default budgets, so a pause of PAUSE builds the backlog
#: a pause three times as long did there.
SPEED, SIM_RATE, SIM_CHANNEL_RATE = 90, 180, 60
#: Rows the recordings' watches keep in memory: small, so they are warm within seconds.
TAIL = 2000
#: Growth over the second half of the pauses that is no ratchet (the soak's step was 16 MB).
LEVEL = 8.0


def rss(pid: int) -> float:
    """Resident memory of process ``pid`` in MB."""
    with open(f"/proc/{pid}/status") as status:
        return next(int(line.split()[1]) for line in status if line.startswith("VmRSS:")) / 1024


@pytest.mark.timeout(300)
@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="reads /proc")
def test_repeated_pauses_do_not_ratchet_a_recorders_memory(tmp_path: Path) -> None:
    """Over the second half of six pauses, a paused recorder's resident memory grows at most
    ``LEVEL`` MB, and at most half what it grew over the first half (a ratchet keeps
    climbing), while it and an unpaused twin record the same channels."""
    world = ("--db", databases.target(channels=2000), "--channels", "2000", "--speed", str(SPEED))
    world += ("--sim-rate", str(SIM_RATE), "--sim-channel-rate", str(SIM_CHANNEL_RATE))
    serve = subprocess.Popen(
        [sys.executable, "-m", "explorer.cli", "serve", "--port", "0", *world],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    assert serve.stdout is not None
    probe = (
        f"import sys; from explorer.cli import record, main; record.TAIL_ROWS = {TAIL}; "
        "raise SystemExit(main(sys.argv[1:]))"
    )
    recorders: list[subprocess.Popen[bytes]] = []
    try:
        line = ""
        while not line.startswith("REST "):
            line = serve.stdout.readline()
            assert line, "the platform did not start"
        url = line.split()[1]

        def flags(name: str) -> list[str]:
            return [str(tmp_path / name), "--top", "20", "--flush-every", "1s"]

        for name in ("paused", "twin"):
            recorders.append(
                subprocess.Popen(
                    [sys.executable, "-c", probe, "record", "--url", url, "--out", *flags(name)],
                    stdout=subprocess.DEVNULL,
                    stderr=subprocess.DEVNULL,
                )
            )
        paused, twin = recorders
        deadline = time.monotonic() + 60
        while not (tmp_path / "paused" / "events").exists():  # recording, and so warming
            assert time.monotonic() < deadline, "the recorder wrote nothing"
            time.sleep(0.2)
        time.sleep(5)  # its tail of TAIL rows fills (as 15 s did at a third of the rate)
        sizes = [rss(paused.pid)]
        for _ in range(2 * HALF):
            os.kill(paused.pid, signal.SIGSTOP)
            time.sleep(PAUSE)
            os.kill(paused.pid, signal.SIGCONT)
            time.sleep(SETTLE)
            sizes.append(rss(paused.pid))
        assert paused.poll() is None and twin.poll() is None
        first, second = sizes[HALF] - sizes[0], sizes[-1] - sizes[HALF]
        print(f"\npaused recorder, MB after each pause: {[round(s, 1) for s in sizes]}")
        print(f"its unpaused twin now: {rss(twin.pid):.1f} MB")
        assert second <= max(LEVEL, first / 2), sizes
    finally:
        for process in recorders:
            process.send_signal(signal.SIGCONT)
            process.send_signal(signal.SIGINT)
        for process in recorders:
            try:
                process.wait(30)
            except subprocess.TimeoutExpired:
                process.kill()
        serve.terminate()
        serve.wait(10)
