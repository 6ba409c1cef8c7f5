"""Several REST processes of one platform (``explorer serve`` + ``explorer serve rest``) on one
database file and a real redis-server, each a real process ended by its own PID: a limit is
one limit whichever process answers, a session made on one works on the other, a write on one
shows in a listing on the other, and processes sharing a port keep it answering."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from contextlib import closing
from datetime import datetime, timedelta
from pathlib import Path
from urllib.parse import urlsplit

import httpx
import pytest

from explorer.core.processes import Child
from explorer.emulator.fleet import RedisServer, spawn, wait_for
from explorer.wire.ratelimit import BUCKET_HEADER, BUCKETS
from tests import databases
from tests.conftest import sign_in

pytestmark = pytest.mark.skipif(
    shutil.which("redis-server") is None,
    reason="no redis-server binary (Debian: apt install redis-server); the test needs a real one",
)


#: World seconds per wall second: a process joining with a world clock of its own would trail
#: the first by this many world seconds per second it started later.
SPEED = 100
#: The size of the platform's world.
CHANNELS = 300


class TwoProcesses:
    """The first REST process (it seeds the world) and a second one on its own port."""

    def __init__(self, folder: Path, redis: RedisServer) -> None:
        self.folder = folder
        self.args = [
            *("--db", databases.target(folder / "platform.db", channels=CHANNELS)),
            *("--broker", redis.url, "--channels", str(CHANNELS), "--speed", str(SPEED)),
            *("--no-simulate", "--forwarded-allow-ips", "127.0.0.1"),
        ]
        self.first = wait_for(spawn(["--port", "0", *self.args], folder / "first.log"), 1)
        self.second = self.join("0", "second")

    def join(self, port: str, name: str) -> Child:
        """One more REST process of the platform on ``port`` (0: a free one)."""
        return wait_for(spawn(["rest", "--port", port, *self.args], self.folder / f"{name}.log"), 1)

    def urls(self) -> tuple[str, str]:
        """The REST base addresses of the first and second process."""
        return self.first.address, self.second.address


@pytest.fixture(scope="module")
def platform(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TwoProcesses]:
    """Two REST processes of one platform with rate limits on, and its Redis."""
    redis = RedisServer().start()
    running: TwoProcesses | None = None
    try:
        running = TwoProcesses(tmp_path_factory.mktemp("scaleout-rest"), redis)
        yield running
    finally:
        if running is not None:
            running.second.stop()
            running.first.stop()
        redis.stop()


def test_the_lockout_is_one_limit_over_both_processes(platform: TwoProcesses) -> None:
    """Failed sign-ins from one address sent to both processes alternately: exactly the
    lockout's count of them are answered 401, then either process refuses with 429."""
    lockout = BUCKETS["user-login-failed"].count
    headers = {"X-Forwarded-For": "192.0.2.7"}
    wrong = {"username": "viewer", "password": "not the password"}
    statuses = []
    for attempt in range(lockout + 2):
        base = platform.urls()[attempt % 2]
        response = httpx.post(f"{base}/users/login", json=wrong, headers=headers, timeout=10)
        statuses.append(response.status_code)
        if response.status_code == 429:
            assert response.headers[BUCKET_HEADER] == "user-login-failed"
    assert statuses == [401] * lockout + [429, 429]


def test_remaining_counts_down_over_both_processes(platform: TwoProcesses) -> None:
    """Listings sent to both processes alternately count down one X-RateLimit-Remaining."""
    headers = {"X-Forwarded-For": "192.0.2.8"}
    remaining = []
    for attempt in range(6):
        base = platform.urls()[attempt % 2]
        response = httpx.get(f"{base}/channels", params={"limit": 5}, headers=headers, timeout=10)
        remaining.append(int(response.raise_for_status().headers["X-RateLimit-Remaining"]))
    first = remaining[0]
    assert remaining == list(range(first, first - 6, -1))


def followers_listed(base: str) -> int:
    """``streamer``'s followers in a channel listing of ``base`` (a page the page cache
    keeps, anonymous)."""
    query = {"where": "token:eq:streamer", "fields": "token,numFollowers"}
    found: int = httpx.get(f"{base}/channels", params=query, timeout=10).json()[0]["numFollowers"]
    return found


def test_a_session_from_one_process_writes_through_the_other(platform: TwoProcesses) -> None:
    """A cookie session (and its CSRF token) made on the first process follows a channel
    through the second; the first lists the follow, and its channel listing (a cached page)
    counts it."""
    first, second = platform.urls()
    before = followers_listed(first)
    with closing(sign_in(first, "viewer2")) as client:
        assert client.get(f"{second}/users/current").json()["username"] == "viewer2"
        assert client.put(f"{second}/channels/streamer/follow").status_code == 200
    latest = httpx.get(f"{first}/channels/streamer/follow", timeout=10).json()[0]
    assert latest["username"] == "viewer2"
    assert followers_listed(first) == before + 1


def world_now(base: str) -> datetime:
    """The world clock of the process at ``base``."""
    root = base.removesuffix("/api/v1")
    return datetime.fromisoformat(httpx.get(f"{root}/_emulator/clock", timeout=10).json()["now"])


def test_a_process_that_joined_later_keeps_the_first_ones_world_time(
    platform: TwoProcesses,
) -> None:
    """The second process's world clock, read between two readings of the first's, lies
    between them (within a world second), though it started seconds after the first."""
    first, second = platform.urls()
    before, joined, after = world_now(first), world_now(second), world_now(first)
    margin = timedelta(seconds=1)
    assert before - margin <= joined <= after + margin, (before, joined, after)


def test_processes_sharing_a_port_keep_it_answering(platform: TwoProcesses) -> None:
    """A REST process joins another on its port; once that one is stopped, the port still
    answers, from the one that joined."""
    joined = platform.join("0", "alone")
    port = str(urlsplit(joined.address).port)
    sharing = platform.join(port, "sharing")
    try:
        assert sharing.address == joined.address
        joined.stop()
        for _ in range(5):  # new connections, all to the one process left on the port
            with httpx.Client(timeout=10) as client:
                assert client.get(f"{sharing.address}/channels/streamer").status_code == 200
    finally:
        joined.stop()
        sharing.stop()
