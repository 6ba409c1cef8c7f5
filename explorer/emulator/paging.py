"""Paging shared by the lists under a channel: followers, hosters, related channels, users.

Every such list takes the platform's ``page`` (0-based) and ``limit`` (default 50, at most 100)
parameters, validated by the shared list-query grammar so bad values answer 400 exactly as on
``GET /channels``, and reports its total in ``X-Total-Count``. It serves no endpoint, so it
lives beside the resource groups rather than among them; it keeps each from re-inventing it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from explorer.emulator.context import Context
from explorer.emulator.db import channels
from explorer.emulator.policy import Param
from explorer.emulator.responses import JSONResponse
from explorer.emulator.shapes import render_channel
from explorer.wire.query import DEFAULT_LIMIT, MAX_LIMIT, MAX_PAGE, parse_list_query

PAGE_PARAMS = (
    Param("page", {"type": "integer", "minimum": 0, "maximum": MAX_PAGE}, "0-based page number"),
    Param(
        "limit",
        {"type": "integer", "minimum": 1, "maximum": MAX_LIMIT},
        f"page size (default {DEFAULT_LIMIT})",
    ),
)


@dataclass(frozen=True, slots=True)
class Page:
    """One requested slice of a list."""

    limit: int
    offset: int


def page_of(ctx: Context) -> Page:
    """The page the request asks for (400 for a malformed ``page``/``limit`` or any filter)."""
    query = parse_list_query(ctx.params, {}, ())
    return Page(query.limit, query.page * query.limit)


def paged(items: list[dict[str, Any]], total: int) -> JSONResponse:
    """One page of ``items`` with the list's ``total`` in ``X-Total-Count``."""
    return JSONResponse(items, headers={"X-Total-Count": str(total)})


def channel_page(
    ctx: Context,
    where: str,
    args: Sequence[Any],
    order: str,
    order_args: Sequence[Any] = (),
) -> JSONResponse:
    """A page of unsuspended channels matching ``where``, sorted by ``order`` then id (each
    clause with the arguments of its placeholders)."""
    page = page_of(ctx)
    rows = channels.listed_page(
        ctx.store, where, [*args, *order_args], order, page.limit, page.offset
    )
    total = channels.listed_count(ctx.store, where, args)
    types = ctx.services.types.all()
    return paged([render_channel(row, types) for row in rows], total)
