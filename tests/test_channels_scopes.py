"""Bearer tokens on channel sub-resources: each write needs its scope (cookies hold all)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import closing
from urllib.parse import parse_qs, urlsplit

import httpx
import pytest

from explorer.emulator import Platform
from tests.conftest import sign_in

Bearer = Callable[[str, str], httpx.Client]


@pytest.fixture
def bearer(platform: Platform) -> Iterator[Bearer]:
    """A factory of clients holding an implicit-grant token of ``username`` with ``scope``."""
    clients: list[httpx.Client] = []

    def make(username: str, scope: str) -> httpx.Client:
        with closing(sign_in(platform.base_url, username)) as session:
            response = session.get(
                "/oauth/authorize",
                params={
                    "response_type": "token",
                    "client_id": "explorer-toolkit",
                    "redirect_uri": "http://127.0.0.1/oauth/callback",
                    "scope": scope,
                },
            )
        token = parse_qs(urlsplit(response.headers["location"]).fragment)["access_token"][0]
        client = httpx.Client(
            base_url=platform.base_url, headers={"Authorization": f"Bearer {token}"}, timeout=10
        )
        clients.append(client)
        return client

    yield make
    for client in clients:
        client.close()


def test_editing_needs_the_update_scope(bearer: Bearer) -> None:
    """An owner's token without channel:update:self cannot edit the channel (403)."""
    owner = bearer("streamer", "channel:follow:self")
    response = owner.patch("/channels/streamer", json={"name": "x"})
    assert response.status_code == 403
    assert response.json()["message"] == "Missing scope channel:update:self."


def test_resetting_the_stream_key_needs_its_scope(bearer: Bearer) -> None:
    """An owner's token without channel:streamKey:self cannot reset the key (403)."""
    owner = bearer("streamer", "channel:update:self")
    assert owner.delete("/channels/streamer/streamKey").status_code == 403


def test_following_needs_the_follow_scope(bearer: Bearer) -> None:
    """A token without channel:follow:self cannot follow (403)."""
    viewer = bearer("viewer", "user:details:self")
    assert viewer.put("/channels/streamer/follow").status_code == 403


def test_banning_needs_the_purge_scope(bearer: Bearer) -> None:
    """A moderator's token without chat:purge cannot ban through REST (403)."""
    moderator = bearer("moderator", "chat:connect chat:chat")
    response = moderator.patch("/channels/streamer/users/4", json={"add": ["Banned"]})
    assert response.status_code == 403
    assert response.json()["message"] == "Missing scope chat:purge."
