"""The pytest plugin's fixtures, run by pytest itself on test files that use them, and the
docs' test of a third-party client. Under the suite's PostgreSQL switch those runs give the
plugin the private cluster (``--explorer-db``), so their platforms run on PostgreSQL."""

from __future__ import annotations

import re
import subprocess
import sys
import tomllib
from importlib.metadata import entry_points
from pathlib import Path

import pytest

from explorer.emulator.db.schemas import in_schema
from tests import databases, pgcluster

ROOT = Path(__file__).resolve().parent.parent
TESTING = ROOT / "docs" / "testing.md"
PLUGIN = "explorer.pytest_plugin"


def installed() -> bool:
    """Whether this environment's installed metadata already registers the plugin."""
    return any(e.value == PLUGIN for e in entry_points(group="pytest11"))


def pytest_on(
    folder: Path, source: str, database: str | None = None
) -> subprocess.CompletedProcess[str]:
    """Run pytest with the plugin on one test file holding ``source``, as a user's suite
    would (named with -p where an install older than its entry point does not load it), its
    platforms on PostgreSQL ``database`` if given, else on the suite's engine."""
    (folder / "test_user.py").write_text(source, encoding="utf-8")
    plugin = [] if installed() else ["-p", PLUGIN]
    if database is None and databases.ENGINE == "postgresql":
        database = databases.cluster().url
    if database is not None:
        plugin += ["--explorer-db", database]
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


def test_the_option_gives_each_test_a_schema_of_its_own(
    tmp_path: Path, postgres: pgcluster.Cluster
) -> None:
    """With --explorer-db each test's platform runs in a fresh schema, dropped after it."""
    source = """
import httpx
import pytest

@pytest.mark.explorer_platform(channels=50)
@pytest.mark.parametrize("turn", [1, 2])
def test_rename(explorer_platform, turn):
    assert "search_path" in explorer_platform.options.db
    base = explorer_platform.base_url
    with httpx.Client(base_url=base) as client:
        login = client.post("/users/login", json={"username": "streamer", "password": "explorer"})
        client.headers["X-CSRF-Token"] = login.headers["X-CSRF-Token"]
        channel = client.get("/channels/streamer").json()
        assert channel["name"] != "renamed"  # the other turn's write is not here
        client.put(f"/channels/{channel['id']}", json={"name": "renamed"}).raise_for_status()
"""
    done = pytest_on(tmp_path, source, postgres.url)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "2 passed" in done.stdout
    import psycopg  # installed where the postgres fixture did not skip

    with psycopg.connect(postgres.url) as conn:
        left = conn.execute("SELECT nspname FROM pg_namespace WHERE nspname LIKE 'explorer_%'")
        assert left.fetchall() == []


def test_the_option_takes_only_a_postgresql_url(tmp_path: Path) -> None:
    """--explorer-db with something other than a postgresql:// URL is a usage error."""
    done = pytest_on(tmp_path, "def test_nothing():\n    pass\n", str(tmp_path / "x.db"))
    assert done.returncode == pytest.ExitCode.USAGE_ERROR
    assert "--explorer-db takes a postgresql:// URL" in done.stderr


def test_a_schema_url_keeps_the_options_given() -> None:
    """The schema's search path joins the URL's own server options and parameters."""
    url = "postgresql://u@h/db?sslmode=disable&options=-cstatement_timeout%3D5000"
    assert in_schema(url, "s") == (
        "postgresql://u@h/db?sslmode=disable&options=-cstatement_timeout%3D5000+-csearch_path%3Ds"
    )
