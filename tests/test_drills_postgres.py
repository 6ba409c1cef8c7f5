"""Fault drills on a platform spread over processes as over hosts: two REST processes (on
127.0.0.1 and 127.0.0.2), three chat nodes (127.0.1.x), a private PostgreSQL cluster, a real
redis-server and a recorder (a watch capturing a chat to disk), each process ended by its PID.

Each drill runs a steady, bounded load (listings on both REST processes, follows, chat messages,
a live-events subscription) that records what was acknowledged, faults one process (``kill -9``
of a REST process, a PostgreSQL restart, a Redis restart), and checks that everything
acknowledged is there afterwards, that every call ended within its timeout with an answer or a
clear error, and that the load goes on. The platform is the module's; after each drill what a
drill ended is started again (``Fleet.heal``). Under CI a missing server fails the module.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path

import httpx
import pandas as pd
import pytest

import explorer
from explorer.chat import ChatClient
from explorer.emulator.app import RETRY_AFTER, UNAVAILABLE
from explorer.emulator.brokers.redis import TTL
from explorer.emulator.db.engine import Store
from explorer.emulator.db.pools import POOL_TIMEOUT
from explorer.emulator.fleet import Fleet
from explorer.errors import ChatError, ConnectionFailed
from tests import pgcluster
from tests.chatkit import run
from tests.test_live_constellation import opened_at
from tests.test_scaleout_drills import PASSWORD, caught_up, until

pytestmark = pytest.mark.any_engine("runs on PostgreSQL whatever the switch")


#: Seconds any one call of the load may take before it counts as a hang.
CALL_TIMEOUT = 10.0
#: Acknowledged follows and replied messages the load makes before the fault, and after it.
STEADY = 15
#: Seconds one drill's load may run at most.
LOAD_LIMIT = 40.0
#: Channels in the drills' world (the follows' targets).
CHANNELS = 300
#: The user whose follows each drill writes (one per drill: a follow is written once).
WRITERS = {"kill": "viewer", "postgres": "viewer2", "redis": "moderator"}


def missing() -> str | None:
    """Why the drills cannot run here, or None."""
    if shutil.which("redis-server") is None:
        return "no redis-server binary (Debian: apt install redis-server)"
    return pgcluster.missing()


@pytest.fixture(scope="module")
def cluster() -> Iterator[pgcluster.Cluster]:
    """A private PostgreSQL cluster of the module's own (a drill restarts it)."""
    reason = missing()
    if reason is not None and os.environ.get("CI"):
        pytest.fail(f"CI runs the drills on PostgreSQL and Redis: {reason}")
    if reason is not None:
        pytest.skip(reason)
    server = pgcluster.Cluster()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="module")
def platform(cluster: pgcluster.Cluster) -> Iterator[Fleet]:
    """Two REST processes, three chat nodes and Redis on the cluster, rate limits on; a client
    of 127.0.0.0/8 may say whose request it forwards (so each load counts in windows of its
    own)."""
    cluster.create("drills")
    rest = ["--forwarded-allow-ips", "127.0.0.0/8"]
    with Fleet(
        cluster.url_of("drills"),
        nodes=3,
        rest=2,
        channels=CHANNELS,
        spread=True,
        rate_limits=True,
        rest_args=rest,
        node_args=["--chat-rate", "5000"],
    ) as fleet:
        yield fleet


@pytest.fixture
def fleet(platform: Fleet) -> Iterator[Fleet]:
    """The module's platform; what a drill ended is started again afterwards."""
    yield platform
    platform.heal()


def root_of(base: str) -> str:
    """The web root of a REST base address."""
    return base.removesuffix("/api/v1")


@dataclass
class Tally:
    """What a load's calls got: statuses, connection errors, and the bad: an answer 5xx but a
    503 with a JSON body, or a call that did not end within :data:`CALL_TIMEOUT`."""

    statuses: Counter[int] = field(default_factory=Counter)
    errors: Counter[str] = field(default_factory=Counter)
    bad: list[str] = field(default_factory=list)
    #: The errors answered: status and message, counted.
    refusals: Counter[str] = field(default_factory=Counter)

    def call(self, send: Callable[[], httpx.Response]) -> httpx.Response | None:
        """Send one request; its response, or None when the connection failed."""
        try:
            response = send()
        except httpx.TimeoutException as exc:
            self.bad.append(f"hung: {exc!r}")
            return None
        except httpx.TransportError as exc:
            self.errors[type(exc).__name__] += 1
            return None
        self.statuses[response.status_code] += 1
        clear = response.status_code < 500 or response.status_code == 503
        if response.status_code >= 400:
            try:
                message = response.json()["message"]
            except (ValueError, KeyError, TypeError):
                clear = False
            else:
                self.refusals[f"{response.status_code} {message}"] += 1
        if not clear:
            self.bad.append(f"{response.status_code}: {response.text[:200]}")
        return response


