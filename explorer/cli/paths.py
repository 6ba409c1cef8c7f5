"""Where ``explorer`` keeps the user's files: one data folder (``$XDG_DATA_HOME/explorer``,
else ``~/.local/share/explorer``) holding the platform's database and log, the user's copy of
the recipes and the settings of the JupyterLab that ``explorer lab`` starts."""

from __future__ import annotations

import argparse
import os
import re
from pathlib import Path

#: A URL's scheme, at the start of ``--db``'s value.
URL = r"([A-Za-z][A-Za-z0-9+.-]*)://"


def data_dir() -> Path:
    """The user's ``explorer`` data folder (XDG on Linux)."""
    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base) / "explorer"


def default_db() -> Path:
    """The platform's database: ``platform.db`` in the data folder."""
    return data_dir() / "platform.db"


def platform_log(db: str) -> Path:
    """Where ``explorer lab`` writes its platform's output: ``platform.log`` beside the
    database file, or in the data folder for a database that is no file (``:memory:``, a
    ``postgresql://`` URL)."""
    is_file = db != ":memory:" and re.match(URL, db) is None
    return (Path(db).parent if is_file else data_dir()) / "platform.log"


def recipes_copy() -> Path:
    """The user's own copy of the recipes, which ``explorer lab`` opens."""
    return data_dir() / "notebooks"


def database_file(value: str) -> str:
    """``--db``'s value: a SQLite file (or ``:memory:``), or a ``postgresql://`` URL (the
    PostgreSQL engine). A URL of any other scheme is refused with what to give instead, rather
    than becoming a folder named after its scheme."""
    scheme = re.match(URL, value)
    if scheme is not None and scheme.group(1) != "postgresql":
        raise argparse.ArgumentTypeError(
            f"{scheme.group(1)}:// is not a database this platform runs on: give a SQLite file "
            "path (or :memory:), e.g. --db ./platform.db, or a postgresql://user@host/db URL"
        )
    return value
