"""``api.live``: live events of channels and users in an event log, against a real platform's
Constellation service (changes made through REST), its views, widget, recording and replay."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import closing
from pathlib import Path

import pytest

import explorer
from explorer.emulator import Platform
from explorer.live.log import Live
from tests import databases
from tests.conftest import sign_in
from tests.databases import start
from tests.test_chat_client import wait_until
from tests.test_platform_oauth import implicit_token


@pytest.fixture(scope="module")
def platform_of_live() -> Iterator[Platform]:
    """A platform of its own: the tests here retitle and follow."""
    with start(channels=100, rate_limits=False) as running:
        yield running


@pytest.fixture
def api(platform_of_live: Platform) -> Iterator[explorer.Client]:
    with explorer.Client(platform_of_live.base_url, progress=False) as client:
        yield client


def retitle(platform: Platform, title: str) -> int:
    """The streamer retitles their channel through REST; its id."""
    with closing(sign_in(platform.base_url, "streamer")) as streamer:
        channel: int = streamer.get("/users/current").json()["channel"]["id"]
        assert streamer.patch(f"/channels/{channel}", json={"name": title}).is_success
    return channel


def test_channel_updates_arrive_as_rows_and_changes(
    platform_of_live: Platform, api: explorer.Client
) -> None:
    """api.live("streamer") logs a REST retitle as a channel:update row (channel id, payload
    as JSON), and changes() reads it as one field row."""
    with api.live("streamer") as live:
        assert isinstance(live, Live)
        channel = retitle(platform_of_live, "seen live")
        wait_until(lambda: live.log.counts.get("channel:update"))
        row = live.log.frame.iloc[-1]
        assert (row["event"], row["channel"]) == ("channel:update", channel)
        assert row["text"] == '{"name":"seen live"}'
        changes = live.changes("name")
        assert list(changes[["channel", "field", "value"]].itertuples(index=False)) == [
            (channel, "name", "seen live")
        ]
        assert f"channel:{channel}:update" in live.subscribed


def test_follows_name_the_follower_and_private_events_are_refused(
    platform_of_live: Platform, api: explorer.Client
) -> None:
    """A follow arrives as channel:followed with the follower's name and id; a private event
    of another user (user:{id}:notify) is refused and reported in stats(), not raised."""
    with closing(sign_in(platform_of_live.base_url, "viewer")) as viewer:
        me = viewer.get("/users/current").json()
        channel = api.channel("moderator").id()
        with api.live(channel, events=["followed"], topics=[f"user:{me['id']}:notify"]) as live:
            viewer.delete(f"/channels/{channel}/follow")
            assert viewer.put(f"/channels/{channel}/follow").is_success
            wait_until(lambda: live.log.counts.get("channel:followed"))
            rows = live.log.frame
            followed = rows[rows["event"] == "channel:followed"].iloc[-1]
            assert (followed["user_name"], followed["user_id"]) == ("viewer", me["id"])
            stats = live.stats()
            assert stats.loc[f"user:{me['id']}:notify", "state"] == "refused"
            assert "permission" in stats.loc[f"user:{me['id']}:notify", "error"]


def test_recording_and_replay_keep_live_rows(
    platform_of_live: Platform, api: explorer.Client, tmp_path: Path
) -> None:
    """to= records live rows to a capture that open_capture reads back, and a replay of it
    gives the same changes() as the live log."""
    with api.live("streamer", events=["update"], to=tmp_path / "capture") as live:
        retitle(platform_of_live, "recorded live")
        wait_until(lambda: live.log.counts.get("channel:update"))
    capture = explorer.open_capture(tmp_path / "capture")
    frame = capture.events()
    assert list(frame["event"].astype(str)) == ["channel:update"]
    assert frame["text"].iloc[0] == '{"name":"recorded live"}'
    replayed = explorer.replay(capture, speed=None)
    assert replayed.wait(10)
    assert replayed.changes().equals(live.changes())


def test_widget_shows_the_feed(platform_of_live: Platform, api: explorer.Client) -> None:
    """widget() is a WatchView of the live log: the event names and the latest events."""
    with api.live("streamer", events=["update"]) as live:
        retitle(platform_of_live, "on screen")
        wait_until(lambda: live.log.counts.get("channel:update"))
        view = live.widget()
        view.refresh()
        assert view.total == live.log.total and "1 subscribed" in view.status["subscriptions"]
        view.close()


def test_live_tracking_adds_a_row_per_change_as_it_happens(
    platform_of_live: Platform, api: explorer.Client
) -> None:
    """track(live=True) takes one snapshot, then a follow made through REST adds a row with
    the new numFollowers (the other fields carried over) without another request."""
    with closing(sign_in(platform_of_live.base_url, "viewer2")) as viewer:
        channel = api.channel("staff").id()
        viewer.delete(f"/channels/{channel}/follow")
        with api.track([channel], live=True, fields=["numFollowers", "online"]) as tracker:
            assert tracker.wait(1, timeout=10)
            wait_until(lambda: tracker.following)
            before = int(tracker.frame["numFollowers"].iloc[-1])
            assert viewer.put(f"/channels/{channel}/follow").is_success
            wait_until(lambda: tracker.updates)
            frame = tracker.frame
    assert tracker.taken == 1 and len(frame) == 2
    assert list(frame["numFollowers"]) == [before, before + 1]
    assert frame["online"].iloc[0] == frame["online"].iloc[1]
    assert frame["time"].is_monotonic_increasing


def test_live_tracking_follows_hundreds_of_channels(
    make_platform: Callable[..., Platform], tmp_path: Path
) -> None:
    """Live tracking of the 150 most watched online channels sees a change of every one's
    audience, written by another connection to the platform's database (as a simulator or
    another process would), one row each with the new value, over one socket."""
    db = tmp_path / "platform.db"
    # 30,000 channels: about 240 live at the world's instant (1% of those that stream).
    platform = make_platform(db=db, channels=30_000, rate_limits=False)
    with explorer.Client(platform.base_url, progress=False) as client:
        query = {"where": {"online": True}, "order": "viewersCurrent:desc", "max_rows": 150}
        with client.track(query, live=True, fields=["viewersCurrent"]) as tracker:
            assert tracker.wait(1, timeout=10) and len(tracker.channels) == 150
            wait_until(lambda: tracker.following)
            with databases.opened(db) as writer, writer.transaction() as tx:
                tx.executemany(
                    "UPDATE channels SET viewersCurrent = viewersCurrent + 7 WHERE id = ?",
                    [(channel,) for channel in tracker.channels],
                )
            wait_until(lambda: tracker.updates >= 150, timeout=20)
            frame = tracker.frame
    first, updated = frame.iloc[:150], frame.iloc[150:]
    assert sorted(updated["channel"]) == sorted(first["channel"]) and tracker.taken == 1
    before = dict(zip(first["channel"], first["viewersCurrent"], strict=True))
    assert all(row.viewersCurrent == before[row.channel] + 7 for row in updated.itertuples())


def test_a_dropped_connection_is_dialled_again_and_resubscribed(
    make_platform: Callable[..., Platform], tmp_path: Path
) -> None:
    """When the platform restarts on its address, the live feed reconnects by itself,
    subscribes again and logs the next change (reconnects counts it)."""
    db = tmp_path / "platform.db"
    first = make_platform(db=db, rate_limits=False)
    port = int(first.root_url.rsplit(":", 1)[1])
    with explorer.Client(first.base_url, progress=False) as client:
        live = client.live("streamer", events=["update"], reconnect_delay=0.05)
        first.stop()
        wait_until(lambda: live.async_twin.socket.state == "reconnecting")
        second = make_platform(db=db, port=port, rate_limits=False)
        wait_until(lambda: live.async_twin.socket.state == "connected", timeout=10)
        wait_until(lambda: live.async_twin.socket.reconnects == 1)
        retitle(second, "after the restart")
        wait_until(lambda: live.log.counts.get("channel:update"))
        assert live.changes("name")["value"].tolist() == ["after the restart"]
        live.close()


def test_a_token_signs_the_feed_in_for_private_events(
    platform_of_live: Platform, api: explorer.Client
) -> None:
    """With token= (an OAuth access token) the feed may follow its user's private
    user:{id}:notify, and logs the notification of an achievement earned through REST."""
    with closing(sign_in(platform_of_live.base_url, "staff")) as person:
        me = person.get("/users/current").json()["id"]
        token = implicit_token(person, "notification:view:self")["access_token"]
        with api.live(users=[me], user_events=["notify"], token=token) as live:
            assert live.stats().loc[f"user:{me}:notify", "state"] == "subscribed"
            assert person.post("/interactive/games", json={"name": "g"}).status_code == 201
            wait_until(lambda: live.log.counts.get("user:notify"))
            row = live.log.frame.iloc[-1]
    assert row["user_id"] == me and '"type":"achievement"' in row["text"]
