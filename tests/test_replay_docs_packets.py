"""Every example packet of the historical developer docs' chat reference, compared with what the
platform sends for the same action: the same fields, types and nesting.

Source: mixer/developer-docs, pages/02.reference/01.chat/03.methods/*/doc.md (method requests
and replies) and pages/02.reference/01.chat/04.events/*/doc.md (events). Each expected shape
below is derived from one example (values replaced by their types); the platform may add
fields, but every documented field must be there with the documented type. Examples of
features the platform does not have (skills: ``cancelSkill``, ``SkillAttribution``,
``DeleteSkillAttribution``, skill ``ChatMessage``) are left out; CatBot's censored message and
the partner emote are replayed exactly in ``tests/test_docs_examples_chat.py``.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

from explorer.emulator.chat.messages import compose
from tests.chatkit import Chat, World, run
from tests.clocks import ManualClock

Shape = Any
_USER = {"user_name": str, "user_id": int, "user_roles": [str]}
_MOD = {**_USER, "user_level": int}
_SENDER = {"channel": int, "id": str, **_USER, "user_level": int, "user_avatar": str}
_TEXT = {"type": str, "data": str, "text": str}
_POLL = {
    "originatingChannel": int,
    "q": str,
    "answers": [str],
    "author": _USER,
    "duration": int,
    "endsAt": int,
    "voters": int,
    "responses": {},
}


def _reply(data: Shape = None) -> dict[str, Shape]:
    shape = {"type": str, "error": None, "id": int}
    return shape if data is None else {**shape, "data": data}


def _event(data: Shape) -> dict[str, Shape]:
    return {"type": str, "event": str, "data": data}


def _message(components: list[Shape], meta: dict[str, Shape], **extra: Shape) -> Shape:
    return {**_SENDER, "message": {"message": components, "meta": meta}, **extra}


def conforms(actual: Any, shape: Shape, path: str = "") -> list[str]:
    """Where ``actual`` differs from the documented ``shape`` (empty when it conforms)."""
    if shape is None:
        return [] if actual is None else [f"{path}: {actual!r} is not null"]
    if isinstance(shape, type):
        ok = isinstance(actual, shape) and not (shape is int and isinstance(actual, bool))
        return [] if ok else [f"{path}: {actual!r} is not {shape.__name__}"]
    if isinstance(shape, list):
        if not isinstance(actual, list):
            return [f"{path}: {actual!r} is not a list"]
        if not shape:
            return []
        if len(shape) == 1:
            return [
                p for i, item in enumerate(actual) for p in conforms(item, shape[0], f"{path}[{i}]")
            ]
        if len(actual) != len(shape):
            return [f"{path}: {len(actual)} items, documented {len(shape)}"]
        return [
            p
            for i, (a, s) in enumerate(zip(actual, shape, strict=True))
            for p in conforms(a, s, f"{path}[{i}]")
        ]
    if not isinstance(actual, dict):
        return [f"{path}: {actual!r} is not an object"]
    missing = [f"{path}.{key}: missing" for key in shape if key not in actual]
    return missing + [
        p
        for key in shape
        if key in actual
        for p in conforms(actual[key], shape[key], f"{path}.{key}")
    ]


#: Each documented example's shape, by doc page (and example).
DOCS: dict[str, Shape] = {
    "01.auth (signed in)": _reply({"authenticated": bool, "roles": [str]}),
    "01.auth (anonymous)": {"authenticated": bool, "roles": []},
    "02.msg": _reply(_message([_TEXT], {})),
    "03.whisper": _reply(_message([_TEXT], {"whisper": bool}, target=str)),
    "04.vote-choose": _reply(bool),
    "05.vote-start": _reply(str),
    "06.timeout": _reply(str),
    "07.purge": _reply(),
    "08.deleteMessage": _reply(str),
    "09.clearMessages": _reply(str),
    "10.history": _reply(
        [{"channel": int, "id": str, **_USER, "message": {"message": [_TEXT], "meta": {}}}]
    ),
    "11.giveawaystart": _reply(str),
    "12.ping": _reply(),
    "14.optOutEvents": _reply({}),
    "01.WelcomeEvent": _event({"server": str}),
    "02.ChatMessage (regular)": _event(
        _message(
            [
                _TEXT,
                {
                    "type": str,
                    "source": str,
                    "pack": str,
                    "coords": {"x": int, "y": int, "width": int, "height": int},
                    "text": str,
                },
                _TEXT,
                {"type": str, "url": str, "text": str},
            ],
            {},
        )
    ),
    "02.ChatMessage (whisper)": _event(_message([_TEXT], {"whisper": bool}, target=str)),
    "02.ChatMessage (action)": _event(_message([_TEXT], {"me": bool})),
    "02.ChatMessage (tag)": _message([{"text": str, "type": str, "username": str, "id": int}], {}),
    "03.UserJoin": _event({"originatingChannel": int, "username": str, "roles": [str], "id": int}),
    "04.UserLeave": _event({"originatingChannel": int, "username": str, "id": int}),
    "05.PollStart": _event(_POLL),
    "06.PollEnd": _event(_POLL),
    "07.DeleteMessage": _event({"moderator": _MOD, "id": str}),
    "08.PurgeMessage": _event(
        {"moderator": _MOD, "user_id": int, "cause": {"type": str, "durationString": str}}
    ),
    "09.ClearMessages": _event({"clearer": _MOD}),
    "10.UserUpdate": _event({"user": int, "roles": [str]}),
    "11.UserTimeout": _event({"user": _USER, "duration": int}),
}


@pytest.fixture(scope="module")
def clock() -> ManualClock:
    """The platform's clock: the poll ends once the test moves it past the poll's end."""
    return ManualClock()


@pytest.fixture(scope="module")
def world(clock: ManualClock) -> Iterator[World]:
    """One platform for this module."""
    running = World.start(clock=clock, chat_rate=1000.0, chat_burst=1000)
    yield running
    running.stop()


def _as_event(name: str, data: Any) -> dict[str, Any]:
    return {"type": "event", "event": name, "data": data}


async def _heard(chat: Chat, message_id: str) -> dict[str, Any]:
    """The ChatMessage event with ``message_id`` that ``chat`` receives."""
    while (data := await chat.event("ChatMessage"))["id"] != message_id:
        pass
    return _as_event("ChatMessage", data)


def _sent(world: World, clock: ManualClock) -> dict[str, Any]:
    """What the platform sends for the action behind each documented example."""
    sent: dict[str, Any] = {}

    async def scenario() -> None:
        raw = await world.connect()
        sent["01.WelcomeEvent"] = json.loads(raw.frames[0])
        owner = await world.join("streamer")
        anonymous = await world.connect()
        sent["01.auth (anonymous)"] = await anonymous.ok("auth", world.channel)
        viewer = await world.connect()
        key = world.details("viewer")["authkey"]
        sent["01.auth (signed in)"] = await viewer.call(
            "auth", world.channel, world.user_id("viewer"), key
        )
        sent["03.UserJoin"] = _as_event("UserJoin", await owner.event("UserJoin"))
        sent["02.msg"] = await viewer.call("msg", "Hello World!")
        sent["10.history"] = await viewer.call("history", 1)
        regular = await owner.ok("msg", "Hello! :) mixer.com/mixer")
        sent["02.ChatMessage (regular)"] = await _heard(viewer, regular["id"])
        sent["03.whisper"] = await owner.call("whisper", "viewer", "hi")
        whisper = sent["03.whisper"]["data"]["id"]
        sent["02.ChatMessage (whisper)"] = await _heard(viewer, whisper)
        action = await owner.ok("msg", "/me waves")
        sent["02.ChatMessage (action)"] = await _heard(viewer, action["id"])
        # The docs' tag example starts with the tag; recorded traffic (and the platform) puts
        # the empty text component first, so the comparison starts after it.
        tag = await owner.ok("msg", "@viewer")
        first, *rest = tag["message"]["message"]
        assert first == {"type": "text", "data": "", "text": ""}
        sent["02.ChatMessage (tag)"] = {**tag, "message": {**tag["message"], "message": rest}}
        sent["05.vote-start"] = await owner.call(
            "vote:start", "How's the weather?", ["Good.", "Bad."], 30
        )
        sent["05.PollStart"] = _as_event("PollStart", await viewer.event("PollStart"))
        sent["04.vote-choose"] = await viewer.call("vote:choose", 0)
        clock.advance(31)
        sent["06.PollEnd"] = _as_event("PollEnd", await viewer.event("PollEnd"))
        said = await viewer.ok("msg", "to be deleted")
        sent["08.deleteMessage"] = await owner.call("deleteMessage", said["id"])
        sent["07.DeleteMessage"] = _as_event("DeleteMessage", await viewer.event("DeleteMessage"))
        sent["06.timeout"] = await owner.call("timeout", "viewer", "30s")
        sent["11.UserTimeout"] = _as_event("UserTimeout", await viewer.event("UserTimeout"))
        sent["08.PurgeMessage"] = _as_event("PurgeMessage", await owner.event("PurgeMessage"))
        sent["07.purge"] = await owner.call("purge", "viewer")
        sent["09.clearMessages"] = await owner.call("clearMessages")
        sent["09.ClearMessages"] = _as_event("ClearMessages", await owner.event("ClearMessages"))
        sent["11.giveawaystart"] = await owner.call("giveaway:start")
        sent["12.ping"] = await owner.call("ping")
        sent["14.optOutEvents"] = await owner.call("optOutEvents", "UserJoin", "UserLeave")
        patched = world.rest("streamer").patch(
            f"/channels/{world.channel}/users/{world.user_id('viewer2')}", json={"add": ["Mod"]}
        )
        assert patched.status_code == 200, patched.text
        sent["10.UserUpdate"] = _as_event("UserUpdate", await viewer.event("UserUpdate"))
        await world.disconnect(viewer)
        sent["04.UserLeave"] = _as_event("UserLeave", await anonymous.event("UserLeave"))

    run(scenario())
    return sent


def test_every_documented_chat_packet_matches_what_the_platform_sends(
    world: World, clock: ManualClock
) -> None:
    """Each chat reference example has the fields, types and nesting of the platform's packet."""
    sent = _sent(world, clock)
    assert set(sent) == set(DOCS)
    differences = {name: conforms(sent[name], shape) for name, shape in DOCS.items()}
    assert {name: found for name, found in differences.items() if found} == {}


def test_the_regular_message_example_parses_the_same_components() -> None:
    """The docs' regular message text parses to its components: text, emoticon, text, and
    the bare domain as a link with ``http://`` (the docs' ChatMessage example)."""
    components, meta = compose("Hello! :) mixer.com/mixer", lambda name: None)
    assert [c["type"] for c in components] == ["text", "emoticon", "text", "link"]
    assert components[3] == {
        "type": "link",
        "url": "http://mixer.com/mixer",
        "text": "mixer.com/mixer",
    }
    assert meta == {}
