"""The user's own copy of the recipes: ``explorer lab`` opens it rather than the recipes
themselves (``notebooks/`` at the top of the repository, which an installed wheel carries as
``explorer/recipes/``), so that running and saving a recipe (JupyterLab autosaves every two
minutes) never writes outputs into either.

Recipes are copied in only when missing from the copy: the user's edits are never
overwritten, and deleting a file there brings back the current version next time.
"""

from __future__ import annotations

import shutil
from pathlib import Path

_PACKAGE = Path(__file__).resolve().parent.parent
#: The recipes: inside the package where a wheel installed it, else the repository's
#: ``notebooks/`` beside the package (a clone, an editable install).
SOURCE = _PACKAGE / "recipes" if (_PACKAGE / "recipes").is_dir() else _PACKAGE.parent / "notebooks"
#: What recipes write beside themselves (recipe 5's captures): data, never copied.
OUTPUTS = "captures"


def copy_missing(source: Path, target: Path) -> list[Path]:
    """Copy every file under ``source`` that ``target`` lacks (hidden ones, JupyterLab's
    checkpoints and what recipes wrote in :data:`OUTPUTS` aside) into ``target``, created if
    need be; the files copied, in order."""
    target.mkdir(parents=True, exist_ok=True)
    if not source.is_dir():
        return []
    copied = []
    for path in sorted(source.rglob("*")):
        relative = path.relative_to(source)
        skipped = any(part.startswith(".") for part in relative.parts)
        if not path.is_file() or skipped or relative.parts[0] == OUTPUTS:
            continue
        destination = target / relative
        if destination.exists():
            continue
        destination.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(path, destination)
        copied.append(destination)
    return copied