class Load:
    """A steady load on the REST processes, in threads until :meth:`stop` (or
    :data:`LOAD_LIMIT`): anonymous listings sent to each process in turn, and ``user``
    following ``targets`` one by one, each follow retried on the next process until it is
    acknowledged (``followed``, in order)."""

    def __init__(self, bases: list[str], user: str, targets: list[int], forwarded: str) -> None:
        self.bases = bases
        self.targets = targets
        self.headers = {"X-Forwarded-For": forwarded}
        self.tally = Tally()
        self.followed: list[int] = []
        self.retried = 0
        self._stop = threading.Event()
        login = httpx.post(
            f"{bases[0]}/users/login",
            json={"username": user, "password": PASSWORD},
            headers=self.headers,
            timeout=CALL_TIMEOUT,
        ).raise_for_status()
        # The session cookie sent by hand: the cookie jar would keep it to the host that set it.
        cookie = "; ".join(f"{name}={value}" for name, value in login.cookies.items())
        self.session = {"Cookie": cookie, "X-CSRF-Token": login.headers["X-CSRF-Token"]}
        self._threads = [
            threading.Thread(target=self._list, daemon=True),
            threading.Thread(target=self._follow, daemon=True),
        ]

    def status(self) -> str:
        """What it did so far, for a failure's message."""
        return f"{len(self.followed)} followed, {self.retried} retried, {self.tally}"

    def start(self) -> Load:
        for thread in self._threads:
            thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        for thread in self._threads:
            thread.join(CALL_TIMEOUT * 2)

    def _running(self, deadline: float) -> bool:
        return not self._stop.is_set() and time.monotonic() < deadline

    def _list(self) -> None:
        deadline = time.monotonic() + LOAD_LIMIT
        with httpx.Client(timeout=CALL_TIMEOUT, headers=self.headers) as client:
            for turn in range(100_000):
                if not self._running(deadline):
                    return
                base = self.bases[turn % len(self.bases)]
                self.tally.call(partial(client.get, f"{base}/channels", params={"limit": 5}))
                self._stop.wait(0.05)

    def _follow(self) -> None:
        deadline = time.monotonic() + LOAD_LIMIT
        turn = 0
        with httpx.Client(timeout=CALL_TIMEOUT, headers={**self.headers, **self.session}) as api:
            for channel in self.targets:
                while self._running(deadline):
                    base = self.bases[turn % len(self.bases)]
                    turn += 1
                    response = self.tally.call(
                        partial(api.put, f"{base}/channels/{channel}/follow")
                    )
                    if response is not None and response.status_code == 200:
                        self.followed.append(channel)
                        break
                    if response is not None and response.status_code in (400, 403, 404):
                        self.tally.bad.append(f"follow refused: {response.text[:200]}")
                        break
                    self.retried += 1
                    self._stop.wait(0.1)
                if not self._running(deadline):
                    return
                self._stop.wait(0.05)


def follows_of(url: str, user: int) -> set[int]:
    """The channels ``user`` follows, read from the database."""
    store = Store(url)
    try:
        rows = store.all("SELECT channelId FROM channel_follows WHERE userId = ?", (user,))
    finally:
        store.close()
    return {row[0] for row in rows}


def history_ids(url: str, channel: int) -> list[str]:
    """Every stored, undeleted message id of ``channel`` in history order."""
    store = Store(url)
    try:
        rows = store.all(
            "SELECT id FROM chat_messages WHERE channelId = ? AND deleted = 0 ORDER BY seq",
            (channel,),
        )
    finally:
        store.close()
    return [row[0] for row in rows]


async def talk(chat: ChatClient, replied: list[str], stop: asyncio.Event) -> None:
    """Send numbered messages until ``stop``, keeping the ids of those that got a reply (a
    message refused or lost with its connection is not kept, and the next one is sent)."""
    for count in range(10_000):
        if stop.is_set():
            return
        try:
            replied.append((await chat.send(f"drill {count}", timeout=5))["id"])
        except (ConnectionFailed, TimeoutError, ChatError):
            await asyncio.sleep(0.1)
        await asyncio.sleep(0.02)


async def until_said(
    condition: Callable[[], bool], timeout: float, what: Callable[[], str]
) -> None:
    """Wait (polling) until ``condition()`` holds, at most ``timeout`` seconds; the failure
    says ``what()`` (the state then)."""
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what()}"
        await asyncio.sleep(0.02)


