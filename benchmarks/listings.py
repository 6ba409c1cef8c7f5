"""Distinct listings benchmark (issue 25 item 2): ``GET /channels`` where every request is a
different filter, order and page, as when many notebooks ask different questions of one
shared platform. None of them can be answered from the page cache.

Goal: >= 3,000 req/s with p99 < 50 ms at 32 connections on the default world. Each request
is ``where=F:lt:N&order=F:desc&page=P`` for a sortable field ``F``, a bound ``N`` drawn across
the field's range and a page ``P`` (seeded, so every run sends the same requests). The server
runs in its own process; rounds are bounded in count and time.
"""

from __future__ import annotations

import random
import statistics

import httpx

from benchmarks.http_load import LoadResult, load
from benchmarks.targets import running

FIELDS = ("viewersTotal", "numFollowers", "viewersCurrent")
PAGES = 40
ROUNDS = 3
REQUESTS = 12_000
SECONDS = 6.0
CONCURRENCY = 32
GOAL_RATE = 3000.0
GOAL_P99_MS = 50.0


def distinct_queries(highest: dict[str, int], count: int, seed: int) -> list[str]:
    """``count`` different listing queries over ``FIELDS`` (bounds up to ``highest``)."""
    chosen = random.Random(seed)
    queries: set[str] = set()
    while len(queries) < count:
        name = chosen.choice(FIELDS)
        bound = chosen.randint(1, highest[name] + 1)
        page = chosen.randrange(PAGES)
        queries.add(f"/channels?where={name}:lt:{bound}&order={name}:desc&page={page}")
    return sorted(queries, key=lambda _: chosen.random())


def main() -> None:
    """Drive distinct listings against the platform and print rate, p99 and the verdict."""
    print(
        f"Distinct listings: GET /channels, each a new filter and page, {CONCURRENCY} connections"
    )
    runs: list[LoadResult] = []
    with running("platform") as (url, _):
        highest = {
            name: int(httpx.get(f"{url}/channels?order={name}:desc&limit=1").json()[0][name])
            for name in FIELDS
        }
        load([url + q for q in distinct_queries(highest, 2000, seed=0)], CONCURRENCY, 2.0)
        for round_ in range(1, ROUNDS + 1):
            urls = [url + q for q in distinct_queries(highest, REQUESTS, seed=round_)]
            runs.append(load(urls, CONCURRENCY, SECONDS, REQUESTS))
    for run in runs:
        print(
            f"  round: {run.rate:7.0f} req/s   p50 {run.p50_ms:6.2f} ms   "
            f"p99 {run.p99_ms:6.2f} ms   errors {run.errors}   ({run.requests} requests)"
        )
    rate = statistics.median(r.rate for r in runs)
    p99 = statistics.median(r.p99_ms for r in runs)
    verdict = "PASS" if rate >= GOAL_RATE and p99 < GOAL_P99_MS else "FAIL"
    print(
        f"  median {rate:.0f} req/s (goal >= {GOAL_RATE:.0f}), p99 {p99:.1f} ms "
        f"(goal < {GOAL_P99_MS:.0f} ms) {verdict}"
    )


if __name__ == "__main__":
    main()
