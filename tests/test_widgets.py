"""LiveChat and PollChart read without a kernel: their traits follow the log, throttled."""

from __future__ import annotations

import asyncio
import io
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import nbformat
import pytest
from matplotlib.dates import num2date
from nbclient import NotebookClient

import explorer
from explorer.core import loop
from explorer.events.log import EventLog
from explorer.views.chat import LiveChat, PollChart
from explorer.views.rendering import LINK_STYLE
from tests.chatkit import World
from tests.clocks import ManualClock
from tests.test_chat_client import wait_until

PNG = b"\x89PNG\r\n\x1a\n"
SVG = b"<?xml"
ROOT = Path(__file__).resolve().parent.parent


def chat_message(i: int, text: str | None = None) -> dict[str, Any]:
    """A ChatMessage packet."""
    said = text if text is not None else f"message {i}"
    data = {
        "channel": 7,
        "id": f"m{i}",
        "user_name": "ana",
        "user_id": 1,
        "user_roles": ["User"],
        "message": {"message": [{"type": "text", "data": said, "text": said}], "meta": {}},
    }
    return {"type": "event", "event": "ChatMessage", "data": data}


def user_join(i: int) -> dict[str, Any]:
    """A UserJoin packet."""
    return {"type": "event", "event": "UserJoin", "data": {"username": f"u{i}", "id": i}}


def poll_event(name: str, question: str, votes: dict[str, int]) -> dict[str, Any]:
    """A PollStart or PollEnd packet with ``votes`` per answer."""
    data = {
        "q": question,
        "answers": list(votes),
        "responses": votes,
        "voters": sum(votes.values()),
        "duration": 0,
        "endsAt": 1_700_000_060_000,
    }
    return {"type": "event", "event": name, "data": data}


def status() -> tuple[str, str | None]:
    """A fixed connection status."""
    return "authenticated", "ws://node"


@pytest.fixture
def poll_log() -> EventLog:
    """A log with one poll: started, two progress reports, ended."""
    log = EventLog()
    for i, (name, votes) in enumerate(
        [
            ("PollStart", {"tea": 0, "coffee": 0}),
            ("PollStart", {"tea": 1, "coffee": 0}),
            ("PollStart", {"tea": 1, "coffee": 2}),
            ("PollEnd", {"tea": 2, "coffee": 2}),
        ]
    ):
        log.append(poll_event(name, "Tea or coffee?", votes), 1_700_000_000 + i)
    return log


@contextmanager
def talking(world: World) -> Iterator[tuple[explorer.Chat, explorer.Chat]]:
    """An anonymous reader and the streamer, both in the world's channel."""
    with (
        explorer.connect(world.base_url, progress=False) as reader_api,
        explorer.connect(
            world.base_url, username="streamer", password="explorer", progress=False
        ) as streamer_api,
        reader_api.chat(world.channel) as reader,
        streamer_api.chat(world.channel) as streamer,
    ):
        yield reader, streamer


@pytest.fixture(scope="module")
def world() -> Iterator[World]:
    """A platform for the live widget test."""
    running = World.start()
    yield running
    running.stop()


def test_live_chat_follows_a_live_chat_while_the_caller_blocks(world: World) -> None:
    """chat.widget() updates its traits from the loop thread while this thread sleeps:
    state, endpoint, counts, rate and the newest rows."""
    with talking(world) as (reader, streamer):
        view = reader.widget(rows=3)
        for i in range(5):
            streamer.send(f"live {i}")
        wait_until(lambda: view.records and view.records[-1]["text"] == "live 4")
        assert (view.state, view.endpoint) == ("connected", reader.endpoint)
        assert view.counts["ChatMessage"] == 5 and view.total == reader.log.total
        assert [r["text"] for r in view.records] == ["live 2", "live 3", "live 4"]
        assert view.rate > 0
        view.close()


def test_widget_updates_reach_jupyter_while_a_cell_blocks(world: World) -> None:
    """In a real kernel, ``chat`` as a cell's result shows the live widget, and messages that
    arrive while a later cell sleeps reach the frontend (widget state) during that cell."""
    cells = [
        "import threading, time, explorer\n"
        f"api = explorer.connect({world.base_url!r}, progress=False)\n"
        f"host = explorer.connect({world.base_url!r}, username='streamer', password='explorer',"
        " progress=False)\n"
        f"chat = api.chat({world.channel})\n"
        f"speaker = host.chat({world.channel})",
        "chat",
        "def talk():\n"
        "    for i in range(5):\n"
        "        speaker.send(f'while blocked {i}')\n"
        "threading.Thread(target=talk).start()\n"
        "time.sleep(1.5)",
    ]
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in cells])
    NotebookClient(
        notebook, timeout=60, kernel_name="python3", resources={"metadata": {"path": str(ROOT)}}
    ).execute()
    errors = [o for c in notebook.cells for o in c.outputs if o.output_type == "error"]
    assert errors == []
    shown = notebook.cells[1].outputs[0]["data"]
    assert "application/vnd.jupyter.widget-view+json" in shown
    state = notebook.metadata["widgets"]["application/vnd.jupyter.widget-state+json"]["state"]
    values = [str(model["state"].get("value", "")) for model in state.values()]
    assert any("while blocked 4" in value for value in values), values


