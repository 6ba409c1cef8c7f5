"""Startup benchmark: how long the toolkit and the platform take to start, each against a
floor measured side by side in the same run.

1. ``import explorer`` against ``import pandas`` (issue 25 item 5), each in a fresh
   interpreter. Goal: at most 1.3x. pandas is the floor (every frame the toolkit returns is
   one); each public name loads its feature when first named: the REST client (httpx) with
   ``explorer.connect``, chats and live views (websockets) when first asked for, DuckDB,
   Parquet and the recorder when a capture is first used. The first client's cost
   (``explorer.connect`` named) is printed too, for information: it is where httpx goes. Runs
   alternate (pandas, explorer, pandas, ...) and the medians of each are compared, which keeps
   drift on a shared machine out of the ratio. Each round times interpreter start plus the
   import, from ``python -c``; the bare interpreter's start is measured too and taken off both.
2. ``explorer serve --channels 1000000`` on a new database file until it prints its ``REST``
   line (issue 42), against the database alone writing the same: every row the platform wrote
   by then, table by table, with ``executemany`` in one transaction into a new file with the
   same tables, then the ``CREATE INDEX`` statements the platform ran before the line (all of
   its indexes but :data:`~explorer.emulator.db.engine.LATER_INDEXES`, built after it). The rows
   are read from that round's platform's file in chunks, off the floor's clock. Goal: at most
   1.5x. Rounds alternate (platform, floor, platform, ...) and medians are compared; the
   seconds of each are printed, with CPU seconds (less moved by a busy machine) beside them.

``python -m benchmarks.startup [channels]`` (default 1,000,000) runs both parts.
"""

from __future__ import annotations

import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchmarks.channel_scale import serving
from benchmarks.rest_server import cpu_seconds
from explorer.emulator.db.engine import LATER_INDEXES

GOAL = 1.3
ROUNDS = 15
#: The platform's start against the database alone writing the same, and its rounds.
START_GOAL = 1.5
START_ROUNDS = 3
CHANNELS = 1_000_000
#: Rows the floor reads from the platform's file, and writes, at a time.
_CHUNK = 20_000


def _seconds(code: str) -> float:
    """Wall seconds for a fresh interpreter to run ``code``."""
    started = time.perf_counter()
    subprocess.run([sys.executable, "-c", code], check=True)
    return time.perf_counter() - started


def imports() -> None:
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


def platform_start(channels: int, folder: Path) -> tuple[float, float]:
    """Wall and CPU seconds of ``explorer serve --channels N`` (simulator on, the default) on
    a new file in ``folder`` until its ``REST`` line; the file stays."""
    with serving(channels, str(folder), simulate=True) as (_, pid, wall):
        cpu = cpu_seconds(pid)
    return wall, cpu


def floor_start(source: Path, target: Path) -> tuple[float, float]:
    """Wall and CPU seconds for sqlite3 alone to write into a new file ``target`` the tables
    and rows of ``source`` (a platform's file), then the indexes the platform built before
    its ``REST`` line; reading ``source`` is off the clock."""
    read = sqlite3.connect(f"file:{source}?mode=ro", uri=True)
    schema = read.execute(
        "SELECT type, name, sql FROM sqlite_master WHERE sql IS NOT NULL "
        "AND type IN ('table', 'index') AND name NOT LIKE 'sqlite_%'"
    ).fetchall()
    write = sqlite3.connect(target, isolation_level=None)
    wall = cpu = 0.0

    def clocked(run: object, *args: object) -> None:
        nonlocal wall, cpu
        started, used = time.perf_counter(), time.process_time()
        run(*args)  # type: ignore[operator]
        wall += time.perf_counter() - started
        cpu += time.process_time() - used

    for kind, _, sql in schema:
        if kind == "table":
            clocked(write.execute, sql)
    clocked(write.execute, "BEGIN")
    for kind, name, _ in schema:
        if kind != "table":
            continue
        rows = read.execute(f'SELECT * FROM "{name}"')
        marks = ", ".join("?" * len(rows.description))
        insert = f'INSERT INTO "{name}" VALUES ({marks})'
        while chunk := rows.fetchmany(_CHUNK):
            clocked(write.executemany, insert, chunk)
    for kind, name, sql in schema:
        if kind == "index" and name not in LATER_INDEXES:
            clocked(write.execute, sql)
    clocked(write.execute, "COMMIT")
    read.close()
    write.close()
    return wall, cpu


def starts(channels: int = CHANNELS) -> None:
    """Time the platform's start and the floor in alternating rounds; print medians, each
    round and the ratio."""
    times: dict[str, list[tuple[float, float]]] = {"platform": [], "floor": []}
    print(
        f"Start: explorer serve --channels {channels:,} to its REST line against sqlite3 alone "
        f"writing the same rows and indexes, medians of {START_ROUNDS} alternating rounds"
    )
    with tempfile.TemporaryDirectory() as folder:
        for round_ in range(START_ROUNDS):
            kept = Path(folder) / f"round-{round_}"
            kept.mkdir()
            times["platform"].append(platform_start(channels, kept))
            times["floor"].append(floor_start(kept / f"world-{channels}.db", kept / "floor.db"))
            for path in kept.iterdir():
                path.unlink()
            (platform, _), (floor, _) = times["platform"][-1], times["floor"][-1]
            print(f"  round {round_ + 1}: {platform:.1f} s against {floor:.1f} s", flush=True)
    for name, label in (("platform", "explorer serve"), ("floor", "sqlite3 alone")):
        walls = [wall for wall, _ in times[name]]
        cpus = [cpu for _, cpu in times[name]]
        print(
            f"  {label:<15} {statistics.median(walls):6.1f} s, CPU {statistics.median(cpus):6.1f} s"
            f"   (rounds {', '.join(f'{wall:.1f}' for wall in walls)} s)"
        )
    ratios = [p[0] / f[0] for p, f in zip(times["platform"], times["floor"], strict=True)]
    ratio = statistics.median(w for w, _ in times["platform"]) / statistics.median(
        w for w, _ in times["floor"]
    )
    cpu = statistics.median(c for _, c in times["platform"]) / statistics.median(
        c for _, c in times["floor"]
    )
    verdict = "PASS" if ratio <= START_GOAL else "FAIL"
    print(
        f"  explorer serve / sqlite3 alone = {ratio:.2f} (goal <= {START_GOAL}) {verdict}   "
        f"(rounds {', '.join(f'{r:.2f}' for r in ratios)}; CPU {cpu:.2f})"
    )


def main(channels: int = CHANNELS) -> None:
    """Both parts: the imports, then the platform's start."""
    imports()
    starts(channels)


if __name__ == "__main__":
    main(*map(int, sys.argv[1:2]))
