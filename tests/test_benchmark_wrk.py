"""The benchmarks read wrk's report: requests, seconds, p50 and p99, errors."""

from __future__ import annotations

import select
import socket
import threading

import pytest

from benchmarks import wrk

pytestmark = pytest.mark.any_engine("wrk against servers of the test's own, no platform")

#: How long the test's server waits, before each further accept, for a request that should
#: not come (well within the hold the test gives wrk).
WINDOW = 0.25

REPORT = """Running 6s test @ http://127.0.0.1:41629
  1 threads and 32 connections
  Thread Stats   Avg      Stdev     Max   +/- Stdev
    Latency    12.24ms   10.85ms   1.25s    94.99%
    Req/Sec     2.80k   300.00     3.10k    78.50%
  Latency Distribution
     50%  850.00us
     75%   14.41ms
     90%   21.04ms
     99%    1.25s
  16819 requests in 6.00s, 1.00GB read
  Socket errors: connect 0, read 1, write 0, timeout 2
  Non-2xx or 3xx responses: 4
Requests/sec:   2802.55
Transfer/sec:    170.00MB
"""


def test_a_report_reads_as_a_load_result() -> None:
    """Requests and seconds, the 50th and 99th percentiles in milliseconds whatever their unit,
    and socket errors plus non-2xx answers as errors."""
    result = wrk.parse(REPORT)
    assert (result.requests, result.seconds) == (16819, 6.0)
    assert result.p50_ms == pytest.approx(0.85) and result.p99_ms == pytest.approx(1250.0)
    assert result.errors == 7


def test_a_report_without_latencies_is_an_error() -> None:
    """A report missing its latency distribution (run without --latency) is refused."""
    with pytest.raises(RuntimeError, match="latencies"):
        wrk.parse(REPORT.replace("     99%    1.25s\n", ""))


def _received(conn: socket.socket, flags: int = 0) -> bytes:
    """What ``conn`` holds, empty once the client hung up (wrk resets its connections)."""
    try:
        return conn.recv(65536, flags)
    except ConnectionResetError:
        return b""


def _requests_before_all_connected(listener: socket.socket, connections: int) -> list[bool]:
    """Accept ``connections`` connections, before each further accept waiting up to
    ``WINDOW`` seconds for a request on one accepted already and noting whether one came
    (wrk's probe connection, opened and closed before the run, is left out); then answer
    every request until hung up."""
    accepted = [listener.accept()[0]]
    early: list[bool] = []
    while len(accepted) < connections:
        for conn in select.select(accepted, [], [], WINDOW)[0]:
            if not _received(conn, socket.MSG_PEEK):
                accepted.remove(conn)
                conn.close()
            else:
                early.append(True)
        accepted.append(listener.accept()[0])
    answer = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"
    while accepted:
        for conn in select.select(accepted, [], [])[0]:
            data = _received(conn)
            if not data:
                accepted.remove(conn)
                conn.close()
            for _ in range(data.count(b"\r\n\r\n")):
                conn.sendall(answer)
    return early


@pytest.mark.skipif(not wrk.available(), reason="wrk is not installed")
def test_no_request_is_sent_before_every_connection_is_up(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """wrk.run sends no request until every connection of the run is open, so a server slow
    to take up its connections does not hold their first answers (without the hold, wrk
    sends each connection's first request as it connects)."""
    monkeypatch.setattr(wrk, "HOLD", 3.0)
    with socket.create_server(("127.0.0.1", 0)) as listener:
        early: list[list[bool]] = []
        server = threading.Thread(
            target=lambda: early.append(_requests_before_all_connected(listener, 4)),
            daemon=True,  # left waiting in accept should wrk fail to connect
        )
        server.start()
        result = wrk.run(f"http://127.0.0.1:{listener.getsockname()[1]}", ["/a", "/b"], 4, 1)
        server.join(10)
    assert early == [[]]
    assert result.requests > 0 and result.errors == 0