def test_messages_show_emoticons_links_and_tags_from_a_live_chat(world: World) -> None:
    """chat.widget() renders a live message as the platform sent it: the emoticon cut from the
    sprite sheet the platform serves and carried inline (once the kernel has the sheet, even
    with no further event), the link clickable, the tag highlighted; the sender's role as a
    badge."""
    with talking(world) as (reader, streamer):
        view = reader.widget(rows=3)
        streamer.send("look :) at https://example.org/x @viewer now")
        record = wait_until(
            lambda: view.records and "<img" in view.records[-1]["html"] and view.records[-1],
            timeout=15,
        )
        view.close()
    rendered = record["html"]
    sheet = world.base_url.removesuffix("/api/v1") + "/_latest/emoticons/default.png"
    assert '<img class="explorer-emoticon" src="data:image/png;base64,' in rendered
    assert 'alt=":)"' in rendered
    assert (
        '<a class="explorer-link" href="https://example.org/x" rel="noopener noreferrer" '
        f'target="_blank" style="{LINK_STYLE}">'
    ) in rendered
    assert '<span class="explorer-tag"' in rendered and "@viewer</span>" in rendered
    assert ">Owner</span>" in record["roles"]
    assert record["html"] in view.children[2].value
    image = httpx.get(sheet, timeout=10)
    assert image.status_code == 200 and image.content.startswith(PNG)


def test_rate_sparkline_follows_events_per_second() -> None:
    """The header's sparkline has one point per second of the last minute, from the rate the
    view measured (an injected clock)."""
    log = EventLog()
    clock = ManualClock()
    view = LiveChat(log, status, clock=clock)
    for second in range(1, 4):
        for i in range(second * 10):
            log.append(chat_message(i))
        clock.advance(1.0)
        view.refresh()
    assert view.history == [10.0, 20.0, 30.0]
    assert view.rate == pytest.approx(20.0)
    assert "<svg" in view.children[0].value and "20.0/s" in view.children[0].value


def test_hostile_messages_never_become_markup() -> None:
    """Script in a message, a javascript: link or an odd emoticon pack show as text."""
    log = EventLog()
    hostile = "<script>alert(1)</script>"
    components = [
        {"type": "text", "data": hostile, "text": hostile},
        {"type": "link", "url": "javascript:alert(1)", "text": "click"},
        {
            "type": "emoticon",
            "source": "external",
            "pack": "javascript:x",
            "text": ":)",
            "coords": {"x": 0, "y": 0, "width": 24, "height": 24},
        },
    ]
    packet = chat_message(0)
    packet["data"]["message"]["message"] = components
    packet["data"]["user_name"] = hostile
    log.append(packet)
    table = LiveChat(log, status, base_url="http://127.0.0.1:1/api/v1").children[2].value
    assert "<script" not in table and "javascript:" not in table
    assert "<a " not in table and "<img" not in table


def test_redraws_at_most_ten_times_a_second() -> None:
    """However fast events come, the view redraws at most 10 times a second."""
    log = EventLog()

    async def flood(seconds: float) -> None:
        deadline = asyncio.get_running_loop().time() + seconds
        i = 0
        while asyncio.get_running_loop().time() < deadline:
            for _ in range(200):
                log.append(chat_message(i))
                i += 1
            await asyncio.sleep(0)

    view = LiveChat(log, status, loop=loop.get_loop())
    before = view.redraws
    loop.run(flood(1.0))
    redraws = view.redraws - before
    view.close()
    assert log.total > 1000
    assert 3 <= redraws <= 11


def test_filter_shows_only_one_event() -> None:
    """event_filter keeps the table to the last rows of that event, and the control follows."""
    log = EventLog()
    for i in range(10):
        log.append(chat_message(i) if i % 3 else user_join(i))
    view = LiveChat(log, status, rows=2)
    view.event_filter = "UserJoin"
    assert [(r["event"], r["user"]) for r in view.records] == [
        ("UserJoin", "u6"),
        ("UserJoin", "u9"),
    ]
    assert view.children[1].children[0].value == "UserJoin"


def test_pause_stops_redrawing_and_resume_catches_up() -> None:
    """Paused, the view keeps its rows while events arrive; resuming shows them at once."""
    log = EventLog()
    log.append(chat_message(0))
    view = LiveChat(log, status, rows=5, loop=loop.get_loop())
    wait_until(lambda: view.total == 1)
    view.paused = True
    log.append(chat_message(1))
    redraws = view.redraws
    loop.run(asyncio.sleep(0.3))
    assert (view.total, view.redraws) == (1, redraws)
    view.paused = False
    assert view.total == 2 and view.records[-1]["text"] == "message 1"
    view.close()


