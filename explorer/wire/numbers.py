"""Integers written as text (ids, limits, counts): the one reader, for the platform and the
toolkit alike.

``str.isdigit`` is true for characters ``int`` cannot read (``²``, ``①``), and ``int`` reads
more than ASCII digits (``٣``, ``" 7 "``, ``1_000``): checking with one and reading with the
other lets odd input through to a crash, or to another number than the one shown. Here an
integer is ASCII digits with an optional sign, nothing else. Pure: no I/O.
"""

from __future__ import annotations

import re

#: The largest id (SQLite's INTEGER, a signed 64-bit number).
MAX_ID = 2**63 - 1
#: Digits read at most: more than any 64-bit number needs, so ``int`` never reads a long text.
_DIGITS = re.compile(r"[+-]?[0-9]{1,20}")


def integer(text: object, low: int = -MAX_ID, high: int = MAX_ID) -> int | None:
    """``text`` as an int from ``low`` to ``high``, or None when it is not one (not a string,
    anything but ASCII digits with an optional sign, or out of range)."""
    if not isinstance(text, str) or _DIGITS.fullmatch(text) is None:
        return None
    value = int(text)
    return value if low <= value <= high else None


def identifier(text: object) -> int | None:
    """``text`` as an id (an integer from 0 to :data:`MAX_ID`, digits only), or None."""
    if isinstance(text, str) and text[:1] in ("+", "-"):
        return None
    return integer(text, 0, MAX_ID)
