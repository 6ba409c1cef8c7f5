"""Replays of what published clients of the historical platform send for live events, chat
user lists, recordings and hooks, checking the fields they read back. Only the base address
(and the Constellation address, the one constant those clients hold) differ from their code.
Each test names its source (repository and file path on GitHub).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from contextlib import closing

import httpx
import pytest
from websockets.asyncio.client import connect

from explorer.emulator import Platform
from explorer.emulator.live.webhooks import signature
from tests.chatkit import World, run
from tests.conftest import sign_in


def test_mixcord_constellation_subscribes_and_dispatches(platform: Platform) -> None:
    """ooojustin/mixcord mixcord/mixer/MixerConstellation.py (+ MixerWS.py): websockets.connect
    to CONSTELLATION_URL with no header or subprotocol, livesubscribe {events} with ids from 0,
    then every packet whose type is "event" and event "live" is dispatched by data.channel with
    data.payload."""
    web_root = platform.root_url.replace("http", "ws", 1)
    with closing(sign_in(platform.base_url, "streamer")) as streamer:
        channel = streamer.get("/users/current").json()["channel"]["id"]

        async def client() -> list[tuple[str, object]]:
            got: list[tuple[str, object]] = []
            async with connect(web_root) as websocket:
                packet_id = 0
                packet = {
                    "type": "method",
                    "method": "livesubscribe",
                    "params": {"events": [f"channel:{channel}:update"]},
                    "id": packet_id,
                }
                await websocket.send(json.dumps(packet))
                while True:
                    received = json.loads(await websocket.recv())
                    if received["type"] == "reply":  # mixcord ignores it; we wait for it
                        assert received == {"type": "reply", "id": 0, "result": None, "error": None}
                        await asyncio.to_thread(
                            streamer.patch, f"/channels/{channel}", json={"name": "mixcord"}
                        )
                    if received["type"] != "event" or received["event"] != "live":
                        continue
                    got.append((received["data"]["channel"], received["data"]["payload"]))
                    return got

        assert run(client()) == [(f"channel:{channel}:update", {"name": "mixcord"})]


@pytest.fixture(scope="module")
def world() -> Iterator[World]:
    """A platform of its own whose chats the v2 list reads."""
    running = World.start()
    yield running
    running.stop()


def test_mixer_base_v2_chat_users_continuation(world: World) -> None:
    """SaviorXTanren/mixer-client-csharp Mixer.Base/Services/ChatsService.cs (ChatsV2Service
    .GetUsers) and MixerServiceBase.GetPagedContinuationAsync: GET v2 chats/{id}/users, then
    while the page is not empty and a "link" header exists, take what follows
    "continuationToken=" up to ">" and append "?continuationToken=<it>"; ChatUserModel reads
    userId, username, userRoles."""
    channel = world.channel_of("moderator")

    async def scenario() -> list[dict[str, object]]:
        chats = [await world.join(name, channel) for name in ("staff", "viewer", "viewer2")]

        def walk() -> list[dict[str, object]]:
            base = world.base_url.replace("/api/v1", "/api/v2/")
            request_uri = f"chats/{channel}/users"
            results: list[dict[str, object]] = []
            token = None
            while True:
                uri = request_uri + (f"?continuationToken={token}" if token else "")
                # limit=2 stands for a busy channel's page size (the client sends none).
                response = httpx.get(base + uri, params={"limit": 2} if not token else None)
                page = response.json()
                results += page
                token = None
                link = response.headers.get("link")
                if page and link:
                    start = link.index("continuationToken=") + len("continuationToken=")
                    token = link[start:][: link[start:].index(">")]
                if not token:
                    return results

        found = await asyncio.to_thread(walk)
        for chat in chats:
            await chat.close()
        return found

    found = run(scenario())
    assert [u["username"] for u in found] == ["staff", "viewer", "viewer2"]
    assert all(set(u) == {"userId", "username", "userRoles"} for u in found)


def test_mixer_base_vod_data_and_swift_vod_urls(platform: Platform) -> None:
    """Mixer.Base/Model/Channel/ChannelVODDataModel.cs (mixer-client-csharp) reads Width,
    Height, Fps, Bitrate of a VOD's data; mixer/beam-client-swift MixerVOD.swift builds
    baseUrl + "manifest.m3u8" (hls) or "source.mp4" (raw). GET /recordings/{id} gives both."""
    channels = httpx.get(
        f"{platform.base_url}/channels",
        params={"where": "hasVod:eq:1", "order": "viewersTotal:desc", "limit": 1},
    ).json()
    listed = httpx.get(f"{platform.base_url}/channels/{channels[0]['id']}/recordings").json()
    recording = httpx.get(f"{platform.base_url}/recordings/{listed[0]['id']}").json()
    by_format = {vod["format"]: vod for vod in recording["vods"]}
    data = by_format["raw"]["data"]
    assert all(isinstance(data[key], int) for key in ("Width", "Height", "Fps", "Bitrate"))
    assert set(by_format["thumbnail"]["data"]) == {"Width", "Height"}
    assert (by_format["hls"]["baseUrl"] + "manifest.m3u8").startswith("https://")
    assert by_format["hls"]["baseUrl"].endswith("/")


def test_webhook_docs_signature_example() -> None:
    """mixer/developer-docs pages/02.reference/04.webhooks/landing.md: the signed request it
    shows (secret "verysecret") carries exactly the Poker-Signature our deliveries compute."""
    body = (
        '{"event":"channel:314:update","id":"96445358-d5b1-417e-a9ac-57f1cb001916",'
        '"payload":{"broacastId":"9976edaf-c327-4560-a1cb-89425cb1131f"},'
        '"sentAt":"2018-02-08T03:28:06.8605874+00:00"}'
    )
    assert len(body) == 183  # the example's Content-Length
    assert signature("verysecret", body.encode()) == (
        "sha384=5EB3E48ED381446210D527AA1D88D9A5F36C840DD088665F35BEA51D3FA429837430E8197383"
        "5774CC0AE69EEDE6AAE7"
    )
