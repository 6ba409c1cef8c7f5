"""One module per resource group. Each exports ``routes`` (a list of policy ``Route`` s) and
may export ``SCHEMAS`` (OpenAPI component schemas of its records) and ``seed(store,
world_seed)`` (an idempotent hook that fills its tables, called on every start in module
order); its tables and statements live in its repository of the data layer (``db/``).
Modules are discovered, so adding a group touches no central file; ``control`` (the
``/_emulator`` namespace) is mounted apart.
"""

from __future__ import annotations

import importlib
import pkgutil
from functools import cache
from types import ModuleType

_APART = frozenset({"control"})


@cache
def modules() -> tuple[ModuleType, ...]:
    """Every resource-group module of the platform's API, by name."""
    names = sorted(m.name for m in pkgutil.iter_modules(__path__) if m.name not in _APART)
    return tuple(importlib.import_module(f"{__name__}.{name}") for name in names)
