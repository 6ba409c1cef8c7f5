"""``make bench``: every benchmark in turn, or those named (`python -m benchmarks eventlog`).

A suite in :data:`COMMANDS` takes options after its name (``python -m benchmarks soak
--minutes 3``, ``python -m benchmarks realism --channels 100000``, ``python -m benchmarks
listings --channels 1000000``, ``python -m benchmarks rest_client --channels 1000000``,
``python -m benchmarks engines --channels 1000000``); run
with the others (no name given) it gets none and picks its short run.

Each module's ``main()`` measures the toolkit or platform side by side with its baseline in
the same run and prints the ratio against the issue's goal. A suite that raises is reported
as failed, with its error, and the others still run; the run ends by naming the failed suites
(exit status 1). Loopback only; every load loop is bounded in count and time.
"""

from __future__ import annotations

import importlib
import sys
import traceback
from collections.abc import Callable, Sequence
from typing import Any

#: chat_ingest reports the eventlog suite's measurements too.
SUITES = (
    "rest_server",
    "rest_scaleout",
    "rest_client",
    "channel_scale",
    "chat_fanout",
    "chat_ingest",
    "chat_scaleout",
    "chat_identity",
    "watch",
    "recording",
    "compaction",
    "chat_content",
    "live_events",
    "live_notify",
    "engines",
    "front",
    "soak",
    "startup",
    "listings",
    "realism",
)
#: Suites whose ``main`` takes the command line's options (``None`` in a run of every suite).
COMMANDS = frozenset(("soak", "realism", "listings", "rest_client", "engines"))


def main(args: list[str]) -> int:
    """Run the named suites (all by default); options after a single name go to it."""
    split = next((i for i, arg in enumerate(args) if arg.startswith("-")), len(args))
    names, options = args[:split], args[split:]
    if options and (len(names) != 1 or names[0] not in COMMANDS):
        print(f"options are for one of {sorted(COMMANDS)}, named first", file=sys.stderr)
        return 2
    return run(names or SUITES, options if names else None)


def _suite(name: str) -> Any:
    return importlib.import_module(f"benchmarks.{name}")


def run(
    names: Sequence[str], options: list[str] | None, suite: Callable[[str], Any] = _suite
) -> int:
    """Run each suite of ``names`` (``suite`` finds its module) in turn, those in
    :data:`COMMANDS` with ``options``; 1 if any raised (reported as it happens), else 0."""
    failed: list[str] = []
    for name in names:
        print(f"\n== {name} ==", flush=True)
        try:
            module = suite(name)
            if name in COMMANDS:
                module.main(options)
            else:
                module.main()
        except Exception as error:  # a failed suite is reported; the others still run
            traceback.print_exc()
            print(f"  FAILED: {name} raised {type(error).__name__}: {error}", flush=True)
            failed.append(name)
    if failed:
        print(f"\n{len(failed)} suite(s) failed: {', '.join(failed)}", flush=True)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
