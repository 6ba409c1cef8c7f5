"""Input text holding a NUL character: refused where input is parsed, with the same clear error
on every engine (PostgreSQL's text cannot hold one), before anything is written."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest

from explorer.emulator.plaintext import MESSAGE, holds_nul
from explorer.wire.codes import ChatErrorCode
from tests.chatkit import World, run


@pytest.fixture(scope="module")
def world() -> Iterator[World]:
    """One platform for this module."""
    running = World.start()
    yield running
    running.stop()


def _refused(response: httpx.Response, where: str) -> None:
    """``response`` is the platform's 400 naming ``where`` as the input holding a NUL."""
    assert response.status_code == 400, response.text
    assert response.json() == {
        "statusCode": 400,
        "error": "Bad Request",
        "message": MESSAGE,
        "details": [{"path": where, "type": "text", "message": MESSAGE}],
    }


def test_holds_nul_looks_into_keys_and_nested_values() -> None:
    """A NUL is found in a key, deep in arrays and objects, and nowhere else."""
    assert holds_nul({"a": [1, {"b\x00": None}]}) and holds_nul([[["x\x00"]]])
    assert not holds_nul({"a": [1, {"b": "c", "d": 2.5, "e": True}]})


def test_a_json_body_holding_a_nul_is_400_and_changes_nothing(world: World) -> None:
    """PATCH with a NUL in one of two fields is a 400 naming the body; neither field changes."""
    owner = world.rest("streamer")
    before = owner.get("/channels/streamer").json()
    _refused(
        owner.patch("/channels/streamer", json={"name": "Late\x00show", "audience": "18+"}), "body"
    )
    after = owner.get("/channels/streamer").json()
    assert (after["name"], after["audience"]) == (before["name"], before["audience"])


def test_a_form_body_holding_a_nul_is_400(world: World) -> None:
    """A form-encoded sign-in whose username decodes to text holding a NUL is a 400."""
    form = {"username": "stream\x00er", "password": "explorer"}
    _refused(httpx.post(f"{world.base_url}/users/login", data=form), "body")


def test_a_query_or_path_holding_a_nul_is_400(world: World) -> None:
    """A percent-encoded NUL in a query parameter or in the path is a 400 naming which."""
    _refused(httpx.get(f"{world.base_url}/channels?where=token:eq:a%00b"), "query")
    _refused(httpx.get(f"{world.base_url}/channels/stream%00er"), "path")


def test_an_oauth_body_holding_a_nul_is_invalid_request(world: World) -> None:
    """The token endpoint answers a body holding a NUL with OAuth's invalid_request."""
    body = {"grant_type": "authorization_code", "client_id": "app\x00", "code": "c"}
    response = httpx.post(f"{world.base_url}/oauth/token", json=body)
    assert response.status_code == 400
    assert response.json()["error"] == "invalid_request"
    assert response.json()["error_description"] == MESSAGE


def test_a_chat_method_holding_a_nul_is_refused_and_sends_nothing(world: World) -> None:
    """msg with a NUL in its text gets a 4000 reply saying why; the next message is the next
    one the chat sees."""

    async def scenario() -> None:
        chat = await world.join("viewer", world.channel_of("viewer"))
        refused = await chat.error("msg", "hello\x00there")
        assert (refused["code"], refused["message"]) == (ChatErrorCode.BAD_REQUEST, MESSAGE)
        await chat.ok("msg", "after")
        seen = await chat.event("ChatMessage")
        assert seen["message"]["message"][0]["text"] == "after"
        await chat.close()

    run(scenario())
