"""The benchmarks read wrk's report: requests, seconds, p50 and p99, errors."""

from __future__ import annotations

import pytest

from benchmarks import wrk

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
