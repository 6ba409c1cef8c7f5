"""Rate-limit windows in Redis (a real redis-server): one limit for every process counting in
it, held places that expire, the same arithmetic as in process, counting alone while Redis is
away."""

from __future__ import annotations

import logging
import random
import shutil
import uuid
from collections.abc import Iterator

import pytest

from explorer.emulator.fleet import RedisServer, free_port
from explorer.emulator.limits import Admission, Limits, LocalLimits, Refusal, Standing
from explorer.emulator.redislimits import HOLD_TTL, RETRY_AFTER, RedisLimits
from explorer.wire.ratelimit import Bucket
from tests.clocks import ManualClock

pytestmark = pytest.mark.skipif(
    shutil.which("redis-server") is None,
    reason="no redis-server binary (Debian: apt install redis-server); the tests need a real one",
)

BUCKETS = {"read": Bucket("read", 3, 60.0), "global": Bucket("global", 5, 30.0)}
KEYS = (("read", "addr:a"), ("global", "addr:a"))
#: A success counts in both windows: both are charged ahead.
AHEAD = (True, True)
NOW = 1_000_000.0


@pytest.fixture(scope="module")
def server() -> Iterator[RedisServer]:
    """A redis-server for this module (each test counts under a prefix of its own)."""
    running = RedisServer().start()
    yield running
    running.stop()


def shared(url: str, prefix: str, clock: ManualClock | None = None) -> RedisLimits:
    """One process's view of the windows under ``prefix``."""
    return RedisLimits(url, BUCKETS, prefix=prefix, clock=clock or ManualClock())


def test_two_processes_share_one_limit(server: RedisServer) -> None:
    """Requests admitted alternately through two processes' limits fill one window of 3:
    the fourth is refused in both."""
    prefix = uuid.uuid4().hex
    first, second = shared(server.url, prefix), shared(server.url, prefix)
    for limits in (first, second, first):
        assert isinstance(limits.admit(KEYS, NOW, AHEAD), Admission)
    for limits in (first, second):
        refused = limits.admit(KEYS, NOW, AHEAD)
        assert isinstance(refused, Refusal) and refused.index == 0
        assert refused.standing.remaining == 0
    first.close(), second.close()


def test_a_dead_process_held_place_expires(server: RedisServer) -> None:
    """Places held by a request never settled (its process killed) count until they expire,
    HOLD_TTL seconds after they were taken."""
    limits = shared(server.url, uuid.uuid4().hex)
    for _ in range(3):
        assert isinstance(limits.admit(KEYS[:1], NOW, (False,)), Admission)
    assert isinstance(limits.admit(KEYS[:1], NOW + HOLD_TTL - 1, (False,)), Refusal)
    assert isinstance(limits.admit(KEYS[:1], NOW + HOLD_TTL, (False,)), Admission)
    limits.close()


def test_a_charge_is_given_back_only_in_its_own_window(server: RedisServer) -> None:
    """An answer that does not count gives back the charge made ahead for it, unless the
    window it was made in has reset meanwhile."""
    limits = shared(server.url, uuid.uuid4().hex)
    admitted = limits.admit(KEYS[:1], NOW, (True,))
    assert isinstance(admitted, Admission)
    assert admitted.standings[0] == Standing(3, 2, NOW + 60.0)
    assert limits.settle(KEYS[:1], NOW, (False,), admitted, 0) == Standing(3, 3, NOW + 60.0)
    late = limits.admit(KEYS[:1], NOW, (True,))
    assert isinstance(late, Admission)
    after = limits.settle(KEYS[:1], NOW + 60.0, (False,), late, 0)
    assert after is not None and after.resets_at == NOW + 120.0 and after.remaining == 3
    limits.close()


def _same(local: object, remote: object) -> None:
    """The same answer from both limits, hold names aside (each draws its own)."""
    if isinstance(local, Admission) and isinstance(remote, Admission):
        assert (local.ahead, local.standings) == (remote.ahead, remote.standings)
    else:
        assert local == remote


def test_redis_and_this_process_count_alike(server: RedisServer) -> None:
    """A random run of admissions (charged ahead or held), answers, cancellations and clock
    steps gives the same answers, and the same standing after every step, in Redis as in
    this process."""
    both: tuple[Limits, Limits] = (LocalLimits(BUCKETS), shared(server.url, uuid.uuid4().hex))
    rng = random.Random(7)
    now, in_flight, refusals = NOW, [], 0
    for _ in range(300):
        step = rng.random()
        if step < 0.45:
            ahead = (rng.random() < 0.7, True)
            local, remote = (limits.admit(KEYS, now, ahead) for limits in both)
            _same(local, remote)
            if isinstance(local, Admission) and isinstance(remote, Admission):
                in_flight.append((local, remote))
            refusals += isinstance(local, Refusal)
        elif step < 0.8 and in_flight:
            admitted = in_flight.pop(rng.randrange(len(in_flight)))
            counted = (rng.random() < 0.7, rng.random() < 0.9)
            local, remote = (
                limits.settle(KEYS, now, counted, admission, 1)
                for limits, admission in zip(both, admitted, strict=True)
            )
            assert local == remote
        elif step < 0.9:
            charged = (True, rng.random() < 0.5)
            local, remote = (limits.settle(KEYS, now, charged, None, 0) for limits in both)
            assert local == remote
        else:
            now += rng.choice((0.5, 7.25, 29.0))
        for key in KEYS:
            assert both[0].standing(key, now) == both[1].standing(key, now)
    assert refusals > 10  # the run reached full windows often
    both[1].close()


def test_without_redis_a_process_counts_alone_then_shares_again(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Redis away: the process counts in its own windows, logging it once; RETRY_AFTER
    seconds after a failure it tries Redis again and, once it answers, counts there again."""
    port, clock = free_port(), ManualClock()
    limits: Limits = RedisLimits(
        f"redis://127.0.0.1:{port}/0", BUCKETS, prefix=uuid.uuid4().hex, clock=clock
    )
    with caplog.at_level(logging.INFO, logger="explorer.emulator.redislimits"):
        for _ in range(3):
            assert isinstance(limits.admit(KEYS[:1], NOW, (True,)), Admission)
        assert isinstance(limits.admit(KEYS[:1], NOW, (True,)), Refusal)  # this process's window
        warnings = [r for r in caplog.records if r.levelno == logging.WARNING]
        assert len(warnings) == 1 and "counts alone" in warnings[0].getMessage()
        server = RedisServer(port=port).start()
        try:
            clock.advance(RETRY_AFTER)
            assert isinstance(limits.admit(KEYS[:1], NOW, (True,)), Admission)  # Redis's: empty
            assert "shared again" in caplog.records[-1].getMessage()
        finally:
            limits.close()
            server.stop()
