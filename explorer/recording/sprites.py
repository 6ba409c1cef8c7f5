"""Sprite sheets kept with a capture, so a replay draws builtin emoticons with no platform.

A recording watch (``api.watch(to=...)``, ``explorer record``) copies the platform's builtin
packs' sheets (:data:`BUILTIN_PACKS`: a few kilobytes each, fetched by the kernel as the live
views fetch them, :mod:`explorer.views.sprites`) into the capture's ``sprites/`` folder as it
starts, each once per capture (a sheet already there is kept: the same pack on the same platform).
:func:`sheets` reads them back: a :class:`~explorer.views.sprites.SpriteSheets` whose sheets come
from that folder, never from the network, which ``Replay.widget()`` cuts the emoticons from.
Emoticons travel inline as ``data:`` URLs either way, so the addresses the replay names its
sheets by (under :data:`OFFLINE_BASE`) are only keys and never reach the browser. A capture
without a pack's sheet shows its emoticons as text.

:func:`keep` also stores other builtin packs (``packs=``); external packs (an ``http(s)``
address chosen by whoever made the pack) are never fetched by the kernel, as in the live
views.
"""

from __future__ import annotations

import asyncio
import logging
import os
import re
from collections.abc import Callable, Iterable
from urllib.parse import unquote, urlsplit

import httpx

from explorer.recording.storage import CaptureStore, open_store
from explorer.views.rendering import sprite_url
from explorer.views.sprites import SpriteSheets, download

log = logging.getLogger(__name__)

#: The capture's folder of sprite sheets, one ``<pack>.png`` each.
SPRITES = "sprites"
#: The builtin packs the platform serves (``/_latest/emoticons/<pack>.png``).
BUILTIN_PACKS: tuple[str, ...] = ("default",)
#: The platform a replay's sheets are named under: a key, never fetched (see above).
OFFLINE_BASE = "http://capture.invalid/api/v1"

_SHEET = re.compile(r"([A-Za-z0-9_-]{1,64})\.png")


def keep(
    store: CaptureStore,
    base_url: str,
    packs: Iterable[str] = BUILTIN_PACKS,
    fetch: Callable[[str], bytes] = download,
) -> list[str]:
    """Store the sheets of builtin ``packs`` from the platform at ``base_url`` in the
    capture's ``sprites/`` folder (those not there yet); the packs now kept. A sheet that
    cannot be had is logged and left out (its emoticons replay as text)."""
    kept: list[str] = []
    present = set(store.glob(f"{SPRITES}/*.png"))
    for pack in packs:
        url = sprite_url(base_url, pack)
        relative = f"{SPRITES}/{pack}.png"
        if url is None:
            continue
        if relative not in present:
            try:
                data = fetch(url)
                store.make_folders(SPRITES)
                store.write_whole(relative, data)
            except (httpx.HTTPError, OSError, ValueError) as exc:
                log.warning("explorer: the sprite sheet %s is not kept: %s", url, exc)
                continue
        kept.append(pack)
    return kept


async def keep_with(capture: str | os.PathLike[str], base_url: str) -> list[str]:
    """:func:`keep` the builtin packs in the capture at ``capture``, off the event loop."""
    return await asyncio.to_thread(keep, open_store(capture), base_url)


def sheets(capture: str | os.PathLike[str]) -> SpriteSheets:
    """The sprite sheets kept in ``capture`` (a path or URL), by the addresses
    :func:`~explorer.views.rendering.sprite_url` gives under :data:`OFFLINE_BASE`."""
    store = open_store(capture)

    def read(url: str) -> bytes:
        name = unquote(urlsplit(url).path.rpartition("/")[2])
        if not _SHEET.fullmatch(name):
            raise ValueError(f"{url} names no kept sheet")
        return store.read_bytes(f"{SPRITES}/{name}")

    return SpriteSheets(fetch=read)
