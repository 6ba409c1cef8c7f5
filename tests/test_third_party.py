"""explorer uses the libraries it does not own (the standard library included) through their
public API only: no name with a leading underscore, and none of the modules a library keeps
for itself. A parse of every module finds such a use (an import, an attribute of an imported
module, a ``getattr`` of one), so an upgrade cannot break us silently.
"""

from __future__ import annotations

import ast
from pathlib import Path

import explorer

ROOT = Path(explorer.__file__).parent
#: Modules of a library that are its own business, though their names have no underscore:
#: uvicorn's protocol implementations are named through ``Config(http=...)``, never imported.
INTERNAL = ("uvicorn.protocols", "uvicorn.lifespan", "uvicorn.loops", "uvicorn.supervisors")
#: Private uses kept, each for want of any public way; the reason is the value.
KEPT = {
    "recording/recorder.py: threading._register_atexit": (
        "the one hook that runs before the interpreter stops thread pools, which closing a "
        "recorder on object storage needs; atexit runs after them"
    ),
}


def _private(name: str) -> bool:
    """Whether a name is private (a leading underscore, not a dunder)."""
    return name.startswith("_") and not name.startswith("__")


def _foreign(module: str) -> bool:
    return module.split(".")[0] != "explorer"


def private_uses(source: str, label: str) -> set[str]:
    """The private third-party names ``source`` uses, as ``label: module.name``."""
    tree = ast.parse(source)
    aliases: dict[str, str] = {}
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if _foreign(alias.name):
                    top = alias.name.split(".")[0]
                    aliases[alias.asname or top] = alias.name if alias.asname else top
                    found |= _module_uses(alias.name, label)
        elif isinstance(node, ast.ImportFrom) and node.module and _foreign(node.module):
            found |= _module_uses(node.module, label)
            found |= {
                f"{label}: {node.module}.{alias.name}"
                for alias in node.names
                if _private(alias.name)
            }
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and _private(node.attr):
            base = node.value
            if isinstance(base, ast.Name) and base.id in aliases:
                found.add(f"{label}: {aliases[base.id]}.{node.attr}")
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id in ("getattr", "hasattr", "setattr")
            and len(node.args) >= 2
            and isinstance(node.args[0], ast.Name)
            and node.args[0].id in aliases
            and isinstance(node.args[1], ast.Constant)
            and _private(str(node.args[1].value))
        ):
            found.add(f"{label}: {aliases[node.args[0].id]}.{node.args[1].value}")
    return found


def _module_uses(module: str, label: str) -> set[str]:
    """A private or internal module named in an import."""
    parts = module.split(".")
    if any(_private(part) for part in parts) or any(
        module == internal or module.startswith(f"{internal}.") for internal in INTERNAL
    ):
        return {f"{label}: {module}"}
    return set()


def test_explorer_uses_no_private_name_of_a_library() -> None:
    """No module of explorer imports or reads a private name or internal module of a
    library, but the few kept for want of a public way."""
    found: set[str] = set()
    for path in sorted(ROOT.rglob("*.py")):
        label = str(path.relative_to(ROOT))
        found |= private_uses(path.read_text(encoding="utf-8"), label)
    assert found == set(KEPT), sorted(found - set(KEPT))


def test_the_scan_names_each_kind_of_private_use() -> None:
    """Private imports, attributes, getattr of a private name and internal modules are found;
    public names, explorer's own and dunders are not."""
    source = (
        "import threading\nimport argparse as ap\nimport uvicorn\n"
        "from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol\n"
        "from pandas._libs import lib\nfrom explorer import _mine\n"
        "threading._register_atexit(f)\nx: ap._SubParsersAction\n"
        "getattr(threading, '_shutdown', None)\nuvicorn.Config(app)\nthreading.__name__\n"
    )
    assert private_uses(source, "m") == {
        "m: threading._register_atexit",
        "m: argparse._SubParsersAction",
        "m: threading._shutdown",
        "m: uvicorn.protocols.http.httptools_impl",
        "m: pandas._libs",
    }
