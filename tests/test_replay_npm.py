"""The official npm clients of the historical platform, run end to end against a live platform.

``@mixer/client-node@3.5.0`` (npm; source github.com/mixer/client-node) and
``@mixer/shortcode-oauth@1.2.0`` (npm; source github.com/mixer/shortcode-oauth) are installed
by ``.ci/npm-packages`` into ``tests/npm/node_modules``; ``tests/npm/clients.js`` drives them
the way their published examples do, changing only the base address, client id and token.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest

from explorer.emulator import Platform
from tests.conftest import sign_in
from tests.test_platform_oauth import implicit_token

NPM = Path(__file__).parent / "npm"
NODE = shutil.which("node")

pytestmark = [
    pytest.mark.skipif(NODE is None, reason="node is not installed: the npm clients need it"),
]


def _installed() -> None:
    if not (NPM / "node_modules" / "@mixer" / "client-node").is_dir():
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
