"""``explorer serve`` runs the platform in the foreground and prints ``REST <url>``, then one
``CHAT <url>`` per chat node, once each answers, then ``CLOCK <world time> at speed <N>`` (with
the share of chat kept when ``--speed`` thins it); ``explorer serve chat-node --broker URL --db
FILE`` runs one more chat node of a platform whose REST process was started with ``--broker
URL --db FILE``, and ``explorer serve rest --broker URL --db FILE --port PORT`` one more REST
process of it, on the same port or another (no simulator, no seeding: the first process owns
those)."""

from __future__ import annotations

import argparse
import gc
import sys
from collections.abc import Callable, Coroutine
from typing import TYPE_CHECKING, Any

from explorer.cli.paths import database_file, default_db
from explorer.emulator.config import Config

if TYPE_CHECKING:
    from explorer.emulator.server import Platform

#: The default settings, shown in ``--help``.
DEFAULTS = Config()


def add_parser(add: Callable[..., argparse.ArgumentParser]) -> None:
    """Register ``explorer serve`` and its flags."""
    serve = add("serve", help="run the platform (REST + chat) in the foreground")
    serve.add_argument(
        "role",
        nargs="?",
        choices=("platform", "chat-node", "rest"),
        default="platform",
        help="the whole platform (default); or one more chat node, or one more REST process, "
        "of a platform started with --broker (needs the same --broker and --db)",
    )
    serve.add_argument("--host", default="127.0.0.1", help="address to listen on")
    serve.add_argument(
        "--port", type=int, default=None, help="REST port, default 8000 (chat-node: a free one)"
    )
    serve.add_argument(
        "--broker",
        default=None,
        help="redis://host:port/db to spread chat over processes (default: in process)",
    )
    serve.add_argument(
        "--authkey-ttl",
        type=float,
        default=DEFAULTS.authkey_ttl,
        help=f"seconds a chat authkey stays valid (default {DEFAULTS.authkey_ttl:g})",
    )
    serve.add_argument(
        "--db",
        type=database_file,
        default=None,
        help=f"SQLite file (default {default_db()}; ':memory:' for none), or a PostgreSQL "
        "database: postgresql://user@host/db",
    )
    serve.add_argument("--seed", type=int, default=0, help="world seed (new databases only)")
    serve.add_argument(
        "--channels",
        type=int,
        default=DEFAULTS.channels,
        help=f"channels in a new world (default {DEFAULTS.channels})",
    )
    serve.add_argument(
        "--speed",
        type=float,
        default=DEFAULTS.speed,
        help="world seconds per real second, 1 to 100000 (default 1): sessions, audiences and "
        "followers all run this much faster; chat is thinned where it cannot keep up",
    )
    serve.add_argument(
        "--no-rate-limits",
        action="store_true",
        help="do not enforce the buckets (responses say so: X-RateLimit-Enforced: false)",
    )
    serve.add_argument(
        "--limits-per-client",
        action="store_true",
        help="count anonymous callers per address and Client-ID header, so each client (each "
        "notebook kernel) has its own buckets; only on loopback (explorer lab uses it)",
    )
    serve.add_argument(
        "--chat-nodes",
        type=int,
        default=None,
        help="chat websocket servers to run (default 2; rest: 0)",
    )
    serve.add_argument(
        "--simulate",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="simulated live activity: bots chat, vote and moderate, viewers drift (default on)",
    )
    serve.add_argument(
        "--sim-rate",
        type=float,
        default=DEFAULTS.sim_rate,
        help=f"simulated messages per second, all channels (default {DEFAULTS.sim_rate:g})",
    )
    serve.add_argument(
        "--sim-channel-rate",
        type=float,
        default=DEFAULTS.sim_channel_rate,
        help="simulated messages per second in the busiest channel "
        f"(default {DEFAULTS.sim_channel_rate:g})",
    )
    serve.add_argument(
        "--sim-channels",
        type=int,
        default=DEFAULTS.sim_channels,
        help=f"online channels the simulator runs, busiest first (default {DEFAULTS.sim_channels})",
    )
    serve.add_argument(
        "--chat-rate",
        type=float,
        default=DEFAULTS.chat_rate,
        help=f"chat methods per second one connection may call (default {DEFAULTS.chat_rate:g})",
    )
    serve.add_argument(
        "--chat-user-connections",
        type=int,
        default=DEFAULTS.chat_user_connections,
        help="chat connections one signed-in user may hold over all nodes "
        f"(default {DEFAULTS.chat_user_connections})",
    )
    serve.add_argument(
        "--chat-address-connections",
        type=int,
        default=DEFAULTS.chat_address_connections,
        help="chat connections one address may open per process "
        f"(default {DEFAULTS.chat_address_connections})",
    )
    serve.add_argument(
        "--forwarded-allow-ips",
        default="",
        help="comma-separated proxy addresses or CIDR blocks ('*': any) whose X-Forwarded-For "
        "names the client (default none: the header is ignored)",
    )
    serve.add_argument(
        "--allowed-hosts",
        default=None,
        help="comma-separated host names the platform is reached by besides loopback names "
        "and IP addresses ('*': any); a request naming another is 421 (DNS rebinding). "
        "Default: none, but any on a JupyterHub (Binder), whose proxy forwards its own name",
    )
    serve.add_argument(
        "--hook-allow",
        default=",".join(DEFAULTS.hook_allow),
        help="comma-separated addresses or CIDR blocks web hooks may be delivered to "
        f"(default {','.join(DEFAULTS.hook_allow)}: loopback only)",
    )
    serve.add_argument(
        "--open-control",
        action="store_true",
        help="answer the control namespace (/_emulator: mail box, chat node stop/start) from "
        "any address, not only loopback",
    )


