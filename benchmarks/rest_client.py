"""Benchmark: rank every channel into one DataFrame, the toolkit against two baselines.

One platform (``explorer serve --channels N --no-simulate``, 5,000 by default; rate limits
off) runs in a subprocess so it does not share the GIL with the clients; the contenders fetch
the same pages (100 channels each, ordered by ``viewersTotal:desc``) from it in the same run,
in interleaved rounds, and the median of each is reported:

(a) the toolkit: ``explorer.connect(url).channels(order="viewersTotal:desc")``, client created
    and closed inside the timing;
(b) the naive loop: a fresh ``httpx.get`` per page, ``pd.json_normalize`` and ``pd.concat``
    (up to ``NAIVE_MAX`` channels: at a million it would take most of an hour);
(c) a bare keep-alive ``http.client`` loop that only downloads the pages, decoding nothing.

Goals: (b)/(a) >= 3 (the toolkit is three times faster than the naive loop) and (c)/(a) >=
0.7 (the toolkit runs at 70 % of the speed of merely downloading), cold, at 5,000 channels and
at a million (issues 25 and 42), each printed PASS or FAIL. Also printed: the toolkit at other
page concurrencies, and each part of (a) alone.

Two conditions: *cold*, where every contender's query is new to the platform (a no-op filter
``viewersTotal:gte:-N`` with a fresh N), so each page is encoded as on a live platform whose
numbers keep moving; and *warm*, the same query again, answered from the platform's page cache
in well under a millisecond, which leaves almost only client-side work to compare.

With limits off the platform answers ``X-RateLimit-Enforced: false``, so the toolkit never
waits for a bucket between rounds.

(a) reads each page into columns in native code as it arrives (``explorer/rest/pagecolumns.py``:
Arrow's JSON reader given the wire schema's types, in a worker thread) and builds the frame
from those columns: no Python dict per record. Where its time goes is measured part by part on
fresh cold pages, with this process's CPU time beside each: the bare download and the toolkit's
transport (``explorer.rest.transport``: httpx's client, its GETs on the lean keep-alive
connections of ``explorer/rest/keepalive.py``, as many pages in flight as the toolkit, bytes
only) side by side, the native read of the pages and the frame built from them, and
beside them the way the toolkit went before (orjson to 15,000 dicts, then ``tables.frame``),
checked equal to the native frame.
"""

from __future__ import annotations

import argparse
import asyncio
import functools
import http.client
import itertools
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from typing import TypeVar
from urllib.parse import urlencode, urlsplit

import httpx
import orjson
import pandas as pd

import explorer
from benchmarks.channel_scale import serving
from explorer.core import loop
from explorer.core.settings import DEFAULT_CONCURRENCY, DEFAULT_TIMEOUT
from explorer.rest import pagecolumns, schemas, tables
from explorer.rest.transport import Transport
from explorer.wire.routes import CHANNELS as CHANNELS_ROW

CHANNELS = 5000
#: Above this many channels the naive loop is left out (hours at a million).
NAIVE_MAX = 50_000
PAGE = 100
ORDER = "viewersTotal:desc"
ROUNDS = 5
#: Rounds at more than ``CHANNELS`` channels, without a warm-up round (a round of a million
#: downloads 1.3 GB: about a minute), and of the breakdown there.
LARGE_ROUNDS = 3
LARGE_PARTS_ROUNDS = 1
#: The issue's goal for (c)/(a), cold.
GOAL_SHARE = 0.7
_FRESH = itertools.count(1)
R = TypeVar("R")
CONCURRENCIES = (1, 4, 8)


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


def race(
    base_url: str, contenders: dict[str, Contender], cold: bool, rounds: int, warmup: int = 1
) -> tuple[dict[str, list[float]], dict[str, float]]:
    """Seconds of each contender in each of ``rounds`` interleaved rounds, after ``warmup``
    rounds, and the median CPU seconds this process spent on each."""
    times: dict[str, list[float]] = {name: [] for name in contenders}
    cpu: dict[str, list[float]] = {name: [] for name in contenders}
    for round_ in range(rounds + warmup):
        for name, work in contenders.items():
            where = fresh_filter() if cold else None
            start, started = time.perf_counter(), time.process_time()
            work(base_url, where)
            if round_ >= warmup:
                times[name].append(time.perf_counter() - start)
                cpu[name].append(time.process_time() - started)
    return times, {name: statistics.median(values) for name, values in cpu.items()}


