"""The PostgreSQL column (issue 38): the same measurements on SQLite and on PostgreSQL side by
side in one run, each printing both engines and their ratio against a goal set from what was
measured (figures in ``docs/performance.md``). Loopback only; every loop is bounded in count and
time.

PostgreSQL is a private cluster of this run (``tests/pgcluster.py``, as ``live_notify``'s: the
machine's own cluster is never touched); without its server or psycopg the suite is skipped,
saying why. Parts 1-3 run on two ``explorer serve --no-simulate --no-rate-limits`` processes of
the default world (:data:`CHANNELS`), one on a new SQLite file and one on a new PostgreSQL
database, up at once; rounds alternate between them (SQLite, PostgreSQL, SQLite, ...) and
medians are compared, which keeps a shared machine's drift out of the ratios. Beside each rate
the CPU a request is printed: on PostgreSQL the platform's and the database server's (its
postmaster and backends) together, the server's named, since the work is split between them.

1. **distinct listings**: ``benchmarks/listings.py``'s requests (a filter at the data's own
   quantiles and a page, every request a listing new to the server), the project's own load
   generator at ``listings.CONCURRENCY`` connections, then wrk (when installed: a client in C,
   requests of its own) at as many. Goal: PostgreSQL's CPU a request at most
   :data:`LISTINGS_GOAL` times SQLite's, from each generator (the rates' ratio beside it).
2. **writes**: :data:`WRITERS` signed-in clients (the demo accounts, signed in once per
   server before the rounds: a sign-in's password hash is not the database's work) each
   cycling follow, unfollow, a retitle of their own channel and a chat details request
   (``GET /chats/{id}``), one at a time. Goal: PostgreSQL's CPU a request at most
   :data:`WRITES_GOAL` times SQLite's (the rates' ratio beside it).
3. **live-event latency**: ``benchmarks/live_events.py``'s measurement (a REST retitle to the
   frame of each of 50 Constellation subscribers). SQLite's readers poll the outbox every 50 ms,
   PostgreSQL's are notified (``LISTEN``). Goal: PostgreSQL's median at most
   :data:`LIVE_GOAL` of SQLite's.
4. **REST scale-out**: ``benchmarks/rest_scaleout.py``'s load (the default listing page, rate
   limits on and counted in Redis) on one REST process and on two sharing its port, on each
   engine (a Redis server each). Goal: two PostgreSQL processes at least :data:`SCALE_GOAL`
   times one's rate, as on SQLite.
5. **the start**: ``explorer serve --channels N`` (simulator on, the default) on a new database
   until its ``REST`` line, against the database alone writing the same rows and the indexes
   built before the line, on each engine: SQLite's floor is ``benchmarks/startup.py``'s;
   PostgreSQL's reads every table of the platform's database (off the clock, binary ``COPY
   TO``), then, in one transaction, creates the same tables in a schema of its own, ``COPY``s the
   rows in and builds the same indexes (every index but the later ones). Goal: at most
   :data:`START_GOAL` on PostgreSQL, as on SQLite (issue 42), judged at the issue's million
   channels (:data:`START_CHANNELS`, the default) only: a smaller ``--channels`` prints its
   figures without a verdict, since there the imports and the world's opening, the same at any
   size, outweigh the rows.

``python -m benchmarks engines [--channels N] [--rounds R] [--start-rounds R] [--parts
listings,writes,live,scale,start]``.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import httpx

from benchmarks import listings, live_events, rest_scaleout, startup, verdict, wrk
from benchmarks.channel_scale import serving
from benchmarks.http_load import LoadResult, load
from benchmarks.rest_server import cpu_seconds
from benchmarks.targets import running
from explorer.emulator.db.engine import LATER_INDEXES
from explorer.emulator.fleet import RedisServer
from explorer.emulator.world import DEMO_NAMES, DEMO_PASSWORD

ENGINES = ("sqlite", "postgresql")
#: The world of parts 1-3 (the default world), and the rounds of each part.
CHANNELS = listings.DEFAULT_CHANNELS
ROUNDS = 3
#: Distinct listings: requests and seconds a round at most.
LISTING_REQUESTS = 8_000
LISTING_SECONDS = 4.0
#: Writes: clients, operations and seconds a round at most.
WRITERS = 5
WRITES = 2_000
WRITE_SECONDS = 4.0
#: The start: channels of the default run (the issue's start, the only one judged), and its
#: rounds.
START_CHANNELS = startup.CHANNELS
START_ROUNDS = 2
#: Goals, PostgreSQL against SQLite in the same run (set from the measurement): the CPU a
#: listing and a write cost (at most), the live-event latency's median (at most).
LISTINGS_GOAL = 5.0
WRITES_GOAL = 4.0
LIVE_GOAL = 0.5
#: Two REST processes' rate over one's on PostgreSQL: the same goal as on SQLite.
SCALE_GOAL = rest_scaleout.RATIO_GOAL
#: PostgreSQL's start against PostgreSQL alone: issue 42's goal for SQLite.
START_GOAL = startup.START_GOAL
#: Bytes read from a table's binary COPY, and written, at a time.
_COPY_CHUNK = 1 << 20


@dataclass(frozen=True)
class Server:
    """One engine's platform: its base URL, and the CPU seconds its processes and (on
    PostgreSQL, where the work is split between them) its database server have used so far."""

    url: str
    platform: Callable[[], float]
    database: Callable[[], float] | None = None

    def cpu(self) -> tuple[float, float]:
        """CPU seconds so far: the platform's and the database server's (0 for SQLite's)."""
        return self.platform(), self.database() if self.database else 0.0


def cluster_cpu(pid: int) -> float:
    """CPU seconds the PostgreSQL server of postmaster ``pid`` has used so far: the
    postmaster with the backends it has reaped, and every live backend (Linux: ``/proc``)."""
    ticks = 0
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:  # a process that ended meanwhile
            continue
        if int(stat.parent.name) == pid:
            ticks += sum(map(int, fields[11:15]))
        elif int(fields[1]) == pid:
            ticks += int(fields[11]) + int(fields[12])
    return ticks / os.sysconf("SC_CLK_TCK")


def _spread(values: list[float], unit: str = "", digits: int = 0) -> str:
    return ", ".join(f"{v:.{digits}f}{unit}" for v in values)


@contextmanager
def _cluster() -> Iterator[Any]:
    """A private PostgreSQL cluster, stopped after."""
    from tests import pgcluster

    cluster = pgcluster.Cluster()
    try:
        yield cluster
    finally:
        cluster.stop()


_databases = itertools.count(1)


def _database(cluster: Any) -> str:
    """The URL of a new, empty database of ``cluster``."""
    name = f"bench_{next(_databases)}"
    cluster.create(name)
    return str(cluster.url_of(name))


def _measured(server: Server, run: Callable[[], LoadResult]) -> Measured:
    """``run``'s result, and ``server``'s CPU microseconds a request during it: in all, and
    its database server's alone."""
    platform, database = server.cpu()
    result = run()
    after, database_after = server.cpu()
    per = 1e6 / max(result.requests, 1)
    spent = database_after - database
    return result, (after - platform + spent) * per, spent * per


#: A round: a load's result, the CPU microseconds a request cost in all, and of them the
#: database server's.
Measured = tuple[LoadResult, float, float]


def distinct_listings(servers: dict[str, Server], rounds: int) -> None:
    """Part 1: the same distinct listings against both servers, alternating; from the
    project's own generator, then from wrk (when installed), each its own requests."""
    values = listings.sample(servers["sqlite"].url)
    generators = ("own", "wrk") if wrk.available() else ("own",)
    runs: dict[str, Runs] = {name: {engine: [] for engine in ENGINES} for name in generators}
    for server in servers.values():  # warm each server's rankings
        warm = listings.distinct_queries(values, 2000, 0)
        load([server.url + q for q in warm], listings.CONCURRENCY, 10.0)
    for number in range(1, rounds + 1):
        for name in generators:
            seed = 2 * number + (name == "wrk")  # none answered from the other's pages
            queries = listings.distinct_queries(values, LISTING_REQUESTS, seed=seed)
            for engine, server in servers.items():
                runs[name][engine].append(_measured(server, _listing_load(name, server, queries)))
    for name in generators:
        _compare(f"distinct listings ({name} generator)", runs[name], LISTINGS_GOAL)
    if "wrk" not in generators:
        print("  wrk: not installed (.ci/system-packages installs it), own generator only")


def _listing_load(generator: str, server: Server, queries: list[str]) -> Callable[[], LoadResult]:
    """A round of ``queries`` against ``server`` from ``generator`` (``own`` or ``wrk``), at
    ``listings.CONCURRENCY`` connections, bounded in time (and count, the own)."""
    if generator == "own":
        urls = [server.url + q for q in queries]
        return partial(load, urls, listings.CONCURRENCY, LISTING_SECONDS, LISTING_REQUESTS)
    parts = urlsplit(server.url)
    base, paths = f"{parts.scheme}://{parts.netloc}", [parts.path + q for q in queries]
    return partial(wrk.run, base, paths, listings.CONCURRENCY, LISTING_SECONDS)


#: Each engine's rounds.
Runs = dict[str, list[Measured]]


def _compare(part: str, runs: Runs, goal: float) -> None:
    """Print each engine's rounds, the ratio of their median rates, and of their median CPU a
    request against ``goal`` (at most): the CPU is what a request costs, which a shared
    machine's load moves far less than the rates (their rounds spread 0.1-0.4 there)."""
    print(f"  {part}:")
    for engine, measured in runs.items():
        rate = statistics.median(r.rate for r, _, _ in measured)
        p99 = statistics.median(r.p99_ms for r, _, _ in measured)
        errors = sum(r.errors for r, _, _ in measured)
        rates = _spread([r.rate for r, _, _ in measured])
        print(
            f"    {engine:<10} {rate:7.0f} req/s (rounds {rates}), p99 {p99:7.1f} ms, "
            f"errors {errors}, {_cpu(measured, engine)}"
        )
    sqlite, postgres = runs["sqlite"], runs["postgresql"]
    ratio = statistics.median(r.rate for r, _, _ in postgres) / statistics.median(
        r.rate for r, _, _ in sqlite
    )
    pairs = list(zip(sqlite, postgres, strict=True))
    rounds = _spread([p[0].rate / s[0].rate for s, p in pairs], digits=2)
    cpus = _spread([p[1] / s[1] for s, p in pairs], digits=2)
    cpu = statistics.median(c for _, c, _ in postgres) / statistics.median(c for _, c, _ in sqlite)
    print(f"    postgresql/sqlite rate {ratio:.2f} (rounds {rounds}; no goal)")
    print(
        f"    postgresql/sqlite CPU a request {cpu:.2f} (rounds {cpus}; goal <= {goal}) "
        f"{verdict(cpu <= goal)}"
    )


def _cpu(measured: list[Measured], engine: str) -> str:
    """The median CPU a request of ``measured``, PostgreSQL's server's share named."""
    micros = statistics.median(c for _, c, _ in measured)
    database = statistics.median(d for _, _, d in measured)
    share = f" ({database:.0f} of them the database server's)" if engine == "postgresql" else ""
    return f"CPU {micros:.0f} us a request{share}"


#: A signed-in demo account's session: its cookies, CSRF token and own channel's id.
Session = tuple[dict[str, str], str, int]


def _sessions(base_url: str) -> list[Session]:
    """Every writer's session, signed in once per server outside the measured rounds (a
    sign-in's password hash, about 34 ms of CPU, is not the database's work)."""
    sessions: list[Session] = []
    for username in DEMO_NAMES[:WRITERS]:
        login = httpx.post(
            f"{base_url}/users/login",
            json={"username": username, "password": DEMO_PASSWORD},
            timeout=30,
        )
        login.raise_for_status()
        csrf = login.headers["X-CSRF-Token"]
        sessions.append((dict(login.cookies), csrf, int(login.json()["channel"]["id"])))
    return sessions


async def _writes(base_url: str, sessions: list[Session], seed: int) -> LoadResult:
    """Part 2's round on one server: every demo account (``sessions``) writing at once."""
    clients = [
        (
            httpx.AsyncClient(
                base_url=base_url, timeout=30, cookies=cookies, headers={"X-CSRF-Token": csrf}
            ),
            own,
        )
        for cookies, csrf, own in sessions
    ]
    owned = {own for _, own in clients}
    listed = httpx.get(f"{base_url}/channels?limit=100", timeout=30).json()
    channels = [c["id"] for c in listed if c["id"] not in owned]
    latencies: list[float] = []
    failures: list[str] = []
    deadline = time.perf_counter() + WRITE_SECONDS

    async def writer(client: httpx.AsyncClient, own: int, offset: int) -> None:
        for number in itertools.count():
            if time.perf_counter() >= deadline or len(latencies) >= WRITES:
                return
            channel = channels[(offset + seed + number // 4) % len(channels)]
            started = time.perf_counter()
            kind = number % 4
            if kind == 0:
                response = await client.put(f"/channels/{channel}/follow")
            elif kind == 1:
                response = await client.delete(f"/channels/{channel}/follow")
            elif kind == 2:
                response = await client.patch(
                    f"/channels/{own}", json={"name": f"bench {seed} {number}"}
                )
            else:
                response = await client.get(f"/chats/{channel}")
            latencies.append(time.perf_counter() - started)
            if response.status_code != 200:
                failures.append(f"{response.request.method} {response.status_code}")

    started = time.perf_counter()
    await asyncio.gather(
        *(writer(client, own, 7 * index) for index, (client, own) in enumerate(clients))
    )
    elapsed = time.perf_counter() - started
    for client, _ in clients:
        await client.aclose()
    if failures:
        print(f"    refused: {', '.join(sorted(set(failures)))}")
    ordered = sorted(latencies)
    return LoadResult(
        len(ordered),
        elapsed,
        statistics.median(ordered) * 1000,
        ordered[min(len(ordered) - 1, int(0.99 * len(ordered)))] * 1000,
        len(failures),
    )


def writes(servers: dict[str, Server], rounds: int) -> None:
    """Part 2: the write mix against both servers, alternating."""
    runs: Runs = {engine: [] for engine in ENGINES}
    signed = {engine: _sessions(server.url) for engine, server in servers.items()}
    for number in range(rounds):
        for engine, server in servers.items():
            run = partial(asyncio.run, _writes(server.url, signed[engine], number))
            runs[engine].append(_measured(server, run))
    mix = f"writes ({WRITERS} clients: follow, unfollow, retitle, chat details)"
    _compare(mix, runs, WRITES_GOAL)


def live_latency(servers: dict[str, Server], rounds: int) -> None:
    """Part 3: a REST change to its subscribers' frames on both servers, alternating."""
    medians: dict[str, list[float]] = {engine: [] for engine in ENGINES}
    p95s: dict[str, list[float]] = {engine: [] for engine in ENGINES}
    for _ in range(rounds):
        for engine, server in servers.items():
            latencies = [s * 1000 for s in asyncio.run(live_events.measure(server.url))]
            medians[engine].append(statistics.median(latencies))
            p95s[engine].append(statistics.quantiles(latencies, n=20)[18])
    print(
        f"  live-event latency (REST retitle -> {live_events.SUBSCRIBERS} subscribers, "
        f"{live_events.CHANGES} changes a round):"
    )
    for engine in ENGINES:
        print(
            f"    {engine:<10} median {statistics.median(medians[engine]):6.1f} ms "
            f"(rounds {_spread(medians[engine], digits=1)}), p95 "
            f"{statistics.median(p95s[engine]):6.1f} ms"
        )
    ratio = statistics.median(medians["postgresql"]) / statistics.median(medians["sqlite"])
    rounds_ = [p / s for s, p in zip(medians["sqlite"], medians["postgresql"], strict=True)]
    print(
        f"    postgresql/sqlite median {ratio:.2f} (rounds {_spread(rounds_, digits=2)}; "
        f"goal <= {LIVE_GOAL}) {verdict(ratio <= LIVE_GOAL)}"
    )


def postgres_floor(url: str, postmaster: int) -> tuple[float, float]:
    """Wall and CPU seconds (this process's and the server's of ``postmaster``) for PostgreSQL
    alone to write the tables and rows of the platform's database ``url`` (read off the clock)
    into a schema of its own, by ``COPY``, and build the indexes the platform built before its
    ``REST`` line, in one transaction."""
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        tables = [
            row[0]
            for row in conn.execute(
                "SELECT tablename FROM pg_tables WHERE schemaname = 'public' ORDER BY tablename"
            )
        ]
        indexes = [
            definition.replace(" ON public.", " ON floor.")
            for name, definition in conn.execute(
                "SELECT indexname, indexdef FROM pg_indexes WHERE schemaname = 'public'"
            )
            if name not in LATER_INDEXES
        ]
        rows: dict[str, bytes] = {}
        for table in tables:
            with conn.cursor().copy(f'COPY public."{table}" TO STDOUT (FORMAT binary)') as copy:
                rows[table] = b"".join(bytes(chunk) for chunk in copy)
        started, used = time.perf_counter(), time.process_time() + cluster_cpu(postmaster)
        with conn.transaction():
            conn.execute("CREATE SCHEMA floor")
            for table in tables:
                conn.execute(f'CREATE TABLE floor."{table}" (LIKE public."{table}")')
                data = rows.pop(table)
                with conn.cursor().copy(f'COPY floor."{table}" FROM STDIN (FORMAT binary)') as copy:
                    for at in range(0, len(data), _COPY_CHUNK):
                        copy.write(data[at : at + _COPY_CHUNK])
            for definition in indexes:
                conn.execute(definition)
        wall = time.perf_counter() - started
        return wall, time.process_time() + cluster_cpu(postmaster) - used


def starts(channels: int, rounds: int, cluster: Any) -> None:
    """Part 4: the platform's start against its engine alone, both engines, alternating."""
    #: Each round's (platform, floor) (wall, CPU) seconds.
    times: dict[str, list[tuple[tuple[float, float], tuple[float, float]]]] = {
        engine: [] for engine in ENGINES
    }
    with tempfile.TemporaryDirectory() as folder:
        for number in range(rounds):
            kept = Path(folder) / f"round-{number}"
            kept.mkdir()
            platform = startup.platform_start(channels, kept)
            floor = startup.floor_start(kept / f"world-{channels}.db", kept / "floor.db")
            times["sqlite"].append((platform, floor))
            for path in kept.iterdir():
                path.unlink()
            url = _database(cluster)
            used = cluster_cpu(cluster.pid)
            with serving(channels, folder, simulate=True, db=url) as (_, pid, wall):
                cpu = cpu_seconds(pid) + cluster_cpu(cluster.pid) - used
            times["postgresql"].append(((wall, cpu), postgres_floor(url, cluster.pid)))
            line = ", ".join(_start_round(engine, *times[engine][-1]) for engine in ENGINES)
            print(f"    round {number + 1}: {line}", flush=True)
    print(
        f"  the start, {channels:,} channels, the platform against its engine alone "
        "(CPU: the platform's process and the database server's):"
    )
    for engine in ENGINES:
        walls = [p[0] / f[0] for p, f in times[engine]]
        started = statistics.median(p[0] for p, _ in times[engine])
        alone = statistics.median(f[0] for _, f in times[engine])
        cpu = statistics.median(p[1] for p, _ in times[engine]) / statistics.median(
            f[1] for _, f in times[engine]
        )
        goal, judged = f"goal <= {START_GOAL}", ""
        if channels < START_CHANNELS:
            goal = f"the goal is judged at {START_CHANNELS:,} channels"
        else:
            judged = f" {verdict(started / alone <= START_GOAL)}"
        print(
            f"    {engine:<10} {started:6.1f} s against {alone:6.1f} s alone: "
            f"{started / alone:.2f} (rounds {_spread(walls, digits=2)}; {goal}){judged}; "
            f"CPU {cpu:.2f}x"
        )
    sqlite = statistics.median(p[0] for p, _ in times["sqlite"])
    postgres = statistics.median(p[0] for p, _ in times["postgresql"])
    print(f"    postgresql/sqlite start {postgres / sqlite:.2f} (no goal)")


def _start_round(engine: str, platform: tuple[float, float], floor: tuple[float, float]) -> str:
    return (
        f"{engine} {platform[0]:.1f} s (CPU {platform[1]:.1f} s) against {floor[0]:.1f} s "
        f"(CPU {floor[1]:.1f} s)"
    )


def scale_out(cluster: Any, rounds: int) -> None:
    """Part 5: ``benchmarks/rest_scaleout.py``'s load on one REST process and on two sharing
    its port, limits counted in Redis, on each engine (a Redis server each)."""
    runs: dict[tuple[str, int], list[Measured]] = {
        (engine, processes): [] for engine in ENGINES for processes in (1, 2)
    }
    with tempfile.TemporaryDirectory() as folder, ExitStack() as stack:
        firsts: dict[str, tuple[str, str, str, int]] = {}
        for engine in ENGINES:
            db = _database(cluster) if engine == "postgresql" else str(Path(folder) / "shared.db")
            redis = RedisServer().start()
            stack.callback(redis.stop)
            base, pid = stack.enter_context(running("shared", db, redis.url, "0"))
            firsts[engine] = (db, redis.url, base, pid)
            rest_scaleout.drive(base)  # warm-up: pages cached, connections made
        postmaster = cluster.pid
        for _ in range(rounds):
            for engine, (db, broker, base, first) in firsts.items():
                database = partial(cluster_cpu, postmaster) if engine == "postgresql" else None
                drive = partial(rest_scaleout.drive, base)
                one = Server(base, partial(_processes_cpu, [first]), database)
                runs[engine, 1].append(_measured(one, drive))
                port = str(urlsplit(base).port)
                with running("shared", db, broker, port) as (joined, second):
                    assert joined == base
                    drive()
                    two = Server(base, partial(_processes_cpu, [first, second]), database)
                    runs[engine, 2].append(_measured(two, drive))
    print(f"  REST scale-out (GET {rest_scaleout.QUERY}, 1 and 2 processes on one port):")
    ratios: dict[str, float] = {}
    for engine in ENGINES:
        for processes in (1, 2):
            measured = runs[engine, processes]
            rate = statistics.median(r.rate for r, _, _ in measured)
            print(
                f"    {engine:<10} {processes} process{'es' if processes > 1 else '  '} "
                f"{rate:7.0f} req/s (rounds {_spread([r.rate for r, _, _ in measured])}), "
                f"{_cpu(measured, engine)}"
            )
        pairs = zip(runs[engine, 1], runs[engine, 2], strict=True)
        each = [two[0].rate / one[0].rate for one, two in pairs]
        ratios[engine] = statistics.median(each)
        print(f"    {engine:<10} two/one {ratios[engine]:.2f} (rounds {_spread(each, digits=2)})")
    alone = {engine: statistics.median(r.rate for r, _, _ in runs[engine, 1]) for engine in ENGINES}
    print(
        f"    postgresql/sqlite one process {alone['postgresql'] / alone['sqlite']:.2f} (no goal)"
    )
    print(
        f"    postgresql two/one {ratios['postgresql']:.2f} (goal >= {SCALE_GOAL}) "
        f"{verdict(ratios['postgresql'] >= SCALE_GOAL)}"
    )


def _processes_cpu(pids: list[int]) -> float:
    """CPU seconds of the processes ``pids`` so far."""
    return sum(cpu_seconds(pid) for pid in pids)


def _served(stack: ExitStack, folder: str, cluster: Any) -> dict[str, Server]:
    """Both servers of parts 1-3, started at once."""
    servers: dict[str, Server] = {}
    for engine in ENGINES:
        db = _database(cluster) if engine == "postgresql" else None
        url, pid, seconds = stack.enter_context(serving(CHANNELS, folder, db=db))
        print(f"  {engine} server up in {seconds:.1f} s ({CHANNELS:,} channels)", flush=True)
        if db is None:
            servers[engine] = Server(url, partial(cpu_seconds, pid))
        else:
            database = partial(cluster_cpu, cluster.pid)
            servers[engine] = Server(url, partial(cpu_seconds, pid), database)
    return servers


PARTS: dict[str, Callable[[dict[str, Server], int], None]] = {
    "listings": distinct_listings,
    "writes": writes,
    "live": live_latency,
}


def main(args: list[str] | None = None) -> None:
    """Every part, SQLite and PostgreSQL side by side, each against its goal."""
    parser = argparse.ArgumentParser(prog="python -m benchmarks engines")
    parser.add_argument("--channels", type=int, default=START_CHANNELS, help="of the start")
    parser.add_argument("--rounds", type=int, default=ROUNDS, help="of parts 1-3")
    parser.add_argument("--start-rounds", type=int, default=START_ROUNDS)
    parser.add_argument(
        "--parts",
        default=",".join([*PARTS, "scale", "start"]),
        help="of listings,writes,live,scale,start",
    )
    options = parser.parse_args(args or [])
    from tests import pgcluster

    reason = pgcluster.missing()
    if reason is not None:
        print(f"  skipped: {reason}")
        return
    print(
        f"SQLite and PostgreSQL side by side: {options.rounds} alternating rounds a part, "
        f"{CHANNELS:,} channels"
    )
    chosen = options.parts.split(",")
    with _cluster() as cluster:
        if set(chosen) & set(PARTS):
            with tempfile.TemporaryDirectory() as folder, ExitStack() as stack:
                servers = _served(stack, folder, cluster)
                for name, part in PARTS.items():
                    if name in chosen:
                        part(servers, options.rounds)
        if "scale" in chosen:
            scale_out(cluster, options.rounds)
        if "start" in chosen:
            starts(options.channels, options.start_rounds, cluster)


if __name__ == "__main__":
    main(sys.argv[1:])