@dataclass
class Outcome:
    """What a drill's load saw."""

    load: Load
    replied: list[str]
    #: Seconds from the fault's end until the first follow acknowledged after it.
    recovered: float


def under_load(fleet: Fleet, drill: str, fault: Callable[[], None], tmp_path: Path) -> Outcome:
    """Run the load, ``fault()`` once it is steady, and the load again until it is steady once
    more; then check that nothing acknowledged was lost (follows in the database and in the
    live events of a subscriber on the first REST process, replied messages in history and in
    the recorder's capture, from its first message on, once and in order)."""
    url = str(fleet.db)
    bases = [child.address for child in fleet.rests]
    user_name = WRITERS[drill]
    owned = httpx.get(f"{bases[0]}/channels/{user_name}", timeout=CALL_TIMEOUT).json()
    user_id = int(owned["userId"])
    had = follows_of(url, user_id)
    listed = httpx.get(f"{bases[0]}/channels", params={"limit": 100, "fields": "id"}, timeout=10)
    targets = [c["id"] for c in listed.json() if c["id"] not in had | {owned["id"]}]
    channel = targets[-1]  # the chat recorded: no follow of it is written
    targets = targets[:-1]
    capture = tmp_path / "capture"
    forwarded = f"192.0.2.{list(WRITERS).index(drill) + 1}"

    async def scenario() -> Outcome:
        live = await opened_at(root_of(bases[0]))
        topics = [f"channel:{target}:followed" for target in targets]
        assert (await live.call("livesubscribe", {"events": topics}))["error"] is None
        api = explorer.AsyncClient(bases[0], progress=False)
        talker_api = explorer.AsyncClient(
            bases[0], username="staff", password=PASSWORD, progress=False
        )
        watch = await api.watch([channel], to=capture, flush_every=0.5)
        recorded = watch.chat(channel)
        assert recorded is not None
        talker = talker_api.chat(channel, reconnect_delay=0.05, give_up_after=30.0)
        await talker.start()
        replied: list[str] = []
        stop = asyncio.Event()
        chatting = asyncio.create_task(talk(talker, replied, stop))
        load = await asyncio.to_thread(lambda: Load(bases, user_name, targets, forwarded).start())
        try:
            steady = lambda: len(load.followed) >= STEADY and len(replied) >= STEADY  # noqa: E731
            state = lambda: f"{load.status()}, {len(replied)} replied"  # noqa: E731
            await until_said(steady, 15, lambda: f"the load to build up ({state()})")
            await asyncio.to_thread(fault)
            faulted = time.monotonic()
            acked, said = len(load.followed), len(replied)
            await until_said(
                lambda: len(load.followed) > acked,
                20,
                lambda: f"a follow after the fault ({state()})",
            )
            recovered = time.monotonic() - faulted
            await until_said(
                lambda: len(load.followed) >= acked + STEADY and len(replied) >= said + STEADY,
                20,
                lambda: f"the load to go on ({state()})",
            )
        finally:
            stop.set()
            await asyncio.to_thread(load.stop)
            await chatting
        heard: set[int] = set()

        def every_follow_heard() -> bool:
            for event in live.events:
                if event.get("event") == "live":
                    heard.add(int(event["data"]["channel"].split(":")[1]))
            live.events.clear()
            return set(load.followed) <= heard

        async def listen() -> None:
            while not every_follow_heard():
                live.events.append(await live.packet(timeout=CALL_TIMEOUT))

        await asyncio.wait_for(listen(), 15)
        await live.ws.close()
        history = await asyncio.to_thread(history_ids, url, channel)
        await until(partial(caught_up, recorded, history[-1]), 15, "the recorder to catch up")
        await watch.aclose()
        await talker.aclose()
        for client in (api, talker_api):
            await client.aclose()
        assert set(replied) <= set(history)
        return Outcome(load, replied, recovered)

    outcome = run(scenario(), timeout=120)
    assert outcome.load.tally.bad == [], "a call hung, or an error had no JSON body"
    assert set(outcome.load.followed) <= follows_of(url, user_id), "an acknowledged follow lost"
    events = pd.read_parquet(capture / "events")
    got = list(events[events["event"] == "ChatMessage"].sort_values("row")["message_id"])
    history = history_ids(url, channel)
    assert got == history[history.index(got[0]) :], "gap, duplicate or reordering"
    assert set(outcome.replied) <= set(got)
    return outcome


