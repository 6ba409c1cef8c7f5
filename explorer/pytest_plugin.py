"""The pytest plugin (entry point ``explorer`` in ``pytest11``): a running platform for tests
of one's own clients, and a scenario to script what happens on it.

Installing the package registers it; no conftest is needed. Fixtures:

- ``explorer_platform``: a platform serving on 127.0.0.1 (free ports) for one test, stopped
  after it. ``@pytest.mark.explorer_platform(seed=..., channels=..., speed=...)`` (and any
  other ``explorer.emulator.start`` argument, e.g. ``simulate=True``, ``rate_limits=False``)
  shapes it; by default a 1,000-channel world of seed 0 at speed 1, with rate limits on and
  the simulator off, so nothing happens that the test did not ask for.
- ``explorer_platform_factory``: a function starting more platforms with those arguments,
  every one stopped after the test.
- ``explorer_scenario``: a :class:`~explorer.scenario.Scenario` on ``explorer_platform``.

The platforms run on SQLite in memory unless told otherwise: ``--explorer-db
postgresql://user@host/db`` (or ``explorer_db`` in the ini file) runs each one on that
PostgreSQL database instead, in a new schema of its own that is seeded for it and dropped
after the test, so tests stay as independent as in memory. A marker's ``db=`` (a SQLite file
or a URL) runs that test's platform on exactly that database, kept after it.

The platform is imported when a fixture is first used, so the plugin costs other test suites
nothing.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import ExitStack
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from explorer.emulator import Platform
    from explorer.scenario import Scenario

#: The platform a test gets unless its marker says otherwise: small, seeded, quiet.
DEFAULTS: dict[str, Any] = {
    "seed": 0,
    "channels": 1000,
    "speed": 1.0,
    "simulate": False,
    "host": "127.0.0.1",
    "port": 0,
}
MARKER = "explorer_platform"
#: The option (and ini setting) naming the PostgreSQL database the platforms run on.
DATABASE = "explorer_db"


def pytest_addoption(parser: pytest.Parser) -> None:
    """Add ``--explorer-db`` and its ini setting ``explorer_db``."""
    described = (
        "a postgresql:// URL: the explorer_platform fixtures run each platform on that "
        "database, in a new schema of its own dropped after the test (default: SQLite in memory)"
    )
    parser.addoption("--explorer-db", dest=DATABASE, metavar="URL", help=described)
    parser.addini(DATABASE, described)


def _database(config: pytest.Config) -> str | None:
    """The PostgreSQL URL the option or the ini file gives, or None (SQLite in memory)."""
    url = config.getoption(DATABASE) or config.getini(DATABASE) or None
    if url is not None and not url.startswith("postgresql://"):
        raise pytest.UsageError(f"--explorer-db takes a postgresql:// URL, not {url!r}")
    return url


def pytest_configure(config: pytest.Config) -> None:
    """Declare the marker, so ``--strict-markers`` accepts it; refuse a database that is
    not PostgreSQL's at once."""
    _database(config)
    config.addinivalue_line(
        "markers",
        f"{MARKER}(seed=0, channels=1000, speed=1.0, **options): how the {MARKER} fixture's "
        "platform is started (options as explorer.emulator.start takes them)",
    )


def _start(options: dict[str, Any]) -> Platform:
    from explorer.emulator import start

    return start(**{**DEFAULTS, **options})


@pytest.fixture
def explorer_platform_factory(
    pytestconfig: pytest.Config,
) -> Iterator[Callable[..., Platform]]:
    """Start platforms (``explorer_platform_factory(seed=1, speed=60)``) on 127.0.0.1; each is
    stopped after the test (and its schema dropped, on ``--explorer-db``)."""
    url = _database(pytestconfig)
    started: list[Platform] = []
    with ExitStack() as schemas:

        def make(**options: Any) -> Platform:
            if url is not None and "db" not in options:
                from explorer.emulator.db.schemas import private_schema

                options["db"] = schemas.enter_context(private_schema(url))
            running = _start(options)
            started.append(running)
            return running

        yield make
        for running in started:
            running.stop()


@pytest.fixture
def explorer_platform(
    request: pytest.FixtureRequest, explorer_platform_factory: Callable[..., Platform]
) -> Platform:
    """A running platform for this test, shaped by its ``explorer_platform`` marker;
    ``.base_url`` is its REST base (``http://127.0.0.1:PORT/api/v1``)."""
    marker = request.node.get_closest_marker(MARKER)
    if marker is not None and marker.args:
        raise pytest.UsageError(f"@pytest.mark.{MARKER} takes keyword arguments only.")
    return explorer_platform_factory(**(marker.kwargs if marker else {}))


@pytest.fixture
def explorer_scenario(explorer_platform: Platform) -> Scenario:
    """A scenario on ``explorer_platform``: add steps, then ``.play()`` or ``.start()``."""
    from explorer.scenario import Scenario

    return Scenario(explorer_platform.base_url)