def _announce(platform: Platform) -> None:
    print(f"REST {platform.base_url}", flush=True)
    _announce_chat(platform.chat_endpoints)


def _announce_clock(platform: Platform) -> None:
    """The world clock, once the simulator's first plan knows the share of chat it keeps.

    Every object made by then (the modules, the world, the plan) is then moved out of the
    cyclic collector's way, its garbage collected first (``gc.freeze`` keeps frozen garbage
    forever): each full collection walked all of them, about 65 ms of CPU at a million
    channels, every request waiting."""
    if platform.services is not None:
        world = platform.services.world
        thinned = f", chat thinned: {world.kept:.1%} kept" if world.kept < 1 else ""
        print(f"CLOCK {world.iso()} at speed {world.speed:g}{thinned}", flush=True)
    gc.collect()
    gc.freeze()


def _announce_chat(endpoints: list[str]) -> None:
    for endpoint in endpoints:
        print(f"CHAT {endpoint}", flush=True)


def exposure_warning(host: str, open_control: bool) -> str:
    """What listening on ``host`` (not loopback) opens to other machines."""
    control = (
        "the control namespace /_emulator (mail box with confirmation codes, chat node "
        "stop/start) too, as --open-control asks"
        if open_control
        else "but not the control namespace /_emulator (loopback only)"
    )
    return (
        f"explorer serve: WARNING: listening on {host}, not loopback: the REST API and the "
        f"chat nodes are open to other machines over plain HTTP and ws://, {control}. "
        "See SECURITY.md."
    )


def run(args: argparse.Namespace) -> int:
    """The ``explorer serve`` command: run the platform (or one more chat node or REST process
    of it) until interrupted."""
    from explorer.core.jupyterhub import served_hosts
    from explorer.emulator import addresses
    from explorer.emulator.clock import check_speed
    from explorer.emulator.nodeprocess import run_chat_node, seeded
    from explorer.emulator.server import Platform, PlatformOptions

    db = args.db or str(default_db())
    if args.role != "platform" and not args.broker:
        print(f"explorer serve {args.role}: --broker is required", file=sys.stderr)
        return 2
    fewest_nodes = 0 if args.broker else 1
    if args.chat_nodes is None:
        args.chat_nodes = 0 if args.role == "rest" else 2
    rates = (
        args.sim_rate,
        args.sim_channel_rate,
        args.sim_channels,
        args.chat_rate,
        args.authkey_ttl,
        args.chat_user_connections,
        args.chat_address_connections,
    )
    if args.chat_nodes < fewest_nodes or min(rates) <= 0:
        print(
            "explorer serve: --chat-nodes must be positive (or 0 with --broker), and so must "
            "the rates, --sim-channels, --authkey-ttl and the connection caps",
            file=sys.stderr,
        )
        return 2
    if args.role == "rest" and not seeded(db):
        print(
            f"explorer serve rest: {db} holds no world yet: start `explorer serve --broker URL "
            "--db FILE` first (it seeds the world and runs the simulator)",
            file=sys.stderr,
        )
        return 2
    try:
        check_speed(args.speed)
    except ValueError as exc:
        print(f"explorer serve: --speed: {exc}", file=sys.stderr)
        return 2
    proxies = tuple(item.strip() for item in args.forwarded_allow_ips.split(",") if item.strip())
    hooks = tuple(item.strip() for item in args.hook_allow.split(",") if item.strip())
    for flag, blocks in (("--forwarded-allow-ips", proxies), ("--hook-allow", hooks)):
        try:
            addresses.networks(blocks)
        except ValueError as exc:
            print(f"explorer serve: {flag}: {exc}", file=sys.stderr)
            return 2
    if not addresses.is_loopback(args.host):
        print(exposure_warning(args.host, args.open_control), file=sys.stderr, flush=True)
    config = Config(
        seed=args.seed,
        channels=args.channels,
        speed=args.speed,
        rate_limits=not args.no_rate_limits,
        sim_rate=args.sim_rate,
        sim_channel_rate=args.sim_channel_rate,
        sim_channels=args.sim_channels,
        chat_rate=args.chat_rate,
        chat_burst=max(DEFAULTS.chat_burst, round(2 * args.chat_rate)),
        authkey_ttl=args.authkey_ttl,
        chat_user_connections=args.chat_user_connections,
        chat_address_connections=args.chat_address_connections,
        forwarded_allow_ips=proxies,
        allowed_hosts=tuple(item.strip() for item in args.allowed_hosts.split(",") if item.strip())
        if args.allowed_hosts is not None
        else served_hosts(),
        hook_allow=hooks,
        open_control=args.open_control,
        limits_per_client=args.limits_per_client,
    )
    if args.role == "chat-node":
        node = run_chat_node(db, args.broker, args.host, args.port or 0, config, _announce_chat)
        return _run(node)
    try:
        options = PlatformOptions(
            db=db,
            host=args.host,
            port=8000 if args.port is None else args.port,
            config=config,
            chat_nodes=args.chat_nodes,
            simulate=args.simulate and args.role == "platform",
            broker=args.broker,
            reuse_port=args.broker is not None,
            joins=args.role == "rest",
        )
    except ValueError as exc:
        print(f"explorer serve: --limits-per-client: {exc}", file=sys.stderr)
        return 2
    return _run(Platform(options).run(_announce, _announce_clock))


def _run(main: Coroutine[Any, Any, None]) -> int:
    """Run ``main`` until it ends or is interrupted; 1 when it could not start."""
    from explorer.emulator.server import run_loop

    try:
        run_loop(main)
    except KeyboardInterrupt:
        pass
    except OSError as exc:
        print(f"explorer serve: {exc}", file=sys.stderr)
        return 1
    return 0
