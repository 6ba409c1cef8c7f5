"""The built-in emoticon pack ``default``: which texts are emoticons, where they sit on the
pack's sprite sheet, and a real PNG of each.

Chat messages name an emoticon by pack and sprite coordinates (platform.md, message
components); after ``attachEmotes`` they also carry the image itself as base64 PNG
(``meta.emoticons``). The whole sheet is served where the historical platform kept builtin
packs, ``/_latest/emoticons/default.png`` (:data:`routes`), so clients cut each emoticon from
it by its ``coords``; ``/_latest/emoticons/manifest.json`` lists the pack's emoticons and
cells (:func:`manifest`). The pack has the classic text faces (``:)``, ``<3``, ...) and named
emotes typed as one word (``PogFace``, ``LulFace``, ...), as a platform's global emotes are,
so chat can use emotes as often as real chat does (``explorer.emulator.chatter``). The images
are drawn here in code (a 24x24 face or heart per emoticon, in a colour, with extras such as
tears or heart eyes, encoded with zlib by a minimal PNG writer), so the pack ships no binary
files and every image really decodes as a PNG.
"""

from __future__ import annotations

import base64
import math
import struct
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

Pixel = tuple[int, int, int, int]

PACK = "default"
SIZE = 24
_PER_ROW = 8
_YELLOW = (255, 204, 51, 255)
_INK = (60, 40, 20, 255)
_RED = (220, 40, 60, 255)
_BLUE = (80, 160, 255, 255)
_ORANGE = (255, 150, 40, 255)
_GREEN = (120, 200, 90, 255)
_PALE_BLUE = (150, 200, 240, 255)
_PURPLE = (180, 130, 230, 255)
_GREY = (170, 170, 160, 255)
_PINK = (255, 130, 150, 255)
_GOLD = (250, 210, 0, 255)
_CLEAR = (0, 0, 0, 0)


