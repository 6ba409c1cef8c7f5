"""``make bench``: every benchmark in turn, or those named (`python -m benchmarks eventlog`).

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
    "chat_content",
    "live_events",
    "front",
)


def main(names: list[str]) -> int:
    """Run the named suites (all by default)."""
    for name in names or SUITES:
        print(f"\n== {name} ==", flush=True)
        importlib.import_module(f"benchmarks.{name}").main()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
