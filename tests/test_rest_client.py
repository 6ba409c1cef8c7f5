"""The REST clients themselves: resources, errors, settings, sync/async parity, closing."""

from __future__ import annotations

import asyncio
import logging
import os
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace

import httpx
import pandas as pd
import pytest

import explorer
from explorer import embedded
from explorer.clients import AsyncClient
from explorer.core import loop
from explorer.core.settings import Settings, resolve
from explorer.emulator import Platform
from explorer.errors import (
    BadRequest,
    ClientClosed,
    ConnectionFailed,
    LoopThreadError,
    NotFound,
    PlatformError,
    ServerError,
    error_for,
)
from explorer.rest.endpoints import bucket_of
from explorer.wire import routes as wire

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def api(platform: Platform) -> Iterator[explorer.Client]:
    """A sync client on the shared platform, without progress bars."""
    with explorer.connect(platform.base_url, progress=False) as client:
        yield client


# -- resources --------------------------------------------------------------------------------


def test_user_is_a_one_row_frame(api: explorer.Client) -> None:
    """user(id) gives that user, indexed by id."""
    user = api.user(1).info()
    assert user.index.tolist() == [1]
    assert user["username"].tolist() == ["streamer"]


def test_types_are_indexed_by_id(api: explorer.Client) -> None:
    """types() lists every type; online=True keeps those with live channels."""
    every, live = api.types(), api.types(online=True)
    assert every.index.name == "id" and every.index.is_unique
    assert set(live.index) <= set(every.index) and (live["online"] > 0).all()
    assert api.type(int(every.index[0]))["name"].tolist() == [every["name"].iloc[0]]


def test_get_json_returns_decoded_json(api: explorer.Client) -> None:
    """get_json reaches any path and returns what it answered."""
    rows = api.get_json("/channels", limit=2, order="id:asc")
    assert isinstance(rows, list) and len(rows) == 2 and rows[0]["id"] < rows[1]["id"]


def test_get_frame_follows_pages_when_a_total_is_given(
    api: explorer.Client, platform: Platform
) -> None:
    """A listing with X-Total-Count is fetched to the end in pages of the size asked."""
    total = int(httpx.get(f"{platform.base_url}/channels?limit=1").headers["X-Total-Count"])
    frame = api.get_frame("/channels", limit=40)
    assert len(frame) == total and frame.index.name == "id"
    assert frame["user.username"].dtype == "str"


def test_get_frame_with_a_page_fetches_only_that_page(api: explorer.Client) -> None:
    """Passing page= asks for exactly one page."""
    assert len(api.get_frame("/channels", page=1, limit=30)) == 30


def test_request_sends_any_method_with_a_body(platform: Platform) -> None:
    """request() covers writes the client has no method for."""
    with explorer.connect(platform.base_url, username="viewer2", password="explorer") as client:
        me = client.me.info()
        user_id, bio = int(me.index[0]), me["bio"].iloc[0]
        changed = client.request("PATCH", f"/users/{user_id}", json={"bio": "hello there"})
        client.request("PATCH", f"/users/{user_id}", json={"bio": None if pd.isna(bio) else bio})
    assert changed["bio"] == "hello there"


# -- errors -----------------------------------------------------------------------------------


def test_not_found_is_a_typed_error_with_the_message(api: explorer.Client) -> None:
    """A 404 raises NotFound carrying the platform's status, error and message."""
    with pytest.raises(NotFound) as info:
        api.channel("no_such_channel_anywhere").info()
    error = info.value
    assert (error.status, error.error) == (404, "Not Found")
    assert "not found" in error.message.lower()
    assert isinstance(error, PlatformError)


def test_bad_request_carries_the_details(api: explorer.Client) -> None:
    """A 400 raises BadRequest with the per-field details (the message said once)."""
    with pytest.raises(
        BadRequest, match=r"^400 Bad Request: Unknown field 'nope': [^\n]+$"
    ) as info:
        api.channels(where="nope:eq:1")
    assert info.value.details[0]["path"] == "where.nope"


def test_an_unknown_endpoint_raises_not_found(api: explorer.Client) -> None:
    """Paths the platform does not serve raise NotFound too, naming the URL asked."""
    with pytest.raises(NotFound, match=r"No such endpoint: GET http://\S+/api/v1/no/such/path\.$"):
        api.get_json("/no/such/path")


def test_a_base_url_without_the_api_path_names_the_fix(platform: Platform) -> None:
    """A base URL that lacks /api/v1 gets a NotFound naming the URL and the base to use."""
    root = platform.base_url.removesuffix("/api/v1")
    with explorer.connect(root, progress=False) as client, pytest.raises(NotFound) as info:
        client.channels()
    said = str(info.value)
    assert f"GET {root}/channels" in said
    assert f"explorer.connect('{root}/api/v1')" in said


