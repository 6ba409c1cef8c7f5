"""The platform's data layer: every SQL statement and every driver call lives here.

:mod:`.engine` owns the database (connections, transactions, the core records' schema); each
other module is the repository of one family of tables (its schema and its queries), used by
handlers through functions that take the :class:`~.engine.Store` or an open
:class:`~.engine.Transaction`. Handlers route, parse and render; they hold no SQL
(``tests/test_data_layer.py``). The store is SQLite's (a path) or PostgreSQL's (a
``postgresql://`` URL, :mod:`.postgres`, registered here under its scheme).
"""

from __future__ import annotations

import importlib
import pkgutil
from functools import cache

from explorer.emulator.db.engine import ENGINES, Schema
from explorer.emulator.db.postgres import PostgresStore

ENGINES["postgresql"] = PostgresStore

#: Modules of this package that are not repositories.
_NOT_REPOSITORIES = frozenset({"engine", "listener", "offload", "pools", "postgres", "protocols"})
#: Repositories whose schema comes after every other: the outbox's triggers (``live_events``)
#: name other families' tables, and a trigger needs its table to exist.
_LAST = ("live_events",)


@cache
def ddl() -> tuple[Schema, ...]:
    """The table definitions (``SCHEMA``) of every repository module, in name order but for
    those of :data:`_LAST`, given last."""
    names = sorted(
        (m.name for m in pkgutil.iter_modules(__path__) if m.name not in _NOT_REPOSITORIES),
        key=lambda name: (name in _LAST, name),
    )
    found = (importlib.import_module(f"{__name__}.{name}") for name in names)
    return tuple(module.SCHEMA for module in found if hasattr(module, "SCHEMA"))
