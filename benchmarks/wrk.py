"""wrk, an external load generator (Debian's ``wrk``), beside the project's own
(:mod:`benchmarks.http_load`): the same requests from a client written in C, so a figure does
not depend on the project measuring itself.

``.ci/system-packages`` installs it; without it :func:`available` is False and the suites say
so and go on with their own generator alone.

wrk starts every connection at once and sends each one's first request as it connects. A
server busy with the first connections' requests (uvicorn on uvloop, the platform or a bare
Starlette app alike) then takes up one more connection a loop turn, so the k-th connection's
first answer waits about k turns: with 32 connections and 1.2 ms a request, up to 0.7 s, a
few dozen such answers a round, which made wrk's p99 of a 6 s round about four times the own
generator's at the same rate (issue 42, ``docs/performance.md``). So each connection holds its
first request for ``HOLD`` seconds, while the server, still idle, takes up every connection;
the round runs ``HOLD`` longer and its rate counts the seconds after the hold only. One
thread (``-t1``): the server shares the machine's 2 cores with it.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import tempfile
from dataclasses import replace
from pathlib import Path

from benchmarks.http_load import LoadResult

#: Seconds each connection holds its first request, so that all are connected before any request
#: is sent (see above); whole, as wrk takes its duration in whole seconds.
HOLD = 1.0
#: How each of wrk's threads walks the paths (from its own start, each path once a lap) and
#: holds the first request of each of its connections (the first ``delay()`` calls).
_SCRIPT = """
local paths = {%s}
local threads = 0
function setup(thread)
  thread:set("start", threads * 7919)
  threads = threads + 1
end
function init(args)
  at = start or 0
  held = 0
end
function request()
  at = at %% #paths + 1
  return wrk.format("GET", paths[at])
end
function delay()
  if held < %d then
    held = held + 1
    return %d
  end
  return 0
end
"""
_UNITS = {"us": 1e-3, "ms": 1.0, "s": 1e3, "m": 60e3}


def available() -> bool:
    """Whether wrk is installed."""
    return shutil.which("wrk") is not None


def _lua(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _ms(text: str) -> float:
    number, unit = re.fullmatch(r"([0-9.]+)([a-z]+)", text).groups()  # type: ignore[union-attr]
    return float(number) * _UNITS[unit]


def parse(output: str) -> LoadResult:
    """A :class:`LoadResult` from wrk's report (run with ``--latency``)."""
    done = re.search(r"(\d+) requests in ([0-9.]+)(\w+),", output)
    percentile = dict(re.findall(r"^\s+(50|99)%\s+(\S+)\s*$", output, re.MULTILINE))
    if done is None or len(percentile) != 2:
        raise RuntimeError(f"wrk did not report its requests and latencies:\n{output}")
    failed = re.search(r"Non-2xx or 3xx responses: (\d+)", output)
    sockets = re.search(
        r"Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)", output
    )
    errors = int(failed.group(1)) if failed else 0
    errors += sum(map(int, sockets.groups())) if sockets else 0
    return LoadResult(
        int(done.group(1)),
        _ms(done.group(2) + done.group(3)) / 1e3,
        _ms(percentile["50"]),
        _ms(percentile["99"]),
        errors,
    )


def run(base: str, paths: list[str], connections: int = 32, seconds: float = 6.0) -> LoadResult:
    """Drive ``base`` + each of ``paths`` (cycled) with wrk: one thread, ``connections``
    keep-alive connections, for ``seconds`` after every connection is up (``HOLD``). A
    request is given a minute before wrk counts it as a timeout (an error, left out of the
    latencies): its default of 2 s would leave the slowest answers out of the p99."""
    with tempfile.TemporaryDirectory() as folder:
        script = Path(folder) / "paths.lua"
        lua = _SCRIPT % (",".join(_lua(p) for p in paths), connections, round(HOLD * 1e3))
        script.write_text(lua)
        done = subprocess.run(
            [
                *("wrk", "-t1", f"-c{connections}", f"-d{seconds + HOLD:g}s", "--timeout", "60s"),
                *("--latency", "-s", str(script), base),
            ],
            capture_output=True,
            text=True,
            timeout=seconds + 120,
            check=True,
        )
    result = parse(done.stdout)
    return replace(result, seconds=result.seconds - HOLD)
