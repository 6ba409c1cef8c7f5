"""The official npm clients of the historical platform, run end to end against a live platform.

``@mixer/client-node@3.5.0`` (npm; source github.com/mixer/client-node),
``@mixer/shortcode-oauth@1.2.0`` (npm; source github.com/mixer/shortcode-oauth) and
``carina@0.12.0`` (npm; source github.com/mixer/carina, the Constellation client) are
installed by ``.ci/npm-packages`` into ``tests/npm/node_modules``; ``tests/npm/clients.js``
drives them the way their published examples do, changing only the base address, client id
and token (carina: its ``url``, our web root).
"""

from __future__ import annotations

import json
import shutil
import subprocess
import time
from collections.abc import Callable
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest

from explorer.emulator import Platform
from explorer.emulator.fleet import FLEET_CHANNELS, Fleet, spawn, wait_for
from tests import databases
from tests.conftest import sign_in
from tests.test_platform_oauth import implicit_token

NPM = Path(__file__).parent / "npm"
NODE = shutil.which("node")

pytestmark = [
    pytest.mark.skipif(NODE is None, reason="node is not installed: the npm clients need it"),
]


def _installed() -> None:
    if not (NPM / "node_modules" / "carina").is_dir():
        subprocess.run(["bash", str(NPM.parent.parent / ".ci" / "npm-packages")], check=True)


def _start(*args: str) -> subprocess.Popen[str]:
    _installed()
    assert NODE is not None
    return subprocess.Popen(
        [NODE, str(NPM / "clients.js"), *args],
        cwd=NPM,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _steps(process: subprocess.Popen[str], stdin: str = "") -> dict[str, Any]:
    """Every step the script printed, by name; fails with its output if it failed."""
    out, err = process.communicate(stdin, timeout=60)
    steps = {s["step"]: s["value"] for s in map(json.loads, out.splitlines())}
    assert process.returncode == 0, (steps.get("failed"), err)
    return steps


def test_client_node_reads_channels_broadcast_and_chat_anonymously(platform: Platform) -> None:
    """client-node's ChannelService.getChannel/getBroadcast, ChatService.join and an anonymous
    Socket.auth work unchanged (services/Channel.ts, services/Chat.ts, Socket.auth)."""
    steps = _steps(_start("rest", platform.base_url))
    channel = steps["channel"]
    assert channel["token"] == "streamer" and channel["online"] is True
    assert steps["broadcast"]["channelId"] == channel["id"] and steps["broadcast"]["online"]
    assert steps["chat"]["endpoints"] and "authkey" not in steps["chat"]
    assert steps["anonymousAuth"] == {"authenticated": False, "roles": []}


def test_tutorial_chat_bot_signs_in_chats_and_reads_history(platform: Platform) -> None:
    """The official chat-bot tutorial's flow with a chat-only token: users/current, chats/{id},
    Socket.auth, msg, the ChatMessage whose message[0].data it reads, then history."""
    with closing(sign_in(platform.base_url, "viewer")) as browser:
        token = implicit_token(browser, "chat:connect chat:chat")["access_token"]
    steps = _steps(_start("bot", platform.base_url, token))
    user = steps["user"]
    assert user["username"] == "viewer" and user["channel"]["id"] and "avatarUrl" in user
    assert steps["auth"]["authenticated"] is True and steps["auth"]["roles"][-1] == "User"
    assert steps["msg"]["message"]["message"][0] == {"type": "text", "data": "", "text": ""}
    assert steps["heard"]["first"] == "" and steps["heard"]["data"]["id"] == steps["msg"]["id"]
    assert steps["msg"]["id"] in [m["id"] for m in steps["history"]]


def test_shortcode_oauth_code_approve_token_and_current_user(platform: Platform) -> None:
    """shortcode-oauth's OAuthClient: getCode, a person approves, waitForAccept exchanges the
    code (JSON bodies), the token reads users/current, and refresh rotates it."""
    process = _start("shortcode", platform.base_url, "explorer-toolkit")
    assert process.stdout is not None
    first = json.loads(process.stdout.readline())
    assert first["step"] == "code" and len(first["value"]["code"]) == 6
    with closing(sign_in(platform.base_url, "streamer")) as person:
        approved = person.post("/oauth/shortcode/approve", json={"code": first["value"]["code"]})
    assert approved.status_code == 200, approved.text
    steps = _steps(process, "approved\n")
    assert steps["tokens"] == {"granted": True, "expired": False}
    assert steps["user"]["username"] == "streamer"
    assert steps["refreshed"] == {"changed": True}


def constellation_sees_rest_change(web_root: str, base_url: str) -> tuple[dict[str, Any], float]:
    """carina, connected to ``web_root``, follows the streamer's ``channel:{id}:update``; once
    its livesubscribe is answered, the streamer retitles the channel through ``base_url``.
    Returns the script's steps and the seconds from the PATCH's answer to the event."""
    with closing(sign_in(base_url, "streamer")) as streamer:
        channel = streamer.get("/users/current").json()["channel"]["id"]
        process = _start("constellation", web_root.replace("http", "ws", 1), str(channel))
        assert process.stdout is not None
        seen = [json.loads(process.stdout.readline()) for _ in range(2)]
        assert [s["step"] for s in seen] == ["hello", "subscribed"], seen
        title = f"retitled {time.monotonic()}"
        response = streamer.patch(f"/channels/{channel}", json={"name": title})
        assert response.status_code == 200, response.text
        patched = time.monotonic()
        line = process.stdout.readline()
        arrived = time.monotonic() - patched
    steps = {s["step"]: s["value"] for s in seen}
    steps.update(_steps(process) | {"update": json.loads(line)["value"]})
    assert steps["update"] == {"name": title}
    return steps, arrived


def test_carina_sees_a_rest_change_as_a_live_update(make_platform: Callable[..., Platform]) -> None:
    """carina's README example, its url set to our web root, subscribes to
    channel:{id}:update and receives only the changed field within a second of the PATCH."""
    platform = make_platform(rate_limits=False)
    steps, arrived = constellation_sees_rest_change(platform.root_url, platform.base_url)
    assert steps["hello"] == {"authenticated": False}
    assert steps["subscribed"]["error"] is None and steps["subscribed"]["result"] is None
    assert arrived < 1.0


@pytest.mark.skipif(shutil.which("redis-server") is None, reason="needs a real redis-server")
def test_carina_sees_a_change_made_in_another_process(tmp_path: Path) -> None:
    """Two REST processes on one database and Redis (beside two chat-node processes): carina
    connected to the second sees, within a second, a PATCH answered by the first."""
    db = databases.target(tmp_path / "platform.db", channels=FLEET_CHANNELS)
    with Fleet(db, nodes=2) as fleet:
        args = ["--port", "0", "--db", str(fleet.db), "--broker", fleet.redis.url]
        flags = ["--chat-nodes", "0", "--no-simulate", "--no-rate-limits"]
        second = wait_for(spawn([*args, *flags], tmp_path / "second.log"), 1)
        try:
            web_root = second.address.removesuffix("/api/v1")
            _, arrived = constellation_sees_rest_change(web_root, fleet.base_url)
        finally:
            second.stop()
    assert arrived < 1.0
