"""Where ``explorer`` keeps the user's files: one data folder (``$XDG_DATA_HOME/explorer``,
else ``~/.local/share/explorer``) holding the platform's database and log, the user's copy of
the recipes and the settings of the JupyterLab that ``explorer lab`` starts."""

from __future__ import annotations

import os
from pathlib import Path


def data_dir() -> Path:
    """The user's ``explorer`` data folder (XDG on Linux)."""
    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base) / "explorer"


def default_db() -> Path:
    """The platform's database: ``platform.db`` in the data folder."""
    return data_dir() / "platform.db"


def recipes_copy() -> Path:
    """The user's own copy of the recipes, which ``explorer lab`` opens."""
    return data_dir() / "notebooks"