def transport_only(base_url: str, where: str | None, channels: int) -> list[bytes]:
    """The toolkit's transport (``explorer.rest.transport``: httpx's client on kept connections,
    paced) fetching the pages of (a) as the toolkit does, as many in flight, decoding nothing."""

    async def download() -> list[bytes]:
        wire = Transport(
            base_url,
            token=None,
            credentials=None,
            progress=False,
            concurrency=DEFAULT_CONCURRENCY,
            timeout=DEFAULT_TIMEOUT,
            transport=None,
        )
        gate = asyncio.Semaphore(DEFAULT_CONCURRENCY)

        async def one(page: int, **more: int) -> bytes:
            async with gate:
                query = {**_query(page, where), **more}
                answer = await wire.send("GET", "/channels", CHANNELS_ROW.bucket, params=query)
                return answer.content

        try:
            first = await one(0)
            pages = -(-channels // PAGE)
            rest = await asyncio.gather(*(one(page, noCount=1) for page in range(1, pages)))
        finally:
            await wire.aclose()
        return [first, *rest]

    return loop.run(download())


def timed(runs: dict[str, list[tuple[float, float]]], name: str, work: Callable[[], R]) -> R:
    """Run ``work`` and append its wall and CPU seconds to ``runs[name]``; its result."""
    start, started = time.perf_counter(), time.process_time()
    result = work()
    runs.setdefault(name, []).append((time.perf_counter() - start, time.process_time() - started))
    return result


def read_pages(reader: pagecolumns.Reader, bodies: list[bytes]) -> list[pagecolumns.Page]:
    """The pages read by Arrow as the toolkit reads them arriving as many at once as it has in
    flight (here one batch after another)."""
    step = DEFAULT_CONCURRENCY
    pages = [
        page for i in range(0, len(bodies), step) for page in reader.pages(bodies[i : i + step])
    ]
    if any(page is None for page in pages):
        raise RuntimeError("a page of the platform's was not read natively")
    return [page for page in pages if page is not None]


def old_way(bodies: list[bytes]) -> pd.DataFrame:
    """The frame as the toolkit built it before: orjson to dicts, then ``tables.frame``."""
    records = [record for body in bodies for record in orjson.loads(body)]
    return tables.frame(records, schemas.CHANNEL)


def breakdown(
    base_url: str, channels: int, rounds: int, warmup: int = 1
) -> tuple[dict[str, float], dict[str, float]]:
    """(a) whole, then each of its parts alone, on fresh cold pages each round: the bare
    download beside the transport, the native read and frame, and the old way (up to
    ``NAIVE_MAX`` channels: a million dicts would take some GB); median wall and CPU seconds
    of each after ``warmup`` rounds. The native frame is checked equal to the old one in the
    first round."""
    runs: dict[str, list[tuple[float, float]]] = {}
    reader = pagecolumns.Reader(schemas.CHANNEL)
    for round_ in range(rounds + warmup):
        timed(runs, "toolkit", functools.partial(toolkit, base_url, fresh_filter()))
        timed(runs, "bare", functools.partial(bare, base_url, fresh_filter()))
        download = functools.partial(transport_only, base_url, fresh_filter(), channels)
        bodies = timed(runs, "transport", download)
        pages = timed(runs, "read", functools.partial(read_pages, reader, bodies))
        table = timed(runs, "frame", functools.partial(reader.frame, pages))
        if channels <= NAIVE_MAX:
            old = timed(runs, "old", functools.partial(old_way, bodies))
            if not round_:
                pd.testing.assert_frame_equal(table, old)
            del old
        del bodies, pages, table
    return (
        {name: statistics.median(w for w, _ in runs[name][warmup:]) for name in runs},
        {name: statistics.median(c for _, c in runs[name][warmup:]) for name in runs},
    )


def main(args: list[str] | None = None) -> dict[str, float]:
    """Run the benchmark, print the table, ratios and breakdown, and return the numbers."""
    parser = argparse.ArgumentParser(prog="python -m benchmarks rest_client")
    parser.add_argument("--channels", type=int, default=CHANNELS)
    channels = parser.parse_args(args or []).channels
    large = channels > CHANNELS
    rounds, warmup = (LARGE_ROUNDS, 0) if large else (ROUNDS, 1)
    contenders: dict[str, Contender] = {"toolkit": toolkit, "bare": bare}
    if channels <= NAIVE_MAX:
        contenders["naive"] = naive
    by_concurrency: dict[str, Contender] = {
        str(n): functools.partial(toolkit, concurrency=n) for n in CONCURRENCIES
    }
    with tempfile.TemporaryDirectory() as folder, serving(channels, folder) as served:
        base_url = served[0]
        cold_runs, cpu = race(base_url, contenders, True, rounds, warmup)
        warm_runs, _ = race(base_url, contenders, False, rounds) if not large else ({}, {})
        scaling_runs, _ = race(base_url, by_concurrency, True, rounds) if not large else ({}, {})
        parts, parts_cpu = breakdown(
            base_url, channels, LARGE_PARTS_ROUNDS if large else rounds, warmup
        )
    cold = {name: statistics.median(values) for name, values in cold_runs.items()}
    warm = {name: statistics.median(values) for name, values in warm_runs.items()}
    results: dict[str, float] = {}
    print(
        f"REST client: rank {channels:,} channels into one DataFrame, median of {rounds} "
        "rounds (in brackets: the range over rounds)"
    )
    print(f"  {'':40}{'cold':>9}{'warm':>9}{'CPU cold':>10}")
    for label, name in (
        ("(a) toolkit channels()", "toolkit"),
        ("(b) naive httpx.get + json_normalize", "naive"),
        ("(c) bare http.client download only", "bare"),
    ):
        if name in cold:
            hot = f"{warm[name]:8.3f}s" if name in warm else f"{'-':>9}"
            print(f"  {label:40}{cold[name]:8.3f}s{hot}{cpu[name]:9.3f}s")
    for label, name, goal in (
        ("(b)/(a) times faster than naive", "naive", 3.0),
        ("(c)/(a) share of bare download speed", "bare", GOAL_SHARE),
    ):
        if name not in cold:
            continue
        pairs = zip(cold_runs[name], cold_runs["toolkit"], strict=True)
        each = [other / mine for other, mine in pairs]
        ratio = cold[name] / cold["toolkit"]
        hot = f"{warm[name] / warm['toolkit']:9.2f}" if warm else f"{'-':>9}"
        print(
            f"  {label:40}{ratio:9.2f}{hot}   goal >= {goal:g} cold: "
            f"{'PASS' if ratio >= goal else 'FAIL'} (rounds {min(each):.2f}-{max(each):.2f})"
        )
        results[f"{name}_ratio_cold"] = ratio
        if warm:
            results[f"{name}_ratio_warm"] = warm[name] / warm["toolkit"]
    if scaling_runs:
        print(
            "  toolkit by page concurrency (cold): "
            + ", ".join(f"{n}: {statistics.median(t):.3f} s" for n, t in scaling_runs.items())
        )
    print("  each part alone on the same cold pages (wall; CPU of this process):")
    for label, name in (
        ("(a) whole, in the same rounds", "toolkit"),
        ("bare download: http.client, one by one", "bare"),
        (f"transport: toolkit's, {DEFAULT_CONCURRENCY} pages in flight", "transport"),
        (f"read: Arrow, {DEFAULT_CONCURRENCY} pages a call (pagecolumns)", "read"),
        ("frame from the read pages", "frame"),
        ("the old way: orjson dicts + tables.frame", "old"),
    ):
        if name in parts:
            wall, spent = parts[name] * 1000, parts_cpu[name] * 1000
            print(f"    {label:44}{wall:7.0f} ms{spent:7.0f} ms CPU")
    client = sum(parts_cpu[name] for name in ("transport", "read", "frame"))
    print(
        f"  native read + frame {(parts_cpu['read'] + parts_cpu['frame']) * 1000:.0f} ms CPU; "
        f"(c)/(a) bound by (a)'s CPU (transport + read + frame): "
        f"{cold['bare'] / max(cold['bare'], client):.2f}"
    )
    results.update({f"{name}_cold_s": t for name, t in cold.items()})
    results.update({f"{name}_cold_cpu_s": t for name, t in cpu.items()})
    results.update({f"{name}_warm_s": t for name, t in warm.items()})
    results.update({f"{name}_s": t for name, t in parts.items()})
    results.update({f"{name}_cpu_s": t for name, t in parts_cpu.items()})
    return results


if __name__ == "__main__":
    main(sys.argv[1:])
