"""Page planning: which pages a listing fetches, and that reading a page does not hold a fetch."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import Any

from explorer.rest import pageplan
from explorer.rest.pacing import Status
from explorer.rest.progress import Progress


def test_the_next_page_downloads_while_a_page_is_read() -> None:
    """With one page in flight, page 2 is fetched while page 1 is still being read, and the
    pages come back in order."""
    fetched: list[int] = []
    second = asyncio.Event()

    async def fetch(query: Mapping[str, Any], _: Status) -> tuple[list[int], int | None]:
        fetched.append(query["page"])
        if query["page"] == 2:
            second.set()
        return [query["page"]] * 2, 6

    async def read(answer: list[int]) -> list[int]:
        if answer[0] == 1:  # a read holding the only place would wait here for ever
            await asyncio.wait_for(second.wait(), 30)
        return answer

    async def run() -> list[list[int]]:
        return await pageplan.collect(
            fetch,
            read,
            {},
            size=2,
            pages=None,
            max_rows=None,
            bar=Progress(False, "/channels"),
            concurrency=1,
        )

    assert asyncio.run(run()) == [[0, 0], [1, 1], [2, 2]]
    assert fetched == [0, 1, 2]
