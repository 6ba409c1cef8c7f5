"""The data layer's boundary: SQL and database drivers stay inside ``explorer/emulator/db``."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import explorer.emulator

PLATFORM = Path(explorer.emulator.__file__).parent
DATA_LAYER = PLATFORM / "db"
DRIVERS = frozenset({"sqlite3", "psycopg", "psycopg_pool"})
SQL = re.compile(
    r"\b(SELECT\s|INSERT\s+(OR\s+\w+\s+)?INTO\b|UPDATE\s+\w+\s+SET\b|DELETE\s+FROM\b|"
    r"CREATE\s+(UNIQUE\s+)?(TABLE|INDEX|TRIGGER|VIEW)\b|DROP\s+(TABLE|INDEX|TRIGGER)\b|"
    r"PRAGMA\s|ANALYZE\b|BEGIN\s+IMMEDIATE\b)"
)
#: Platform modules whose SQL has not moved into the data layer yet: the list only shrinks.
NOT_YET_MOVED = frozenset(
    {
        "listing.py",
    }
)


def _modules() -> dict[str, ast.Module]:
    """Every platform module outside the data layer, by its path under the platform."""
    return {
        str(path.relative_to(PLATFORM)): ast.parse(path.read_text())
        for path in sorted(PLATFORM.rglob("*.py"))
        if DATA_LAYER not in path.parents
    }


def _docstrings(tree: ast.Module) -> set[int]:
    """The ids of the docstring nodes of a module, its classes and functions."""
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                found.add(id(body[0].value))
    return found


def _holds_sql(tree: ast.Module) -> bool:
    """Whether a string of the module (not a docstring) is a SQL statement."""
    skip = _docstrings(tree)
    return any(
        isinstance(node, ast.Constant)
        and isinstance(node.value, str)
        and id(node) not in skip
        and SQL.search(node.value) is not None
        for node in ast.walk(tree)
    )


def _drivers(tree: ast.Module) -> set[str]:
    """The database drivers a module imports."""
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names.add(node.module.split(".")[0])
    return names & DRIVERS


def test_no_platform_module_outside_the_data_layer_imports_a_driver() -> None:
    """Only the data layer imports sqlite3 or psycopg."""
    importing = {name for name, tree in _modules().items() if _drivers(tree)}
    assert importing <= NOT_YET_MOVED, sorted(importing - NOT_YET_MOVED)


def test_no_platform_module_outside_the_data_layer_holds_sql() -> None:
    """A SQL statement in a handler or simulator module fails (unless not moved yet)."""
    holding = {name for name, tree in _modules().items() if _holds_sql(tree)}
    assert holding <= NOT_YET_MOVED, sorted(holding - NOT_YET_MOVED)


def test_the_modules_not_moved_yet_still_hold_sql() -> None:
    """A module whose SQL has moved leaves the list of those not moved yet."""
    modules = _modules()
    moved = {
        name
        for name in NOT_YET_MOVED
        if name not in modules or not (_holds_sql(modules[name]) or _drivers(modules[name]))
    }
    assert not moved, sorted(moved)


def test_the_pattern_finds_sql_and_not_prose() -> None:
    """The SQL pattern matches statements and leaves English alone."""
    assert SQL.search("SELECT id FROM channels") and SQL.search("INSERT OR IGNORE INTO x")
    assert not SQL.search("select a channel, then update the settings")
