"""Rate-limit buckets: the spec's table, the platform's fixed windows, the client's estimate."""

from __future__ import annotations

import pytest

from explorer.wire.ratelimit import (
    BUCKETS,
    RESET_MARGIN,
    UNKNOWN_RESET_PAUSE,
    Allowance,
    Bucket,
    Ledger,
    Window,
    counts_status,
)

SPEC_LIMITS = {
    "channel-follow": (100, 60),
    "channel-read": (1000, 300),
    "channel-search": (250, 300),
    "channel-write": (250, 300),
    "chats": (500, 60),
    "contact": (3, 60),
    "global": (1000, 60),
    "ingest": (5, 60),
    "mail-subscribe": (3, 60),
    "notification-read": (100, 60),
    "report": (10, 60),
    "upload": (5, 600),
    "user-email": (2, 86400),
    "user-login": (50, 60),
    "user-login-failed": (8, 900),
    "user-read": (500, 60),
    "user-register": (2, 60),
    "user-write": (100, 60),
}
NOW = 1_000_000.0


def test_buckets_match_the_spec_table() -> None:
    """Every bucket of platform.md's Limits table, with its count and interval, and no other."""
    assert {n: (b.count, b.interval) for n, b in BUCKETS.items()} == SPEC_LIMITS


@pytest.mark.parametrize(
    ("bucket", "status", "counted"),
    [
        ("global", 500, True),
        ("global", 429, True),
        ("user-login-failed", 401, True),
        ("user-login-failed", 200, False),
        ("channel-read", 200, True),
        ("channel-read", 302, True),
        ("channel-read", 404, False),
    ],
)
def test_counts_status(bucket: str, status: int, counted: bool) -> None:
    """global counts all, login-failed only 401s, the rest successes and redirects."""
    assert counts_status(bucket, status) is counted


def test_window_fills_then_resets_after_its_interval() -> None:
    """A fixed window allows ``count`` requests, then refills ``interval`` after it opened."""
    window = Window(Bucket("b", 2, 10))
    for _ in range(2):
        assert window.allows(NOW)
        window.charge(NOW)
    assert not window.allows(NOW + 9.9)
    assert window.remaining(NOW + 9.9) == 0
    assert window.resets_at == NOW + 10
    assert window.allows(NOW + 10)


def test_a_held_place_counts_until_released() -> None:
    """A request in flight holds a place: the window is full until it is released, and only
    a counted answer is charged."""
    window = Window(Bucket("b", 2, 10))
    window.hold()
    window.hold()
    assert not window.allows(NOW)
    assert window.remaining(NOW) == 0
    window.release(NOW, counted=False)
    assert window.allows(NOW)
    window.release(NOW, counted=True)
    assert (window.used, window.pending, window.remaining(NOW)) == (1, 0, 1)


def test_ledger_keeps_one_window_per_bucket_and_identity() -> None:
    """Identities and buckets are counted apart."""
    ledger = Ledger()
    ledger.window("chats", "addr:a").charge(NOW)
    assert ledger.window("chats", "addr:a").used == 1
    assert ledger.window("chats", "addr:b").used == 0
    assert ledger.window("chats", "addr:a") is ledger.window("chats", "addr:a")


def reported(allowance: Allowance, remaining: int, reset: float, limit: int = 5) -> None:
    """One request sent and answered 200 with these headers."""
    allowance.take()
    allowance.settle(NOW, 200, limit, remaining, reset * 1000)


def test_unknown_allowance_lets_one_probe_through() -> None:
    """Before any answer only one request may be in flight."""
    allowance = Allowance(60)
    assert allowance.delay(NOW) == 0
    allowance.take()
    assert allowance.delay(NOW) is None


def test_allowance_learns_from_headers_and_spends_down() -> None:
    """Reported remaining requests are spent, then the client waits for the reset."""
    allowance = Allowance(60)
    reported(allowance, remaining=2, reset=NOW + 30)
    for _ in range(2):
        assert allowance.delay(NOW) == 0
        allowance.take()
    assert allowance.delay(NOW) == pytest.approx(30 + RESET_MARGIN)


def test_allowance_counts_requests_in_flight_against_the_report() -> None:
    """A report does not count requests still in flight, so they are subtracted."""
    allowance = Allowance(60)
    reported(allowance, remaining=5, reset=NOW + 30)
    for _ in range(3):
        allowance.take()
    allowance.settle(NOW, 200, 5, 4, (NOW + 30) * 1000)
    assert allowance.remaining == 2


def test_allowance_ignores_a_late_answer_from_an_older_window() -> None:
    """A report about a window that already closed does not overwrite the current one."""
    allowance = Allowance(60)
    reported(allowance, remaining=4, reset=NOW + 30)
    allowance.take()
    allowance.settle(NOW, 200, 5, 0, (NOW - 1) * 1000)
    assert (allowance.remaining, allowance.resets_at) == (3, NOW + 30)


def test_allowance_refills_after_the_reset_and_trusts_the_next_report() -> None:
    """After the reset the bucket is assumed full; the next report corrects the guess."""
    allowance = Allowance(300)
    reported(allowance, remaining=0, reset=NOW + 2)
    later = NOW + 2.5
    assert allowance.delay(later) == 0
    assert allowance.remaining == 5
    allowance.take()
    allowance.settle(later, 200, 5, 3, (later + 2) * 1000)
    assert allowance.remaining == 3
    assert allowance.resets_at == later + 2


def test_a_429_empties_the_bucket_until_its_reset() -> None:
    """A 429 with a reset header means wait until then."""
    allowance = Allowance(60)
    reported(allowance, remaining=3, reset=NOW + 30)
    allowance.take()
    allowance.settle(NOW, 429, 5, 0, (NOW + 12) * 1000)
    assert allowance.delay(NOW) == pytest.approx(12 + RESET_MARGIN)


def test_a_429_without_reset_backs_off_exponentially() -> None:
    """Without a reset header the pause doubles with each attempt."""
    allowance = Allowance(60)
    allowance.take()
    allowance.settle(NOW, 429, None, None, None, attempt=3)
    assert allowance.delay(NOW) == pytest.approx(4 * UNKNOWN_RESET_PAUSE + RESET_MARGIN)


def test_answers_without_headers_mean_unlimited() -> None:
    """An endpoint that reports no bucket is not paced."""
    allowance = Allowance(60)
    allowance.take()
    allowance.settle(NOW, 200, None, None, None)
    for _ in range(100):
        assert allowance.delay(NOW) == 0
        allowance.take()


def test_assumed_allowance_counts_locally_from_the_table() -> None:
    """``global`` never reports, so it is counted from the table's size and interval."""
    allowance = Allowance.assumed(Bucket("global", 2, 60))
    for _ in range(2):
        assert allowance.delay(NOW) == 0
        allowance.take()
    assert allowance.delay(NOW + 1) == pytest.approx(59 + RESET_MARGIN)
    assert allowance.delay(NOW + 60) == 0
