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


def _strings(tree: ast.Module, left_out: set[int]) -> list[str]:
    """The string constants of a module but its docstrings and the nodes ``left_out``."""
    skip = _docstrings(tree) | left_out
    return [
        node.value
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in skip
    ]


def _sqlite_halves(tree: ast.Module) -> set[int]:
    """The ids of the nodes that only make SQLite's part of a ``PerEngine`` (its ``sqlite``
    argument, and the module's functions named nowhere else): SQLite's own by design."""
    halves: list[ast.AST] = [
        keyword.value
        for node in ast.walk(tree)
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id == "PerEngine"
        for keyword in node.keywords
        if keyword.arg == "sqlite"
    ]
    functions = [node for node in tree.body if isinstance(node, ast.FunctionDef)]
    inside: set[int] = set()
    while halves:
        inside |= {id(node) for half in halves for node in ast.walk(half)}
        halves = [
            function
            for function in functions
            if id(function) not in inside
            and (uses := _names(tree, function.name))
            and uses <= inside
        ]
    return inside


def _names(tree: ast.Module, name: str) -> set[int]:
    """The ids of the nodes of ``tree`` naming ``name``."""
    return {id(node) for node in ast.walk(tree) if isinstance(node, ast.Name) and node.id == name}


def _sqlite_only() -> frozenset[tuple[str, str]]:
    """``(module, construct)`` of each SQLite-only construct a repository module uses: in its
    statements (but SQLite's part of a ``PerEngine``), or ``cursor.lastrowid`` (instead:
    ``INSERT ... RETURNING id``)."""
    found = set()
    for path in sorted(DATA_LAYER.glob("*.py")):
        if path.name in ENGINES:
            continue
        tree = ast.parse(path.read_text())
        text = "\n".join(_strings(tree, _sqlite_halves(tree)))
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
    assert not importing, sorted(importing)


def test_no_platform_module_outside_the_data_layer_holds_sql() -> None:
    """A SQL statement in a handler or simulator module fails."""
    holding = {name for name, tree in _modules().items() if _holds_sql(tree)}
    assert not holding, sorted(holding)


def test_the_pattern_finds_sql_and_not_prose() -> None:
    """The SQL pattern matches statements and leaves English alone."""
    assert SQL.search("SELECT id FROM channels") and SQL.search("INSERT OR IGNORE INTO x")
    assert not SQL.search("select a channel, then update the settings")


def test_repository_statements_use_no_sqlite_only_construct() -> None:
    """A repository statement with a SQLite-only construct (INSERT OR IGNORE, rowid, ...) fails."""
    found = _sqlite_only()
    assert not found, sorted(found)


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


def test_sqlite_s_part_of_a_per_engine_is_left_out_and_nothing_else() -> None:
    """The ``sqlite`` argument of a ``PerEngine`` and the helpers only it calls are SQLite's
    own; its shared ``source`` and a helper also called elsewhere are looked at."""
    tree = ast.parse(
        "def only():\n    return 'json_each(a)'\n"
        "def shared():\n    return 'json_each(b)'\n"
        "X = PerEngine(source='json_each(c)', sqlite=only() + shared() + 'json_each(d)')\n"
        "Y = shared()\n"
    )
    kept = _strings(tree, _sqlite_halves(tree))
    assert sorted(kept) == ["json_each(b)", "json_each(c)"]
