"""Naming channels: what ``api.watch`` and ``api.track`` accept as "the channels", turned
into references (an id, or a token where no id is given).

A channel is named by its id (an int, or text of digits) or its token (other text); several
by an iterable of those or by a channels DataFrame (``api.channels(...)``, indexed by id, whose
``token`` column, if present, gives the tokens too).
"""

from __future__ import annotations

import numbers
from collections.abc import Awaitable, Iterable, Iterator, Mapping, Sequence
from typing import Any, Protocol, TypeAlias

import pandas as pd

from explorer.wire.numbers import identifier

#: A channel as the caller names it: its id or its token (name).
ChannelRef: TypeAlias = int | str
#: One channel, several, or a channels frame (None: none).
Channels: TypeAlias = ChannelRef | Iterable[ChannelRef] | pd.DataFrame | None


class ChannelListing(Protocol):
    """``api.channels`` as a coroutine function, in either client mode: how ``api.watch``'s top
    rule and ``api.track`` list channels."""

    def __call__(
        self,
        *,
        where: Mapping[str, Any] | None = None,
        order: str | None = None,
        fields: Sequence[str] | None = None,
        max_rows: int | None = None,
        progress: bool | None = None,
    ) -> Awaitable[pd.DataFrame]: ...


def refs(*channels: Channels) -> Iterator[tuple[ChannelRef, str | None]]:
    """``(id or token, token if known)`` of each channel named in ``channels``, in order;
    text of digits is an id. Raises ``ValueError`` for anything else than an id or a token."""
    for item in channels:
        if item is None:
            continue
        if isinstance(item, pd.DataFrame):
            tokens = item["token"] if "token" in item.columns else pd.Series(index=item.index)
            for channel, token in tokens.items():
                yield _ref(channel)[0], None if pd.isna(token) else str(token)
        elif isinstance(item, int | str):
            yield _ref(item)
        else:
            for ref in item:
                yield _ref(ref)


def _ref(ref: object) -> tuple[ChannelRef, str | None]:
    if isinstance(ref, str):
        number = identifier(ref)
        return (ref, ref) if number is None else (number, None)
    if isinstance(ref, numbers.Integral) and not isinstance(ref, bool):
        return int(ref), None
    raise ValueError(f"A channel is an id or a token, not {ref!r}.")
