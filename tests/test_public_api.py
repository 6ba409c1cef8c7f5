"""The public API is what ``explorer`` exports, sorted, and importing it starts nothing."""

from __future__ import annotations

import subprocess
import sys

import explorer

PUBLIC = [
    "AsyncClient",
    "AsyncLive",
    "AsyncTracker",
    "AsyncWatch",
    "Capture",
    "Chat",
    "ChatClient",
    "ChatDetails",
    "ChatError",
    "ChatErrorCode",
    "Client",
    "EventLog",
    "Grant",
    "Live",
    "Recorder",
    "Replay",
    "Tracker",
    "Watch",
    "connect",
    "open_capture",
    "replay",
    "time_series",
]


def test_all_is_pinned_and_sorted() -> None:
    """explorer.__all__ lists exactly the public names, in sorted order."""
    assert explorer.__all__ == PUBLIC == sorted(PUBLIC)
    assert all(hasattr(explorer, name) for name in PUBLIC)


def test_import_loads_no_jupyter_or_emulator() -> None:
    """`import explorer` in a script imports no Jupyter, widget, plotting or platform code."""
    code = (
        "import sys, explorer; heavy = ('IPython', 'ipywidgets', 'matplotlib', "
        "'explorer.emulator', 'uvicorn'); print([m for m in heavy if m in sys.modules])"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    assert result.stdout.strip() == "[]"
