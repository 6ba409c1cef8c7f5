"""The import graph of ``explorer``: imports go one way, so no module imports itself back.

Parsing with :mod:`ast` (not importing) sees every import, module-level or inside a function,
which is what a cycle at run time needs, and those under ``if TYPE_CHECKING:`` too: they never
run, but a type-only cycle still ties two modules into one concept (a reader, and the type
checker, must take both at once).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import explorer

pytestmark = pytest.mark.any_engine("the package's imports")


ROOT = Path(explorer.__file__).parent


def module_name(path: Path) -> str:
    """The dotted name of the module at ``path`` under the ``explorer`` package."""
    parts = list(path.relative_to(ROOT.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _imported(
    node: ast.AST, module: str, package: bool, known: set[str], typing: bool = True
) -> set[str]:
    """The ``explorer`` modules ``node`` and its children import (those under ``if
    TYPE_CHECKING:`` only with ``typing``)."""
    found: set[str] = set()
    if isinstance(node, ast.If) and _type_checking(node) and not typing:
        children: list[ast.AST] = list(node.orelse)
    else:
        children = list(ast.iter_child_nodes(node))
    if isinstance(node, ast.Import):
        found |= {alias.name for alias in node.names}
    elif isinstance(node, ast.ImportFrom):
        base = node.module or ""
        if node.level:
            anchor = module.split(".")
            anchor = anchor[: len(anchor) - node.level + (1 if package else 0)]
            base = ".".join([*anchor, base] if base else anchor)
        found.add(base)
        # ``from explorer.emulator import store`` imports the submodule ``store``.
        found |= {f"{base}.{alias.name}" for alias in node.names}
    for child in children:
        found |= _imported(child, module, package, known, typing)
    return {name for name in found if name in known}


def import_graph() -> dict[str, set[str]]:
    """Each ``explorer`` module and the ``explorer`` modules it imports."""
    paths = {module_name(path): path for path in ROOT.rglob("*.py")}
    known = set(paths)
    graph: dict[str, set[str]] = {}
    for name, path in paths.items():
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        package = path.name == "__init__.py"
        # A package's own ``__init__`` is imported by its submodules anyway: not an edge.
        graph[name] = {
            target
            for target in _imported(tree, name, package, known)
            if target != name and not name.startswith(f"{target}.")
        }
    return graph


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import cycle of ``graph`` as ``[a, b, ..., a]``, or None."""
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        stack.append(node)
        for target in sorted(graph[node]):
            if state.get(target) == 1:
                return [*stack[stack.index(target) :], target]
            if target not in state:
                cycle = visit(target)
                if cycle is not None:
                    return cycle
        stack.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state:
            cycle = visit(node)
            if cycle is not None:
                return cycle
    return None


def test_explorer_has_no_import_cycle() -> None:
    """No module of explorer imports, directly or through others, a module importing it."""
    cycle = find_cycle(import_graph())
    assert cycle is None, "import cycle: " + " -> ".join(cycle or [])


def test_cycle_finder_names_a_cycle() -> None:
    """The checker reports a cycle it is given, naming each module on it."""
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert find_cycle(graph) == ["a", "b", "c", "a"]


def test_type_checking_and_function_imports_are_edges() -> None:
    """Imports under ``if TYPE_CHECKING:`` and inside functions are edges of the graph (the
    first left out only when asked)."""
    source = (
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n    from explorer import b\n"
        "def f():\n    from explorer import c\n"
    )
    tree = ast.parse(source)
    known = {"explorer", "explorer.b", "explorer.c"}
    assert _imported(tree, "explorer.a", False, known) == {"explorer", "explorer.b", "explorer.c"}
    assert _imported(tree, "explorer.a", False, known, typing=False) == {"explorer", "explorer.c"}


#: What the platform may import from the toolkit: the shared contract and the supervisor.
PLATFORM_MAY_IMPORT = ("explorer.wire", "explorer.core.processes")


def _outside(graph: dict[str, set[str]], package: str) -> dict[str, set[str]]:
    """For each module of ``package``, the modules outside it that it imports."""
    inside = (package, f"{package}.")
    return {
        name: {t for t in targets if not t.startswith(inside) and t != "explorer"}
        for name, targets in graph.items()
        if name.startswith(inside)
    }


def _allowed(target: str, allowed: tuple[str, ...]) -> bool:
    return any(target == a or target.startswith(f"{a}.") for a in allowed)


def test_the_platform_imports_only_the_wire_and_the_supervisor() -> None:
    """explorer.emulator imports nothing of the toolkit but explorer.wire and processes."""
    graph = import_graph()
    for name, targets in _outside(graph, "explorer.emulator").items():
        stray = {t for t in targets if not _allowed(t, PLATFORM_MAY_IMPORT)}
        assert not stray, f"{name} imports {sorted(stray)}"


def test_the_wire_imports_nothing_else_of_explorer() -> None:
    """explorer.wire is the shared contract: it imports no toolkit or platform module."""
    graph = import_graph()
    for name, targets in _outside(graph, "explorer.wire").items():
        assert not targets, f"{name} imports {sorted(targets)}"


def test_the_rule_names_a_stray_import() -> None:
    """The checker reports a platform module that imports a toolkit module."""
    graph = {"explorer.emulator.x": {"explorer.errors", "explorer.wire.codes"}}
    assert _outside(graph, "explorer.emulator") == {
        "explorer.emulator.x": {"explorer.errors", "explorer.wire.codes"}
    }
    assert not _allowed("explorer.errors", PLATFORM_MAY_IMPORT)
    assert _allowed("explorer.wire.codes", PLATFORM_MAY_IMPORT)


#: A module longer than this holds more than one concept (issue 21: split it).
MAX_MODULE_LINES = 700


def test_no_module_exceeds_the_line_limit() -> None:
    """No module under explorer/ is longer than MAX_MODULE_LINES lines."""
    lengths = {
        module_name(path): len(path.read_text(encoding="utf-8").splitlines())
        for path in ROOT.rglob("*.py")
    }
    assert {name: n for name, n in lengths.items() if n > MAX_MODULE_LINES} == {}
