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


def _announce(platform: Platform) -> None:
    print(f"REST {platform.base_url}", flush=True)


def serve(args: argparse.Namespace) -> int:
    """Run the platform until interrupted."""
    db = args.db or str(default_db())
    config = Config(seed=args.seed, channels=args.channels, rate_limits=not args.no_rate_limits)
    platform = Platform(PlatformOptions(db=db, host=args.host, port=args.port, config=config))
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
