"""``explorer serve`` as a real process: ready line, persistence across restarts, clean exit."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest

from tests.databases import target


@contextmanager
def serving(*args: str) -> Iterator[subprocess.Popen[str]]:
    """Run ``explorer serve`` on port 0 and yield the process; SIGINT it after."""
    process = subprocess.Popen(
        [sys.executable, "-m", "explorer.cli", "serve", "--port", "0", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    try:
        assert process.stdout is not None
        yield process
    finally:
        process.send_signal(signal.SIGINT)
        assert process.wait(timeout=20) == 0


@contextmanager
def serve(*args: str) -> Iterator[str]:
    """Run ``explorer serve`` on port 0 and yield its REST base URL; SIGINT it after."""
    with serving(*args) as process:
        assert process.stdout is not None
        line = process.stdout.readline().strip()
        assert line.startswith("REST http://127.0.0.1:"), line
        yield line.split(" ", 1)[1]


def test_serve_prints_the_rest_line_and_serves(tmp_path: Path) -> None:
    """`explorer serve` prints `REST http://HOST:PORT/api/v1` once it is ready to answer."""
    with serve("--db", target(tmp_path / "p.db", channels=100), "--channels", "100") as base_url:
        assert base_url.endswith("/api/v1")
        assert len(httpx.get(base_url + "/channels").json()) == 50


def test_serve_keeps_writes_across_restarts(tmp_path: Path) -> None:
    """A user registered through one `explorer serve` exists after restarting on the same db."""
    db = target(tmp_path / "p.db", channels=100)
    account = {"username": "persisted", "password": "long enough", "email": "p@example.org"}
    with serve("--db", db, "--channels", "100") as base_url:
        assert httpx.post(base_url + "/users", json=account).status_code == 201
    with serve("--db", db, "--channels", "100") as base_url:
        login = httpx.post(base_url + "/users/login", json=account)
        assert login.status_code == 200 and login.json()["username"] == "persisted"


@pytest.mark.sqlite_only("`--db :memory:` is SQLite's in-memory database")
def test_serve_in_memory(tmp_path: Path) -> None:
    """`--db :memory:` runs a platform that writes no file."""
    with serve("--db", ":memory:", "--channels", "100", "--no-rate-limits") as base_url:
        assert httpx.get(base_url + "/channels/streamer").status_code == 200


def test_serve_refuses_a_simulator_without_channels(tmp_path: Path) -> None:
    """`--sim-channels 0` exits 2 with a message naming the flag, before serving anything."""
    done = subprocess.run(
        [sys.executable, "-m", "explorer.cli", "serve", "--db", ":memory:", "--sim-channels", "0"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2 and "--sim-channels" in done.stderr and "REST" not in done.stdout


def test_serve_announces_the_world_clock_and_its_speed() -> None:
    """`--speed 1000` is announced on the CLOCK line with the chat it keeps, after the REST
    and CHAT lines."""
    flags = ("--db", ":memory:", "--channels", "2000", "--speed", "1000", "--chat-nodes", "1")
    with serving(*flags) as process:
        assert process.stdout is not None
        lines = [process.stdout.readline().strip() for _ in range(3)]
    assert lines[0].startswith("REST ") and lines[1].startswith("CHAT ")
    assert lines[2].startswith("CLOCK 2020-07-22T0") and "at speed 1000" in lines[2]
    assert "chat thinned" in lines[2] and "kept" in lines[2]


def test_serve_refuses_a_speed_out_of_bounds() -> None:
    """`--speed 0.5` exits 2 with a message naming the flag and its bounds."""
    done = subprocess.run(
        [sys.executable, "-m", "explorer.cli", "serve", "--db", ":memory:", "--speed", "0.5"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2 and "--speed" in done.stderr and "between 1 and" in done.stderr


def test_serve_refuses_a_database_url_of_another_engine_and_creates_nothing(
    tmp_path: Path,
) -> None:
    """`--db mysql://...` exits 2 saying to give a SQLite file or a PostgreSQL URL, and leaves
    no folder named after the URL's scheme behind."""
    done = subprocess.run(
        [sys.executable, "-m", "explorer.cli", "serve", "--db", "mysql://u@127.0.0.1/w"],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=tmp_path,
    )
    assert done.returncode == 2 and "--db" in done.stderr and "SQLite file" in done.stderr
    assert "postgresql://" in done.stderr
    assert list(tmp_path.iterdir()) == []


def test_python_dash_m_explorer_is_the_command() -> None:
    """`python -m explorer` runs the explorer command (its help lists the subcommands)."""
    done = subprocess.run(
        [sys.executable, "-m", "explorer", "--help"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("usage: explorer ")
    assert all(command in done.stdout for command in ("serve", "lab", "tour", "record"))


def test_serve_rest_refuses_a_file_without_a_world(tmp_path: Path) -> None:
    """`explorer serve rest` on a file holding no world exits 2 saying to start the platform
    first, and creates no file; without `--broker` it exits 2 naming the flag."""
    command = [sys.executable, "-m", "explorer.cli", "serve", "rest", "--db", "new.db"]
    broker = ("--broker", "redis://127.0.0.1:1/0")
    for args, said in (((), "--broker is required"), (broker, "start `explorer serve --broker")):
        done = subprocess.run(
            [*command, *args], capture_output=True, text=True, timeout=60, cwd=tmp_path
        )
        assert done.returncode == 2 and said in done.stderr, done.stderr
    assert list(tmp_path.iterdir()) == []
