"""Shared fixtures: real platforms on 127.0.0.1 port 0, stopped after use."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from explorer.emulator import Platform
from explorer.wire.ratelimit import BUCKETS
from tests import databases, pgcluster
from tests.databases import start

SMALL_WORLD = 1000


#: Buckets too large to run out: the shared platform serves the whole suite from one address,
#: and the toolkit paces itself by the headers even where enforcement is off.
UNLIMITED = {name: (10**9, bucket.interval) for name, bucket in BUCKETS.items()}


def pytest_report_header() -> str:
    """The engine in the run's header, beside the versions."""
    return f"platform database: {databases.ENGINE} ({databases.VARIABLE})"


def pytest_runtest_setup(item: pytest.Item) -> None:
    """Skip a test marked ``sqlite_only`` when the platforms run on another engine."""
    marker = item.get_closest_marker("sqlite_only")
    if marker is not None and databases.ENGINE != "sqlite":
        pytest.skip(f"SQLite only, not {databases.ENGINE}: {marker.args[0]}")


@pytest.fixture(scope="session", autouse=True)
def _database_cluster() -> Iterator[None]:
    """Stop the private PostgreSQL cluster after the session, if one was started."""
    yield
    databases.stop()


@pytest.fixture(autouse=True)
def _fresh_databases() -> Iterator[None]:
    """Drop the test's fresh PostgreSQL databases once nothing uses them (under the switch)."""
    yield
    databases.release()


#: The test files that take longest (one to two minutes each on a quiet 2-core machine: a wheel
#: installed into a fresh venv and a recipe run in it, 575 fuzzed requests, recorders and their
#: pauses, the docs site, process drills), longest first. They run first: under
#: ``--dist loadfile --no-loadscope-reorder`` (make test) the other process works through the
#: short files meanwhile, instead of idling at the end of the pass while the last long file
#: runs alone (xdist's own order, by number of tests, put the wheel's 4 tests last).
LONG_FILES = (
    "test_wheel.py",
    "test_fuzz_rest.py",
    "test_recorder.py",
    "test_record_cli.py",
    "test_docs_site.py",
    "test_recorder_pauses.py",
    "test_scaleout_drills.py",
    "test_drills_postgres.py",
    "test_security_round2.py",
    "test_coverage.py",
)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Move the tests of :data:`LONG_FILES` to the front, in that order, keeping every other
    test where it was."""
    rank = {name: place for place, name in enumerate(LONG_FILES)}
    items.sort(key=lambda item: rank.get(item.path.name, len(LONG_FILES)))


@pytest.fixture(scope="session")
def platform() -> Iterator[Platform]:
    """One shared read-mostly platform (seed 0, 1,000 channels: 14 live at the world's instant;
    buckets that never run out)."""
    with start(channels=SMALL_WORLD, rate_limits=False, buckets=UNLIMITED) as running:
        yield running


@pytest.fixture
def make_platform() -> Iterator[Callable[..., Platform]]:
    """A factory for platforms with their own settings; each is stopped after the test."""
    started: list[Platform] = []

    def make(**options: Any) -> Platform:
        options.setdefault("channels", SMALL_WORLD)
        running = start(**options)
        started.append(running)
        return running

    yield make
    for running in started:
        running.stop()


def sign_in(base_url: str, username: str, password: str = "explorer") -> httpx.Client:
    """An httpx client signed in with a cookie session, sending the CSRF token it was given."""
    client = httpx.Client(base_url=base_url, timeout=10)
    response = client.post("/users/login", json={"username": username, "password": password})
    response.raise_for_status()
    client.headers["X-CSRF-Token"] = response.headers["X-CSRF-Token"]
    return client


@pytest.fixture
def signed_in() -> Iterator[Callable[..., httpx.Client]]:
    """A factory of signed-in clients (``signed_in(base_url, "streamer")``), closed after."""
    clients: list[httpx.Client] = []

    def make(base_url: str, username: str, password: str = "explorer") -> httpx.Client:
        client = sign_in(base_url, username, password)
        clients.append(client)
        return client

    yield make
    for client in clients:
        client.close()


@pytest.fixture(scope="session")
def s3_server() -> Iterator[str]:
    """A real S3-compatible server (moto's server mode) on 127.0.0.1, port 0; the standard
    AWS variables point at it (for this process and the processes it starts). Its URL."""
    from moto.server import ThreadedMotoServer

    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    url = f"http://{host}:{port}"
    with pytest.MonkeyPatch.context() as patch:
        for name, value in {
            "AWS_ACCESS_KEY_ID": "explorer",
            "AWS_SECRET_ACCESS_KEY": "explorer-secret",
            "AWS_DEFAULT_REGION": "us-east-1",
            "AWS_ENDPOINT_URL": url,
        }.items():
            patch.setenv(name, value)
        for name in ("AWS_PROFILE", "AWS_SESSION_TOKEN"):
            patch.delenv(name, raising=False)
        try:
            yield url
        finally:
            server.stop()


@pytest.fixture
def bucket(s3_server: str, request: pytest.FixtureRequest) -> str:
    """A new empty bucket on the loopback S3 server, as ``s3://name``."""
    import boto3

    name = re.sub(r"[^a-z0-9-]", "-", request.node.name.lower())[:40].strip("-") + "-bucket"
    boto3.client("s3", endpoint_url=s3_server).create_bucket(Bucket=name)
    return f"s3://{name}"


@pytest.fixture(scope="session")
def postgres() -> pgcluster.Cluster:
    """The private PostgreSQL cluster on a free loopback port, stopped after the session (the
    tests using it skip, saying why, where the server or psycopg is not installed; under CI
    they fail instead)."""
    return databases.cluster()


@pytest.fixture(params=["sqlite", "postgresql"])
def new_database(request: pytest.FixtureRequest, tmp_path: Path) -> Callable[[], str]:
    """On each engine, a maker of new, empty databases (``Store``'s target): a SQLite file, or
    a schema of its own in the private PostgreSQL cluster."""
    if request.param == "sqlite":
        files = iter(range(1000))
        return lambda: str(tmp_path / f"{next(files)}.db")
    cluster: pgcluster.Cluster = request.getfixturevalue("postgres")
    return cluster.schema
