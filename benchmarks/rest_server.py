"""REST benchmark (issues 2 and 25): ``GET /channels`` pages per second on the platform against
a bare Starlette endpoint answering the same bytes, measured side by side in one run.

Goals (issue 25): the platform at >= 0.8 of the bare endpoint's rate, and p99 under 10 ms with
32 concurrent connections. Both run under uvicorn with the same loop and HTTP parser (uvloop
and httptools where installed). The repeated page is served from the platform's page cache
(as when a notebook re-runs a ranking), by the layer in front of its routing that answers a
cached page for an anonymous caller; a last line measures distinct queries, which all miss it.
Also prints how long seeding a 5,000-channel world takes (goal: well under 2 s). Servers run
in their own processes; runs alternate (A, B, A, B, ...) and the median rate of each is
compared, which keeps drift on a shared machine out of the ratio. Each round also drives
both with wrk (an external load generator written in C, when installed) on the same page,
and its ratio is printed beside the project's own.
"""

from __future__ import annotations

import functools
import os
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from urllib.parse import urlsplit

import httpx

from benchmarks import wrk
from benchmarks.http_load import LoadResult, load
from benchmarks.targets import running
from explorer.emulator import credentials
from explorer.emulator.categories import opening
from explorer.emulator.db.engine import Store
from explorer.emulator.world import seed_store

QUERY = "/channels?order=viewersTotal:desc&page=0"
ROUNDS = 5
SECONDS = 2.0
CONCURRENCY = 32
#: The goals: the platform's rate over the bare endpoint's, and its p99 in milliseconds.
RATIO_GOAL = 0.8
P99_GOAL_MS = 10.0


def seed_seconds(channels: int = 5000) -> float:
    """Seconds to seed a fresh in-memory world of ``channels`` channels (KDF included)."""
    started = time.perf_counter()
    store = Store(":memory:")
    seed_store(store, 0, channels, credentials.hash_password, opening)
    store.close()
    return time.perf_counter() - started


def cpu_seconds(pid: int) -> float:
    """User and system CPU seconds process ``pid`` has used so far (Linux: reads ``/proc``)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def measured(pid: int, run: Callable[[], LoadResult]) -> tuple[LoadResult, float]:
    """``run``'s result and the server ``pid``'s CPU microseconds per request during it: what
    a request costs the server, which a busy machine slows but does not inflate."""
    before = cpu_seconds(pid)
    result = run()
    return result, (cpu_seconds(pid) - before) / max(result.requests, 1) * 1e6


def _summary(name: str, runs: list[LoadResult]) -> str:
    rate = statistics.median(r.rate for r in runs)
    p50 = statistics.median(r.p50_ms for r in runs)
    p99 = statistics.median(r.p99_ms for r in runs)
    errors = sum(r.errors for r in runs)
    return (
        f"  {name:<28} {rate:8.0f} req/s   p50 {p50:6.2f} ms   p99 {p99:6.2f} ms   errors {errors}"
    )


def main() -> None:
    """Run the comparison and print rates, latencies and the ratio."""
    print("REST server: GET /channels (50 channels a page), 32 connections")
    print(f"  seeding 5,000 channels: {seed_seconds():.2f} s (goal < 2 s)")
    with running("platform", "5000") as (platform_url, platform_pid):
        body = httpx.get(platform_url + QUERY).content
        with tempfile.TemporaryDirectory() as folder:
            body_file = Path(folder) / "page.json"
            body_file.write_bytes(body)
            with running("bare", str(body_file)) as (bare_url, bare_pid):
                assert httpx.get(bare_url + QUERY).content == body
                ours: list[LoadResult] = []
                bare: list[LoadResult] = []
                cpu: dict[str, list[float]] = {"platform": [], "bare": []}
                external: dict[str, list[LoadResult]] = {"platform": [], "bare": []}
                load(platform_url + QUERY, CONCURRENCY, 1.0)
                load(bare_url + QUERY, CONCURRENCY, 1.0)
                for _ in range(ROUNDS):
                    for name, url, pid, runs in (
                        ("platform", platform_url, platform_pid, ours),
                        ("bare", bare_url, bare_pid, bare),
                    ):
                        result, micros = measured(
                            pid, functools.partial(load, url + QUERY, CONCURRENCY, SECONDS)
                        )
                        runs.append(result)
                        cpu[name].append(micros)
                        if wrk.available():
                            parts = urlsplit(url)
                            external[name].append(
                                wrk.run(
                                    f"{parts.scheme}://{parts.netloc}",
                                    [parts.path + QUERY],
                                    CONCURRENCY,
                                    SECONDS,
                                )
                            )
        # Every request a different query: each one misses the page cache.
        distinct = [
            f"{platform_url}/channels?order=viewersTotal:desc&limit={limit}&page={page}"
            for page in range(40)
            for limit in range(51, 101)
        ]
        cold = load(distinct, CONCURRENCY, 20.0, len(distinct))
    print(_summary("platform /channels", ours))
    print(_summary("bare Starlette, same bytes", bare))
    ratio = statistics.median(r.rate for r in ours) / statistics.median(r.rate for r in bare)
    p99 = statistics.median(r.p99_ms for r in ours)
    rounds = ", ".join(f"{a.rate / b.rate:.2f}" for a, b in zip(ours, bare, strict=True))
    print(
        f"  ratio platform/bare: {ratio:.2f} (goal >= {RATIO_GOAL}) "
        f"{'PASS' if ratio >= RATIO_GOAL else 'FAIL'}   (rounds {rounds}); "
        f"platform p99 {p99:.1f} ms (goal < {P99_GOAL_MS:g} ms) "
        f"{'PASS' if p99 < P99_GOAL_MS else 'FAIL'}"
    )
    if external["platform"]:
        print(_summary("wrk: platform /channels", external["platform"]))
        print(_summary("wrk: bare Starlette", external["bare"]))
        pairs = list(zip(external["platform"], external["bare"], strict=True))
        ratio = statistics.median(r.rate for r in external["platform"]) / statistics.median(
            r.rate for r in external["bare"]
        )
        print(
            f"  wrk ratio platform/bare: {ratio:.2f} (goal >= {RATIO_GOAL}) "
            f"{'PASS' if ratio >= RATIO_GOAL else 'FAIL'}   "
            f"(rounds {', '.join(f'{a.rate / b.rate:.2f}' for a, b in pairs)})"
        )
    else:
        print("  wrk: not installed (.ci/system-packages installs it), own generator only")
    ours_cpu, bare_cpu = (statistics.median(cpu[name]) for name in ("platform", "bare"))
    print(
        f"  server CPU a request: platform {ours_cpu:.1f} us, bare {bare_cpu:.1f} us "
        f"(bare/platform {bare_cpu / ours_cpu:.2f}, the same ratio free of the machine's load)"
    )
    print(_summary("platform, uncached queries", [cold]) + f"   ({cold.requests} distinct pages)")


if __name__ == "__main__":
    main()
