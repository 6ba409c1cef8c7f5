"""Repository statements written once for both engines give the same results on SQLite and
PostgreSQL: upserts keep what ``INSERT OR REPLACE``/``OR IGNORE`` did, names are found in any
case, lists bind one placeholder per item, ids come back by ``RETURNING``."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest

from explorer.emulator.db import (
    channels,
    chat_polls,
    chat_presence,
    ddl,
    follows,
    frontend,
    languages,
    partnership,
    users,
)
from explorer.emulator.db.engine import Store

NOW = "2024-01-01T00:00:00.000Z"


@pytest.fixture
def store(new_database: Callable[[], str]) -> Iterator[Store]:
    """A store with every repository's schema, on each engine, holding two accounts with
    their channels: ``Streamer_1`` (channel ``Streamer_1``) and ``viewer``."""
    opened = Store(new_database(), ddl())
    with opened.transaction() as tx:
        for name in ("Streamer_1", "viewer"):
            user_id = users.add(tx, name, f"{name}@example.com", "hash", "code", NOW)
            channels.add_for(tx, user_id, name, f"{name}'s channel", NOW, "key")
    yield opened
    opened.close()


def _ids(store: Store) -> tuple[int, int]:
    """The channel ids of ``Streamer_1`` and ``viewer``."""
    first, second = (channels.ref_by_token(store, name) for name in ("Streamer_1", "viewer"))
    assert first is not None and second is not None
    return first[0], second[0]


def test_names_and_tokens_are_found_in_any_case(store: Store) -> None:
    """A user and a channel are found by name in any case, and a prefix search matches in any
    case with ``_`` taken literally."""
    found = users.by_name(store, "STREAMER_1")
    assert found is not None and found[1] == "Streamer_1"
    ref = channels.ref_by_token(store, "streamer_1")
    assert ref is not None and ref[2] == "Streamer_1"
    rows, total = users.named_like(store, "sTREAMER_", users.listed(True), 10, 0)
    assert total == 1 and rows[0][1] == "Streamer_1"
    assert users.named_like(store, "Streamer%", users.listed(True), 10, 0)[1] == 0


def test_hosting_the_same_channel_again_changes_nothing(store: Store) -> None:
    """Hosting a channel changes the host's hostee once (``IS DISTINCT FROM`` a null hostee
    too), and the second time it changes nothing."""
    host, hostee = _ids(store)
    with store.transaction() as tx:
        assert channels.host(tx, host, hostee, NOW) == (None, True)
        assert channels.host(tx, host, hostee, NOW) == (hostee, False)


def test_an_unfollow_never_counts_followers_below_zero(store: Store) -> None:
    """A follow counts once however often it is made, and an unfollow of a channel whose
    count is already zero leaves it at zero."""
    channel, _ = _ids(store)
    viewer = users.by_name(store, "viewer")
    assert viewer is not None
    with store.transaction() as tx:
        assert follows.follow(tx, channel, viewer[0], NOW)
        assert not follows.follow(tx, channel, viewer[0], NOW)
        channels.update(tx, channel, {"numFollowers": 0}, NOW)
        assert follows.unfollow(tx, channel, viewer[0])
    assert channels.followers(store, channel) == 0


def test_a_new_application_resets_the_decision_as_replace_did(store: Store) -> None:
    """Applying again after a denial stores a pending application whose decision columns are
    empty again, as ``INSERT OR REPLACE`` left them."""
    channel, _ = _ids(store)
    fields = ("status", "message", "decidedAt", "decidedBy", "reason")
    with store.transaction() as tx:
        partnership.apply(tx, channel, "first", 1, 2, NOW)
        partnership.decide(tx, channel, "denied", 1, "too small", NOW)
        partnership.apply(tx, channel, "second", 3, 4, NOW)
    assert partnership.application(store, channel, fields) == (
        "pending",
        "second",
        None,
        None,
        None,
    )


def test_stored_names_are_replaced_and_stored_releases_stay(store: Store) -> None:
    """A language stored again takes the new name; a release stored again keeps its first
    commit; the newest release of each app is flagged 1, the others 0."""
    languages.set_languages(store, [("en", "English")])
    languages.set_languages(store, [("en", "Anglais"), ("fr", "French")])
    counts = languages.language_counts(store, "available")
    assert [(row[0], row[1]) for row in counts] == [("en", "Anglais"), ("fr", "French")]
    frontend.add_releases(
        store, [("web", "1.0", "aaa", "2024-01-01"), ("web", "1.1", "bbb", "2024-02-01")]
    )
    frontend.add_releases(store, [("web", "1.0", "zzz", "2024-01-01")])
    listed = [(row[2], row[3], row[5]) for row in frontend.releases(store, "web")]
    assert listed == [("1.1", "bbb", 1), ("1.0", "aaa", 0)]
    assert frontend.releases(store, None) == frontend.releases(store, "web")


def test_rows_of_processes_gone_are_released_and_adopted(store: Store) -> None:
    """Presence rows and polls of a process not among those kept are dropped or adopted; a
    second join on the same process counts one more connection."""
    channel, _ = _ids(store)
    assert chat_presence.join(store, channel, 1, "dead", 10.0)
    assert not chat_presence.join(store, channel, 1, "dead", 10.0)
    chat_presence.join(store, channel, 2, "alive", 10.0)
    assert chat_presence.origin_connections(store, "dead") == 2
    with store.transaction() as tx:
        poll = chat_polls.add(tx, channel, "dead", "{}", 10.0, 100.0)
    assert chat_presence.release(store, ["alive", "me"], 20.0) == [(channel, 1)]
    assert chat_polls.adopt(store, ["alive", "me"], 20.0, 5.0, "me") == [
        (poll, channel, "{}", 100.0)
    ]
    assert users.usernames(store, []) == []
