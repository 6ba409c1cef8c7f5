"""Startup benchmark (issue 25 item 5): ``import explorer`` against ``import pandas``, each in
a fresh interpreter, measured side by side in one run.

Goal: ``import explorer`` at most 1.3x ``import pandas``. pandas is the floor (every frame the
toolkit returns is one); each public name loads its feature when first named: the REST client
(httpx) with ``explorer.connect``, chats and live views (websockets) when first asked for,
DuckDB, Parquet and the recorder when a capture is first used. The first client's cost
(``explorer.connect`` named) is printed too, for information: it is where httpx goes.
Runs alternate (pandas, explorer, pandas, ...) and the medians of each are compared, which
keeps drift on a shared machine out of the ratio. Each round times interpreter start plus the
import, from ``python -c``; the bare interpreter's start is measured too and taken off both.
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import time

GOAL = 1.3
ROUNDS = 15


def _seconds(code: str) -> float:
    """Wall seconds for a fresh interpreter to run ``code``."""
    started = time.perf_counter()
    subprocess.run([sys.executable, "-c", code], check=True)
    return time.perf_counter() - started


def main() -> None:
    """Time the imports in alternating fresh processes and print medians and the ratio."""
    codes = {
        "python": "pass",
        "pandas": "import pandas",
        "explorer": "import explorer",
        "client": "import explorer; explorer.connect",
    }
    times: dict[str, list[float]] = {name: [] for name in codes}
    _seconds("import explorer")  # warm the file cache and bytecode once
    for _ in range(ROUNDS):
        for name, code in codes.items():
            times[name].append(_seconds(code))
    base = statistics.median(times["python"])
    print(f"Startup: fresh-process import, medians of {ROUNDS} alternating rounds")
    print(f"  {'bare interpreter':<18} {base * 1000:7.1f} ms")
    for name in ("pandas", "explorer"):
        median = statistics.median(times[name])
        spread = max(times[name]) - min(times[name])
        label = f"import {name}"
        print(f"  {label:<18} {(median - base) * 1000:7.1f} ms (spread {spread * 1000:.0f} ms)")
    pandas = statistics.median(times["pandas"]) - base
    client = statistics.median(times["client"]) - base
    share = f"{client / pandas:.2f}x pandas, no goal"
    print(f"  {'first client':<18} {client * 1000:7.1f} ms ({share})")
    ratio = (statistics.median(times["explorer"]) - base) / pandas
    verdict = "PASS" if ratio <= GOAL else "FAIL"
    print(f"  import explorer / import pandas = {ratio:.2f} (goal <= {GOAL}) {verdict}")


if __name__ == "__main__":
    main()
