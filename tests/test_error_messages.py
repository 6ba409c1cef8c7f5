"""Errors name the cause and the next step in one line: an unreachable platform, the sign-in
lockout, a misspelt channel or field, a value an enumerated field never takes."""

from __future__ import annotations

import socket
import traceback
from collections.abc import Callable, Iterator

import httpx
import pytest

import explorer
from explorer.emulator import Platform
from explorer.errors import (
    BadRequest,
    ConnectionFailed,
    NotFound,
    RateLimited,
    Unauthorized,
    limit_said,
)


@pytest.fixture
def api(platform: Platform) -> Iterator[explorer.Client]:
    """An anonymous client of the shared platform, without progress bars."""
    with explorer.connect(platform.base_url, progress=False) as client:
        yield client


def closed_port() -> int:
    """A loopback port nothing listens on (bound, then released)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def test_unreachable_platform_names_its_url_once_and_what_to_do() -> None:
    """With nothing listening, the error says the base URL once and how to start a platform."""
    base = f"http://127.0.0.1:{closed_port()}/api/v1"
    with (
        explorer.connect(base, progress=False) as api,
        pytest.raises(ConnectionFailed) as failed,
    ):
        api.channels(max_rows=5)
    said = str(failed.value)
    assert said.count("127.0.0.1") == 1 and base in said
    assert "explorer serve" in said and "EXPLORER_BASE_URL" in said
    assert "\n" not in said


def test_unreachable_platform_traceback_is_short() -> None:
    """The traceback of a blocking call stops at the toolkit's edge: no frames of the loop
    thread, no chained httpx exception."""
    base = f"http://127.0.0.1:{closed_port()}/api/v1"
    with explorer.connect(base, progress=False) as api:
        try:
            api.channels(max_rows=5)
        except ConnectionFailed as failed:
            lines = traceback.format_exception(failed)
        else:
            pytest.fail("no ConnectionFailed")
    assert len(lines) < 12
    assert not any("httpx" in line or "httpcore" in line for line in lines)


def test_sign_in_lockout_says_until_when_and_what_to_do(
    make_platform: Callable[..., Platform],
) -> None:
    """Failed sign-ins past the lockout bucket: a RateLimited naming the lockout, its end and
    what to check, not a bare "429 Too Many Requests"."""
    running = make_platform(buckets={"user-login-failed": (2, 900)})

    def sign_in() -> None:
        explorer.connect(running.base_url, username="viewer", password="wrong").close()

    for _ in range(2):
        with pytest.raises(Unauthorized):
            sign_in()
    with pytest.raises(RateLimited) as locked:
        sign_in()
    said = str(locked.value)
    assert locked.value.bucket == "user-login-failed"
    assert "Too many failed sign-ins" in said and "UTC (in 1" in said
    assert "password" in said and "\n" not in said


def test_any_used_up_limit_says_which_and_until_when() -> None:
    """A used-up bucket other than the lockout is named with the time it refills."""
    said = limit_said("channel-read", reset_at=1_000_090.0, now=1_000_000.0)
    assert "'channel-read'" in said and "in 1 min 30 s" in said and "wait" in said


def test_misspelt_channel_suggests_close_names(api: explorer.Client) -> None:
    """A token no channel has, one letter off a real one, suggests that one."""
    with pytest.raises(NotFound, match="did you mean 'streamer'"):
        api.channel("streamr").info()


def test_channel_with_nothing_close_says_how_to_search(api: explorer.Client) -> None:
    """A token like no channel's says how to search the names instead."""
    with pytest.raises(NotFound, match=r"api\.channels\(q="):
        api.channel("qqqqqqqq").info()


@pytest.mark.parametrize(
    ("arguments", "suggested"),
    [
        ({"where": {"viewersTotl": 5}}, "'viewersTotal'"),
        ({"order": "viewersTotl:desc"}, "'viewersTotal'"),
        ({"fields": ["id", "nmae"]}, "'name'"),
    ],
)
def test_misspelt_field_suggests_close_names(
    api: explorer.Client, arguments: dict[str, object], suggested: str
) -> None:
    """A field name one typo off a real one: the 400 says which was meant, in one line."""
    with pytest.raises(BadRequest) as refused:
        api.channels(max_rows=5, **arguments)
    assert f"did you mean {suggested}" in str(refused.value)
    assert "\n" not in str(refused.value)


def test_language_as_a_word_is_refused_saying_the_form(api: explorer.Client) -> None:
    """where={"languageId": "english"} is a 400 saying languages are two-letter codes, not an
    empty table."""
    with pytest.raises(BadRequest, match="two-letter ISO 639-1 code such as 'en'"):
        api.channels(where={"languageId": "english"}, max_rows=5)


def test_enumeration_value_is_refused_listing_the_valid_ones(platform: Platform) -> None:
    """A value outside an enumeration's choices is a 400 listing them, also over plain HTTP."""
    response = httpx.get(f"{platform.base_url}/channels", params={"where": "audience:eq:kids"})
    assert response.status_code == 400
    assert response.json()["message"] == "audience is one of 'family', 'teen', '18+', not 'kids'."


def test_valid_enumeration_values_still_filter(api: explorer.Client) -> None:
    """Values the field takes are accepted: the check refuses only impossible ones."""
    teen = api.channels(where={"audience": "teen", "languageId": ["en", "de"]}, max_rows=20)
    assert len(teen) and set(teen["audience"]) == {"teen"}
