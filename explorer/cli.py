"""The ``explorer`` command: ``explorer serve`` runs the platform in the foreground."""

from __future__ import annotations

import argparse
import logging
import os
import sys
from collections.abc import Sequence
from pathlib import Path

from explorer.emulator.context import Config
from explorer.emulator.server import Platform, PlatformOptions, run_loop

#: The default settings, shown in ``--help``.
DEFAULTS = Config()


def default_db() -> Path:
    """The platform's database in the user's data directory (XDG on Linux)."""
    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base) / "explorer" / "platform.db"


def _serve_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    serve = sub.add_parser("serve", help="run the platform (REST + chat) in the foreground")
    serve.add_argument("--host", default="127.0.0.1", help="address to listen on")
    serve.add_argument("--port", type=int, default=8000, help="REST port (0 picks a free one)")
    serve.add_argument(
        "--db", default=None, help=f"SQLite file (default {default_db()}; ':memory:' for none)"
    )
    serve.add_argument("--seed", type=int, default=0, help="world seed (new databases only)")
    serve.add_argument("--channels", type=int, default=5000, help="channels in a new world")
    serve.add_argument(
        "--no-rate-limits",
        action="store_true",
        help="do not enforce the buckets (headers are still sent)",
    )
    serve.add_argument(
        "--chat-nodes", type=int, default=2, help="chat websocket servers to run (default 2)"
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
        "--chat-rate",
        type=float,
        default=DEFAULTS.chat_rate,
        help=f"chat methods per second one connection may call (default {DEFAULTS.chat_rate:g})",
    )


def _announce(platform: Platform) -> None:
    print(f"REST {platform.base_url}", flush=True)
    for endpoint in platform.chat_endpoints:
        print(f"CHAT {endpoint}", flush=True)


def serve(args: argparse.Namespace) -> int:
    """Run the platform until interrupted."""
    db = args.db or str(default_db())
    if args.chat_nodes < 1 or min(args.sim_rate, args.sim_channel_rate, args.chat_rate) <= 0:
        print("explorer serve: --chat-nodes and the rates must be positive", file=sys.stderr)
        return 2
    config = Config(
        seed=args.seed,
        channels=args.channels,
        rate_limits=not args.no_rate_limits,
        sim_rate=args.sim_rate,
        sim_channel_rate=args.sim_channel_rate,
        chat_rate=args.chat_rate,
        chat_burst=max(DEFAULTS.chat_burst, round(2 * args.chat_rate)),
    )
    options = PlatformOptions(
        db=db,
        host=args.host,
        port=args.port,
        config=config,
        chat_nodes=args.chat_nodes,
        simulate=args.simulate,
    )
    platform = Platform(options)
    try:
        run_loop(platform.run(_announce))
    except KeyboardInterrupt:
        pass
    except OSError as exc:
        print(f"explorer serve: {exc}", file=sys.stderr)
        return 1
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``explorer`` console script."""
    parser = argparse.ArgumentParser(prog="explorer", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    _serve_parser(sub)
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    handlers = {"serve": serve}
    return handlers[args.command](args)


if __name__ == "__main__":
    raise SystemExit(main())
