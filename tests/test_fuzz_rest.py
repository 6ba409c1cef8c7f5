"""REST fuzzing: schemathesis cases from the live ``/api/v1/openapi.json``, per operation.

Each operation of the route table is fuzzed against a real platform (port 0, its own writable
world, rate limits off) with schema-conforming and schema-violating inputs, in four guises:

- anonymous: no 5xx, and every response conforms to the description (status code, content
  type, body schema); a route that needs a signed-in caller never succeeds (401);
- a cookie session with its CSRF token: no 5xx and conforming responses, as the owner of a
  channel (so writes get past authorization where the fuzzer hits real ids);
- the same cookie without the CSRF token: a route that relies on the caller always answers
  461 with a fresh token, and never runs;
- a bearer token holding only ``chat:connect``: a route that needs another scope always
  answers 403.

Half the cases of an operation with path parameters address real records of the streamer
(channel, game, invoice, ...) so they get past 404 into the handlers. Besides the fuzzing: the
live description lists exactly the route table, and a method a path does not serve answers
405 with an ``Allow`` of exactly the described methods.

The number of cases per operation is bounded (``EXAMPLES``, ``EXPLORER_FUZZ_EXAMPLES`` to
raise it; the guises whose answer does not depend on the input send the first quarter). The
cases of an operation are drawn once, and every guise sends those same ones: drawing them, not
serving them, is most of the module's time, and derandomized hypothesis drew the same cases
for each guise anyway. Every call goes over one keep-alive connection that keeps no cookie.
Tallies of the inputs tried and of the status codes seen are printed at the end of the module.
"""

from __future__ import annotations

import os
import re
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import closing
from http.cookiejar import DefaultCookiePolicy
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest
import requests
import schemathesis
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st
from schemathesis import Case, GenerationMode, Response
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_schema_conformance,
    status_code_conformance,
)

from explorer.emulator import Platform
from explorer.emulator.app import platform_routes
from explorer.emulator.policy import Route
from tests.conftest import SMALL_WORLD, sign_in
from tests.databases import start

pytestmark = pytest.mark.fuzz

