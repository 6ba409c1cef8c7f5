"""Repository statements written once for both engines give the same results on SQLite and
PostgreSQL: upserts keep what ``INSERT OR REPLACE``/``OR IGNORE`` did, names are found in any
case, lists bind one placeholder per item, ids come back by ``RETURNING``."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator

import pytest

from explorer.emulator.chat.roles import owners_roles, roles_of
from explorer.emulator.db import (
    achievements,
    channel_roles,
    channels,
    chat_polls,
    chat_presence,
    ddl,
    follows,
    frontend,
    languages,
    notifications,
    partnership,
    users,
)
from explorer.emulator.db.engine import Store
from explorer.emulator.listing import Pager, listing_of, read_rankings
from explorer.emulator.shapes import CHANNEL_FILTERS
from explorer.wire.query import parse_list_query

pytestmark = pytest.mark.any_engine("runs both engines itself, in every pass")


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
    assert follows.state(store, channel, viewer[0]) == (None, 0)


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


def test_a_listing_seeks_past_a_key_and_reads_its_ranking_apart(store: Store) -> None:
    """A page sought past the last key of the page before (a merge of named subqueries) and a
    ranking read on a reader of its own list the same channels on both engines."""
    first, second = _ids(store)
    with store.transaction() as tx:
        channels.update(tx, second, {"viewersTotal": 5}, NOW)
    query = parse_list_query({"order": "viewersTotal:desc"}, CHANNEL_FILTERS, ())
    listing, pager, version = listing_of(query), Pager(store), store.catalog_version()
    pages = [pager.ids(listing, version, offset, 1) for offset in (0, 1, 2)]
    assert pages == [[second], [first], []]
    with store.reader() as reader:
        _, (ranking,) = read_rankings(reader, ["viewersTotal"])
    assert ranking.ids.tolist() == [first, second]


def test_role_holders_are_found_in_the_json_list_of_roles(store: Store) -> None:
    """Listing a channel's users by role reads each holder's JSON list of roles: a role lists
    its holders, a hidden role leaves its holders out, the owner always stays."""
    channel, _ = _ids(store)
    owner, viewer = (users.id_named(store, name) for name in ("Streamer_1", "viewer"))
    assert owner is not None and viewer is not None
    channel_roles.change_roles(store, channel, viewer, {"Mod", "Subscriber"}, set())
    listed = users.listed(True)

    def names(role: str | None, hidden: set[str]) -> list[str]:
        rows, total = channel_roles.role_holders(store, channel, owner, role, hidden, listed, 10, 0)
        assert total == len(rows)
        return [row[1] for row in rows]

    assert names("Mod", set()) == ["viewer"]
    assert names("Banned", set()) == []
    assert names(None, set()) == ["Streamer_1", "viewer"]
    assert names(None, {"Subscriber"}) == ["Streamer_1"]


def test_owners_roles_read_together_are_those_read_one_by_one(store: Store) -> None:
    """The chat roles of several channels' owners, read in one batch (the seeded history's),
    are those :func:`roles_of` reads for each: channel roles and global groups included."""
    first, second = _ids(store)
    owner, viewer = (users.id_named(store, name) for name in ("Streamer_1", "viewer"))
    assert owner is not None and viewer is not None
    channel_roles.change_roles(store, first, owner, {"Mod"}, set())
    with store.transaction() as tx:
        tx.execute("UPDATE users SET groups = ? WHERE id = ?", ('["User", "Staff"]', viewer))
    owned = [(first, owner), (second, viewer)]
    batch = owners_roles(store, owned)
    assert batch == {channel: roles_of(store, channel, user) for channel, user in owned}
    assert "Mod" in batch[first] and "Staff" in batch[second]


def test_present_users_are_picked_by_channel_role_or_global_group(store: Store) -> None:
    """The present users holding one of some roles are those with it among their channel
    roles or their global groups (JSON lists), and no one else."""
    channel, _ = _ids(store)
    owner, viewer = (users.id_named(store, name) for name in ("Streamer_1", "viewer"))
    assert owner is not None and viewer is not None
    for user in (owner, viewer):
        chat_presence.join(store, channel, user, "here", 10.0)
    assert chat_presence.present_with_roles(store, channel, {"Mod"}) == []
    channel_roles.change_roles(store, channel, viewer, {"Mod"}, set())
    assert chat_presence.present_with_roles(store, channel, {"Mod", "Staff"}) == [viewer]
    assert sorted(chat_presence.present_with_roles(store, channel, {"User"})) == sorted(
        [owner, viewer]
    )


def test_a_notification_for_everyone_gets_a_new_uuid_each(store: Store) -> None:
    """A notification for every user is one per user, each with a distinct version 4 UUID
    made by the database."""
    with store.transaction() as tx:
        assert notifications.add_for_everyone(tx, "news", "{}", NOW) == 2
    uuids = [
        row[0]
        for user in ("Streamer_1", "viewer")
        for row in notifications.page_of(store, users.id_named(store, user) or 0, 10, 0)
    ]
    assert len(set(uuids)) == 2
    for uuid in uuids:
        assert re.fullmatch(
            r"[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}", uuid
        )


def _third(store: Store) -> tuple[int, int, int]:
    """The user ids of ``Streamer_1`` and ``viewer``, and of a third account added now."""
    with store.transaction() as tx:
        third = users.add(tx, "third", "third@example.com", "hash", "code", NOW)
    owner, viewer = (users.id_named(store, name) for name in ("Streamer_1", "viewer"))
    assert owner is not None and viewer is not None
    return owner, viewer, third


def test_followers_at_the_same_time_come_newest_follow_first(store: Store) -> None:
    """Followers are listed most recent first, and those who followed at the same time in
    the reverse of the order their follows were stored."""
    channel, _ = _ids(store)
    owner, viewer, third = _third(store)
    with store.transaction() as tx:
        for user in (viewer, third, owner):
            follows.follow(tx, channel, user, NOW)
    rows, total = follows.followers(store, channel, users.listed(True), 10, 0)
    assert total == 3 and [row[0] for row in rows] == [owner, third, viewer]


def test_earnings_are_numbered_in_the_order_they_came(store: Store) -> None:
    """Each earning of an achievement has an id of its own, increasing in the order earned."""
    owner, viewer, third = _third(store)
    with store.transaction() as tx:
        achievements.set_catalogue(tx, [("first", "First", "The first", 10, 1)])
        for user in (viewer, third, owner):
            assert achievements.earn(tx, user, "first", NOW)
        assert not achievements.earn(tx, viewer, "first", NOW)
        earned = [achievements.earning_id(tx, user, "first") for user in (viewer, third, owner)]
    assert earned == sorted(earned) and len(set(earned)) == 3


def test_present_users_come_in_the_order_they_joined(store: Store) -> None:
    """The users present in a chat are listed in the order they first joined, on any process."""
    channel, _ = _ids(store)
    owner, viewer, third = _third(store)
    chat_presence.join(store, channel, third, "a", 10.0)
    chat_presence.join(store, channel, owner, "a", 10.0)
    chat_presence.join(store, channel, viewer, "b", 10.0)
    chat_presence.join(store, channel, third, "b", 10.0)
    assert chat_presence.present(store, channel) == [third, owner, viewer]