def test_table_is_rendered_from_the_traits_and_escaped() -> None:
    """The table shows the records newest first, with HTML in messages escaped."""
    log = EventLog()
    log.append(chat_message(0, "first"))
    log.append(chat_message(1, "<b>bold</b>"))
    table = LiveChat(log, status).children[2].value
    assert "&lt;b&gt;bold&lt;/b&gt;" in table and "<b>bold" not in table
    assert table.index("bold") < table.index("first")


def test_purged_users_are_named_when_seen() -> None:
    """A PurgeMessage row names the purged user from earlier rows, else gives the id."""
    log = EventLog()
    log.append(chat_message(0))  # ana, user 1
    mod = {"user_name": "mo"}
    for user in (1, 99):
        purge = {"user_id": user, "moderator": mod}
        log.append({"type": "event", "event": "PurgeMessage", "data": purge})
    view = LiveChat(log, status, rows=2)
    assert [r["text"] for r in view.records] == ["ana by mo", "user 99 by mo"]


def test_display_shows_the_live_widget(world: World) -> None:
    """A chat as a cell's result displays as its LiveChat widget (one, reused)."""
    with (
        explorer.connect(world.base_url, progress=False) as api,
        api.chat(world.channel) as chat,
    ):
        bundle = chat._repr_mimebundle_()
        view = bundle["application/vnd.jupyter.widget-view+json"]
        assert chat._repr_mimebundle_() == bundle
        assert view["model_id"]


def test_poll_chart_reads_the_latest_poll(poll_log: EventLog) -> None:
    """PollChart's traits give the poll's answers, last votes and voters, and an SVG."""
    chart = PollChart(poll_log)
    assert (chart.question, chart.answers) == ("Tea or coffee?", ["tea", "coffee"])
    assert (chart.responses, chart.voters, chart.ended, chart.points) == (
        {"tea": 2, "coffee": 2},
        4,
        True,
        4,
    )
    assert chart.svg.startswith(SVG) and b"<svg" in chart.svg
    assert chart.children[0].value == chart.svg


def test_a_running_poll_s_chart_ends_when_its_duration_says(poll_log: EventLog) -> None:
    """While a poll runs, the chart reaches the time its latest event said remained (on the
    events' clock), not ``endsAt``, which is on the platform's wall clock (years away from a
    world clock's events)."""
    log = EventLog()
    packet = poll_event("PollStart", "Tea or coffee?", {"tea": 1, "coffee": 0})
    packet["data"] |= {"duration": 120_000, "endsAt": 1_800_000_000_000}
    log.append(packet, 1_595_376_000)
    axes = PollChart(log).figure().axes[0]
    start, end = axes.get_xlim()
    assert round((end - start) * 86_400) == 120


def test_poll_chart_shows_the_poll_asked_for(poll_log: EventLog) -> None:
    """Given a question, PollChart shows that poll even when a later one exists."""
    poll_log.append(poll_event("PollStart", "Cats or dogs?", {"cats": 1, "dogs": 0}))
    assert PollChart(poll_log).question == "Cats or dogs?"
    assert PollChart(poll_log, "Tea or coffee?").responses == {"tea": 2, "coffee": 2}


def test_poll_chart_redraws_as_votes_come(poll_log: EventLog) -> None:
    """With a loop, PollChart redraws by itself when poll events arrive."""
    log = EventLog()
    chart = PollChart(log, loop=loop.get_loop(), interval=0.05)
    assert (chart.question, chart.svg) == ("", b"")
    log.extend(poll_log.packets())
    wait_until(lambda: chart.points == 4 and chart.svg)
    chart.close()


def test_poll_chart_shows_an_empty_state_before_any_poll() -> None:
    """Before a poll, the chart shows a line of text, not an empty dated plot."""
    chart = PollChart(EventLog())
    assert chart.svg == b""
    assert "No poll yet" in chart.children[0].value


def test_poll_chart_axes_span_the_poll_with_integer_votes() -> None:
    """A running poll's x axis spans its start to its endsAt, y starts at 0 with integer
    ticks, and the time ticks are a few short labels."""
    log = EventLog()
    start = 1_700_000_000
    for i, votes in enumerate(({"tea": 0, "coffee": 0}, {"tea": 1, "coffee": 0})):
        log.append(poll_event("PollStart", "Tea or coffee?", votes), start + 10 * i)
    figure = PollChart(log).figure()
    figure.savefig(io.BytesIO(), format="svg")  # lays the ticks out
    axes = figure.axes[0]
    left, right = (num2date(x).timestamp() for x in axes.get_xlim())
    assert (left, right) == (start, 1_700_000_060)
    bottom, top = axes.get_ylim()
    assert bottom == 0 and 1 <= top < 2
    assert all(float(t).is_integer() for t in axes.get_yticks())
    labels = [t.get_text() for t in axes.get_xticklabels()]
    assert 2 <= len(labels) <= 7 and all(0 < len(label) <= 8 for label in labels), labels


def test_poll_chart_saves_a_png(poll_log: EventLog, tmp_path: Path) -> None:
    """In a script, a chart is saved as a PNG file."""
    path = tmp_path / "poll.png"
    PollChart(poll_log).save(path)
    assert path.read_bytes().startswith(PNG)
