"""The settings of one platform instance, with their defaults (``explorer serve``'s flags).

Standard library only: the command line shows the defaults in ``explorer serve --help``, and
builds that parser for every subcommand, without loading the platform.
"""

from __future__ import annotations

from dataclasses import dataclass, field

#: Channels in a world unless asked otherwise (``explorer serve --channels``): enough that the
#: busiest channel has a few thousand viewers (chat several messages a second at measured
#: rates), few enough to start in a few seconds.
DEFAULT_CHANNELS = 50_000


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
