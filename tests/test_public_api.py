"""The public API is what ``explorer`` exports, sorted, and importing it starts nothing."""

from __future__ import annotations

import json
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
    "compact",
    "connect",
    "import_chat",
    "open_capture",
    "replay",
    "time_series",
]


def test_all_is_pinned_and_sorted() -> None:
    """explorer.__all__ lists exactly the public names, in sorted order."""
    assert explorer.__all__ == PUBLIC == sorted(PUBLIC)
    assert all(hasattr(explorer, name) for name in PUBLIC)


def loaded_by_import(modules: tuple[str, ...], then: str = "") -> list[str]:
    """Which of ``modules`` a fresh interpreter has loaded after `import explorer` (and
    ``then``, a statement using it)."""
    code = (
        f"import json, sys, explorer\n{then}\n"
        f"print(json.dumps([m for m in {modules!r} if m in sys.modules]))"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    loaded: list[str] = json.loads(result.stdout)
    return loaded


def test_import_loads_no_jupyter_or_emulator() -> None:
    """`import explorer` in a script imports no Jupyter, widget, plotting or platform code."""
    heavy = ("IPython", "ipywidgets", "matplotlib", "explorer.emulator", "uvicorn")
    assert loaded_by_import(heavy) == []


def test_import_loads_no_capture_engines() -> None:
    """`import explorer` loads no DuckDB or Parquet: the first capture or recording does."""
    heavy = (
        "duckdb",
        "pyarrow.parquet",
        "explorer.recording.capture",
        "explorer.recording.recorder",
    )
    assert loaded_by_import(heavy) == []


#: What the REST client does not need: chats, live events, watches and trackers.
STREAMING = (
    "websockets",
    "explorer.chat.blocking",
    "explorer.chat.client",
    "explorer.events.log",
    "explorer.live.log",
    "explorer.collect.watch",
    "explorer.collect.track",
)


def test_import_loads_no_client_or_streaming() -> None:
    """`import explorer` loads neither the REST client (httpx) nor chats and live events."""
    assert loaded_by_import(("httpx", "explorer.clients", "explorer.api", *STREAMING)) == []


def test_first_client_loads_no_streaming() -> None:
    """Naming `explorer.connect` loads the REST client, but no chat, live, tracking or
    progress bar code (tqdm loads with the first bar)."""
    assert loaded_by_import(("httpx", "tqdm", *STREAMING), then="explorer.connect") == ["httpx"]


def test_lazy_names_are_listed_and_resolve() -> None:
    """dir(explorer) lists every public name, and a lazily loaded one resolves to its object."""
    from explorer.recording.capture import open_capture
    from explorer.recording.recorder import Recorder

    assert set(PUBLIC) <= set(dir(explorer))
    assert explorer.open_capture is open_capture
    assert explorer.Recorder is Recorder
