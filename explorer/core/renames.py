"""Old names of attributes and modules kept working for one release, each warning with the
name to use instead.

:class:`Renamed` is a class attribute that stands for another: reading it (a method, a
property, an attribute) issues a :class:`DeprecationWarning` naming the new spelling, pointed
at the caller's line (which Jupyter and ``python -W default`` show), then gives the new one's
value. :func:`moved_module` does the same for a module's old name. Standard library only:
``import explorer`` registers every old module path through it, and loads nothing more.
"""

from __future__ import annotations

import importlib
import sys
import types
import warnings
from typing import Any


def warn_renamed(old: str, new: str, stacklevel: int = 3) -> None:
    """Warn that ``old`` is now spelt ``new`` (``stacklevel`` 3: the caller of the caller)."""
    warnings.warn(
        f"{old} is now {new}; the old name goes in the next release.",
        DeprecationWarning,
        stacklevel=stacklevel,
    )


class Renamed:
    """The old name of the attribute ``new`` of the same class (see the module docstring)."""

    def __init__(self, new: str) -> None:
        self.new = new
        self.__doc__ = f"Deprecated: use ``{new}``."

    def __set_name__(self, owner: type, name: str) -> None:
        self.old = name

    def __get__(self, instance: object, owner: type) -> Any:
        if instance is None:
            return self
        name = owner.__name__
        warn_renamed(f"{name}.{self.old}", f"{name}.{self.new}")
        return getattr(instance, self.new)


class _MovedModule(types.ModuleType):
    """A module's old name: each attribute read warns and comes from the new module."""

    def __init__(self, old: str, new: str) -> None:
        super().__init__(old, f"Deprecated: use {new}.")
        self._new = new

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        warn_renamed(f"{self.__name__}.{name}", f"{self._new}.{name}", stacklevel=2)
        return getattr(importlib.import_module(self._new), name)


def moved_module(old: str, new: str) -> None:
    """Let ``from old import name`` keep working, with a warning, now that it is ``new``
    (without binding ``old`` as the package's attribute, which may be something else)."""
    sys.modules.setdefault(old, _MovedModule(old, new))
