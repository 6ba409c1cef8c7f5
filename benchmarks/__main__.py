"""``make bench``: every benchmark in turn, or those named (`python -m benchmarks eventlog`).

A suite in :data:`COMMANDS` takes options after its name (``python -m benchmarks soak
--minutes 3``, ``python -m benchmarks realism --channels 100000``); run with the others (no
name given) it gets none and picks its short run.

Each module's ``main()`` measures the toolkit or platform side by side with its baseline in
the same run and prints the ratio against the issue's goal. Loopback only; every load loop is
bounded in count and time.
"""

from __future__ import annotations

import importlib
import sys

#: chat_ingest reports the eventlog suite's measurements too.
SUITES = (
    "rest_server",
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
    "front",
    "soak",
    "startup",
    "listings",
    "realism",
)
#: Suites whose ``main`` takes the command line's options (``None`` in a run of every suite).
COMMANDS = frozenset(("soak", "realism"))


def main(args: list[str]) -> int:
    """Run the named suites (all by default); options after a single name go to it."""
    split = next((i for i, arg in enumerate(args) if arg.startswith("-")), len(args))
    names, options = args[:split], args[split:]
    if options and (len(names) != 1 or names[0] not in COMMANDS):
        print(f"options are for one of {sorted(COMMANDS)}, named first", file=sys.stderr)
        return 2
    for name in names or SUITES:
        print(f"\n== {name} ==", flush=True)
        suite = importlib.import_module(f"benchmarks.{name}")
        if name in COMMANDS:
            suite.main(options if names else None)
        else:
            suite.main()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
