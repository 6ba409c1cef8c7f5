"""Live events across processes on PostgreSQL (issue 38), loopback only, every loop bounded
in count and time.

A writer process commits :data:`CHANGES` events to the outbox of one schema of a private
PostgreSQL cluster (``tests/pgcluster.py``), :data:`GAP` seconds apart plus up to as much
again at random (so a poll finds them at any phase); this process reads them through an
:class:`~explorer.emulator.live.outbox.Outbox` two ways, in alternating rounds: *polling*
(the table every :data:`POLL` seconds, as the SQLite engine's readers do) and *notified*
(``LISTEN``: ``Store.wait_for_events``). An event's latency runs from the writer's clock read
just before its commit (``time.monotonic``, one clock for every process) to the reader
holding its row. Goals (set from the measurement, side by side in one run): the notified
median at most a tenth of the polling one, the notified p99 at most half the polling one.

Also the page cache's question, ``catalog_version()``: answered from the listener's counters
against a query each time (what every cached listing asked before), per call.
Run with ``python -m benchmarks live_notify``.
"""

from __future__ import annotations

import asyncio
import multiprocessing
import random
import statistics
import time
from typing import Any

import orjson

from explorer.emulator.db import live_events
from explorer.emulator.db.engine import Store
from explorer.emulator.db.postgres import PostgresStore
from explorer.emulator.live.outbox import Outbox

#: Events per round, the least gap between two (seconds), the polling interval of the
#: constellation (``live/constellation.py`` ``POLL``), rounds per way.
CHANGES = 150
GAP = 0.02
POLL = 0.05
ROUNDS = 3
#: Seconds a round may take at most.
DEADLINE = 30.0
#: ``catalog_version()`` calls timed per way and round.
CALLS = 2000


def _write(url: str, count: int, go: Any, seed: int) -> None:
    """The writer process: once ``go`` is set, ``count`` events, each carrying the clock read
    just before its commit."""
    store = Store(url, [live_events.SCHEMA])
    pace = random.Random(seed)
    go.wait(DEADLINE)
    for _ in range(count):
        with store.transaction() as tx:
            live_events.publish(tx, "channel:1:update", {"t": time.monotonic()})
        time.sleep(GAP + pace.uniform(0, GAP))
    store.close()


async def _read(store: Store, count: int, notified: bool) -> list[float]:
    """Read ``count`` events as they come, by polling or notified; their latencies (ms)."""
    outbox = Outbox(store)
    latencies: list[float] = []
    deadline = time.monotonic() + DEADLINE
    while len(latencies) < count and time.monotonic() < deadline:
        if notified:
            await outbox.wait(POLL)
        else:
            await asyncio.sleep(POLL)
        rows = outbox.read()
        now = time.monotonic()
        latencies.extend((now - orjson.loads(payload)["t"]) * 1000 for _, payload in rows)
    return latencies


def _round(url: str, store: Store, notified: bool, seed: int) -> list[float]:
    """One round: a writer process and this process reading."""
    spawn = multiprocessing.get_context("spawn")
    go = spawn.Event()
    writer = spawn.Process(target=_write, args=(url, CHANGES, go, seed))
    writer.start()
    try:

        async def run() -> list[float]:
            reading = asyncio.ensure_future(_read(store, CHANGES, notified))
            await asyncio.sleep(0)  # the outbox has been opened: now write
            go.set()
            return await reading

        return asyncio.run(run())
    finally:
        writer.join(DEADLINE)
        if writer.is_alive():
            writer.kill()


def _percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))]


def _per_call(call: Any, count: int) -> float:
    """Microseconds per call of ``call``, over ``count`` calls."""
    began = time.perf_counter()
    for _ in range(count):
        call()
    return (time.perf_counter() - began) / count * 1e6


def main() -> None:
    from tests import pgcluster

    reason = pgcluster.missing()
    if reason is not None:
        print(f"  skipped: {reason}")
        return
    cluster = pgcluster.Cluster()
    try:
        url = cluster.schema()
        store = Store(url, [live_events.SCHEMA])
        assert isinstance(store, PostgresStore) and store.listening().wait_up(DEADLINE)
        medians: dict[bool, list[float]] = {False: [], True: []}
        p99s: dict[bool, list[float]] = {False: [], True: []}
        for number in range(ROUNDS):
            for notified in (False, True):
                latencies = _round(url, store, notified, seed=number)
                way = "notified" if notified else "polling "
                median, p99 = statistics.median(latencies), _percentile(latencies, 0.99)
                medians[notified].append(median)
                p99s[notified].append(p99)
                print(
                    f"  round {number + 1} {way}: {len(latencies)}/{CHANGES} events, "
                    f"median {median:.2f} ms, p99 {p99:.2f} ms, max {max(latencies):.2f} ms",
                    flush=True,
                )
        for name, values, goal in (("median", medians, 0.1), ("p99", p99s, 0.5)):
            ratios = [n / p for p, n in zip(values[False], values[True], strict=True)]
            print(
                f"  notified/polling {name}: {statistics.median(ratios):.3f} "
                f"(rounds {min(ratios):.3f}-{max(ratios):.3f}; goal at most {goal})"
            )
        query = "SELECT value FROM versions WHERE name = 'catalog'"
        for number in range(ROUNDS):
            heard = _per_call(store.catalog_version, CALLS)
            asked = _per_call(lambda: store.scalar(query), CALLS)
            print(
                f"  round {number + 1} catalog_version(): {heard:.2f} us heard, "
                f"{asked:.1f} us queried ({asked / heard:.0f}x)"
            )
        store.close()
    finally:
        cluster.stop()


if __name__ == "__main__":
    main()
