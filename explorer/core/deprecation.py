"""A frame that a method returned and a property now holds, kept callable for one release.

The other old names (attributes and modules) live in :mod:`explorer.core.renames`, which loads
no pandas (``import explorer`` needs them); this one subclasses a DataFrame.
"""

from __future__ import annotations

from typing import ClassVar

import pandas as pd

from explorer.core.renames import warn_renamed


class CalledFrame(pd.DataFrame):
    """A frame that was a method's result and is now a property's: calling it (the old
    spelling, ``tracker.frame()``) warns and gives the frame itself, for one release. What
    pandas derives from it is a plain DataFrame."""

    _metadata: ClassVar[list[str]] = ["_old"]
    _old: str

    @classmethod
    def of(cls, frame: pd.DataFrame, old: str) -> CalledFrame:
        """``frame`` (not copied), which says ``old()`` is now ``old`` when called."""
        called = cls(frame)
        called._old = old
        return called

    def __call__(self) -> pd.DataFrame:
        warn_renamed(f"{self._old}()", f"{self._old} (a property)", stacklevel=2)
        return self
