"""One module per resource group. Each exports ``routes`` (a list of policy ``Route`` s) and
may export ``SCHEMA`` (DDL for its own tables, applied at start-up), ``SCHEMAS`` (OpenAPI
component schemas of its records) and ``seed(store, world_seed)`` (an idempotent hook that
fills its tables, called on every start in module order). Modules are discovered, so adding
a group touches no central file; ``control`` (the ``/_emulator`` namespace) is mounted apart.
"""

from __future__ import annotations

import importlib
import pkgutil
from functools import cache
from types import ModuleType

from explorer.emulator import db

_APART = frozenset({"control"})


@cache
def modules() -> tuple[ModuleType, ...]:
    """Every resource-group module of the platform's API, by name."""
    names = sorted(m.name for m in pkgutil.iter_modules(__path__) if m.name not in _APART)
    return tuple(importlib.import_module(f"{__name__}.{name}") for name in names)


def schema_ddl() -> list[str]:
    """The table definitions of the data layer's repositories, then those resource modules
    not moved into it yet declare for themselves."""
    return [*db.ddl(), *(m.SCHEMA for m in modules() if hasattr(m, "SCHEMA"))]
