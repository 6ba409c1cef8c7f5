"""Catalogue-like groups: confetti, frontendVersions, ingests and language channels.

The seeded world has two platform-wide confetti (by staff) and one of the streamer's channel.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import httpx
import pytest

from explorer.emulator import Platform

SignIn = Callable[..., httpx.Client]
BURST = {"name": "Gold", "particles": [{"type": "color", "value": "#ffd700"}]}


def channel_confetti(platform: Platform, token: str) -> list[dict[str, Any]]:
    """The confetti channel ``token`` may use."""
    reply = httpx.get(f"{platform.base_url}/channels/{token}/confetti")
    reply.raise_for_status()
    found: list[dict[str, Any]] = reply.json()
    return found


def own_confetti(platform: Platform, token: str) -> dict[str, Any]:
    """The first confetti that belongs to channel ``token`` itself."""
    return next(c for c in channel_confetti(platform, token) if c["channelId"] is not None)


def test_channel_confetti_is_platform_wide_plus_its_own(platform: Platform) -> None:
    """A channel may use the platform-wide confetti and only its own channel confetti."""
    streamer = channel_confetti(platform, "streamer")
    viewer = channel_confetti(platform, "viewer")
    shared = [c for c in streamer if c["channelId"] is None]
    assert shared and [c for c in viewer if c["channelId"] is None] == shared
    assert len(streamer) == len(viewer) + 1


def test_confetti_round_trip(make_platform: Callable[..., Platform], signed_in: SignIn) -> None:
    """PUT creates (201) for the caller's channel; GET, PATCH, DELETE follow it."""
    platform = make_platform()
    viewer = signed_in(platform.base_url, "viewer")
    created = viewer.put("/confetti", json=BURST)
    assert created.status_code == 201
    confetti = created.json()
    channel_id = viewer.get("/users/current").json()["channel"]["id"]
    assert (confetti["channelId"], confetti["count"], confetti["durationMs"]) == (
        channel_id,
        100,
        3000,
    )
    assert confetti in channel_confetti(platform, "viewer")
    path = f"/confetti/{confetti['id']}"
    changed = viewer.patch(path, json={"count": 250, "name": "Gold rush"}).json()
    assert (changed["count"], changed["name"]) == (250, "Gold rush")
    assert httpx.get(platform.base_url + path).json() == changed
    assert viewer.delete(path).status_code == 204
    assert httpx.get(platform.base_url + path).status_code == 404


def test_others_cannot_change_a_channels_confetti(platform: Platform, signed_in: SignIn) -> None:
    """A user who neither created it nor owns the channel gets 403 on PATCH and DELETE."""
    path = f"/confetti/{own_confetti(platform, 'streamer')['id']}"
    viewer = signed_in(platform.base_url, "viewer")
    assert viewer.patch(path, json={"count": 1}).status_code == 403
    assert viewer.delete(path).status_code == 403


def test_confetti_for_another_channel_is_403(platform: Platform, signed_in: SignIn) -> None:
    """Creating confetti for someone else's channel is 403."""
    streamer_channel = own_confetti(platform, "streamer")["channelId"]
    viewer = signed_in(platform.base_url, "viewer")
    assert viewer.put("/confetti", json={**BURST, "channelId": streamer_channel}).status_code == 403


def test_platform_wide_confetti_is_staff_only(
    make_platform: Callable[..., Platform], signed_in: SignIn
) -> None:
    """Only staff create platform-wide confetti, which every channel then lists."""
    platform = make_platform()
    body = {**BURST, "channelId": None}
    assert signed_in(platform.base_url, "streamer").put("/confetti", json=body).status_code == 403
    created = signed_in(platform.base_url, "staff").put("/confetti", json=body).json()
    assert created in channel_confetti(platform, "viewer")


def test_staff_may_change_any_confetti(
    make_platform: Callable[..., Platform], signed_in: SignIn
) -> None:
    """Staff may change a channel's confetti."""
    platform = make_platform()
    path = f"/confetti/{own_confetti(platform, 'streamer')['id']}"
    reply = signed_in(platform.base_url, "staff").patch(path, json={"durationMs": 1000})
    assert reply.json()["durationMs"] == 1000


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"particles": BURST["particles"]}, "name"),
        ({"name": "x"}, "particles"),
        ({**BURST, "particles": []}, "particles"),
        ({**BURST, "particles": [{"type": "color", "value": "gold"}]}, "particles.0"),
        ({**BURST, "particles": [{"type": "smell", "value": "x"}]}, "particles.0"),
        ({**BURST, "count": 0}, "count"),
        ({**BURST, "count": True}, "count"),
        ({**BURST, "durationMs": 10**6}, "durationMs"),
        ({**BURST, "channelId": "mine"}, "channelId"),
    ],
)
def test_confetti_bad_input_is_400(
    platform: Platform, signed_in: SignIn, body: dict[str, Any], field: str
) -> None:
    """Missing, mistyped or out-of-range settings are 400 naming the field."""
    reply = signed_in(platform.base_url, "streamer").put("/confetti", json=body)
    assert reply.status_code == 400 and reply.json()["details"][0]["path"] == field


