"""Where ``explorer`` keeps the user's files: one data folder (``$XDG_DATA_HOME/explorer``,
else ``~/.local/share/explorer``) holding the platform's database and log, the user's copy of
the recipes and the settings of the JupyterLab that ``explorer lab`` starts."""

from __future__ import annotations

import argparse
import os
import re
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


def database_file(value: str) -> str:
    """``--db``'s value: a SQLite file (or ``:memory:``). A URL such as ``postgresql://...``
    is refused with what to do instead, rather than becoming a folder named after its scheme."""
    if re.match(r"[A-Za-z][A-Za-z0-9+.-]*://", value):
        raise argparse.ArgumentTypeError(
            f"{value.split('://')[0]}:// is not a database this platform runs on yet: give a "
            "SQLite file path (or :memory:), e.g. --db ./platform.db"
        )
    return value
