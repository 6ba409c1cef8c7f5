"""Sprite sheets kept with a capture: a recording watch copies the builtin pack's sheet, and a
replay draws the emoticons from it once the platform is gone."""

from __future__ import annotations

from pathlib import Path

import httpx

import explorer
from explorer.emulator.chat.emoticons import image
from explorer.recording import sprites as capturesprites
from explorer.recording.storage import open_store
from explorer.views.rendering import sprite_url
from tests.databases import start
from tests.test_chat_client import wait_until
from tests.test_sprites import pixels


def test_a_replay_draws_emoticons_from_the_kept_sheet_with_no_platform(tmp_path: Path) -> None:
    """A recording watch keeps the platform's sheet byte for byte; after the platform has
    stopped, the replay's view shows the recorded emoticon inline with the platform's own
    pixels."""
    out = tmp_path / "capture"
    with start(channels=50, rate_limits=False) as platform:
        sheet = httpx.get(sprite_url(platform.base_url, "default") or "", timeout=10).content
        api = explorer.connect(platform.base_url, progress=False)
        owner = explorer.connect(
            platform.base_url, progress=False, username="streamer", password="explorer"
        )
        chat = owner.chat("streamer")
        watch = api.watch(["streamer"], to=out)
        try:
            kept = out / "sprites" / "default.png"
            wait_until(kept.exists, timeout=30)
            chat.send("hello :)")
            wait_until(lambda: "hello :)" in watch.messages()["text"].tolist(), timeout=30)
        finally:
            watch.close()
            chat.close()
            owner.close()
            api.close()
    assert kept.read_bytes() == sheet
    replaying = explorer.replay(out, speed=None)
    assert replaying.wait(30)
    view = replaying.widget(rows=3)
    record = wait_until(
        lambda: next((r for r in view.records if "<img" in r["html"]), None), timeout=15
    )
    view.close()
    src = record["html"].split('src="', 1)[1].split('"', 1)[0]
    assert pixels(src) == pixels("data:image/png;base64," + image(":)"))


def test_keep_leaves_out_a_sheet_it_cannot_have(tmp_path: Path) -> None:
    """A sheet that cannot be fetched is not kept (nor a pack name that is not plain), and a
    sheet already there is not fetched again."""
    store = open_store(tmp_path)
    fetched: list[str] = []

    def fetch(url: str) -> bytes:
        fetched.append(url)
        if "missing" in url:
            raise httpx.ConnectError("gone")
        return b"png"

    base = "http://127.0.0.1:1/api/v1"
    assert capturesprites.keep(store, base, ["default", "missing", "../x"], fetch) == ["default"]
    assert capturesprites.keep(store, base, ["default"], fetch) == ["default"]
    assert len(fetched) == 2 and (tmp_path / "sprites" / "default.png").read_bytes() == b"png"
    assert not (tmp_path / "sprites" / "missing.png").exists()
