"""Page planning: every record of a listing, page after page, until done or a limit is reached.

The first page tells the page size and, through ``X-Total-Count``, how many pages remain; those
are fetched ``concurrency`` at a time and kept in order. Without a total, explicitly paged
listings continue page by page until a short one, others stop after the first answer. The
pages are returned in order, for one DataFrame built at the end (``rest/pagecolumns.py``); a
page is anything with a length, its number of records (decoded records, or a page Arrow read).

A page is fetched, then read (``read``: its answer made a page): only the fetch holds one of the
``concurrency`` places, so the next pages download while the pages before are read (Arrow's
reads run in a worker thread), instead of waiting for them.
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import Awaitable, Callable, Mapping, Sized
from typing import Any, TypeVar

from explorer.rest.pacing import Status
from explorer.rest.progress import Progress

P = TypeVar("P", bound=Sized)
A = TypeVar("A")
#: Fetches one page with the given query: its answer and the listing's total, if told.
PageFetch = Callable[[Mapping[str, Any], Status], Awaitable[tuple[A, int | None]]]
#: Reads one answer into a page.
PageRead = Callable[[A], Awaitable[P]]


async def collect(
    fetch: PageFetch[A],
    read: PageRead[A, P],
    params: Mapping[str, Any],
    *,
    size: int | None,
    pages: int | None,
    max_rows: int | None,
    bar: Progress,
    concurrency: int,
) -> list[P]:
    """Every page of a listing (see the module docstring), in order, enough for ``max_rows``
    records; ``size`` pages it explicitly (``page``/``limit``), without it the first answer
    decides the page size."""
    query = dict(params) if size is None else {**params, "page": 0, "limit": size}
    answer, total = await fetch(query, bar.status)
    first = await read(answer)
    found, size = [first], size or len(first)
    more = (
        "page" not in params
        and 0 < size == len(first)
        and pages != 1
        and (max_rows is None or size < max_rows)
    )
    if more and total is not None:
        wanted = total if max_rows is None else min(total, max_rows)
        count = math.ceil(wanted / size)
        count = count if pages is None else min(count, pages)
        if count > 1:
            bar.start(min(wanted, count * size), len(first))
            found += await _together(fetch, read, params, size, count, bar, concurrency)
    elif more and "page" in query:
        bar.start(None, len(first))
        found += await _in_turn(fetch, read, params, size, pages, max_rows, bar)
    return found


async def _together(
    fetch: PageFetch[A],
    read: PageRead[A, P],
    params: Mapping[str, Any],
    size: int,
    count: int,
    bar: Progress,
    concurrency: int,
) -> list[P]:
    """Pages 1 .. count-1, ``concurrency`` fetched at a time, in order."""
    gate = asyncio.Semaphore(concurrency)

    async def one(page: int) -> P:
        async with gate:
            answer, _ = await fetch(
                {**params, "page": page, "limit": size, "noCount": 1}, bar.status
            )
        records = await read(answer)
        bar.update(len(records))
        return records

    tasks = [asyncio.ensure_future(one(page)) for page in range(1, count)]
    try:
        return await asyncio.gather(*tasks)
    except BaseException:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        raise


async def _in_turn(
    fetch: PageFetch[A],
    read: PageRead[A, P],
    params: Mapping[str, Any],
    size: int,
    pages: int | None,
    max_rows: int | None,
    bar: Progress,
) -> list[P]:
    """Pages 1, 2, ... one after another until a short page (no total known)."""
    found: list[P] = []
    rows, page = size, 1
    while (pages is None or page < pages) and (max_rows is None or rows < max_rows):
        answer, _ = await fetch({**params, "page": page, "limit": size}, bar.status)
        records = await read(answer)
        found.append(records)
        bar.update(len(records))
        rows, page = rows + len(records), page + 1
        if len(records) < size:
            break
    return found
