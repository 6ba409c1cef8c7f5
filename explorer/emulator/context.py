"""What a request handler works with: the platform's configuration, services and caller.

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
from explorer.emulator.db.engine import Store
from explorer.emulator.limits import Limits
from explorer.emulator.responses import ApiError, bad_request
from explorer.emulator.shapes import TypeCatalog
from explorer.emulator.world import DEFAULT_CHANNELS
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


@dataclass(frozen=True, slots=True)
class Config:
    """Settings of one platform instance (see ``explorer serve --help``)."""

    seed: int = 0
    channels: int = DEFAULT_CHANNELS
    #: World seconds per wall second (``explorer serve --speed``; see ``clock.py``).
    speed: float = 1.0
    rate_limits: bool = True
    buckets: dict[str, tuple[int, float]] = field(default_factory=dict)
    session_ttl: float = 30 * 86400.0
    authkey_ttl: float = 300.0
    access_token_ttl: float = 6 * 3600.0
    implicit_token_ttl: float = 365 * 86400.0
    refresh_token_ttl: float = 90 * 86400.0
    jwt_ttl: float = 3600.0
    max_body: int = 1024 * 1024
    #: The HTTP front (``explorer.emulator.front``): bytes of a request line and headers,
    #: seconds to send them and then the body, open connections per peer address (and twice
    #: as many held unread), seconds an address that broke one of those limits has its new
    #: connections held unread, and connections held unread from all addresses together.
    header_limit: int = 16 * 1024
    header_timeout: float = 10.0
    body_timeout: float = 30.0
    http_address_connections: int = 256
    header_penalty: float = 1.0
    http_held_connections: int = 2048
    max_upload: int = 2 * 1024 * 1024
    #: Chat methods one connection may call per second (sustained), and in a burst.
    chat_rate: float = 20.0
    chat_burst: int = 40
    #: Largest chat frame accepted, in bytes; a larger one closes the connection with 1009.
    chat_max_frame: int = 64 * 1024
    #: Unsent bytes queued for one chat connection before it is dropped as too slow.
    chat_send_buffer: int = 1024 * 1024
    #: Chat connections one signed-in user may hold over every node and process; one more is
    #: closed with ``4008``. Anonymous connections from one address, per process: enough for
    #: ``api.watch`` to read a few hundred channels (a connection joins one channel), still a
    #: bound on what one address holds open.
    chat_user_connections: int = 10
    chat_address_connections: int = 1000
    #: Proxies (addresses or CIDR blocks, ``*`` for any) whose ``X-Forwarded-For`` names the
    #: client; from anyone else the header is ignored (see ``explorer.emulator.addresses``).
    forwarded_allow_ips: tuple[str, ...] = ()
    #: Host names the platform is served under besides loopback names and IP addresses
    #: (``*`` for any): a request naming another is 421 (``explorer.emulator.hosts``).
    allowed_hosts: tuple[str, ...] = ()
    #: Answer the control namespace (``/_emulator``) from any address, not only loopback.
    open_control: bool = False
    #: Count anonymous callers per address *and* ``Client-ID`` header (``explorer serve
    #: --limits-per-client``), so each client of one address has its own buckets: for a
    #: platform only one person reaches (``explorer lab``, the embedded platform), where every
    #: kernel shares the loopback address. A caller picks its own Client-ID, so this is refused
    #: unless the platform listens on loopback with no trusted proxy (``PlatformOptions``).
    limits_per_client: bool = False
    #: Stored chat messages kept per channel (older ones are pruned).
    history_keep: int = 1000
    #: Simulated chat messages per second over all channels, and at most in one channel: room
    #: for a 100,000-channel world's chat at speed 1 (about 20 a second) with its highlights
    #: (a busy channel's chat may quintuple for a minute); beyond, chat is thinned.
    sim_rate: float = 60.0
    sim_channel_rate: float = 20.0
    #: Where web hooks may be delivered (addresses or CIDR blocks; ``explorer serve
    #: --hook-allow``): loopback only unless the operator allows more.
    hook_allow: tuple[str, ...] = ("127.0.0.0/8", "::1/128")
    #: Online channels the simulator runs, busiest first (the rest stay online but quiet: the
    #: rate budget above would give each of them next to nothing anyway).
    sim_channels: int = 1000


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
