"""Old public names (issue 21, item 5) keep working for one release, each with a
DeprecationWarning naming the new spelling."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from explorer.chat import Chat, ChatClient
from explorer.collect.track import AsyncTracker, Tracker
from explorer.core.deprecation import CalledFrame
from explorer.core.renames import Renamed
from explorer.recording.capture import open_capture
from explorer.views.twins import BlockingTwin


class Core:
    """A core with nothing to close."""

    def _summary(self) -> str:
        return "core"

    async def aclose(self) -> None:
        pass


def test_renamed_attributes_warn_and_give_the_new_one() -> None:
    """Reading an old name warns (at the caller's line) and gives the new name's value."""
    twin: BlockingTwin[Core, object] = BlockingTwin(Core())  # type: ignore[type-var]
    with pytest.warns(DeprecationWarning, match=r"BlockingTwin.client is now .*async_twin") as w:
        core = twin.client
    assert core is twin.async_twin and w[0].filename == __file__


def test_the_chat_s_timeout_action_is_timeout_user() -> None:
    """ChatClient.timeout and Chat.timeout are the moderation action's old name."""
    for cls in (ChatClient, Chat):
        old = vars(cls)["timeout"]
        assert isinstance(old, Renamed) and old.new == "timeout_user"
        assert "timeout_user" in vars(cls)


def test_a_tracker_s_frame_is_a_property_that_may_still_be_called() -> None:
    """Tracker.frame is a property; calling it (the old spelling) warns and gives the frame;
    snapshots (a count) is now taken."""
    frame = CalledFrame.of(pd.DataFrame({"a": [1, 2]}), "Tracker.frame")
    with pytest.warns(DeprecationWarning, match=r"Tracker.frame\(\) is now Tracker.frame"):
        called = frame()
    assert called is frame and type(frame + 1) is pd.DataFrame
    for cls in (AsyncTracker, Tracker):
        assert isinstance(cls.frame, property)
        assert vars(cls)["snapshots"].new == "taken"


def test_capture_frame_is_now_events(tmp_path: Path) -> None:
    """Capture.frame(...) warns and reads what Capture.events(...) reads."""
    capture = open_capture(tmp_path)
    with pytest.warns(DeprecationWarning, match=r"Capture.frame\(\) is now Capture.events\(\)"):
        old = capture.frame(columns=["event"])
    pd.testing.assert_frame_equal(old, capture.events(columns=["event"]))


def test_replay_is_the_function_and_replays_the_module() -> None:
    """explorer.replay is the function, explorer.recording.replays its module
    (explorer.recording.replays.Replay works); the old import path still gives the names, with a
    warning."""
    import explorer
    import explorer.recording.replays

    assert callable(explorer.replay) and explorer.recording.replays.Replay is explorer.Replay
    with pytest.warns(
        DeprecationWarning, match=r"explorer.replay.Replay is now explorer.recording.replays"
    ):
        from explorer.replay import Replay  # type: ignore[attr-defined]
    assert Replay is explorer.Replay and callable(explorer.replay)


def test_async_objects_begin_with_start() -> None:
    """start() is the one spelling for beginning an async object (``await obj`` and ``async
    with`` call it); ChatClient.connect() and AsyncClient.open() are its old names."""
    import asyncio

    from explorer import AsyncClient
    from explorer.collect.watch import AsyncWatch
    from explorer.core.closing import AsyncClosing
    from explorer.live.log import AsyncLive

    assert vars(ChatClient)["connect"].new == "start" and vars(AsyncClient)["open"].new == "start"
    for cls in (AsyncClient, ChatClient, AsyncWatch, AsyncTracker, AsyncLive):
        assert issubclass(cls, AsyncClosing) and "start" in dir(cls)

    async def begin() -> None:
        api = AsyncClient("http://127.0.0.1:9/api/v1")
        assert await api.start() is api and await api is api
        async with api as entered:
            assert entered is api
        old = AsyncClient("http://127.0.0.1:9/api/v1")
        with pytest.warns(DeprecationWarning, match=r"AsyncClient.open is now AsyncClient.start"):
            assert await old.open() is old
        await old.aclose()

    asyncio.run(begin())


def test_the_views_live_in_explorer_views() -> None:
    """LiveChat, PollChart, WatchView and TrackChart are in explorer.views; the old modules'
    names still import, with a warning."""
    from explorer.views.chat import LiveChat
    from explorer.views.track import TrackChart
    from explorer.views.watch import WatchView

    with pytest.warns(DeprecationWarning, match=r"explorer.widgets.LiveChat is now explorer"):
        from explorer.widgets import LiveChat as Old  # type: ignore[import-not-found]
    with pytest.warns(DeprecationWarning, match=r"explorer.watchview.WatchView is now"):
        from explorer.watchview import WatchView as OldWatch  # type: ignore[import-not-found]
    with pytest.warns(DeprecationWarning, match=r"explorer.trackview.TrackChart is now"):
        from explorer.trackview import TrackChart as OldTrack  # type: ignore[import-not-found]
    assert (Old, OldWatch, OldTrack) == (LiveChat, WatchView, TrackChart)


def test_the_renamed_chat_state_and_watched_channel_keep_their_old_names() -> None:
    """explorer.chat.session.Session and explorer.collect.members.Member warn and give the
    classes they were renamed to (ChatState, WatchedChannel: the names meant other things)."""
    from explorer.chat import session
    from explorer.collect import members

    with pytest.warns(DeprecationWarning, match="ChatState"):
        assert session.Session is session.ChatState
    with pytest.warns(DeprecationWarning, match="WatchedChannel"):
        assert members.Member is members.WatchedChannel