def test_kill_9_of_a_rest_process_loses_no_acknowledged_write(fleet: Fleet, tmp_path: Path) -> None:
    """The second REST process is killed (-9) under load: the first keeps answering; calls to
    the dead one fail to connect (never hang) and succeed on the first when retried; every
    acknowledged follow and replied message is kept."""
    victim = fleet.joined[0]
    outcome = under_load(fleet, "kill", victim.kill, tmp_path)
    tally = outcome.load.tally
    assert not victim.running()
    assert tally.errors and set(tally.errors) <= {
        "ConnectError",
        "ReadError",
        "RemoteProtocolError",
    }
    assert outcome.load.retried >= 1


def test_postgres_restart_answers_503_then_recovers(
    fleet: Fleet, cluster: pgcluster.Cluster, tmp_path: Path
) -> None:
    """PostgreSQL restarts (fast) under load: a call meanwhile answers or gets 503 with a JSON
    body; the pools and the live-events listener recover by themselves, and every acknowledged
    follow, its live event and every replied message is kept."""
    outcome = under_load(fleet, "postgres", cluster.restart, tmp_path)
    tally = outcome.load.tally
    assert set(tally.statuses) <= {200, 503}
    assert not tally.errors


def test_a_request_while_postgres_is_down_gets_503_then_succeeds(
    fleet: Fleet, cluster: pgcluster.Cluster
) -> None:
    """While PostgreSQL is stopped (longer than a chat node's registration lives) a follow is
    answered 503, with a JSON body and Retry-After, within the pool's wait (no hang, nothing
    written); once it is back the same follow succeeds on the first try and is kept, and every
    chat node is listed (their heartbeats outlived the outage)."""
    base = fleet.rests[1].address
    load = Load([base], "staff", [], "192.0.2.100")
    channel = httpx.get(f"{base}/channels/streamer", timeout=CALL_TIMEOUT).json()["id"]
    headers = {**load.headers, **load.session}
    follow = partial(httpx.put, f"{base}/channels/{channel}/follow", headers=headers)
    httpx.delete(f"{base}/channels/{channel}/follow", headers=headers, timeout=CALL_TIMEOUT)
    with cluster.down():
        started = time.monotonic()
        refused = follow(timeout=2 * POOL_TIMEOUT + CALL_TIMEOUT)
        took = time.monotonic() - started
    assert refused.status_code == 503 and refused.headers["Retry-After"] == RETRY_AFTER
    # At most two pool waits: the one that finds its pooled connection dead, and a new one.
    assert refused.json()["message"] == UNAVAILABLE and took < 2 * POOL_TIMEOUT + 2, took
    assert follow(timeout=CALL_TIMEOUT).status_code == 200
    staff = httpx.get(f"{base}/channels/staff", timeout=CALL_TIMEOUT).json()["userId"]
    assert channel in follows_of(str(fleet.db), staff)
    nodes = {node.address for node in fleet.nodes}

    def listed() -> set[str]:
        url = f"{base}/chats/endpoints"
        return set(httpx.get(url, timeout=CALL_TIMEOUT).json()["endpoints"])

    run(until(lambda: listed() == nodes, 2 * TTL, "every node to be listed again"))


def remaining(fleet: Fleet, forwarded: str) -> list[int]:
    """``X-RateLimit-Remaining`` of six listings for ``forwarded``, sent to each REST process
    in turn."""
    counts = []
    for turn in range(6):
        base = fleet.rests[turn % 2].address
        response = httpx.get(
            f"{base}/channels",
            params={"limit": 5},
            headers={"X-Forwarded-For": forwarded},
            timeout=CALL_TIMEOUT,
        )
        counts.append(int(response.raise_for_status().headers["X-RateLimit-Remaining"]))
    return counts


def test_redis_restart_rate_limits_and_chat_resume(fleet: Fleet, tmp_path: Path) -> None:
    """Redis is killed and started again (empty) under load: both REST processes keep
    answering and chat goes on; afterwards a limit is one limit over both processes again
    (one count down, whichever answers), and nothing acknowledged is lost."""

    def restart() -> None:
        fleet.redis.kill()
        fleet.redis.start()

    outcome = under_load(fleet, "redis", restart, tmp_path)
    assert set(outcome.load.tally.statuses) == {200}
    deadline = time.monotonic() + 10
    for attempt in range(100):  # each process tries Redis again every 2 s
        counts = remaining(fleet, f"198.51.100.{attempt + 1}")
        if counts == list(range(counts[0], counts[0] - 6, -1)):
            break
        assert time.monotonic() < deadline, f"the limits never counted in Redis again: {counts}"
