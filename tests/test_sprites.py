"""Builtin emoticons inline: the kernel fetches each sprite sheet once, off the caller's
thread, and cuts each emoticon into a small PNG ``data:`` URL; the browser then needs no
route to the platform. A sheet that cannot be had leaves the emoticons as text and is tried
again later."""

from __future__ import annotations

import base64
import io
import threading
from collections.abc import Iterator

import pytest
from PIL import Image

from explorer.emulator import Platform
from explorer.emulator.chat.emoticons import EMOTICONS, image
from explorer.views.rendering import sprite_url
from explorer.views.sprites import RETRY, SpriteSheets, download
from tests.clocks import ManualClock
from tests.databases import start
from tests.test_chat_client import wait_until


@pytest.fixture(scope="module")
def platform() -> Iterator[Platform]:
    """A small platform serving its sprite sheet."""
    with start(channels=50, rate_limits=False) as running:
        yield running


def pixels(data_url: str) -> tuple[tuple[int, int], bytes]:
    """The size and RGBA pixels of a PNG ``data:`` URL."""
    header, _, body = data_url.partition(",")
    assert header == "data:image/png;base64"
    decoded = Image.open(io.BytesIO(base64.b64decode(body))).convert("RGBA")
    return decoded.size, decoded.tobytes()


def test_emoticon_cut_from_the_sheet_is_the_platforms_own_image(platform: Platform) -> None:
    """Every builtin emoticon cut from the served sheet has the pixels of the platform's own
    image of it (its ``meta.emoticons`` PNG), and is a small data URL."""
    sheets = SpriteSheets()
    sheet = sprite_url(platform.base_url, "default")
    assert sheet is not None and sheets.load(sheet)
    for text, emoticon in EMOTICONS.items():
        coords = emoticon.coords
        rect = (coords["x"], coords["y"], coords["width"], coords["height"])
        cut = sheets.emoticon(sheet, rect)
        assert cut is not None and len(cut) < 3000, text
        assert pixels(cut) == pixels("data:image/png;base64," + image(text)), text


def test_first_ask_fetches_in_the_background_and_later_asks_get_the_image(
    platform: Platform,
) -> None:
    """The first ask answers None at once and starts the one download; once it is in, the
    image is there (a positive marker, no fixed wait), and the sheet was fetched once."""
    fetched: list[str] = []
    release = threading.Event()

    def fetch(url: str) -> bytes:
        fetched.append(url)
        release.wait(10)
        return download(url)

    sheets = SpriteSheets(fetch)
    sheet = f"{platform.root_url}/_latest/emoticons/default.png"
    assert sheets.emoticon(sheet, (0, 0, 24, 24)) is None
    assert sheets.emoticon(sheet, (24, 0, 24, 24)) is None  # still on its way: no second fetch
    release.set()
    assert wait_until(lambda: sheets.emoticon(sheet, (0, 0, 24, 24)), timeout=10)
    assert sheets.emoticon(sheet, (24, 0, 24, 24)) is not None
    assert fetched == [sheet]


def test_a_sheet_that_cannot_be_had_is_tried_again_after_a_while(platform: Platform) -> None:
    """A pack the platform does not have gives no image (its emoticons stay text) and no new
    download until RETRY seconds have passed (an injected clock)."""
    calls: list[str] = []

    def fetch(url: str) -> bytes:
        calls.append(url)
        return download(url)

    clock = ManualClock()
    sheets = SpriteSheets(fetch, clock)
    missing = f"{platform.root_url}/_latest/emoticons/nothing.png"
    assert not sheets.load(missing)
    assert sheets.emoticon(missing, (0, 0, 24, 24)) is None
    assert calls == [missing]
    clock.advance(RETRY + 1)
    assert sheets.emoticon(missing, (0, 0, 24, 24)) is None
    wait_until(lambda: len(calls) == 2, timeout=10)


def test_a_rectangle_off_the_sheet_gives_no_image(platform: Platform) -> None:
    """Coordinates beyond the sheet's edge give None rather than a padded image."""
    sheets = SpriteSheets()
    sheet = f"{platform.root_url}/_latest/emoticons/default.png"
    assert sheets.load(sheet)
    assert sheets.emoticon(sheet, (10_000, 0, 24, 24)) is None