@dataclass(frozen=True, slots=True)
class Emoticon:
    """One emoticon of the pack: its text, its look and its cell on the sprite sheet.

    ``face`` names the eyes and mouth, ``skin`` the face's colour and ``extra`` what is drawn
    over it (tears, heart eyes, a flame, ...; :func:`_draw`)."""

    text: str
    face: str
    index: int
    skin: Pixel = _YELLOW
    extra: str = ""

    @property
    def coords(self) -> dict[str, int]:
        """The sprite-sheet rectangle, as message components carry it."""
        return {
            "x": (self.index % _PER_ROW) * SIZE,
            "y": (self.index // _PER_ROW) * SIZE,
            "width": SIZE,
            "height": SIZE,
        }


_FACES: tuple[tuple[str, str, Pixel, str], ...] = (
    (":)", "smile", _YELLOW, ""),
    (":D", "grin", _YELLOW, ""),
    (":(", "frown", _YELLOW, ""),
    (";)", "wink", _YELLOW, ""),
    (":P", "tongue", _YELLOW, ""),
    (":O", "surprised", _YELLOW, ""),
    (":|", "flat", _YELLOW, ""),
    ("B)", "cool", _YELLOW, ""),
    ("<3", "heart", _RED, ""),
    (":'(", "cry", _YELLOW, ""),
    ("XD", "laugh", _YELLOW, ""),
    (":*", "kiss", _YELLOW, ""),
    # Named emotes, typed as one word like a platform's global emotes (case matters).
    ("PogFace", "surprised", _ORANGE, "sparkle"),
    ("LulFace", "laugh", _YELLOW, "tears"),
    ("HypeFace", "grin", _ORANGE, "flame"),
    ("SadFace", "frown", _PALE_BLUE, "tears"),
    ("RageFace", "frown", _RED, "brows"),
    ("ThinkFace", "flat", _YELLOW, "hand"),
    ("HeartEyes", "grin", _YELLOW, "hearts"),
    ("CoolCat", "cool", _GREEN, "ears"),
    ("WaveHi", "smile", _YELLOW, "hand"),
    ("ClapClap", "grin", _YELLOW, "hands"),
    ("FireUp", "grin", _YELLOW, "flame"),
    ("SaltyFace", "flat", _GREY, "brows"),
    ("SleepyFace", "sleepy", _PALE_BLUE, "zzz"),
    ("SweatFace", "flat", _YELLOW, "sweat"),
    ("WowFace", "surprised", _PURPLE, "sparkle"),
    ("DeadFace", "dead", _GREY, ""),
    ("BlushFace", "smile", _YELLOW, "blush"),
    ("GoodGame", "smile", _GREEN, "hands"),
    ("EasyWin", "cool", _ORANGE, ""),
    ("CryLaugh", "laugh", _PALE_BLUE, "tears"),
)
#: Every emoticon of the pack by its text.
EMOTICONS: dict[str, Emoticon] = {
    text: Emoticon(text, face, index, skin, extra)
    for index, (text, face, skin, extra) in enumerate(_FACES)
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
    if face in ("laugh", "sleepy"):
        return 8 <= y <= 9 and (6 <= x <= 9 or 14 <= x <= 17)
    if face == "dead":
        return 6 <= y <= 11 and any(
            abs(abs(x - cx) - abs(y - 8.5)) < 0.8 for cx in (8, 15) if abs(x - cx) <= 2.5
        )
    left = _near(x, y, 8, 9, 1.6)
    right = _near(x, y, 15, 9, 1.6)
    if face == "wink":
        right = 14 <= x <= 17 and 9 <= y <= 9.9
    return left or right


def _heart(x: float, y: float, cx: float, cy: float, scale: float) -> bool:
    """True inside a heart centred at (cx, cy), ``scale`` pixels across its lobes."""
    u, v = (x - cx) / scale, (cy + 1 - y) / scale
    return (u * u + v * v - 0.3) ** 3 - u * u * v**3 <= 0


def _outside(extra: str, x: float, y: float) -> Pixel | None:
    """The colour ``extra`` gives a pixel beyond the face's circle, if any."""
    if extra == "sparkle" and any(
        abs(x - cx) + abs(y - cy) <= 2.5 and min(abs(x - cx), abs(y - cy)) < 0.6
        for cx, cy in ((3, 3), (21, 4))
    ):
        return _GOLD
    if extra == "ears" and y <= 8 and any(abs(x - cx) <= (8 - y) / 2 for cx in (4, 20)):
        return _GREEN
    if extra == "zzz" and 17 <= x <= 23 and y <= 6 and (y <= 1 or y >= 5 or abs(x + y - 23) < 1):
        return _INK
    return None


def _over(extra: str, x: float, y: float) -> Pixel | None:
    """The colour ``extra`` gives a pixel on the face, drawn over eyes and mouth."""
    if extra == "tears" and (4 <= x <= 6 or 17 <= x <= 19) and 10 <= y <= 16:
        return _BLUE
    if extra == "hearts" and (_heart(x, y, 7.5, 8.5, 4) or _heart(x, y, 16.5, 8.5, 4)):
        return _RED
    if extra == "flame" and y <= 7 and abs(x - 12) <= y * 0.9 + abs(math.sin(x)):
        return _RED if abs(x - 12) > y * 0.45 else _GOLD
    # Brows slanting down towards the nose, one each side of it.
    slant = 3 + (7 - abs(x - 12)) / 2
    if extra == "brows" and 1 < abs(x - 12) <= 7 and 5 <= y <= 6.5 and abs(y - slant) < 0.8:
        return _INK
    if extra == "hand" and _near(x, y, 18, 19, 3.5):
        return _INK if not _near(x, y, 18, 19, 2.6) else _YELLOW
    if extra == "hands" and (_near(x, y, 5, 19, 3.2) or _near(x, y, 19, 19, 3.2)):
        return _INK if not (_near(x, y, 5, 19, 2.3) or _near(x, y, 19, 19, 2.3)) else _YELLOW
    if extra == "sweat" and _near(x, y, 19, 6, 1.8):
        return _BLUE
    if extra == "blush" and (_near(x, y, 6, 14, 1.8) or _near(x, y, 18, 14, 1.8)):
        return _PINK
    return None


def _draw(emoticon: Emoticon) -> Callable[[int, int], Pixel]:
    face, extra = emoticon.face, emoticon.extra

    def pixel(px: int, py: int) -> Pixel:
        x, y = px + 0.5, py + 0.5
        if face == "heart":
            return emoticon.skin if _heart(x, y, 12, 12, 8) else _CLEAR
        if not _near(x, y, 12, 12, 11):
            return _outside(extra, x, y) or _CLEAR
        over = _over(extra, x, y)
        if over is not None:
            return over
        if face == "cry" and 13 <= x <= 15 and 11 <= y <= 15:
            return _BLUE
        if face == "tongue" and _near(x, y, 13, 18, 2.2):
            return _RED
        if _eye(face, x, y) or _mouth(face, x, y):
            return _INK
        return emoticon.skin

    return pixel


@cache
def image(text: str) -> str:
    """The base64 PNG of the emoticon written ``text`` (``meta.emoticons`` values)."""
    return base64.b64encode(_png(SIZE, SIZE, _draw(EMOTICONS[text]))).decode()


@cache
def sheet() -> bytes:
    """The pack's sprite sheet as PNG: every emoticon in its cell (:attr:`Emoticon.coords`)."""
    drawers = [_draw(emoticon) for emoticon in EMOTICONS.values()]
    rows = -(-len(drawers) // _PER_ROW)

    def pixel(x: int, y: int) -> Pixel:
        index = (y // SIZE) * _PER_ROW + x // SIZE
        return drawers[index](x % SIZE, y % SIZE) if index < len(drawers) else _CLEAR

    return _png(_PER_ROW * SIZE, rows * SIZE, pixel)


async def _sheet(request: Request) -> Response:
    if request.path_params["pack"] != f"{PACK}.png":
        return Response("No such emoticon pack.", 404, media_type="text/plain")
    return Response(sheet(), media_type="image/png", headers={"Cache-Control": "max-age=3600"})


@cache
def manifest() -> dict[str, dict[str, object]]:
    """The builtin packs by name, as ``/_latest/emoticons/manifest.json`` describes them to
    clients (the official Java and Swift clients read it): each pack's ``name``, ``default``,
    ``authors`` and its ``emoticons`` by text, each with its cell on ``<pack>.png`` and an
    ``alt`` text by language."""
    emoticons = {
        text: {**emoticon.coords, "alt": {"en": emoticon.face}}
        for text, emoticon in EMOTICONS.items()
    }
    return {
        PACK: {"name": "Default", "default": True, "authors": ["explorer"], "emoticons": emoticons}
    }


async def _manifest(request: Request) -> Response:
    return JSONResponse(manifest(), headers={"Cache-Control": "max-age=3600"})


#: The builtin packs' manifest and sprite sheets, at the web root.
routes = [
    Route("/_latest/emoticons/manifest.json", _manifest, methods=["GET"]),
    Route("/_latest/emoticons/{pack}", _sheet, methods=["GET"]),
]