def test_an_unreachable_platform_raises_connection_failed() -> None:
    """Network failures surface as ConnectionFailed (a ConnectionError), not as httpx errors."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    with (
        explorer.connect(f"http://127.0.0.1:{port}/api/v1") as client,
        pytest.raises(ConnectionFailed) as info,
    ):
        client.channels()
    assert isinstance(info.value, ConnectionError)
    # The reason is in the one-line message; httpx's chained traceback would only bury it.
    assert info.value.__cause__ is None and "Connection refused" in str(info.value)


def flaky(failure: Exception) -> tuple[httpx.MockTransport, list[str]]:
    """A transport whose first request fails with ``failure``; later ones answer ``[]``."""
    calls: list[str] = []

    def handle(request: httpx.Request) -> httpx.Response:
        calls.append(request.method)
        if len(calls) == 1:
            raise failure
        return httpx.Response(200, json=[])

    return httpx.MockTransport(handle), calls


def send_through(transport: httpx.MockTransport, method: str) -> object:
    """One ``method /channels`` request through a client on ``transport``."""

    async def send() -> object:
        async with AsyncClient("http://platform.invalid/api/v1", transport=transport) as client:
            return await client.request(method, "/channels")

    return asyncio.run(send())


def test_a_dropped_connection_is_retried_once_for_a_get() -> None:
    """A GET whose keep-alive connection was closed under it is sent again."""
    transport, calls = flaky(httpx.RemoteProtocolError("Server disconnected"))
    assert send_through(transport, "GET") == []
    assert calls == ["GET", "GET"]


@pytest.mark.parametrize(
    ("method", "failure"),
    [
        ("POST", httpx.RemoteProtocolError("Server disconnected")),
        ("GET", httpx.ReadTimeout("timed out")),
    ],
    ids=["write", "timeout"],
)
def test_writes_and_timeouts_are_not_retried(method: str, failure: Exception) -> None:
    """Only safe requests are repeated, and a timeout is not repeated at all."""
    transport, calls = flaky(failure)
    with pytest.raises(ConnectionFailed):
        send_through(transport, method)
    assert calls == [method]


def test_a_query_reaches_the_wire_as_httpx_encodes_it() -> None:
    """Text and integer query values, encoded by the transport itself, and the others, left to
    httpx, give the URL httpx builds from the same parameters."""
    base, seen = "http://platform.invalid/api/v1", []
    plain = {"where": "viewersTotal:gte:-1,name:eq:a b&c=d/é+%", "order": "id:desc", "page": 3}
    mixed = {"online": True, "limit": 2.5, "fields": ["id", "token"], "search": None}

    def handle(request: httpx.Request) -> httpx.Response:
        seen.append(request.url)
        return httpx.Response(200, json=[])

    async def send() -> None:
        async with AsyncClient(base, transport=httpx.MockTransport(handle)) as client:
            for params in (plain, mixed):
                await client.get_json("/channels", **params)

    asyncio.run(send())
    with httpx.Client(base_url=base) as reference:
        built = [reference.build_request("GET", "/channels", params=p).url for p in (plain, mixed)]
    assert [str(url) for url in seen] == [str(url) for url in built]


def test_error_for_picks_the_class_by_status() -> None:
    """Statuses map to their classes; unknown 5xx become ServerError; odd bodies are tolerated."""
    assert type(error_for(404, {"statusCode": 404, "error": "Not Found"})) is NotFound
    assert type(error_for(503, "down", "Service Unavailable")) is ServerError
    odd = error_for(418, ["not", "an", "object"], "I'm a teapot")
    assert (type(odd), odd.status, odd.error, odd.message) == (
        PlatformError,
        418,
        "I'm a teapot",
        "I'm a teapot",
    )


# -- the sync API and its loop ----------------------------------------------------------------


def test_sync_client_works_inside_a_running_event_loop(platform: Platform) -> None:
    """The blocking API can be called from a coroutine (as in a Jupyter cell)."""

    async def cell() -> int:
        with explorer.connect(platform.base_url, progress=False) as client:
            return len(client.channels(max_rows=120))

    assert asyncio.run(cell()) == 120


def test_sync_client_on_the_loop_thread_raises_loop_thread_error(api: explorer.Client) -> None:
    """Calling the blocking API from the toolkit's own loop raises a clear error."""

    async def inside() -> None:
        api.user(1).info()

    with pytest.raises(LoopThreadError):
        loop.run(inside(), timeout=5)


def test_async_client_works_as_a_context_manager(platform: Platform) -> None:
    """AsyncClient signs in on entry and closes on exit."""

    async def scenario() -> tuple[list[str], bool]:
        async with AsyncClient(
            platform.base_url, username="viewer", password="explorer", progress=False
        ) as client:
            me = await client.me.info()
        return me["username"].tolist(), client.closed

    assert asyncio.run(scenario()) == (["viewer"], True)


def test_a_closed_client_refuses_requests(platform: Platform) -> None:
    """After the with-block the client is closed; using it raises ClientClosed."""
    with explorer.connect(platform.base_url) as client:
        client.user(1).info()
    assert client.closed
    client.close()
    with pytest.raises(ClientClosed):
        client.user(1).info()


# -- settings and the embedded platform -------------------------------------------------------


