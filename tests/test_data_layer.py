"""The data layer's boundary: SQL and database drivers stay inside ``explorer/emulator/db``."""

from __future__ import annotations

import ast
import re
from functools import cache
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


#: SQLite-only constructs a repository statement must not use, so that one text serves SQLite
#: and PostgreSQL, by name (the portable form in the comment).
SQLITE_ONLY = {
    # INSERT ... ON CONFLICT DO NOTHING / DO UPDATE SET
    "INSERT OR": re.compile(r"\bINSERT\s+OR\s+(IGNORE|REPLACE)\b|\bREPLACE\s+INTO\b"),
    # the table's key
    "rowid": re.compile(r"(?<!WITHOUT )\browid\b", re.IGNORECASE),
    # lower(x) = lower(?), read through a lower(x) index
    "NOCASE": re.compile(r"\bCOLLATE\s+NOCASE\b"),
    # IS [NOT] DISTINCT FROM ?
    "IS ?": re.compile(r"\bIS\s+(NOT\s+)?\?"),
    # CASE (PostgreSQL's two-argument forms are GREATEST and LEAST)
    "MAX(a, b)": re.compile(r"\b(MAX|MIN)\([^()]*,"),
    # one placeholder per item of a list; a JSON column needs an engine fragment
    "json": re.compile(r"\bjson(_\w+)?\("),
    # an engine fragment
    "randomblob": re.compile(r"\brandomblob\("),
    # the engine's methods (Store.columns, ...)
    "PRAGMA": re.compile(r"\bPRAGMA\b|\bsqlite_master\b"),
}
#: The engines: where each database's own statements belong.
ENGINES = frozenset({"engine.py", "postgres.py"})
#: Repository statements still SQLite-only, by module and construct: the list only shrinks.
#: ``rowid`` stands for an insertion order no column holds yet (an earning's id, followers
#: and chat presence in the order they came); ``json`` reads lists stored as JSON text
#: (PostgreSQL: ``jsonb_array_elements_text``), and ``live_events.py`` builds the outbox's
#: triggers, which the engine renders per database (``hooks.py``'s is the SQLite half of a
#: ``PerEngine`` schema); ``randomblob`` makes UUIDs in SQL (PostgreSQL: ``gen_random_uuid()``).
STILL_SQLITE_ONLY = frozenset(
    {
        ("achievements.py", "rowid"),
        ("follows.py", "rowid"),
        ("chat_presence.py", "rowid"),
        ("chat_presence.py", "json"),
        ("channel_roles.py", "json"),
        ("hooks.py", "json"),
        ("live_events.py", "json"),
        ("notifications.py", "randomblob"),
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


def _strings(tree: ast.Module) -> list[str]:
    """The string constants of a module but its docstrings."""
    skip = _docstrings(tree)
    return [
        node.value
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in skip
    ]


@cache
def _sqlite_only() -> frozenset[tuple[str, str]]:
    """``(module, construct)`` of each SQLite-only construct a repository module uses: in its
    statements, or ``cursor.lastrowid`` (instead: ``INSERT ... RETURNING id``)."""
    found = set()
    for path in sorted(DATA_LAYER.glob("*.py")):
        if path.name in ENGINES:
            continue
        tree = ast.parse(path.read_text())
        text = "\n".join(_strings(tree))
        found |= {(path.name, name) for name, rule in SQLITE_ONLY.items() if rule.search(text)}
        if any(isinstance(n, ast.Attribute) and n.attr == "lastrowid" for n in ast.walk(tree)):
            found.add((path.name, "lastrowid"))
    return frozenset(found)


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


def test_repository_statements_use_no_sqlite_only_construct() -> None:
    """A repository statement with a SQLite-only construct (INSERT OR IGNORE, rowid, ...) fails."""
    found = _sqlite_only()
    assert found <= STILL_SQLITE_ONLY, sorted(found - STILL_SQLITE_ONLY)


def test_the_sqlite_only_places_left_still_are() -> None:
    """A construct made portable leaves the list of those still SQLite-only."""
    gone = STILL_SQLITE_ONLY - _sqlite_only()
    assert not gone, sorted(gone)


def test_the_sqlite_only_patterns_find_their_constructs() -> None:
    """Each SQLite-only pattern matches its construct and not its portable replacement."""
    samples = {
        "INSERT OR IGNORE INTO t VALUES (?)": "INSERT INTO t VALUES (?) ON CONFLICT DO NOTHING",
        "SELECT rowid FROM t": "CREATE TABLE t (a INTEGER PRIMARY KEY) WITHOUT ROWID",
        "SELECT 1 FROM u WHERE name = ? COLLATE NOCASE": "WHERE lower(name) = lower(?)",
        "WHERE hosteeId IS NOT ?": "WHERE hosteeId IS DISTINCT FROM ?",
        "SET n = MAX(n - 1, 0)": "SELECT MAX(seq) FROM t",
        "SELECT value FROM json_each(?)": "SELECT id FROM t WHERE id IN (?, ?)",
        "SELECT hex(randomblob(4))": "SELECT random()",
        "PRAGMA table_info(t)": "SELECT name FROM t",
    }
    for (name, rule), (sqlite, portable) in zip(SQLITE_ONLY.items(), samples.items(), strict=True):
        assert rule.search(sqlite) and not rule.search(portable), name