#: Generated cases per operation and guise (positive and negative inputs mixed); raise it
#: with EXPLORER_FUZZ_EXAMPLES for a longer hunt than CI's.
EXAMPLES = int(os.environ.get("EXPLORER_FUZZ_EXAMPLES", "16"))
#: Fewer for the guises whose answer does not depend on the input at all: the first ones.
GATE_EXAMPLES = max(4, EXAMPLES // 4)
CONFORMANCE = [
    not_a_server_error,
    status_code_conformance,
    content_type_conformance,
    response_schema_conformance,
]
ROUTES: dict[str, Route] = {f"{r.method} {r.path}": r for r in platform_routes()}
#: Signing out would end the fuzzing session half-way; it is fuzzed anonymously instead.
SESSION_ENDERS = {"DELETE /users/current/session"}
PATH_PARAM = re.compile(r"{(\w+)}")
TALLY: Counter[str] = Counter()
STATUSES: Counter[int] = Counter()
#: The cases drawn for each operation: every guise sends these.
DRAWN: dict[str, list[Case]] = {}

fuzz_settings = settings(
    max_examples=EXAMPLES,
    deadline=None,
    database=None,
    derandomize=True,
    phases=[Phase.explicit, Phase.generate],
    suppress_health_check=list(HealthCheck),
)


@pytest.fixture(scope="module")
def live() -> Iterator[Platform]:
    """A platform of this module's own: fuzzed writes change its world."""
    with start(channels=SMALL_WORLD, rate_limits=False) as running:
        yield running
    print("\nREST fuzzing, inputs tried:", dict(sorted(TALLY.items())))
    print("status codes answered to fuzzed calls:", dict(sorted(STATUSES.items())))


@pytest.fixture(scope="module")
def http() -> Iterator[requests.Session]:
    """One keep-alive connection for every call of the module. It adds no header of its own
    and keeps no cookie a response sets: a call carries only its case's and its guise's."""
    with requests.Session() as pool:
        pool.headers.clear()
        pool.trust_env = False  # no proxy or .netrc credentials from the environment
        pool.cookies.set_policy(DefaultCookiePolicy(allowed_domains=[]))
        yield pool


@pytest.fixture(scope="module")
def api(live: Platform) -> Any:
    """The live OpenAPI description, loaded by schemathesis."""
    # Credentials are the guise's to choose: no generated Authorization header or cookie.
    config = schemathesis.Config.from_dict({"generation": {"with-security-parameters": False}})
    return schemathesis.openapi.from_url(f"{live.base_url}/openapi.json", config=config)


class Session:
    """A cookie session of the streamer that signs in again if a fuzzed call ended it."""

    def __init__(self, base_url: str) -> None:
        self.base_url = base_url
        self.client = sign_in(base_url, "streamer")

    def renew(self) -> bool:
        """Sign in again if the session ended; True if it had."""
        if self.client.get("/users/current").status_code == 200:
            return False
        self.client.close()
        self.client = sign_in(self.base_url, "streamer")
        return True

    def send(self, case: Case, http: requests.Session) -> Response:
        """``case`` sent with the cookie and CSRF token of a live session. Only a call that
        sets a cookie (a sign-out deletes it) or is answered 401 can find or leave the
        session ended: then it is checked, and a 401 the ended session got is sent again."""
        response = case.call(base_url=self.base_url, headers=self.headers(), session=http)
        ended = response.status_code == 401 or "set-cookie" in response.headers
        if ended and self.renew() and response.status_code == 401:
            response = case.call(base_url=self.base_url, headers=self.headers(), session=http)
        return response

    def headers(self) -> dict[str, str]:
        """Cookie and CSRF headers of the session."""
        return {"X-CSRF-Token": self.client.headers["X-CSRF-Token"], **self.cookie()}

    def cookie(self) -> dict[str, str]:
        """The session cookie alone, as a header."""
        return {"Cookie": "; ".join(f"{k}={v}" for k, v in self.client.cookies.items())}


@pytest.fixture(scope="module")
def session(live: Platform) -> Iterator[Session]:
    """The streamer's cookie session."""
    held = Session(live.base_url)
    yield held
    held.client.close()


@pytest.fixture(scope="module")
def known(session: Session) -> dict[str, str]:
    """Path parameters that address the streamer's own records, so calls get past 404."""
    client = session.client

    def first_id(path: str) -> str:
        items = client.get(path).json()
        return str(items[0]["id"]) if items else "1"

    me = client.get("/users/current").json()
    game = first_id("/interactive/games/owned")
    return {
        "channel": str(me["channel"]["id"]),
        "user": str(me["id"]),
        "game": game,
        "version": first_id(f"/interactive/games/{game}/versions"),
        "invoice": first_id("/invoices"),
        "notification": first_id("/notifications"),
        "confetti": first_id(f"/channels/{me['channel']['id']}/confetti"),
        "client": "explorer-toolkit",
        "type": "1",
    }


@pytest.fixture(scope="module")
def narrow_token(live: Platform) -> str:
    """An implicit-grant token of the streamer holding only chat:connect."""
    with closing(sign_in(live.base_url, "streamer")) as client:
        response = client.get(
            "/oauth/authorize",
            params={
                "response_type": "token",
                "client_id": "explorer-toolkit",
                "redirect_uri": "http://127.0.0.1/oauth/callback",
                "scope": "chat:connect",
            },
        )
    return parse_qs(urlsplit(response.headers["location"]).fragment)["access_token"][0]


def cases(api: Any, label: str, known: dict[str, str]) -> st.SearchStrategy[Case]:
    """Positive and negative cases of the operation ``label``; where ``known`` has its ids,
    half of them address real records instead of generated ids."""
    method, path = label.split(" ", 1)
    operation = api[path][method]
    modes = (GenerationMode.POSITIVE, GenerationMode.NEGATIVE)
    strategies = [operation.as_strategy(generation_mode=mode) for mode in modes]
    names = PATH_PARAM.findall(path)
    if names and all(name in known for name in names):
        fixed = {name: known[name] for name in names}
        strategies += [
            operation.as_strategy(generation_mode=mode, path_parameters=fixed) for mode in modes
        ]
    return st.one_of(strategies)


def drawn(api: Any, label: str, known: dict[str, str]) -> list[Case]:
    """The bounded cases of ``label``, drawn on first use: each guise sends the same ones."""
    if label not in DRAWN:
        found: list[Case] = []

        @fuzz_settings
        @given(case=cases(api, label, known))
        def draw(case: Case) -> None:
            found.append(case)

        draw()
        DRAWN[label] = found
    return DRAWN[label]


def fuzz(
    api: Any,
    label: str,
    known: dict[str, str],
    guise: str,
    check: Callable[[Case], None],
    gate: bool = False,
) -> None:
    """Run ``check`` on the bounded cases of ``label`` (the first ``GATE_EXAMPLES`` for a
    ``gate``), counting them under ``guise``; the first failure stops, naming its case."""
    every = drawn(api, label, known)
    for case in every[:GATE_EXAMPLES] if gate else every:
        TALLY[guise] += 1
        try:
            check(case)
        except Exception as failure:
            failure.add_note(f"Falsifying case: {case!r}")
            raise


def routed_here(response: Any) -> bool:
    """False when a fuzzed path parameter (say ``a/b``) sent the call to another route."""
    return response.status_code not in (404, 405) or "endpoint" not in response.text


def test_description_lists_every_route(api: Any) -> None:
    """The live description has exactly the route table's operations, each one valid."""
    operations = [result.ok() for result in api.get_all_operations()]
    assert {f"{op.method.upper()} {op.path}" for op in operations} == set(ROUTES)


def sample_path(path: str) -> str:
    """``path`` with each parameter filled by a value of its described type."""
    return PATH_PARAM.sub(lambda match: "x" if match.group(1) == "client" else "1", path)


@pytest.mark.parametrize("path", sorted({r.path for r in ROUTES.values()}))
def test_405_allows_exactly_the_described_methods(
    live: Platform, http: requests.Session, path: str
) -> None:
    """A method a path does not serve answers 405 whose Allow lists the described methods."""
    described = {r.method for r in ROUTES.values() if r.path == path}
    allowed = described | ({"HEAD"} if "GET" in described else set())
    response = http.request("TRACE", live.base_url + sample_path(path))
    TALLY["405 probes"] += 1
    assert response.status_code == 405
    assert set(response.headers["allow"].split(", ")) == allowed


def test_revoke_without_a_token_is_400(live: Platform, http: requests.Session) -> None:
    """POST /oauth/revoke without its required token is 400 invalid_request (found fuzzing)."""
    for body in ({}, {"token": ""}):
        response = http.post(f"{live.base_url}/oauth/revoke", data=body)
        assert response.status_code == 400 and response.json()["error"] == "invalid_request"


@pytest.mark.parametrize("label", sorted(ROUTES))
def test_anonymous_calls_conform(
    api: Any, live: Platform, http: requests.Session, known: dict[str, str], label: str
) -> None:
    """Anonymous fuzzed calls never 5xx, conform, and never pass a signed-in-only route."""
    route = ROUTES[label]

    def check(case: Case) -> None:
        response = case.call(base_url=live.base_url, session=http)
        STATUSES[response.status_code] += 1
        case.validate_response(response, checks=CONFORMANCE)
        if route.endpoint.signin == "user":
            assert not 200 <= response.status_code < 400, (label, response.status_code)

    fuzz(api, label, known, "anonymous", check)


@pytest.mark.parametrize("label", sorted(set(ROUTES) - SESSION_ENDERS))
def test_session_calls_conform(
    api: Any, http: requests.Session, session: Session, known: dict[str, str], label: str
) -> None:
    """Fuzzed calls with a valid cookie session and CSRF token never 5xx and conform."""

    def check(case: Case) -> None:
        response = session.send(case, http)
        STATUSES[response.status_code] += 1
        case.validate_response(response, checks=CONFORMANCE)

    fuzz(api, label, known, "session", check)


@pytest.mark.parametrize(
    "label", sorted(k for k, r in ROUTES.items() if r.endpoint.signin == "user")
)
def test_cookie_without_csrf_is_461(
    api: Any,
    live: Platform,
    http: requests.Session,
    session: Session,
    known: dict[str, str],
    label: str,
) -> None:
    """A cookie without its CSRF token never gets past a route that relies on the caller."""
    session.renew()  # refused calls cannot end it: once per operation keeps it alive

    def check(case: Case) -> None:
        response = case.call(base_url=live.base_url, headers=session.cookie(), session=http)
        if routed_here(response):
            assert response.status_code == 461, (label, response.status_code, response.text)
            assert response.headers.get("x-csrf-token"), "461 without a fresh token"

    fuzz(api, label, known, "cookie without CSRF", check, gate=True)


@pytest.mark.parametrize(
    "label",
    sorted(
        k
        for k, r in ROUTES.items()
        if r.endpoint.scopes and set(r.endpoint.scopes) != {"chat:connect"}
    ),
)
def test_token_without_scope_is_403(
    api: Any,
    live: Platform,
    http: requests.Session,
    narrow_token: str,
    known: dict[str, str],
    label: str,
) -> None:
    """A bearer token lacking the route's scope is refused with 403, whatever the input."""

    def check(case: Case) -> None:
        response = case.call(
            base_url=live.base_url,
            headers={"Authorization": f"Bearer {narrow_token}"},
            session=http,
        )
        if routed_here(response):
            assert response.status_code == 403, (label, response.status_code, response.text)

    fuzz(api, label, known, "token without scope", check, gate=True)
