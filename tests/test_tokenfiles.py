"""OAuth tokens kept in a file the user chooses: used by the next client instead of a new
sign-in, rewritten at each refresh with a callback, and a foreign file refused untouched."""

from __future__ import annotations

import json
import stat
import time
from collections.abc import Callable
from contextlib import closing
from pathlib import Path

import pytest

import explorer
from explorer.emulator import Platform
from explorer.errors import TokenFileError
from explorer.rest.auth import Grant
from explorer.rest.shortcode import Shortcode
from tests.conftest import sign_in

SCOPES = ["chat:connect", "chat:chat"]


def approve_as(platform: Platform, username: str) -> Callable[[Shortcode], None]:
    """A ``show`` that approves the shown code as ``username``."""

    def approve(pending: Shortcode) -> None:
        with closing(sign_in(platform.base_url, username)) as person:
            person.post("/oauth/shortcode/approve", json={"code": pending.code})

    return approve


def never(pending: Shortcode) -> None:
    """A ``show`` for a sign-in that must not ask anyone."""
    raise AssertionError(f"asked to approve {pending.code}")


def signed_in(platform: Platform, token_file: Path) -> str:
    """Sign in by shortcode as viewer keeping the token in ``token_file``; its access token."""
    with explorer.connect(platform.base_url, progress=False) as client:
        grant = client.authorize(
            SCOPES, flow="shortcode", show=approve_as(platform, "viewer"), token_file=token_file
        )
    return grant.access_token


def test_a_kept_token_signs_the_next_client_in_without_asking(
    platform: Platform, tmp_path: Path
) -> None:
    """The sign-in's token is written to the chosen file, readable by its owner only, and a
    later client uses it for the same scopes without showing a code."""
    token_file = tmp_path / "token.json"
    access = signed_in(platform, token_file)
    assert stat.S_IMODE(token_file.stat().st_mode) == 0o600
    assert json.loads(token_file.read_text())["grant"]["access_token"] == access
    with explorer.connect(platform.base_url, progress=False) as client:
        grant = client.authorize(SCOPES, flow="shortcode", show=never, token_file=token_file)
        me = client.me.info()
    assert grant.access_token == access and me["username"].tolist() == ["viewer"]


def test_a_kept_token_past_expiry_refreshes_rewrites_the_file_and_calls_back(
    platform: Platform, tmp_path: Path
) -> None:
    """A kept token past its expiry is refreshed before the next request: the request
    succeeds, on_refresh gets the new grant, and the file holds its new refresh token."""
    token_file = tmp_path / "token.json"
    signed_in(platform, token_file)
    body = json.loads(token_file.read_text())
    old_refresh = body["grant"]["refresh_token"]
    body["expires_at"] = time.time() - 10
    token_file.write_text(json.dumps(body))
    refreshed: list[Grant] = []
    with explorer.connect(platform.base_url, progress=False) as client:
        client.authorize(
            SCOPES, flow="shortcode", show=never, token_file=token_file, on_refresh=refreshed.append
        )
        me = client.me.info()
    assert me["username"].tolist() == ["viewer"] and len(refreshed) == 1
    kept = json.loads(token_file.read_text())
    assert refreshed[0].refresh_token not in (None, old_refresh)
    assert kept["grant"]["refresh_token"] == refreshed[0].refresh_token
    assert kept["expires_at"] > time.time()


def test_a_file_that_is_no_kept_token_is_refused_and_left_alone(
    platform: Platform, tmp_path: Path
) -> None:
    """A token_file holding something else raises TokenFileError naming it, and keeps its
    bytes."""
    token_file = tmp_path / "notes.txt"
    token_file.write_text("my notes")
    with (
        explorer.connect(platform.base_url, progress=False) as client,
        pytest.raises(TokenFileError, match=r"notes\.txt"),
    ):
        client.authorize(SCOPES, flow="shortcode", show=never, token_file=token_file)
    assert token_file.read_text() == "my notes"