def test_confetti_creation_needs_sign_in(platform: Platform) -> None:
    """Anonymous PUT /confetti is 401."""
    assert httpx.put(f"{platform.base_url}/confetti", json=BURST).status_code == 401


def test_unknown_confetti_is_404(platform: Platform) -> None:
    """GET of a confetti that does not exist is 404."""
    assert httpx.get(f"{platform.base_url}/confetti/999999").status_code == 404


def test_empty_confetti_patch_is_400(platform: Platform, signed_in: SignIn) -> None:
    """A PATCH that changes nothing is 400."""
    path = f"/confetti/{own_confetti(platform, 'streamer')['id']}"
    assert signed_in(platform.base_url, "streamer").patch(path, json={}).status_code == 400


def test_frontend_versions_mark_one_current_per_app(platform: Platform) -> None:
    """Each app has exactly one current release, its newest."""
    releases = httpx.get(f"{platform.base_url}/frontendVersions").json()
    for app in {r["app"] for r in releases}:
        of_app = [r for r in releases if r["app"] == app]
        newest = max(of_app, key=lambda r: r["releasedAt"])
        assert [r for r in of_app if r["current"]] == [newest]


def test_frontend_versions_filter_by_app(platform: Platform) -> None:
    """``app`` narrows the list to one app."""
    web = httpx.get(f"{platform.base_url}/frontendVersions", params={"app": "web"}).json()
    assert web and {r["app"] for r in web} == {"web"}


def test_frontend_versions_unknown_app_is_400(platform: Platform) -> None:
    """An unknown ``app`` is 400."""
    bad = httpx.get(f"{platform.base_url}/frontendVersions", params={"app": "fax"})
    assert bad.status_code == 400 and bad.json()["details"][0]["path"] == "app"


def test_ingests_have_the_reference_shape(platform: Platform) -> None:
    """Each ingest has name, host, a wss pingTest, protocols of {type}, and a load."""
    ingests = httpx.get(f"{platform.base_url}/ingests").json()
    assert ingests
    for ingest in ingests:
        assert set(ingest) == {"name", "host", "pingTest", "protocols", "load"}
        assert ingest["pingTest"].startswith("wss://") and ingest["protocols"]


def test_best_ingest_is_the_least_loaded(platform: Platform) -> None:
    """/ingests/best is the least-loaded ingest (ties by name), the same on every call."""
    ingests = httpx.get(f"{platform.base_url}/ingests").json()
    best = httpx.get(f"{platform.base_url}/ingests/best").json()
    assert best == min(ingests, key=lambda i: (i["load"], i["name"]))


def test_ingests_filter_by_protocol(platform: Platform) -> None:
    """``protocol=ftl`` keeps only FTL ingests, for the list and for the best."""
    base = platform.base_url
    ftl = httpx.get(f"{base}/ingests", params={"protocol": "ftl"}).json()
    assert ftl and all({"type": "ftl"} in i["protocols"] for i in ftl)
    best = httpx.get(f"{base}/ingests/best", params={"protocol": "ftl"}).json()
    assert {"type": "ftl"} in best["protocols"]


def test_ingests_unknown_protocol_is_400(platform: Platform) -> None:
    """An unknown ``protocol`` is 400."""
    reply = httpx.get(f"{platform.base_url}/ingests/best", params={"protocol": "srt"})
    assert reply.status_code == 400 and reply.json()["details"][0]["path"] == "protocol"


def test_language_counts_match_the_channel_list(platform: Platform) -> None:
    """A language's channel count equals the channels listed with that languageId."""
    languages = httpx.get(f"{platform.base_url}/language/channels").json()
    english = next(lang for lang in languages if lang["id"] == "en")
    listed = httpx.get(
        f"{platform.base_url}/channels", params={"where": "languageId:eq:en", "limit": 1}
    )
    assert english["name"] == "English"
    assert english["channels"] == int(listed.headers["X-Total-Count"])


def test_active_languages_have_live_channels(platform: Platform) -> None:
    """Active languages all have live channels and come most live viewers first."""
    active = httpx.get(f"{platform.base_url}/language/channels/active").json()
    assert active and all(lang["online"] > 0 for lang in active)
    viewers = [lang["viewersCurrent"] for lang in active]
    assert viewers == sorted(viewers, reverse=True)


def test_available_languages_include_unused_ones(platform: Platform) -> None:
    """Available lists the whole catalogue, zero counts where no channel uses a language."""
    available = httpx.get(f"{platform.base_url}/language/channels/available").json()
    used = {lang["id"] for lang in httpx.get(f"{platform.base_url}/language/channels").json()}
    assert {"en", "de", "ja"} <= {lang["id"] for lang in available}
    assert all(lang["channels"] == 0 for lang in available if lang["id"] not in used)
