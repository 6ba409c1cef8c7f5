"""The wire contract's event table holds for both halves: the platform sends exactly the
events it lists, and the toolkit flattens each into more than the common columns; live-event
names come from the wire's catalogue on both sides."""

from __future__ import annotations

import ast
from pathlib import Path

import orjson

import explorer
from explorer.events.rows import COLUMNS, flatten
from explorer.live import follows
from explorer.wire import events as wire_events
from explorer.wire import topics

PACKAGE = Path(explorer.__file__).parent
PLATFORM = PACKAGE / "emulator"
FIXTURES = Path(__file__).parent / "fixtures" / "chat"
#: What every row has, whatever its event: when, which event, which channel, from history.
COMMON = {"received_at", "event", "channel", "from_history", "whisper", "me"}
#: Calls whose first argument names the event they send.
SENDERS = {"publish", "encode_event", "Delivery"}


def _sent_event_names(path: Path) -> set[str]:
    """The event names ``path`` passes as a literal to a call that sends an event."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if not (isinstance(node, ast.Call) and node.args):
            continue
        func = node.func
        name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
        first = node.args[0]
        if name in SENDERS and isinstance(first, ast.Constant) and isinstance(first.value, str):
            found.add(first.value)
    return found


def test_the_platform_sends_exactly_the_wire_events() -> None:
    """Every event name the platform sends is in the wire's table, and each is sent."""
    sent = set().union(*(_sent_event_names(path) for path in PLATFORM.rglob("*.py")))
    assert sent == set(wire_events.EVENTS)


def test_the_toolkit_flattens_every_wire_event() -> None:
    """Each wire event but WelcomeEvent fills columns beyond the common ones, from its golden
    fixture (written from the spec), so a new event cannot go unflattened."""
    packets = [orjson.loads(path.read_bytes()) for path in sorted(FIXTURES.glob("*.json"))]
    by_event = {p["event"]: p for p in packets if p.get("type") == "event"}
    for name in wire_events.EVENTS:
        row = dict(zip(COLUMNS, flatten(by_event[name], 0.0), strict=True))
        filled = {column for column, value in row.items() if value is not None}
        assert (filled - COMMON) or name == "WelcomeEvent", name


def _event_name(text: ast.JoinedStr) -> bool:
    """Whether an f-string builds a live-event name: a kind, ``:``, an id, ``:`` and more."""
    parts = text.values
    return (
        len(parts) >= 3
        and isinstance(parts[0], ast.Constant)
        and str(parts[0].value) in {f"{kind}:" for kind in topics.EVENTS}
        and isinstance(parts[2], ast.Constant)
        and str(parts[2].value).startswith(":")
    )


def test_the_live_events_followed_by_default_are_in_the_wire() -> None:
    """api.live's default channel and user events are live events of the wire's catalogue."""
    assert set(follows.CHANNEL_EVENTS) <= set(topics.EVENTS["channel"])
    assert set(follows.USER_EVENTS) <= set(topics.EVENTS["user"])


def test_live_event_names_are_written_by_the_wire_only() -> None:
    """No module outside the wire spells a live-events method or builds an event name by hand
    (``f"channel:{c}:..."``): both halves take them from ``explorer.wire.topics``."""
    methods = {topics.SUBSCRIBE, topics.UNSUBSCRIBE}
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if PACKAGE / "wire" in path.parents:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Constant) and node.value in methods:
                found.append(f"{path.name}:{node.lineno} {node.value}")
            if isinstance(node, ast.JoinedStr) and _event_name(node):
                found.append(f"{path.name}:{node.lineno}")
    assert not found
