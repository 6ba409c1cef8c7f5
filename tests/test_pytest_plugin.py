"""The pytest plugin's fixtures, run by pytest itself on test files that use them, and the
docs' test of a third-party client."""

from __future__ import annotations

import re
import subprocess
import sys
import tomllib
from importlib.metadata import entry_points
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TESTING = ROOT / "docs" / "testing.md"
PLUGIN = "explorer.pytest_plugin"


def installed() -> bool:
    """Whether this environment's installed metadata already registers the plugin."""
    return any(e.value == PLUGIN for e in entry_points(group="pytest11"))


def pytest_on(folder: Path, source: str) -> subprocess.CompletedProcess[str]:
    """Run pytest with the plugin on one test file holding ``source``, as a user's suite
    would (named with -p where an install older than its entry point does not load it)."""
    (folder / "test_user.py").write_text(source, encoding="utf-8")
    plugin = [] if installed() else ["-p", PLUGIN]
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            *plugin,
            "-p",
            "no:cacheprovider",
            "--strict-markers",
            str(folder / "test_user.py"),
        ],
        cwd=folder,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_the_plugin_is_an_entry_point() -> None:
    """pyproject.toml registers the plugin module under pytest11, so installing is enough."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    plugins = project["project"]["entry-points"]["pytest11"]
    assert plugins == {"explorer": PLUGIN}


def test_the_marker_shapes_the_platform(tmp_path: Path) -> None:
    """@pytest.mark.explorer_platform(seed=, channels=) starts that world on 127.0.0.1."""
    source = """
import httpx
import pytest

@pytest.mark.explorer_platform(seed=3, channels=200)
def test_world(explorer_platform):
    assert explorer_platform.base_url.startswith("http://127.0.0.1:")
    health = httpx.get(explorer_platform.root_url + "/_emulator/health").json()
    assert (health["seed"], health["channels"]) == (3, 200)
"""
    done = pytest_on(tmp_path, source)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "1 passed" in done.stdout


def test_the_docs_third_party_client_test_passes(tmp_path: Path) -> None:
    """The test of a plain httpx + websockets client in docs/testing.md passes as written."""
    text = TESTING.read_text(encoding="utf-8")
    found = re.search(r"<!-- example: a third-party client -->\n```python\n(.*?)```", text, re.S)
    assert found is not None, "docs/testing.md lost its example"
    done = pytest_on(tmp_path, found.group(1))
    assert done.returncode == 0, done.stdout + done.stderr
    assert "1 passed" in done.stdout
