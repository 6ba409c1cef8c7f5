"""Durations as people write them: ``"30s"``, ``"5m"``, ``"1h30m"``, ``"250ms"`` or seconds.

One parser for every option that takes a span of time (``api.watch(refresh=...)``,
``api.track(every=...)``, ``explorer record --duration``), so they all read the same way. Pure.
"""

from __future__ import annotations

import math
import re
from datetime import timedelta

#: Seconds per unit.
_UNITS = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0, "d": 86400.0}
_PART = re.compile(r"([0-9]+(?:\.[0-9]+)?)(ms|s|m|h|d)")

Duration = str | float | int | timedelta


def seconds(value: Duration) -> float:
    """``value`` in seconds: a number (already seconds), a ``timedelta``, or text made of
    number-unit parts (``ms``, ``s``, ``m``, ``h``, ``d``; a bare number is seconds).

    Raises ``ValueError`` for anything else, and for a span that is not positive and finite.
    """
    if isinstance(value, timedelta):
        result = value.total_seconds()
    elif isinstance(value, int | float) and not isinstance(value, bool):
        result = float(value)
    elif isinstance(value, str):
        result = _parse(value.strip().lower())
    else:
        raise ValueError(f"Not a duration: {value!r}.")
    if not math.isfinite(result) or result <= 0:
        raise ValueError(f"A duration must be positive and finite, not {value!r}.")
    return result


def _parse(text: str) -> float:
    try:
        return float(text)
    except ValueError:
        pass
    parts = _PART.findall(text)
    if not parts or "".join(n + u for n, u in parts) != text.replace(" ", ""):
        raise ValueError(f"Not a duration: {text!r} (write it like 30s, 5m, 1h30m or 250ms).")
    return sum(float(number) * _UNITS[unit] for number, unit in parts)


def describe(value: float) -> str:
    """Seconds as the shortest text :func:`seconds` reads back: ``90.0`` -> ``"1m30s"``."""
    if value < 1:
        return f"{value * 1000:g}ms"
    whole, rest = divmod(value, 1)
    text = ""
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        count, whole = divmod(whole, size)
        if count:
            text += f"{int(count)}{unit}"
    if whole or rest or not text:
        text += f"{whole + rest:g}s"
    return text
