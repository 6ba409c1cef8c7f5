"""REST scale-out (issue 38): the default listing page (``GET /channels``) per second from one
REST process of a platform and from two sharing its port, rate limits on and counted in Redis,
measured side by side in one run; beside them one process counting in its own memory (no
Redis), what counting in Redis costs.

Each round drives the one process, then starts a second on its port (``SO_REUSEPORT``, see
``docs/platform.md``) and drives the port again, then stops it; the reference process is driven
in the same round. The load is wrk (an external generator written in C) when installed, else
the project's own; 32 keep-alive connections, which the kernel spreads over the processes
listening on the port. Printed: each configuration's median rate and p99, the ratio two/one
per round and its median, and the servers' CPU a request (the processes' own, summed: what a
request costs free of the machine's load).

Goal, from the measurement on a shared 2-core machine (the load generator and Redis take their
share of the same cores): two processes serve at least 1.3 times one process's rate. On more
cores the ratio grows towards 2 while Redis keeps up.
"""

from __future__ import annotations

import statistics
import tempfile
from collections.abc import Callable
from pathlib import Path
from urllib.parse import urlsplit

from benchmarks import wrk
from benchmarks.http_load import LoadResult, load
from benchmarks.rest_server import cpu_seconds
from benchmarks.targets import running
from explorer.emulator.fleet import RedisServer

QUERY = "/channels"
ROUNDS = 3
SECONDS = 3.0
CONNECTIONS = 32
#: The goal: two processes' rate over one's.
RATIO_GOAL = 1.3


def drive(base: str) -> LoadResult:
    """Load ``base`` + :data:`QUERY` for :data:`SECONDS` (wrk when installed)."""
    if wrk.available():
        parts = urlsplit(base)
        return wrk.run(
            f"{parts.scheme}://{parts.netloc}", [parts.path + QUERY], CONNECTIONS, SECONDS
        )
    return load(base + QUERY, CONNECTIONS, SECONDS)


def measured(pids: list[int], run: Callable[[], LoadResult]) -> tuple[LoadResult, float]:
    """``run``'s result and the CPU microseconds a request cost the processes ``pids``."""
    before = sum(cpu_seconds(pid) for pid in pids)
    result = run()
    spent = sum(cpu_seconds(pid) for pid in pids) - before
    return result, spent / max(result.requests, 1) * 1e6


def _line(name: str, runs: list[tuple[LoadResult, float]]) -> str:
    rate = statistics.median(result.rate for result, _ in runs)
    p99 = statistics.median(result.p99_ms for result, _ in runs)
    cpu = statistics.median(micros for _, micros in runs)
    errors = sum(result.errors for result, _ in runs)
    spread = ", ".join(f"{result.rate:.0f}" for result, _ in runs)
    return (
        f"  {name:<34} {rate:8.0f} req/s ({spread})   p99 {p99:6.2f} ms   "
        f"server CPU {cpu:6.1f} us a request   errors {errors}"
    )


def main() -> None:
    """Run the rounds and print rates, the ratio and CPU a request."""
    generator = "wrk" if wrk.available() else "own generator (wrk not installed)"
    print(f"REST scale-out: GET {QUERY}, {CONNECTIONS} connections, {generator}")
    runs: dict[str, list[tuple[LoadResult, float]]] = {"one": [], "two": [], "alone": []}
    redis = RedisServer().start()
    try:
        with tempfile.TemporaryDirectory() as folder:
            shared = str(Path(folder) / "shared.db")
            own = str(Path(folder) / "own.db")
            with (
                running("shared", shared, redis.url, "0") as (base, first),
                running("shared", own, "-", "0") as (alone_base, alone),
            ):
                port = str(urlsplit(base).port)
                drive(base), drive(alone_base)  # warm-up: pages cached, connections made
                for _ in range(ROUNDS):
                    runs["one"].append(measured([first], lambda: drive(base)))
                    with running("shared", shared, redis.url, port) as (joined, second):
                        assert joined == base
                        drive(base)
                        runs["two"].append(measured([first, second], lambda: drive(base)))
                    runs["alone"].append(measured([alone], lambda: drive(alone_base)))
    finally:
        redis.stop()
    print(_line("one process, limits in Redis", runs["one"]))
    print(_line("two processes, one port, Redis", runs["two"]))
    print(_line("one process, limits in process", runs["alone"]))
    ratios = [
        two.rate / one.rate for (one, _), (two, _) in zip(runs["one"], runs["two"], strict=True)
    ]
    ratio = statistics.median(ratios)
    print(
        f"  ratio two/one processes: {ratio:.2f} (goal >= {RATIO_GOAL}) "
        f"{'PASS' if ratio >= RATIO_GOAL else 'FAIL'}   "
        f"(rounds {', '.join(f'{r:.2f}' for r in ratios)})"
    )
    redis_cpu = statistics.median(micros for _, micros in runs["one"])
    local_cpu = statistics.median(micros for _, micros in runs["alone"])
    print(
        f"  counting in Redis costs a request {redis_cpu - local_cpu:.1f} us of server CPU "
        f"({redis_cpu / local_cpu:.2f} times the in-process count's)"
    )


if __name__ == "__main__":
    main()
