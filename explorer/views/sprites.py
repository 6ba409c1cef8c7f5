"""Builtin emoticons as inline images: each one cut from its pack's sprite sheet by the kernel
and carried in the widget's HTML as a ``data:`` URL.

Why inline rather than the sheet's address: the browser showing a notebook often cannot reach
the platform the kernel talks to. On Binder or a JupyterHub the platform listens on the
container's loopback, which the user's browser is not on; a notebook saved with its outputs,
exported to HTML or shown on the documentation site outlives the platform. The kernel can
always reach it, so it fetches each sheet once (a few kilobytes), and every emoticon, cut out
and encoded once, travels with the HTML: a few hundred bytes each, where the whole sheet in
every image would be several kilobytes per emoticon per redraw. External packs (an
``http(s)`` address chosen by whoever made the pack) are left to the browser: fetching
addresses chosen by chatters from the kernel would let them make it reach into the user's
network.

A sheet is fetched off the caller's thread (the views render on the toolkit's event loop,
which must never wait for a download); until it arrives, or when it cannot be had (retried
after :data:`RETRY` seconds), :meth:`SpriteSheets.emoticon` answers None and the view shows
the emoticon's text. :data:`SHEETS` is the one cache of the process.
"""

from __future__ import annotations

import base64
import io
import logging
import threading
import time
from collections.abc import Callable

import httpx
from PIL import Image

log = logging.getLogger(__name__)

#: Seconds before a sheet that could not be fetched is tried again.
RETRY = 30.0
#: Seconds a sheet's download may take.
TIMEOUT = 10.0
#: The most bytes a sheet may have (the platform's are a few kilobytes).
MAX_SHEET = 4_000_000

Rect = tuple[int, int, int, int]


def download(url: str) -> bytes:
    """The sheet at ``url`` (raises for an error status or an oversized body)."""
    response = httpx.get(url, timeout=TIMEOUT)
    response.raise_for_status()
    if len(response.content) > MAX_SHEET:
        raise ValueError(f"{url} is {len(response.content):,} bytes, more than a sprite sheet")
    return response.content


class SpriteSheets:
    """Sprite sheets by address, fetched once each, and the emoticons cut from them as
    ``data:image/png`` URLs, each encoded once. ``fetch`` downloads a sheet (the platform's,
    over HTTP); ``clock`` (monotonic seconds) times retries."""

    def __init__(
        self,
        fetch: Callable[[str], bytes] = download,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._fetch = fetch
        self._clock = clock
        self._lock = threading.Lock()
        self._sheets: dict[str, Image.Image] = {}
        self._failed: dict[str, float] = {}
        self._loading: set[str] = set()
        self._cut: dict[tuple[str, Rect], str | None] = {}

    @property
    def loaded(self) -> int:
        """How many sheets are here: a view redraws when it grows, so emoticons shown as
        text while their sheet was on its way become images even in a quiet chat."""
        return len(self._sheets)

    def emoticon(self, sheet: str, rect: Rect) -> str | None:
        """The ``data:`` URL of the ``(x, y, width, height)`` rectangle of the sheet at
        ``sheet``; None while the sheet is on its way (its download starts in the
        background) or when it could not be had, or the rectangle is off the sheet."""
        key = (sheet, rect)
        with self._lock:
            if key in self._cut:
                return self._cut[key]
            image = self._sheets.get(sheet)
            if image is None:
                self._start(sheet)
                return None
        cut = _encode(image, rect)
        with self._lock:
            self._cut[key] = cut
        return cut

    def _start(self, sheet: str) -> None:
        """Download ``sheet`` on a thread of its own unless that runs or failed lately (the
        lock is held)."""
        failed = self._failed.get(sheet)
        if sheet in self._loading or (failed is not None and self._clock() < failed + RETRY):
            return
        self._loading.add(sheet)
        threading.Thread(target=self.load, args=(sheet,), daemon=True).start()

    def load(self, sheet: str) -> bool:
        """Fetch and decode ``sheet`` now, unless it is already here; whether it is."""
        with self._lock:
            if sheet in self._sheets:
                return True
        try:
            image = Image.open(io.BytesIO(self._fetch(sheet)))
            image.load()
        except Exception as exc:  # any failure leaves the emoticons as text, said once
            log.warning("explorer: emoticons stay text, no sprite sheet at %s: %s", sheet, exc)
            with self._lock:
                self._failed[sheet] = self._clock()
                self._loading.discard(sheet)
            return False
        with self._lock:
            self._sheets[sheet] = image.convert("RGBA")
            self._failed.pop(sheet, None)
            self._loading.discard(sheet)
        return True


def _encode(image: Image.Image, rect: Rect) -> str | None:
    """The rectangle of ``image`` as a PNG ``data:`` URL (None when it is off the image)."""
    x, y, width, height = rect
    if x + width > image.width or y + height > image.height:
        return None
    buffer = io.BytesIO()
    image.crop((x, y, x + width, y + height)).save(buffer, format="PNG", optimize=True)
    return "data:image/png;base64," + base64.b64encode(buffer.getvalue()).decode()


#: The process's sprite sheets: every view of every chat shares them.
SHEETS = SpriteSheets()
