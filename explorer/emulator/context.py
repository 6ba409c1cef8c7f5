"""What a request handler works with: the platform's services (its configuration among them,
``explorer.emulator.config``) and caller.

``Services`` is built once per running platform; ``Context`` once per request. Handlers take a
``Context`` and return a JSON-able value or a Starlette response; they never touch policy
(authentication, CSRF, scopes, rate limits), which runs before them from the route table.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal
from urllib.parse import parse_qsl

import orjson
from starlette.requests import ClientDisconnect, Request

from explorer.emulator import plaintext
from explorer.emulator.clock import WorldClock
from explorer.emulator.config import Config
from explorer.emulator.db.engine import Store
from explorer.emulator.limits import Limits
from explorer.emulator.responses import ApiError, bad_request
from explorer.emulator.shapes import TypeCatalog
from explorer.wire.numbers import identifier

if TYPE_CHECKING:
    from explorer.emulator.chat.hub import ChatHub


#: The media type of form-encoded bodies.
FORM = "application/x-www-form-urlencoded"


def lenient_id(value: Any) -> Any:
    """``value`` as an int when it is a numeric string (old clients send ids so, and the
    historical platform took them), else as it is; the caller checks the type."""
    number = identifier(value) if type(value) is str else None
    return value if number is None else number


@dataclass(slots=True)
class Services:
    """Long-lived parts shared by every request of one platform."""

    config: Config
    store: Store
    secret: bytes
    #: The rate-limit windows: this process's, or every REST process's (in Redis).
    limits: Limits
    types: TypeCatalog
    #: The world's clock: what records say happened when (see ``clock.py`` for which is which).
    world: WorldClock
    #: The wall clock: every TTL, expiry and rate-limit window.
    clock: Callable[[], float] = time.time
    chat: ChatHub | None = None
    #: Read caches by name (e.g. encoded channel pages), owned by the modules that fill them.
    caches: dict[str, Any] = field(default_factory=dict)
    #: Mail the platform "sent" (confirmation codes), readable at ``/_emulator/mail``.
    mailbox: list[dict[str, Any]] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class Caller:
    """Who sent a request, and with which credential."""

    user_id: int
    kind: Literal["session", "bearer", "jwt"]
    scopes: frozenset[str]
    session_id: int | None = None
    #: The credential everything the caller is handed dies with: ``session:<digest prefix>`` or
    #: ``grant:<family>`` (a JWT's is its source's; see :mod:`explorer.emulator.endings`).
    credential: str = ""


@dataclass(slots=True)
class Context:
    """One request as a handler sees it."""

    request: Request
    services: Services
    caller: Caller | None

    @property
    def store(self) -> Store:
        """The platform's store."""
        return self.services.store

    @property
    def now(self) -> float:
        """The wall clock, in epoch seconds: for lifetimes, expiries and limits."""
        return self.services.clock()

    @property
    def world_now(self) -> float:
        """The world clock, in epoch seconds: when things happen in the world."""
        return self.services.world()

    def iso_now(self) -> str:
        """The world clock as an ISO-8601 timestamp: what records are dated with."""
        return self.services.world.iso()

    @property
    def params(self) -> Any:
        """The query parameters."""
        return self.request.query_params

    def user_id(self) -> int:
        """The signed-in caller's user id (the route table guarantees one where required)."""
        if self.caller is None:
            raise ApiError(401, "You must be signed in to do this.")
        return self.caller.user_id

    def path_int(self, name: str) -> int:
        """A numeric path parameter, or 400 naming it."""
        number = identifier(self.request.path_params[name])
        if number is None:
            raise bad_request(f"{name} must be a positive integer.", name)
        return number

    async def body(self, limit: int | None = None) -> bytes:
        """The request body, refused with 413 past ``limit`` bytes (streamed, never buffered
        whole first)."""
        cap = limit if limit is not None else self.services.config.max_body
        declared = identifier(self.request.headers.get("content-length"))
        if declared is not None and declared > cap:
            raise ApiError(413, f"Request body is larger than {cap} bytes.")
        chunks: list[bytes] = []
        size = 0
        try:
            async for chunk in self.request.stream():
                size += len(chunk)
                if size > cap:
                    raise ApiError(413, f"Request body is larger than {cap} bytes.")
                chunks.append(chunk)
        except ClientDisconnect:  # gone before its body ended (or closed for being too slow)
            raise bad_request("The client left before sending the whole body.", "body") from None
        return b"".join(chunks)

    async def json(self) -> Any:
        """The request body parsed as JSON (400 when malformed, 413 when too large)."""
        raw = await self.body()
        if not raw:
            raise bad_request("A JSON body is required.", "body", "required")
        try:
            value = orjson.loads(raw)
        except orjson.JSONDecodeError as exc:
            raise bad_request(f"Malformed JSON: {exc.msg}.", "body", "json") from None
        return plaintext.check_body(value)

    async def json_object(self) -> dict[str, Any]:
        """The request body as a JSON object (400 for any other JSON value)."""
        value = await self.json()
        if not isinstance(value, dict):
            raise bad_request("The body must be a JSON object.", "body", "object")
        return value

    async def fields(self) -> dict[str, Any]:
        """The body as a JSON object, or form-encoded fields (strings) where the historical
        API took forms too (``POST /users/login``; old clients post forms there)."""
        media = self.request.headers.get("content-type", "").partition(";")[0].strip().lower()
        if media != FORM:
            return await self.json_object()
        try:
            text = (await self.body()).decode()
        except UnicodeDecodeError:
            raise bad_request("A form body must be UTF-8 text.", "body", "form") from None
        return plaintext.check_body(dict(parse_qsl(text, keep_blank_values=True)))
