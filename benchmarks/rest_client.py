"""Benchmark: rank every channel into one DataFrame, the toolkit against two baselines.

One platform (5,000 channels, rate limits off) runs in a subprocess so it does not share the
GIL with the clients; all three contenders fetch the same pages (100 channels each, ordered by
``viewersTotal:desc``) from it in the same run, in interleaved rounds, and the median of each
is reported:

(a) the toolkit: ``explorer.connect(url).channels(order="viewersTotal:desc")``, client created
    and closed inside the timing;
(b) the naive loop: a fresh ``httpx.get`` per page, ``pd.json_normalize`` and ``pd.concat``;
(c) a bare keep-alive ``http.client`` loop that only downloads the pages, decoding nothing.

Goals: (b)/(a) >= 3 (the toolkit is three times faster than the naive loop) and (c)/(a) >=
0.7 (the toolkit runs at 70 % of the speed of merely downloading). Also printed: the toolkit
at other page concurrencies, and frame building alone (``tables.frame`` against
``json_normalize`` per page plus ``concat``) on the same records.

Two conditions: *cold*, where every contender's query is new to the platform (a no-op filter
``viewersTotal:gte:-N`` with a fresh N), so each page is encoded as on a live platform whose
numbers keep moving; and *warm*, the same query again, answered from the platform's page cache
in well under a millisecond, which leaves almost only client-side work to compare.

With limits off the platform answers ``X-RateLimit-Enforced: false``, so the toolkit never
waits for a bucket between rounds.
"""

from __future__ import annotations

import functools
import http.client
import itertools
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from urllib.parse import urlencode, urlsplit

import httpx
import orjson
import pandas as pd

import explorer
from explorer import schemas, tables
from explorer.settings import DEFAULT_CONCURRENCY

CHANNELS = 5000
PAGE = 100
ORDER = "viewersTotal:desc"
ROUNDS = 5
_FRESH = itertools.count(1)
CONCURRENCIES = (1, 4, 8)

_SERVER = f"""
import time
from explorer.emulator import start
platform = start(channels={CHANNELS}, rate_limits=False)
print("REST", platform.base_url, flush=True)
time.sleep(10**9)
"""


