"""The toolkit's parts are folders stacked in floors: a module imports only from its own folder
or a floor below, type-only imports included (``docs/architecture.md``, "Where things go")."""

from __future__ import annotations

import ast
from pathlib import Path

import explorer

ROOT = Path(explorer.__file__).parent

#: The toolkit's folders from the ground up; folders on one floor do not import each other.
#: The top-level modules (the clients, ``api.py``, the embedded platform, the command line)
#: stand above them all; the error tree (``errors.py``) and the wire below.
FLOORS: tuple[tuple[str, ...], ...] = (
    ("wire",),
    ("errors",),
    ("core",),
    ("events",),
    ("views",),
    ("chat", "recording"),
    ("rest",),
    ("live",),
    ("collect",),
)
FLOOR = {part: level for level, parts in enumerate(FLOORS) for part in parts}


def part_of(module: str) -> str | None:
    """The toolkit part (a folder of :data:`FLOORS`) ``explorer.X...`` belongs to, if any."""
    pieces = module.split(".")
    return pieces[1] if len(pieces) > 1 and pieces[0] == "explorer" and pieces[1] in FLOOR else None


def imports_of(tree: ast.AST) -> set[str]:
    """Every ``explorer`` module a source imports, anywhere in it (type-only ones too)."""
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            found.add(node.module)
            found |= {f"{node.module}.{alias.name}" for alias in node.names}
    return {name for name in found if part_of(name) is not None}


def upward(source: str, part: str) -> list[str]:
    """The imports of ``source`` (a module of ``part``) that reach a floor above it or a
    folder beside it."""
    return sorted(
        name
        for name in imports_of(ast.parse(source))
        if (target := part_of(name)) != part and FLOOR[target] >= FLOOR[part]
    )


def test_every_folder_imports_only_downward() -> None:
    """No module of a toolkit folder imports a module of a folder above or beside it."""
    stray = {}
    for part in FLOOR:
        folder = ROOT / part
        paths = folder.rglob("*.py") if folder.is_dir() else [ROOT / f"{part}.py"]
        for path in paths:
            found = upward(path.read_text(encoding="utf-8"), part)
            if found:
                stray[str(path.relative_to(ROOT))] = found
    assert not stray


def test_the_checker_sees_a_type_only_import_upward() -> None:
    """An import of a higher floor under ``if TYPE_CHECKING:`` is reported."""
    source = (
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n    from explorer.collect.watch import Watch\n"
        "from explorer.core import loop\n"
    )
    assert upward(source, "chat") == ["explorer.collect.watch", "explorer.collect.watch.Watch"]


def test_every_folder_is_on_a_floor() -> None:
    """Each folder of the toolkit (but the platform and the command line) has its floor."""
    folders = {p.name for p in ROOT.iterdir() if p.is_dir() and (p / "__init__.py").exists()}
    assert folders - {"emulator", "cli"} == {part for part in FLOOR if (ROOT / part).is_dir()}


def test_every_old_module_path_warns_and_gives_the_new_names() -> None:
    """Each module path from before the folders still imports; a name read from it warns with
    the new path and is the new module's object."""
    import importlib
    import warnings

    for old, new in explorer._MOVED.items():
        stand_in = importlib.import_module(f"explorer.{old}")
        module = importlib.import_module(f"explorer.{new}")
        name = next(n for n in vars(module) if not n.startswith("_"))
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            value = getattr(stand_in, name)
        assert value is getattr(module, name), old
        assert any(f"explorer.{new}" in str(w.message) for w in caught), old


def test_no_module_of_the_toolkit_uses_an_old_path() -> None:
    """Importing every toolkit module raises no deprecation warning: none goes through an old
    module path."""
    import subprocess
    import sys

    modules = sorted(
        ".".join(path.relative_to(ROOT.parent).with_suffix("").parts).removesuffix(".__init__")
        for path in ROOT.rglob("*.py")
        if "emulator" not in path.parts and path.name != "__main__.py"
    )
    code = "import importlib\n" + "".join(f"importlib.import_module({m!r})\n" for m in modules)
    done = subprocess.run(
        [sys.executable, "-W", "error::DeprecationWarning", "-c", code],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-2000:]