def test_settings_prefer_arguments_over_the_environment() -> None:
    """Explicit arguments win; the environment fills the rest; the URL loses its slash."""
    environ = {"EXPLORER_BASE_URL": "http://env/api/v1/", "EXPLORER_TOKEN": "env-token"}
    assert resolve(environ=environ) == Settings(base_url="http://env/api/v1", token="env-token")
    assert resolve("http://arg/api/v1", token="t", environ=environ) == Settings(
        base_url="http://arg/api/v1", token="t"
    )


def test_settings_take_credentials_from_one_source() -> None:
    """An explicit username is not mixed with an environment token or password."""
    environ = {"EXPLORER_TOKEN": "env-token", "EXPLORER_PASSWORD": "env-secret"}
    assert resolve(username="viewer", password="explorer", environ=environ) == Settings(
        username="viewer", password="explorer"
    )
    env_login = {"EXPLORER_USERNAME": "viewer", "EXPLORER_PASSWORD": "explorer"}
    assert resolve(environ=env_login) == Settings(username="viewer", password="explorer")


def test_settings_read_progress_from_the_environment() -> None:
    """EXPLORER_PROGRESS=0 turns bars off unless progress= says otherwise."""
    assert resolve(environ={"EXPLORER_PROGRESS": "0"}).progress is False
    assert resolve(progress=True, environ={"EXPLORER_PROGRESS": "0"}).progress is True


def test_connect_uses_the_base_url_from_the_environment(
    platform: Platform, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Without an argument, EXPLORER_BASE_URL names the platform."""
    monkeypatch.setenv("EXPLORER_BASE_URL", platform.base_url)
    with explorer.connect(progress=False) as client:
        assert client.base_url == platform.base_url
        assert client.user(1).info()["username"].tolist() == ["streamer"]


def test_without_a_base_url_the_embedded_platform_starts_once(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """No URL anywhere: the embedded platform starts on first need, is logged once, reused."""
    started: list[dict[str, object]] = []

    def fake_start(**options: object) -> SimpleNamespace:
        started.append(options)
        return SimpleNamespace(base_url="http://127.0.0.1:1/api/v1", stop=lambda: None)

    monkeypatch.delenv("EXPLORER_BASE_URL", raising=False)
    monkeypatch.setattr("explorer.emulator.start", fake_start)
    monkeypatch.setattr(embedded, "_platform", None)
    caplog.set_level(logging.INFO, logger="explorer.embedded")
    with explorer.Client() as first, explorer.Client() as second:
        assert first.base_url == second.base_url == "http://127.0.0.1:1/api/v1"
    assert len(started) == 1
    assert [r.getMessage() for r in caplog.records] == [
        "explorer: started the embedded platform at http://127.0.0.1:1/api/v1"
    ]


def test_the_embedded_platform_really_serves() -> None:
    """In a fresh process with no URL set, connect() starts the real embedded platform."""
    script = (
        "import explorer\n"
        "with explorer.connect(progress=False) as api:\n"
        "    print(len(api.channels(order='viewersTotal:desc', max_rows=250)), api.base_url)\n"
    )
    environ = {k: v for k, v in os.environ.items() if not k.startswith("EXPLORER_")}
    done = subprocess.run(
        [sys.executable, "-c", script],
        cwd=ROOT,
        env={**environ, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        timeout=90,
    )
    assert done.returncode == 0, done.stderr
    rows, url = done.stdout.split()
    assert rows == "250" and url.startswith("http://127.0.0.1:") and url.endswith("/api/v1")


@pytest.mark.parametrize(
    ("method", "path", "bucket"),
    [
        ("GET", "/channels", "channel-read"),
        ("GET", "/channels/streamer", "channel-read"),
        ("GET", "/types/3", "channel-read"),
        ("GET", "/users/current", "user-read"),
        ("GET", "/chats/100164", "chats"),
        ("GET", "/oauth/authorize?response_type=token", "user-write"),
        ("POST", "/users/login", "user-login"),
        ("POST", "/users", "user-register"),
        ("GET", "/ingests", "ingest"),
        ("GET", "/channels?q=speed", "channel-search"),
        ("GET", "/_emulator/mail", "GET /_emulator"),
    ],
)
def test_requests_are_paced_under_their_bucket(method: str, path: str, bucket: str) -> None:
    """Endpoints sharing a platform bucket share one allowance; others are grouped by path."""
    assert bucket_of(wire.TABLE, method, path) == bucket


def test_recording_and_user_search_read_like_other_records(platform: Platform) -> None:
    """api.recording(id) is the listed recording as one row; api.search_users("view") finds
    viewer and viewer2 by name, indexed by id, each with its channel."""
    with explorer.Client(platform.base_url, progress=False) as api:
        listed = api.channels(where={"hasVod": True}, order="viewersTotal:desc", max_rows=1)
        recordings = api.channel(int(listed.index[0])).recordings(max_rows=1)
        one = api.recording(int(recordings.index[0]))
        assert list(one.index) == list(recordings.index)
        assert one["vods"].iloc[0][0]["recordingId"] == recordings.index[0]
        found = api.search_users("VIEW")
    assert list(found["username"]) == ["viewer", "viewer2"]
    assert all(row["channel"]["userId"] == user for user, row in found.iterrows())
