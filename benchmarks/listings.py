"""Distinct listings benchmark (issues 25 and 42): ``GET /channels`` where every request is a
different filter and page, as when many notebooks ask different questions of one shared
platform. None of them can be answered from the page cache.

Goals: >= 3,000 req/s with p99 < 50 ms at 32 connections on the default world (50,000
channels), and p99 < 100 ms at a million channels (``python -m benchmarks listings --channels
1000000``). Each request is ``where=F:lt:N&order=F:desc&page=P`` for any sortable field ``F``
(every field ``where`` and ``order`` take: numbers, flags, text, times, nullable fields), a
bound ``N`` drawn from the data's own quantiles (a sample of 2,000 channels read through the
listing in id order, evenly spread) and a page ``P`` below 40, all seeded, so every run sends
the same requests. A bound drawn uniformly up to a field's largest value (this benchmark
before issue 42) matched nearly every channel, since most values are small: an easier load
than a user's. Rounds alternate the project's own load generator and wrk (when installed)
on the same requests; the server is ``explorer serve --no-simulate --no-rate-limits`` on a new
database file; every round is bounded in count and time. Each round also prints the server's
CPU time a request, which a shared machine's load slows less than the rate (a core's worth of
requests a second is a million over it). Its resident memory (now and at its peak) is printed
after the rounds.
"""

from __future__ import annotations

import argparse
import random
import statistics
import tempfile
from typing import Any
from urllib.parse import quote, urlsplit

import httpx

from benchmarks import wrk
from benchmarks.channel_scale import memory_mib, serving
from benchmarks.http_load import LoadResult, load
from benchmarks.rest_server import cpu_seconds
from explorer.wire.records import CHANNEL

#: Every field a listing filters and sorts by.
FIELDS = tuple(f.name for f in CHANNEL if f.filter)
SAMPLE_PAGES = 20
PAGES = 40
ROUNDS = 3
REQUESTS = 12_000
SECONDS = 6.0
CONCURRENCY = 32
DEFAULT_CHANNELS = 50_000
GOAL_RATE = 3000.0
GOAL_P99_MS = 50.0
#: At a million channels: the p99 alone.
GOAL_P99_MS_MILLION = 100.0


def sample(url: str) -> dict[str, list[Any]]:
    """Each field's values in a sample of the listed channels, sorted: ``SAMPLE_PAGES`` pages
    of 100 spread evenly over the listing in id order."""
    first = httpx.get(f"{url}/channels?order=id:asc&limit=100", timeout=60)
    pages = max(int(first.headers["x-total-count"]) // 100, 1)
    rows: list[dict[str, Any]] = []
    for index in range(SAMPLE_PAGES):
        page = index * pages // SAMPLE_PAGES
        got = httpx.get(f"{url}/channels?order=id:asc&limit=100&page={page}", timeout=60)
        rows += got.raise_for_status().json()
    return {
        name: sorted(row[name] for row in rows if row[name] is not None and _plain(row[name]))
        for name in FIELDS
    }


def _plain(value: Any) -> bool:
    """Whether ``value`` can be written in a ``where`` term (text with a comma or a
    semicolon would be read as two)."""
    return not isinstance(value, str) or ("," not in value and ";" not in value)


def _term(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return quote(str(value), safe=":")


def distinct_queries(values: dict[str, list[Any]], count: int, seed: int) -> list[str]:
    """``count`` different listing paths: a field of ``FIELDS``, a bound at a random quantile of
    its ``values``, a page below ``PAGES``."""
    chosen = random.Random(seed)
    fields = [name for name in FIELDS if values[name]]
    queries: set[str] = set()
    while len(queries) < count:
        name = chosen.choice(fields)
        bound = _term(chosen.choice(values[name]))
        page = chosen.randrange(PAGES)
        queries.add(f"/channels?where={name}:lt:{bound}&order={name}:desc&page={page}")
    return sorted(queries, key=lambda _: chosen.random())


def _line(name: str, run: LoadResult, micros: float) -> str:
    return (
        f"  {name:<5} {run.rate:7.0f} req/s   p50 {run.p50_ms:6.2f} ms   "
        f"p99 {run.p99_ms:6.2f} ms   errors {run.errors}   ({run.requests} requests, "
        f"server CPU {micros:.0f} us a request)"
    )


def main(args: list[str] | None = None) -> None:
    """Drive distinct listings against the platform and print rate, p99 and the verdict."""
    parser = argparse.ArgumentParser(prog="python -m benchmarks listings")
    parser.add_argument("--channels", type=int, default=DEFAULT_CHANNELS)
    options = parser.parse_args(args or [])
    million = options.channels >= 1_000_000
    print(
        f"Distinct listings: GET /channels, each a new filter and page, {CONCURRENCY} "
        f"connections, {options.channels:,} channels, bounds at the data's quantiles of "
        f"{len(FIELDS)} fields"
    )
    runs: dict[str, list[LoadResult]] = {"own": [], "wrk": []}
    cpu: dict[str, list[float]] = {"own": [], "wrk": []}
    with tempfile.TemporaryDirectory() as folder, serving(options.channels, folder) as served:
        url, pid, _ = served
        values = sample(url)
        parts = urlsplit(url)
        base = f"{parts.scheme}://{parts.netloc}"
        warm = [url + q for q in distinct_queries(values, 4000, seed=0)]
        load(warm, CONCURRENCY, 60.0 if million else 10.0)
        for round_ in range(1, ROUNDS + 1):
            for name in ("own", "wrk") if wrk.available() else ("own",):
                # Each generator its own requests: none answered from the other's pages.
                queries = distinct_queries(values, REQUESTS, seed=2 * round_ + (name == "wrk"))
                before = cpu_seconds(pid)
                if name == "own":
                    run = load([url + q for q in queries], CONCURRENCY, SECONDS, REQUESTS)
                else:
                    run = wrk.run(base, [parts.path + q for q in queries], CONCURRENCY, SECONDS)
                runs[name].append(run)
                cpu[name].append((cpu_seconds(pid) - before) / max(run.requests, 1) * 1e6)
        resident, peak = memory_mib(pid)
    for name, measured in runs.items():
        for run, micros in zip(measured, cpu[name], strict=True):
            print(_line(name, run, micros))
    print(f"  server resident memory {resident:.0f} MiB, peak {peak:.0f} MiB")
    if not runs["wrk"]:
        print("  wrk: not installed (.ci/system-packages installs it), own generator only")
    for name, measured in runs.items():
        if not measured:
            continue
        rate = statistics.median(r.rate for r in measured)
        p99 = statistics.median(r.p99_ms for r in measured)
        spread = (
            f"rounds {min(r.rate for r in measured):.0f}-{max(r.rate for r in measured):.0f}, "
            f"server CPU {statistics.median(cpu[name]):.0f} us a request"
        )
        if million:
            verdict = "PASS" if p99 < GOAL_P99_MS_MILLION else "FAIL"
            goal = f"p99 {p99:.1f} ms (goal < {GOAL_P99_MS_MILLION:.0f} ms)"
            print(f"  {name} median {rate:.0f} req/s ({spread}), {goal} {verdict}")
            continue
        verdict = "PASS" if rate >= GOAL_RATE and p99 < GOAL_P99_MS else "FAIL"
        print(
            f"  {name} median {rate:.0f} req/s ({spread}; goal >= {GOAL_RATE:.0f}), "
            f"p99 {p99:.1f} ms (goal < {GOAL_P99_MS:.0f} ms) {verdict}"
        )


if __name__ == "__main__":
    main()
