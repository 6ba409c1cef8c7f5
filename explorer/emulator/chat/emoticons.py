"""The built-in emoticon pack ``default``: which texts are emoticons, where they sit on the
pack's sprite sheet, and a real PNG of each.

Chat messages name an emoticon by pack and sprite coordinates (platform.md, message
components); after ``attachEmotes`` they also carry the image itself as base64 PNG
(``meta.emoticons``). The whole sheet is served where the historical platform kept builtin
packs, ``/_latest/emoticons/default.png`` (:data:`routes`), so clients cut each emoticon from
it by its ``coords``. The images are drawn here in code (a 24x24 face or heart per emoticon,
encoded with zlib by a minimal PNG writer), so the pack ships no binary files and every image
really decodes as a PNG.
"""

from __future__ import annotations

import base64
import struct
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

PACK = "default"
SIZE = 24
_PER_ROW = 8
_YELLOW = (255, 204, 51, 255)
_INK = (60, 40, 20, 255)
_RED = (220, 40, 60, 255)
_BLUE = (80, 160, 255, 255)
_CLEAR = (0, 0, 0, 0)

Pixel = tuple[int, int, int, int]


@dataclass(frozen=True, slots=True)
class Emoticon:
    """One emoticon of the pack: its text and its cell on the sprite sheet."""

    text: str
    face: str
    index: int

    @property
    def coords(self) -> dict[str, int]:
        """The sprite-sheet rectangle, as message components carry it."""
        return {
            "x": (self.index % _PER_ROW) * SIZE,
            "y": (self.index // _PER_ROW) * SIZE,
            "width": SIZE,
            "height": SIZE,
        }


_FACES = (
    (":)", "smile"),
    (":D", "grin"),
    (":(", "frown"),
    (";)", "wink"),
    (":P", "tongue"),
    (":O", "surprised"),
    (":|", "flat"),
    ("B)", "cool"),
    ("<3", "heart"),
    (":'(", "cry"),
    ("XD", "laugh"),
    (":*", "kiss"),
)
#: Every emoticon of the pack by its text.
EMOTICONS: dict[str, Emoticon] = {
    text: Emoticon(text, face, index) for index, (text, face) in enumerate(_FACES)
}


def _png(width: int, height: int, pixel: Callable[[int, int], Pixel]) -> bytes:
    """A truecolour-with-alpha PNG of ``pixel(x, y)``."""
    rows = b"".join(
        b"\x00" + bytes(channel for x in range(width) for channel in pixel(x, y))
        for y in range(height)
    )

    def chunk(kind: bytes, data: bytes) -> bytes:
        return (
            struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
        )

    header = struct.pack(">IIBBBBB", width, height, 8, 6, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(rows, 9))
        + chunk(b"IEND", b"")
    )


def _near(x: float, y: float, cx: float, cy: float, r: float) -> bool:
    return (x - cx) ** 2 + (y - cy) ** 2 <= r * r


def _mouth(face: str, x: float, y: float) -> bool:
    """True where the mouth of ``face`` is drawn (face centred at 11.5, 11.5)."""
    dx = x - 11.5
    if face in ("smile", "wink", "cool", "cry"):
        return abs(dx) <= 5 and 14 <= y <= 17 and abs(y - (14 + (25 - dx * dx) / 9)) < 1.0
    if face in ("grin", "laugh", "tongue"):
        return abs(dx) <= 5 and 13 <= y <= 13 + (25 - dx * dx) / 6
    if face == "frown":
        return abs(dx) <= 5 and 14 <= y <= 18 and abs(y - (17 - (25 - dx * dx) / 9)) < 1.0
    if face in ("surprised", "kiss"):
        return _near(x, y, 11.5, 16, 2.5 if face == "surprised" else 1.5)
    return abs(dx) <= 4 and 15 <= y <= 16  # flat


def _eye(face: str, x: float, y: float) -> bool:
    if face == "cool":
        return 7 <= y <= 10 and 4 <= x <= 19
    if face == "laugh":
        return 8 <= y <= 9 and (6 <= x <= 9 or 14 <= x <= 17)
    left = _near(x, y, 8, 9, 1.6)
    right = _near(x, y, 15, 9, 1.6)
    if face == "wink":
        right = 14 <= x <= 17 and 9 <= y <= 9.9
    return left or right


def _draw(face: str) -> Callable[[int, int], Pixel]:
    def pixel(px: int, py: int) -> Pixel:
        x, y = px + 0.5, py + 0.5
        if face == "heart":
            u, v = (x - 12) / 8, (13 - y) / 8
            return _RED if (u * u + v * v - 0.3) ** 3 - u * u * v**3 <= 0 else _CLEAR
        if not _near(x, y, 12, 12, 11):
            return _CLEAR
        if face == "cry" and 13 <= x <= 15 and 11 <= y <= 15:
            return _BLUE
        if face == "tongue" and _near(x, y, 13, 18, 2.2):
            return _RED
        if _eye(face, x, y) or _mouth(face, x, y):
            return _INK
        return _YELLOW

    return pixel


@cache
def image(text: str) -> str:
    """The base64 PNG of the emoticon written ``text`` (``meta.emoticons`` values)."""
    return base64.b64encode(_png(SIZE, SIZE, _draw(EMOTICONS[text].face))).decode()


@cache
def sheet() -> bytes:
    """The pack's sprite sheet as PNG: every emoticon in its cell (:attr:`Emoticon.coords`)."""
    faces = [emoticon.face for emoticon in EMOTICONS.values()]
    rows = -(-len(faces) // _PER_ROW)

    def pixel(x: int, y: int) -> Pixel:
        index = (y // SIZE) * _PER_ROW + x // SIZE
        return _draw(faces[index])(x % SIZE, y % SIZE) if index < len(faces) else _CLEAR

    return _png(_PER_ROW * SIZE, rows * SIZE, pixel)


async def _sheet(request: Request) -> Response:
    if request.path_params["pack"] != f"{PACK}.png":
        return Response("No such emoticon pack.", 404, media_type="text/plain")
    return Response(sheet(), media_type="image/png", headers={"Cache-Control": "max-age=3600"})


#: The builtin packs' sprite sheets, at the web root.
routes = [Route("/_latest/emoticons/{pack}", _sheet, methods=["GET"])]
