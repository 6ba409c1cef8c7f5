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
0.7 (the toolkit runs at 70 % of the speed of merely downloading), "or the benchmark says
exactly where the rest goes and why it cannot be removed" (issue 25, item 4). Also printed:
the toolkit at other page concurrencies, and each part of (a) alone.

Two conditions: *cold*, where every contender's query is new to the platform (a no-op filter
``viewersTotal:gte:-N`` with a fresh N), so each page is encoded as on a live platform whose
numbers keep moving; and *warm*, the same query again, answered from the platform's page cache
in well under a millisecond, which leaves almost only client-side work to compare.

With limits off the platform answers ``X-RateLimit-Enforced: false``, so the toolkit never
waits for a bucket between rounds.

Where (a)'s time goes is measured part by part on fresh cold pages, one round after another,
with this process's CPU time beside each, (a) whole first in each round so that the verdict
compares times taken under the same load: the bare download and the toolkit's transport
(``explorer.rest.transport``: httpx with as many pages in flight as the toolkit, bytes only) side
by side, the decoding (orjson) and the frame building (``tables.frame``), and beside it the
textbook typed build of the same frame (one list per column, ``pd.array`` of the final dtype
each, checked equal to ``tables.frame``'s), the column lists alone, and, as untyped
references, ``DataFrame.from_records`` and ``json_normalize`` + ``concat``.

The 0.7 cannot be reached by a DataFrame of Python-decoded JSON: decoding alone costs more
than the goal leaves ((c) is about 15 ms on a quiet machine, orjson 20 ms). So the second
branch is judged, against a floor measured in the same run:

    floor = bare download (wall) + orjson decode (CPU) + the cheapest correct frame build (CPU)

where the cheapest correct frame build is the cheaper of ``tables.frame`` and the textbook
typed build. Beyond the floor (a)'s median in those rounds is split into: httpx over
``http.client`` (the transport's wall less the bare download's), waiting for a core (decode
and frame build, wall less CPU: nothing on a quiet machine, where the goal is judged),
``tables.frame`` over the cheapest build, freeing the decoded records and the frame (CPU:
(a) frees them before its clock stops, the parts above only after theirs, so it is timed
apart), and the rest (page planning, pacing, the client's set-up and close, the hand-off to
the toolkit's loop thread; negative when decoding overlaps pages still in flight). PASS
when (a) is within ``FLOOR_TOLERANCE`` (1.25x) of the floor plus httpx's overhead, the wait
and the freeing (the floor's parts, each timed alone, free their objects after their clocks
stop, so the floor leaves out a cost that (a) and any frame of Python-decoded JSON pays).
Why 1.25: the medians of five rounds compared here move by up to about 10 % from run
to run on a quiet machine ((c)/(a) read 0.13-0.16 over runs), and the verdict divides one
median by a sum of several others; 25 % holds that spread, while a frame build at
``json_normalize``'s speed (4x), or the transport's overhead doubled, still fails.

Why each part stays:

- the download is the platform's own time to answer; the floor starts from it;
- decoding: a frame of JSON needs its values as Python objects or columns; orjson is the
  fastest decoder to Python objects, and decoding to columns in C (Arrow's JSON reader) would
  need the platform to send newline-delimited JSON, not the arrays its API is specified with,
  and redo in Arrow the per-value rules of ``columns.py`` (wrong types left missing); about a
  quarter of its time is CPython's cyclic collector, woken by the 15,000 dicts it allocates,
  which a library should not switch off behind its caller's back;
- the frame build is one pass over every value per column (the column lists alone are most
  of it) plus one vectorised conversion per column; ``tables.frame`` reads columns with
  ``itemgetter`` in C and is cheaper than the textbook typed build;
- freeing: 15,000 decoded dicts and their values go back to the allocator one by one,
  whoever decoded them; what any frame of Python-decoded JSON pays once it is built;
- httpx's per-request work (about 0.6 ms CPU against ``http.client``'s 0.1: httpcore's pool
  on anyio, h11, cookies, the auth flow) goes only with httpx, which carries the sign-in,
  CSRF, retry and 429 handling; the transport already hands it one absolute URL per page.
"""

from __future__ import annotations

import asyncio
import functools
import http.client
import itertools
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import urlencode, urlsplit

import httpx
import orjson
import pandas as pd

import explorer
from explorer.core import loop
from explorer.core.settings import DEFAULT_CONCURRENCY, DEFAULT_TIMEOUT
from explorer.rest import schemas, tables
from explorer.rest.transport import Transport
from explorer.wire.routes import CHANNELS as CHANNELS_ROW

CHANNELS = 5000
PAGE = 100
ORDER = "viewersTotal:desc"
ROUNDS = 5
#: The issue's goal for (c)/(a), cold.
GOAL_SHARE = 0.7
#: The goal's second branch: (a) within this factor of the floor plus httpx's overhead.
FLOOR_TOLERANCE = 1.25
_FRESH = itertools.count(1)
R = TypeVar("R")
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


def race(
    base_url: str, contenders: dict[str, Contender], cold: bool
) -> tuple[dict[str, float], dict[str, float]]:
    """Median seconds of each contender over ``ROUNDS`` interleaved rounds, after a warm-up
    round, and the median CPU seconds this process spent on each."""
    times: dict[str, list[float]] = {name: [] for name in contenders}
    cpu: dict[str, list[float]] = {name: [] for name in contenders}
    for round_ in range(ROUNDS + 1):
        for name, work in contenders.items():
            where = fresh_filter() if cold else None
            start, started = time.perf_counter(), time.process_time()
            work(base_url, where)
            if round_:
                times[name].append(time.perf_counter() - start)
                cpu[name].append(time.process_time() - started)
    return (
        {name: statistics.median(values) for name, values in times.items()},
        {name: statistics.median(values) for name, values in cpu.items()},
    )


def transport_only(base_url: str, where: str | None) -> list[bytes]:
    """The toolkit's transport (``explorer.rest.transport``: httpx, one keep-alive pool, paced)
    fetching the pages of (a) as the toolkit does, as many in flight, decoding nothing."""

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
            pages = -(-CHANNELS // PAGE)
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


def decode_pages(bodies: list[bytes]) -> list[list[dict[str, object]]]:
    """Each page's records, as the toolkit decodes them."""
    return [orjson.loads(body) for body in bodies]


def normalize(pages: list[list[dict[str, object]]]) -> pd.DataFrame:
    """(b)'s frame building: ``json_normalize`` per page, then ``concat``."""
    return pd.concat([pd.json_normalize(page) for page in pages], ignore_index=True)


Layout = list[tuple[str, Any]]


def layout(table: pd.DataFrame) -> Layout:
    """The columns a ranking frame has, index first, with their dtypes."""
    return [(str(table.index.name), table.index.dtype), *table.dtypes.items()]


def column_lists(records: list[dict[str, Any]], columns: Layout) -> dict[str, list[Any]]:
    """One list per column of ``columns``, an embedded object's fields read through it: the
    one pass over every value that any frame of decoded records makes."""
    lists: dict[str, list[Any]] = {}
    for name, _ in columns:
        outer, _, inner = name.partition(".")
        lists[name] = (
            [(record.get(outer) or {}).get(inner) for record in records]
            if inner
            else [record.get(name) for record in records]
        )
    return lists


def typed(records: list[dict[str, Any]], columns: Layout) -> pd.DataFrame:
    """The textbook typed build, columns known in advance: one list per column, one
    ``pd.array`` of its final dtype each, one ``pd.DataFrame``."""
    lists = column_lists(records, columns)
    (index, index_dtype), *rest = columns
    return pd.DataFrame(
        {
            name: lists[name] if str(dtype) == "object" else pd.array(lists[name], dtype=dtype)
            for name, dtype in rest
        },
        index=pd.Index(lists[index], dtype=index_dtype, name=index),
    )


def breakdown(base_url: str) -> tuple[dict[str, float], dict[str, float]]:
    """(a) whole, then each of its parts alone, on fresh cold pages each round: the bare
    download beside the transport, decode and frame build, and the other frame builds of the
    same records; median wall and CPU seconds of each, after a warm-up round."""
    runs: dict[str, list[tuple[float, float]]] = {}
    columns: Layout = []
    # The previous round's bodies, pages, records and frame: (a) frees its own before its
    # clock stops, so they are freed on the clock too, after the next (a), which thus runs
    # beside them as before this part was timed.
    held: list[object] = []
    for _ in range(ROUNDS + 1):
        timed(runs, "toolkit", functools.partial(toolkit, base_url, fresh_filter()))
        if held:
            timed(runs, "free", held.clear)
        timed(runs, "bare", functools.partial(bare, base_url, fresh_filter()))
        download = functools.partial(transport_only, base_url, fresh_filter())
        bodies = timed(runs, "transport", download)
        pages = timed(runs, "decode", functools.partial(decode_pages, bodies))
        records = [record for page in pages for record in page]
        table = timed(runs, "frame", functools.partial(tables.frame, records, schemas.CHANNEL))
        if not columns:
            columns = layout(table)
            pd.testing.assert_frame_equal(typed(records, columns), table)
        timed(runs, "typed", functools.partial(typed, records, columns))
        timed(runs, "columns", functools.partial(column_lists, records, columns))
        timed(runs, "from_records", functools.partial(pd.DataFrame.from_records, records))
        timed(runs, "normalize", functools.partial(normalize, pages))
        held = [bodies, pages, records, table]
        del bodies, pages, records, table
    timed(runs, "free", held.clear)
    return (
        {name: statistics.median(w for w, _ in values[1:]) for name, values in runs.items()},
        {name: statistics.median(c for _, c in values[1:]) for name, values in runs.items()},
    )


def verdict(parts: dict[str, float], parts_cpu: dict[str, float]) -> dict[str, float]:
    """The floor, where (a)'s cold time goes beyond it, and the goal's second branch judged
    (see the module docstring); printed, and returned in milliseconds."""
    seconds = {
        "download": parts["bare"],
        "decode": parts_cpu["decode"],
        "frame": min(parts_cpu["frame"], parts_cpu["typed"]),
    }
    floor, toolkit_s = sum(seconds.values()), parts["toolkit"]
    seconds["httpx"] = parts["transport"] - parts["bare"]
    seconds["waiting"] = sum(parts[name] - parts_cpu[name] for name in ("decode", "frame"))
    seconds["frame_over"] = parts_cpu["frame"] - seconds["frame"]
    seconds["free"] = parts_cpu["free"]
    seconds["other"] = (
        toolkit_s
        - floor
        - sum(seconds[name] for name in ("httpx", "waiting", "frame_over", "free"))
    )
    ms = {name: value * 1000 for name, value in seconds.items()}
    floor_ms, toolkit_ms = floor * 1000, toolkit_s * 1000
    print(
        f"  floor: bare download {ms['download']:.0f} ms wall + orjson decode "
        f"{ms['decode']:.0f} ms CPU + cheapest correct frame build {ms['frame']:.0f} ms CPU "
        f"= {floor_ms:.0f} ms; (a) in the same rounds {toolkit_ms:.0f} ms, "
        f"{toolkit_ms / floor_ms:.2f}x the floor"
    )
    print("  where (a) goes beyond the floor (cold, ms):")
    for label, name in (
        ("httpx over http.client (transport - bare, wall)", "httpx"),
        ("waiting for a core (decode + frame, wall - CPU)", "waiting"),
        ("tables.frame over the cheapest build (CPU)", "frame_over"),
        ("freeing the decoded records and frame (CPU)", "free"),
        ("other: planning, pacing, client, loop hand-off", "other"),
    ):
        print(f"    {label:52}{ms[name]:+7.0f}")
    kept = floor_ms + ms["httpx"] + ms["waiting"] + ms["free"]
    ratio = toolkit_ms / kept
    passed = ratio <= FLOOR_TOLERANCE
    print(
        f"  (a) against the floor + httpx + waiting + freeing ({kept:.0f} ms): {ratio:.2f}x, "
        f"goal within "
        f"{FLOOR_TOLERANCE:g}x: "
        + (
            "PASS (goal's second branch: the rest is httpx's and the freeing, which stay)"
            if passed
            else "FAIL (more than the floor, httpx, the wait and the freeing)"
        )
    )
    return {
        **{f"{name}_ms": value for name, value in ms.items()},
        "floor_ms": floor_ms,
        "floor_ratio": ratio,
    }


def main() -> dict[str, float]:
    """Run the benchmark, print the table, ratios and breakdown, and return the numbers."""
    contenders: dict[str, Contender] = {"toolkit": toolkit, "naive": naive, "bare": bare}
    by_concurrency: dict[str, Contender] = {
        str(n): functools.partial(toolkit, concurrency=n) for n in CONCURRENCIES
    }
    process, base_url = serve()
    try:
        cold, cpu = race(base_url, contenders, cold=True)
        warm, _ = race(base_url, contenders, cold=False)
        scaling, _ = race(base_url, by_concurrency, cold=True)
        parts, parts_cpu = breakdown(base_url)
    finally:
        process.kill()
        process.wait()
    results: dict[str, float] = {}
    print(f"REST client: rank {CHANNELS} channels into one DataFrame, median of {ROUNDS} rounds")
    print(f"  {'':40}{'cold':>9}{'warm':>9}{'CPU cold':>10}")
    for label, name in (
        ("(a) toolkit channels()", "toolkit"),
        ("(b) naive httpx.get + json_normalize", "naive"),
        ("(c) bare http.client download only", "bare"),
    ):
        print(f"  {label:40}{cold[name]:8.3f}s{warm[name]:8.3f}s{cpu[name]:9.3f}s")
    for label, name, goal in (
        ("(b)/(a) times faster than naive", "naive", 3.0),
        ("(c)/(a) share of bare download speed", "bare", GOAL_SHARE),
    ):
        ratios = [cold[name] / cold["toolkit"], warm[name] / warm["toolkit"]]
        verdict_ = "PASS" if ratios[0] >= goal else "FAIL (first branch; second below)"
        print(f"  {label:40}{ratios[0]:9.2f}{ratios[1]:9.2f}   goal >= {goal:g} cold: {verdict_}")
        results[f"{name}_ratio_cold"], results[f"{name}_ratio_warm"] = ratios
    print(
        "  toolkit by page concurrency (cold): "
        + ", ".join(f"{n}: {t:.3f} s" for n, t in scaling.items())
    )
    print("  each part alone on the same cold pages (wall; CPU of this process):")
    for label, name in (
        ("bare download: http.client, one by one", "bare"),
        (f"transport: httpx, {DEFAULT_CONCURRENCY} pages in flight", "transport"),
        ("decode: orjson.loads per page", "decode"),
        ("frame build: tables.frame", "frame"),
        ("  textbook typed build (pd.array each)", "typed"),
        ("  the column lists alone (no dtypes)", "columns"),
        ("  DataFrame.from_records (untyped, nested)", "from_records"),
        ("  json_normalize + concat per page", "normalize"),
    ):
        print(f"    {label:44}{parts[name] * 1000:6.0f} ms{parts_cpu[name] * 1000:6.0f} ms CPU")
    spent = sum(parts_cpu[name] for name in ("transport", "decode", "frame"))
    print(
        f"    transport + decode + frame {spent * 1000:.0f} ms CPU against (a)'s "
        f"{cpu['toolkit'] * 1000:.0f} ms; (c) spends {cpu['bare'] * 1000:.0f} ms CPU, the rest "
        "of its time is the platform's"
    )
    building = parts_cpu["decode"] + parts_cpu["frame"]
    print(
        "  (c)/(a) bound by (a)'s CPU: "
        f"{cold['bare'] / max(cold['bare'], building + parts_cpu['transport']):.2f} as is, "
        f"{cold['bare'] / max(cold['bare'], building + cpu['bare']):.2f} if httpx cost what "
        "http.client does"
    )
    results.update(verdict(parts, parts_cpu))
    results.update({f"{name}_cold_s": t for name, t in cold.items()})
    results.update({f"{name}_cold_cpu_s": t for name, t in cpu.items()})
    results.update({f"{name}_warm_s": t for name, t in warm.items()})
    results.update({f"toolkit_c{n}_cold_s": t for n, t in scaling.items()})
    results.update({f"{name}_s": t for name, t in parts.items()})
    results.update({f"{name}_cpu_s": t for name, t in parts_cpu.items()})
    return results


if __name__ == "__main__":
    main()
