"""What a start loads: the command line and the platform leave out what they do not use (the
toolkit's pandas and Arrow, its HTTP client), which every ``explorer serve`` and ``explorer
record`` process paid for before (issue 42)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

pytestmark = pytest.mark.any_engine("what a start imports (the probe's platform is in memory)")


def loaded_after(code: str, modules: tuple[str, ...]) -> list[str]:
    """Which of ``modules`` a fresh interpreter has loaded after running ``code``."""
    probe = (
        f"{code}\nimport json, sys\nprint(json.dumps([m for m in {modules!r} if m in sys.modules]))"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=90)
    assert done.returncode == 0, done.stderr[-3000:]
    loaded: list[str] = json.loads(done.stdout.splitlines()[-1])
    return loaded


def test_the_command_line_loads_no_platform_or_data_stack() -> None:
    """Building ``explorer``'s command line (``explorer serve --help``: every subcommand builds
    the same parser) loads neither the platform nor numpy, pandas, Arrow or httpx."""
    code = (
        "import contextlib\nfrom explorer.cli import main\n"
        "with contextlib.suppress(SystemExit):\n    main(['serve', '--help'])"
    )
    heavy = ("explorer.emulator.server", "uvicorn", "numpy", "pandas", "pyarrow", "httpx")
    assert loaded_after(code, heavy) == []


def test_a_running_platform_loads_no_pandas() -> None:
    """A platform seeded, serving and simulating has loaded no pandas, Arrow or httpx."""
    code = "from explorer.emulator import start\nstart(channels=50, simulate=True).stop()"
    assert loaded_after(code, ("pandas", "pyarrow", "httpx")) == []
