"""Runs one platform: the store, the REST app under uvicorn, the chat nodes and the simulator.

Everything runs on one asyncio event loop: uvicorn's HTTP server, the chat nodes and the
simulator share it, and so does the database (SQLite's single connection, or PostgreSQL's
pool called synchronously from the loop: no locks needed). ``start()`` runs that loop in a
daemon thread for notebooks and tests (port 0 by default); ``explorer serve`` runs it in the
main thread. With a Redis broker (``PlatformOptions.broker``) this process is one of several
sharing the database: chat-node processes join it (see :mod:`~explorer.emulator.brokers.redis`),
and it may run no chat node of its own; more REST processes may join it on its port
(``explorer serve rest``), all counting rate limits in that Redis
(:mod:`~explorer.emulator.redislimits`).
"""

from __future__ import annotations

import asyncio
import logging
import secrets
import socket
import threading
import time
from collections.abc import Callable, Coroutine
from dataclasses import dataclass, field, replace
from pathlib import Path
from types import TracebackType
from typing import Any

import uvicorn

from explorer.emulator import categories, credentials, front, streams, world
from explorer.emulator import clock as world_clock
from explorer.emulator.addresses import is_loopback
from explorer.emulator.app import build_app
from explorer.emulator.backfill import seed_history
from explorer.emulator.chat.cluster import ChatCluster, open_broker
from explorer.emulator.config import DEFAULT_CHANNELS, Config
from explorer.emulator.context import Services
from explorer.emulator.db import ddl
from explorer.emulator.db.engine import IndexBuild, Store
from explorer.emulator.limits import Limits, LocalLimits
from explorer.emulator.resources import modules
from explorer.emulator.resources.oauth import ensure_builtin_client
from explorer.emulator.shapes import TypeCatalog
from explorer.emulator.simulate import Simulator
from explorer.wire.ratelimit import BUCKETS, Bucket

log = logging.getLogger("explorer.emulator")


@dataclass
class PlatformOptions:
    """How to run a platform (the ``explorer serve`` flags)."""

    #: The database: a SQLite file, ``:memory:``, or a ``postgresql://`` URL (the PostgreSQL
    #: engine, :mod:`explorer.emulator.db.postgres`); a new one is seeded.
    db: str = ":memory:"
    host: str = "127.0.0.1"
    port: int = 0
    config: Config = field(default_factory=Config)
    #: Chat nodes to run, each a websocket server on its own port next to REST.
    chat_nodes: int = 2
    #: The broker between chat nodes: None in process, or ``redis://host:port/db`` to share
    #: rooms with chat-node processes on the same database.
    broker: str | None = None
    #: Run the simulated live activity (bots chat, vote, moderate; viewers drift).
    simulate: bool = False
    #: The platform's clock in epoch seconds: every TTL and expiry reads it (tests inject one).
    clock: Callable[[], float] = time.time
    #: Bind the REST port with ``SO_REUSEPORT``, so that the other REST processes of a platform
    #: spread over processes bind it too, and the kernel spreads connections among them (see
    #: ``explorer serve rest``); it needs a ``broker``, through which they share limits.
    reuse_port: bool = False
    #: One more REST process of a running platform (``explorer serve rest``): it follows the
    #: world clock of the process that started the platform.
    joins: bool = False

    def __post_init__(self) -> None:
        if self.reuse_port and self.broker is None:
            raise ValueError(
                "REST processes sharing a port must share their rate limits and chat: give them "
                "one --broker redis://..."
            )
        config = self.config
        if config.limits_per_client and (not is_loopback(self.host) or config.forwarded_allow_ips):
            raise ValueError(
                "per-client limits let a caller choose its identity (its Client-ID), so they "
                "are only for a platform on loopback with no trusted proxy: listen on "
                "127.0.0.1, or keep the per-address limits"
            )