def serve() -> tuple[subprocess.Popen[str], str]:
    """Start the platform in a subprocess; return it and its base URL once it serves."""
    process = subprocess.Popen(
        [sys.executable, "-c", _SERVER],
        cwd=Path(__file__).resolve().parent.parent,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert process.stdout is not None
    line = process.stdout.readline()
    if not line.startswith("REST "):
        process.kill()
        raise RuntimeError(f"the platform did not start: {line!r}")
    return process, line.split()[1]


def fresh_filter() -> str:
    """A filter every channel passes that the platform has not seen yet (a cold query)."""
    return f"viewersTotal:gte:-{next(_FRESH)}"


def toolkit(base_url: str, where: str | None, concurrency: int = DEFAULT_CONCURRENCY) -> int:
    """(a) The toolkit's full ranking; the number of rows."""
    with explorer.Client(base_url, progress=False, concurrency=concurrency) as api:
        return len(api.channels(order=ORDER, where=where))


def _query(page: int, where: str | None) -> dict[str, str | int]:
    query: dict[str, str | int] = {"order": ORDER, "page": page, "limit": PAGE}
    if where is not None:
        query["where"] = where
    return query


def naive(base_url: str, where: str | None) -> int:
    """(b) A fresh ``httpx.get`` per page, normalised and concatenated page by page."""
    frames, page = [], 0
    while True:
        response = httpx.get(f"{base_url}/channels", params=_query(page, where))
        response.raise_for_status()
        rows = response.json()
        frames.append(pd.json_normalize(rows))
        page += 1
        if len(rows) < PAGE:
            break
    return len(pd.concat(frames, ignore_index=True))


def bare(base_url: str, where: str | None) -> int:
    """(c) Only download the pages over one keep-alive connection; the bytes received."""
    url = urlsplit(base_url)
    connection = http.client.HTTPConnection(url.netloc)
    received, page, pages = 0, 0, 1
    try:
        while page < pages:
            connection.request("GET", f"{url.path}/channels?{urlencode(_query(page, where))}")
            response = connection.getresponse()
            received += len(response.read())
            if page == 0:
                pages = -(-int(response.headers["X-Total-Count"]) // PAGE)
            page += 1
    finally:
        connection.close()
    return received


Contender = Callable[[str, str | None], object]


def race(base_url: str, contenders: dict[str, Contender], cold: bool) -> dict[str, float]:
    """Median seconds of each contender over ``ROUNDS`` interleaved rounds, after a warm-up."""
    times: dict[str, list[float]] = {name: [] for name in contenders}
    for round_ in range(ROUNDS + 1):
        for name, work in contenders.items():
            where = fresh_filter() if cold else None
            start = time.perf_counter()
            work(base_url, where)
            if round_:
                times[name].append(time.perf_counter() - start)
    return {name: statistics.median(values) for name, values in times.items()}


def frame_building(base_url: str) -> tuple[float, float]:
    """Median seconds to build the ranking frame from decoded pages: (tables.frame, naive)."""
    with httpx.Client(base_url=base_url) as client:
        pages = [
            orjson.loads(client.get("/channels", params=_query(p, None)).content)
            for p in range(-(-CHANNELS // PAGE))
        ]
    records = [r for page in pages for r in page]

    def median(work: Callable[[], object]) -> float:
        runs = []
        for _ in range(ROUNDS):
            start = time.perf_counter()
            work()
            runs.append(time.perf_counter() - start)
        return statistics.median(runs)

    fast = median(lambda: tables.frame(records, schemas.CHANNEL))
    slow = median(lambda: pd.concat([pd.json_normalize(p) for p in pages]))
    return fast, slow


def main() -> dict[str, float]:
    """Run the benchmark, print the table and ratios, and return the numbers."""
    contenders: dict[str, Contender] = {"toolkit": toolkit, "naive": naive, "bare": bare}
    by_concurrency: dict[str, Contender] = {
        str(n): functools.partial(toolkit, concurrency=n) for n in CONCURRENCIES
    }
    process, base_url = serve()
    try:
        cold = race(base_url, contenders, cold=True)
        warm = race(base_url, contenders, cold=False)
        scaling = race(base_url, by_concurrency, cold=True)
        fast, slow = frame_building(base_url)
    finally:
        process.kill()
        process.wait()
    results: dict[str, float] = {}
    print(f"REST client: rank {CHANNELS} channels into one DataFrame, median of {ROUNDS} rounds")
    print(f"  {'':40}{'cold':>9}{'warm':>9}")
    for label, name in (
        ("(a) toolkit channels()", "toolkit"),
        ("(b) naive httpx.get + json_normalize", "naive"),
        ("(c) bare http.client download only", "bare"),
    ):
        print(f"  {label:40}{cold[name]:8.3f}s{warm[name]:8.3f}s")
    for label, name, goal in (
        ("(b)/(a) times faster than naive", "naive", "goal >= 3"),
        ("(c)/(a) share of bare download speed", "bare", "goal >= 0.7"),
    ):
        ratios = [cold[name] / cold["toolkit"], warm[name] / warm["toolkit"]]
        print(f"  {label:40}{ratios[0]:9.2f}{ratios[1]:9.2f}   {goal}")
        results[f"{name}_ratio_cold"], results[f"{name}_ratio_warm"] = ratios
    print(
        "  toolkit by page concurrency (cold): "
        + ", ".join(f"{n}: {t:.3f} s" for n, t in scaling.items())
    )
    print(
        f"  frame building alone: tables.frame {fast * 1000:.0f} ms, "
        f"json_normalize + concat {slow * 1000:.0f} ms ({slow / fast:.1f}x)"
    )
    results.update({f"{name}_cold_s": t for name, t in cold.items()})
    results.update({f"{name}_warm_s": t for name, t in warm.items()})
    results.update({f"toolkit_c{n}_cold_s": t for n, t in scaling.items()})
    results.update(frame_s=fast, normalize_s=slow)
    return results


if __name__ == "__main__":
    main()
