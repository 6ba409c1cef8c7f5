"""``make bench``: every benchmark in turn, or those named (`python -m benchmarks eventlog`);
options after one suite's name go to it (`python -m benchmarks realism --quick`).

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
    "realism",
)
#: Suites whose ``main`` takes command-line options.
WITH_OPTIONS = frozenset({"realism"})


def main(arguments: list[str]) -> int:
    """Run the named suites (all by default), passing options to the one named before them."""
    split = next((i for i, word in enumerate(arguments) if word.startswith("-")), len(arguments))
    names, options = arguments[:split], arguments[split:]
    if options and (len(names) != 1 or names[0] not in WITH_OPTIONS):
        print(f"options go to one suite of {sorted(WITH_OPTIONS)}, named first", file=sys.stderr)
        return 2
    for name in names or SUITES:
        print(f"\n== {name} ==", flush=True)
        module = importlib.import_module(f"benchmarks.{name}")
        if name in WITH_OPTIONS:
            module.main(options)
        else:
            module.main()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