def open_services(
    db: str,
    config: Config,
    clock: Callable[[], float] = time.time,
    joins: bool = False,
    simulate: bool = False,
) -> Services:
    """Open (and seed, if new) the store and build the services around it, on ``clock``; a
    process that ``joins`` a running platform follows its world clock, any other owns it. A
    platform that will ``simulate`` a new world works out its standing raids while seeding."""
    store = Store(db, ddl())
    seed, channels = config.seed, config.channels
    if world.seed_store(
        store,
        seed,
        channels,
        credentials.hash_password,
        categories.opening,
        (lambda: streams.prepare(seed, channels)) if simulate else None,
    ):
        seed_history(store, config.seed, clock())
    for module in modules():
        # Resource groups seed their own tables; each hook is idempotent, so a database made
        # before a group existed gets its data on the next start.
        hook = getattr(module, "seed", None)
        if callable(hook):
            hook(store, config.seed)
    secret_hex = store.meta("secret")
    if secret_hex is None:
        secret_hex = secrets.token_hex(32)
        store.set_meta({"secret": secret_hex})
    ensure_builtin_client(store, world.iso(world.WORLD_NOW))
    if joins:
        world_now = world_clock.join(store, config.speed, clock)
    else:
        world_now = world_clock.resume(store, config.speed, clock)
        world_now.anchor(store)
    buckets = dict(BUCKETS)
    for name, (count, interval) in config.buckets.items():
        if name not in buckets:
            raise ValueError(f"unknown bucket {name!r}")
        buckets[name] = Bucket(name, count, interval)
    return Services(
        config=config,
        store=store,
        secret=bytes.fromhex(secret_hex),
        limits=LocalLimits(buckets),
        types=TypeCatalog(store),
        world=world_now,
        clock=clock,
    )


def open_limits(broker: str | None, services: Services) -> Limits:
    """Where ``services`` counts rate limits: with a Redis ``broker`` (a platform spread over
    processes) in that Redis, shared by every REST process; else in this process."""
    if broker is None or not services.config.rate_limits:
        return services.limits
    from explorer.emulator.redislimits import RedisLimits  # redis is an optional extra

    return RedisLimits(broker, services.limits.buckets)


def bind(host: str, port: int, reuse_port: bool = False) -> socket.socket:
    """A listening TCP socket (port 0 picks a free port); with ``reuse_port``, one that other
    sockets made so by the same user bind too (``SO_REUSEPORT``: Linux then hands each new
    connection to one of them)."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    if reuse_port:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
    sock.bind((host, port))
    sock.listen(2048)
    sock.setblocking(False)
    return sock


def run_loop(main: Coroutine[Any, Any, None]) -> None:
    """Run ``main`` on a new event loop: uvloop where installed (several times faster for
    HTTP and websockets), else asyncio's own."""
    try:
        import uvloop
    except ImportError:
        asyncio.run(main)
    else:
        with asyncio.Runner(loop_factory=uvloop.new_event_loop) as runner:
            runner.run(main)


class Platform:
    """A running platform; ``base_url`` is its REST root (``.../api/v1``)."""

    def __init__(self, options: PlatformOptions) -> None:
        self.options = options
        self.services: Services | None = None
        self.chat: ChatCluster | None = None
        self.base_url = ""
        self.root_url = ""
        self._server: uvicorn.Server | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        #: The build of the indexes a new world's seeding left for later (a file only).
        self.indexes: IndexBuild | None = None

    async def run(
        self,
        ready: Callable[[Platform], None] | None = None,
        planned: Callable[[Platform], None] | None = None,
    ) -> None:
        """Serve until :meth:`stop` (or a signal, in the main thread), then clean up;
        ``ready`` is called once the server listens, ``planned`` once the simulator's first
        plan is made (at once without a simulator)."""
        self._loop = asyncio.get_running_loop()
        options = self.options
        services = open_services(
            options.db, options.config, options.clock, options.joins, options.simulate
        )
        self.services = services
        sock = bind(self.options.host, self.options.port, self.options.reuse_port)
        host, port = sock.getsockname()[:2]
        shown = f"[{host}]" if ":" in host else host
        self.root_url = f"http://{shown}:{port}"
        self.base_url = f"{self.root_url}/api/v1"
        config = uvicorn.Config(
            build_app(services),
            log_level="warning",
            access_log=False,
            lifespan="off",
            timeout_graceful_shutdown=2,
            limit_concurrency=4096,
            # Head size, head deadline and connections per address (see emulator.front).
            http=front.protocol(services.config),
            # Forwarding headers are read by explorer.emulator.addresses, from trusted proxies
            # only; uvicorn's own reading trusts loopback by default.
            proxy_headers=False,
            # Live-events messages: at most the frame limit, counted after inflating, and no
            # permessage-deflate (a read of tiny deflated frames would each inflate to it).
            ws_max_size=services.config.chat_max_frame,
            ws_per_message_deflate=False,
        )
        self._server = uvicorn.Server(config)
        broker = open_broker(self.options.broker, services.store)
        services.limits = open_limits(self.options.broker, services)
        chat = ChatCluster(services, self.options.host, self.options.chat_nodes, broker)
        simulator = Simulator(services, chat) if self.options.simulate else None
        if services.store.defers_indexes:
            self.indexes = services.store.later_indexes()
        try:
            await chat.start()
            services.chat = self.chat = chat
            serving = asyncio.ensure_future(self._server.serve(sockets=[sock]))
            while not self._server.started and not serving.done():
                await asyncio.sleep(0.005)
            if serving.done():
                await serving
                return
            if ready is not None:
                ready(self)
            if simulator is not None:
                # Its first plan (seconds at a million channels) runs once the URL is out,
                # before the loop reads any request: none sees the world unplanned.
                await simulator.start()
            if planned is not None:
                planned(self)
            if self.indexes is not None:
                # After the first plan, not to slow it: seconds at a million channels.
                self.indexes.start()
            await serving
        finally:
            if self.indexes is not None:
                self.indexes.stop()
            if simulator is not None:
                await simulator.stop()
            services.world.save(services.store)
            await chat.close()
            services.limits.close()
            sock.close()
            await services.store.stop_serving()
            services.store.close()

    @property
    def chat_endpoints(self) -> list[str]:
        """The websocket addresses of the running chat nodes."""
        return self.chat.endpoints() if self.chat is not None else []

    def start_in_thread(self, timeout: float = 30.0) -> Platform:
        """Run in a daemon thread; return once it serves (re-raising a start-up failure)."""
        started = threading.Event()
        failure: list[BaseException] = []

        def main() -> None:
            try:
                run_loop(self.run(lambda _: started.set()))
            except BaseException as exc:  # reported to the starting thread below
                failure.append(exc)
                started.set()

        self._thread = threading.Thread(target=main, name="explorer-platform", daemon=True)
        self._thread.start()
        if not started.wait(timeout):
            raise TimeoutError("the platform did not start in time")
        if failure:
            raise failure[0]
        return self

    def stop(self) -> None:
        """Stop serving and wait for the thread to finish (idempotent)."""
        if self._server is not None:
            self._server.should_exit = True
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(10)

    def __enter__(self) -> Platform:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()


def start(
    *,
    db: str | Path = ":memory:",
    seed: int = 0,
    channels: int = DEFAULT_CHANNELS,
    speed: float = 1.0,
    rate_limits: bool = True,
    buckets: dict[str, tuple[int, float]] | None = None,
    host: str = "127.0.0.1",
    port: int = 0,
    chat_nodes: int = 2,
    simulate: bool = False,
    broker: str | None = None,
    clock: Callable[[], float] = time.time,
    **config: object,
) -> Platform:
    """Start a platform in a background thread and return it once it serves.

    ``db`` is a SQLite file, ``:memory:`` (the default: nothing kept) or a ``postgresql://``
    URL; a new database is seeded with the world of ``seed`` and ``channels``.
    ``chat_nodes`` websocket servers run beside REST; ``simulate`` turns on the bots and
    viewer drift (off by default here, for tests; ``explorer serve`` turns it on); ``broker``
    is None (in process) or a Redis URL shared with chat-node processes. ``clock`` returns
    epoch seconds and drives every TTL and expiry (sessions, CSRF, authkeys, OAuth codes and
    tokens, JWTs, rate-limit windows, chat timeouts and polls); tests pass one they advance.
    The world clock (``speed`` world seconds per second of ``clock``, see
    :mod:`~explorer.emulator.clock`) dates what happens in the world.
    ``buckets`` overrides bucket sizes, e.g. ``{"channel-read": (5, 2.0)}``; other keyword
    arguments set :class:`Config` fields (``authkey_ttl=1.0``, ``sim_rate=5``, ...).
    """
    base = Config(
        seed=seed, channels=channels, speed=speed, rate_limits=rate_limits, buckets=buckets or {}
    )
    options = PlatformOptions(
        db=str(db),
        host=host,
        port=port,
        config=replace(base, **config),  # type: ignore[arg-type]
        chat_nodes=chat_nodes,
        simulate=simulate,
        broker=broker,
        clock=clock,
    )
    return Platform(options).start_in_thread()
