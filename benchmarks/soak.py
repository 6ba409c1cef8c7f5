"""Soak (issue 28): chat under faults for minutes, nothing lost that is not reported.

A platform of real processes (``emulator/fleet.py``: a REST process running the simulator,
``--nodes`` chat-node processes, a real redis-server), the ``--channels`` busiest simulated
channels, and three independent readers of them:

* ``explorer record --channels ...`` (a child process) writing a capture;
* ``api.watch(channels, to=..., max_rows=WATCH_TAIL)`` (a child process: ``python -m
  benchmarks.soak watch``), its tail as small as ``explorer record``'s, so both fill it
  and growth after it is not the tail's;
* an observer in this process on plain websockets (not the toolkit), one anonymous
  connection per channel on a node that no fault touches: what the platform said.

After a warm-up, faults follow one another every ``interval`` seconds, in this order, again
and again: a chat node ``kill -9`` (of the nodes but the observer's, the one holding the
most of the captures' connections, read from ``/proc``; a replacement started at once; a run
whose kills cut none says the reconnect goal was not exercised), Redis restarted, the
recorder paused with SIGSTOP (then SIGCONT), a full disk for a moment (the captures live on
a small tmpfs that is shrunk to what it holds; skipped where mounting is not allowed), the
REST process restarted. Then the observer leaves, the readers get a grace period, and stop.

The report: per fault, the messages the observer saw in the time until the next fault that
are missing from each capture (and how many of them a reported loss covers: an outage whose
``loss`` says messages may be missing, a removal while away, a write gap), the removals
(``DeleteMessage``, ``PurgeMessage``, ``ClearMessages``) missing; doubles and unreadable files
per capture; the time each reconnect took (from the manifests); resident memory and open files
of every process over time (the recorder's and the watch's worker processes too, once they
started); a verdict against issue 28's goals. The observer joins after the
readers and leaves before them, so everything it saw was said while they were joined.

Memory is judged over the last half of the run, and only once warm: a run shorter than
:data:`JUDGED_MINUTES` is not judged (its figures are printed), and neither is the recorder or
the watch (nor its worker process) whose log was not yet full (:data:`WARM_ROWS`: its tail and
one sealed chunk) when the last half began; the report says when each filled. At about 13
events/s (the default rates over 40 channels) that takes about 18 minutes, so a run of 40
minutes or more judges every process.

``python -m benchmarks soak --minutes 10`` (default 10; ``make bench`` runs 2). Loopback only;
every phase is bounded in time.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import itertools
import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter, defaultdict
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import httpx
import orjson
import pandas as pd
import pyarrow.parquet as pq
from websockets.asyncio.client import ClientConnection
from websockets.exceptions import ConnectionClosed

from benchmarks.watch import Observer as PlainObserver
from explorer.cli.record import TAIL_ROWS
from explorer.core.processes import Child
from explorer.core.worldclock import world_time
from explorer.emulator.fleet import Fleet
from explorer.events.log import CHUNK_ROWS

#: Minutes when run from ``make bench`` (the command's default is 10).
SUITE_MINUTES = 2.0
#: Share of the run before the first fault, and after the last.
WARM_UP = 0.15
#: Seconds between faults at most and at least.
INTERVAL = (15.0, 120.0)
FAULTS = ("node kill -9", "redis restart", "recorder pause", "full disk", "rest restart")
#: Seconds the recorder stays stopped, the disk full.
PAUSE = 20.0
FULL = 8.0
#: Seconds the readers get after the observer left; between resource samples.
GRACE = 15.0
SAMPLE_EVERY = 5.0
#: Seconds around an outage a message time may fall and still count as covered by it
#: (the observer's and the capture's clocks are one clock; delivery takes a moment).
SLACK = 1.0
#: Goals: longest reconnect after a node kill, growth over the last half of the run.
MAX_RECONNECT = 5.0
MAX_GROWTH_MB = 5.0
#: Shortest run whose memory is judged: its first half leaves every process time to warm up.
JUDGED_MINUTES = 10.0
#: Longest time between two files a capture may take: the recorder's pause and a few flushes.
MAX_STALL = PAUSE + 10.0
MAX_GROWTH_FILES = 5
#: Share of the last half's samples at each end whose median stands for it, so one sample
#: taken while a flush builds its table does not decide the growth.
ENDS = 0.2
#: Channels in the platform's world: enough that ``--channels`` of them are online at any hour
#: (audiences follow the time of day: at 05:45 UTC a world of 300 had 2 online, one of
#: 50,000, the platform's default, 40; seeded in about 15 s).
WORLD = 50_000
#: Rows the watch keeps in memory (its ``max_rows``, as ``explorer record``'s), so growth once
#: it is full is not the tail's.
WATCH_TAIL = TAIL_ROWS
#: Rows after which a reader's log holds all it ever will: a bounded log trims whole sealed
#: chunks, so it keeps up to ``max_rows`` plus one chunk.
WARM_ROWS = WATCH_TAIL + CHUNK_ROWS
#: The columns of a capture's files the report reads.
CAPTURE_COLUMNS = ("event", "channel", "message_id", "packet", "row", "received_at")
#: The processes each capture's log lives in (their memory waits for it to be full).
READERS = {"record": ("recorder", "recorder worker"), "watch": ("watch", "watch worker")}
TMPFS_SIZE = "2g"
#: Removal events: what they are called here and the field naming what they remove.
REMOVALS: dict[str, tuple[str, str | None]] = {
    "DeleteMessage": ("delete", "id"),
    "PurgeMessage": ("purge", "user_id"),
    "ClearMessages": ("clear", None),
}


# --- the watch, in a child process ----------------------------------------------------


def watch_main(base_url: str, out: str, channels: str) -> int:
    """``python -m benchmarks.soak watch BASE OUT IDS``: watch and record until SIGINT."""
    import explorer

    with explorer.connect(base_url, progress=False) as api:
        watch = api.watch(
            [int(c) for c in channels.split(",")], to=out, flush_every=2.0, max_rows=WATCH_TAIL
        )
        print(f"WATCHING {len(watch.channels)}", flush=True)
        try:
            while True:
                time.sleep(1)
        except KeyboardInterrupt:
            pass
        finally:
            watch.close()
    return 0


# --- the observer ---------------------------------------------------------------------


@dataclass
class Seen:
    """What the observer saw: messages ``(channel, id) -> (time, user)``, removals
    ``(kind, channel, key, time)`` and its own outages ``channel -> [(start, end)]``."""

    messages: dict[tuple[int, str], tuple[float, int | None]] = field(default_factory=dict)
    removals: list[tuple[str, int, Any, float]] = field(default_factory=list)
    away: dict[int, list[tuple[float, float]]] = field(default_factory=lambda: defaultdict(list))


class Observer(PlainObserver):
    """The watch benchmark's observer (one plain websockets connection per channel to
    ``endpoint``, which no fault touches), noting times, authors and removals in
    :attr:`said`; a dropped connection joins again and its outage is kept."""

    def __init__(self, endpoint: str, channels: list[int]) -> None:
        super().__init__(endpoint, channels)
        self.said = Seen()

    def _note(self, channel: int, packet: dict[str, Any]) -> None:
        if packet.get("type") != "event":
            return
        name, data, now = packet.get("event"), packet.get("data") or {}, time.time()
        if name == "ChatMessage" and "target" not in data:
            self.said.messages.setdefault((channel, data["id"]), (now, data.get("user_id")))
        elif name in REMOVALS:
            kind, key = REMOVALS[name]
            self.said.removals.append((kind, channel, data.get(key) if key else None, now))

    async def _read(self, ws: ClientConnection, channel: int) -> None:
        while True:
            with contextlib.suppress(ConnectionClosed):
                await super()._read(ws, channel)
            lost = time.time()
            for _ in range(100):
                try:
                    ws = await self._join(channel)
                    break
                except OSError:
                    await asyncio.sleep(0.2)
            self.said.away[channel].append((lost, time.time()))


# --- resources -------------------------------------------------------------------------


def children(pid: int) -> list[int]:
    """The child processes of ``pid`` (a recorder's worker process, once it started)."""
    try:
        with open(f"/proc/{pid}/task/{pid}/children") as found:
            return [int(child) for child in found.read().split()]
    except OSError:
        return []


def resources(pid: int) -> tuple[float, int] | None:
    """Resident memory (MB) and open files of process ``pid`` (None when it is gone)."""
    try:
        with open(f"/proc/{pid}/status") as status:
            rss = next(int(line.split()[1]) for line in status if line.startswith("VmRSS:"))
        files = len(os.listdir(f"/proc/{pid}/fd"))
    except (OSError, StopIteration):
        return None
    return rss / 1024, files


class Sampler:
    """Samples every role's process every ``SAMPLE_EVERY`` seconds on a thread of its own."""

    def __init__(self, roles: dict[str, Any]) -> None:
        self.roles = roles  # role -> a callable giving the current pid (None: none)
        self.samples: list[tuple[float, str, float, int]] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(10)

    def _run(self) -> None:
        while not self._stop.wait(SAMPLE_EVERY):
            now = time.time()
            for role, pid_of in self.roles.items():
                pid = pid_of()
                found = resources(pid) if pid else None
                if found is not None:
                    self.samples.append((now, role, *found))


# --- faults ----------------------------------------------------------------------------


class Disk:
    """The captures' folder: a small tmpfs when this process may mount one (then
    :meth:`fill` shrinks it to what it holds for a moment), else a plain folder."""

    def __init__(self, path: Path) -> None:
        self.path = path
        path.mkdir(parents=True, exist_ok=True)
        self.mounted = _run("mount", "-t", "tmpfs", "-o", f"size={TMPFS_SIZE}", "tmpfs", str(path))

    @contextlib.contextmanager
    def full(self) -> Iterator[bool]:
        """Full for the block's duration; yields whether it could be."""
        if not self.mounted:
            yield False
            return
        shrunk = False
        for _ in range(20):  # the captures grow meanwhile: a little more room each try
            stats = os.statvfs(self.path)
            used = (stats.f_blocks - stats.f_bfree) * stats.f_frsize
            if _run("mount", "-o", f"remount,size={used + 4096}", str(self.path)):
                shrunk = True
                break
        try:
            yield shrunk
        finally:
            _run("mount", "-o", f"remount,size={TMPFS_SIZE}", str(self.path))

    def close(self) -> None:
        if self.mounted:
            _run("umount", "-l", str(self.path))


def _run(*command: str) -> bool:
    """Run a system command quietly; whether it succeeded."""
    if shutil.which(command[0]) is None:
        return False
    done = subprocess.run(command, capture_output=True, check=False, timeout=30)
    return done.returncode == 0


@dataclass
class Fault:
    """One fault: what, when it began (epoch s), a note on how it went."""

    kind: str
    at: float
    note: str = ""
    #: For a node kill: the captures' connections it cut.
    cut: int = 0


def sockets(pid: int) -> set[int]:
    """The inodes of the sockets process ``pid`` has open (none when it is gone)."""
    inodes: set[int] = set()
    with contextlib.suppress(OSError):
        for fd in Path(f"/proc/{pid}/fd").iterdir():
            with contextlib.suppress(OSError):
                target = os.readlink(fd)
                if target.startswith("socket:["):
                    inodes.add(int(target[8:-1]))
    return inodes


def established(table: str) -> dict[int, int]:
    """The peer port of each established TCP connection in a ``/proc/net/tcp`` table, by
    socket inode. Keyed by inode because a table read while sockets come and go can list one
    connection twice (the kernel resumes each chunk of the read by position)."""
    peers: dict[int, int] = {}
    for line in table.splitlines()[1:]:
        fields = line.split()
        if fields[3] == "01":  # ESTABLISHED
            peers[int(fields[9])] = int(fields[2].rsplit(":", 1)[1], 16)
    return peers


def peer_ports(inodes: set[int]) -> Counter[int]:
    """How many established TCP connections among the sockets ``inodes`` go to each port.
    Each table is read twice: the kernel can skip a connection in a read while others come
    and go, as it can list one twice, and two reads rarely both skip it."""
    peers: dict[int, int] = {}
    for table in ("/proc/net/tcp", "/proc/net/tcp6") * 2:
        with contextlib.suppress(OSError):
            peers.update(established(Path(table).read_text()))
    return Counter(port for inode, port in peers.items() if inode in inodes)


def victim(fleet: Fleet, stable: Child, captures: Sequence[Child]) -> tuple[Child, int]:
    """The chat node to kill: of the running ones but the observer's, the one holding the most
    of the captures' connections (the newest on a tie), and how many it holds. Killing a node
    no capture is on would test nothing."""
    inodes = set().union(*(sockets(c.pid) for c in captures if c.running()))
    ports = peer_ports(inodes)
    running = [n for n in fleet.nodes if n is not stable and n.running()]
    links = [(ports[urlsplit(n.address).port or 0], i, n) for i, n in enumerate(running)]
    held, _, chosen = max(links, key=lambda link: link[:2])
    return chosen, held


def inject(
    kind: str, fleet: Fleet, captures: Sequence[Child], disk: Disk, stable: Child
) -> tuple[str, int]:
    """Cause fault ``kind``; a note on what was done, and the captures' connections cut."""
    recorder = captures[0]
    if kind == "node kill -9":
        node, cut = victim(fleet, stable, captures)
        node.kill()
        fleet.heal()
        return f"pid {node.pid}, cutting {cut} capture connections", cut
    if kind == "redis restart":
        fleet.redis.kill()
        fleet.redis.start()
        return "", 0
    if kind == "recorder pause":
        os.kill(recorder.pid, signal.SIGSTOP)
        time.sleep(PAUSE)
        os.kill(recorder.pid, signal.SIGCONT)
        return f"{PAUSE:g} s", 0
    if kind == "full disk":
        with disk.full() as full:
            if full:
                time.sleep(FULL)
        return (f"{FULL:g} s" if full else "skipped (cannot mount a tmpfs here)"), 0
    fleet.restart_rest()
    return "", 0


# --- the captures ----------------------------------------------------------------------


@dataclass
class Capture:
    """One reader's capture: its ChatMessage ids by channel with counts, its removals, and
    what it reports lost (outages and write gaps from its manifest)."""

    name: str
    ids: dict[tuple[int, str], int]
    removals: set[tuple[str, int, Any]]
    outages: list[dict[str, Any]]
    write_gaps: list[tuple[float, float]]
    unreadable: int
    failed: list[dict[str, Any]]
    #: The longest time between two files written (seconds): how long writing stalled.
    stalled: float
    #: When its log had :data:`WARM_ROWS` rows (epoch seconds; None: never in this run).
    warm: float | None = None
    #: Rows its log had in all.
    rows: int = 0

    @classmethod
    def read(cls, name: str, path: Path, ahead: float) -> Capture:
        """The capture at ``path``; its times (``received_at``, the watch's outages: the
        platform's world clock) moved back by ``ahead`` onto this machine's clock, the
        observer's (:func:`world_ahead`)."""
        unreadable = 0
        tables = []
        files = sorted((path / "events").glob("*/*.parquet"))
        written = sorted(file.stat().st_mtime for file in files)
        stalled = max((b - a for a, b in itertools.pairwise(written)), default=0.0)
        for file in files:
            try:
                tables.append(
                    pq.read_table(
                        file,
                        columns=list(CAPTURE_COLUMNS),
                    ).to_pandas()
                )
            except Exception:
                unreadable += 1
        frame = (
            pd.concat(tables, ignore_index=True)
            if tables
            else pd.DataFrame(columns=list(CAPTURE_COLUMNS))
        )
        full = frame.loc[frame["row"] >= WARM_ROWS - 1, "received_at"]
        warm = pd.Timestamp(full.min()).timestamp() - ahead if len(full) else None
        chats = frame[frame["event"] == "ChatMessage"]
        ids: dict[tuple[int, str], int] = defaultdict(int)
        for channel, message_id in zip(chats["channel"], chats["message_id"], strict=True):
            ids[(int(channel), str(message_id))] += 1
        removals: set[tuple[str, int, Any]] = set()
        for event, channel, packet in zip(
            frame["event"], frame["channel"], frame["packet"], strict=True
        ):
            if event in REMOVALS:
                kind, key = REMOVALS[event]
                data = orjson.loads(packet).get("data") or {}
                removals.add((kind, int(channel), data.get(key) if key else None))
        outages: list[dict[str, Any]] = []
        gaps: list[tuple[float, float]] = []
        failed: list[dict[str, Any]] = []
        for manifest_path in (path / "recorders").glob("*.json"):
            manifest = json.loads(manifest_path.read_text())
            losses = manifest.get("losses") or {}
            outages += [
                {**o, "start": o["start"] - ahead, "end": o["end"] - ahead}
                for o in losses.get("outages", [])
            ]
            failed += losses.get("failed", [])
            for gap in manifest.get("gaps") or []:  # a recorder's write gaps, where it has them
                gaps.append((gap["start"], gap.get("end") or time.time()))
        rows = int(frame["row"].max()) + 1 if len(frame) else 0
        return cls(
            name, dict(ids), removals, outages, gaps, unreadable, failed, stalled, warm, rows
        )

    def covered(self, channel: int, at: float, removed: bool) -> bool:
        """Whether a reported loss covers a message of ``channel`` at ``at`` (``removed``:
        the observer saw it removed later)."""
        for outage in self.outages:
            if outage["channel"] != channel:
                continue
            if outage["start"] - SLACK <= at <= outage["end"] + SLACK and (
                removed or outage["loss"] != "events"
            ):
                return True
        return any(start - SLACK <= at <= end + SLACK for start, end in self.write_gaps)

    def away(self, channel: int, at: float) -> bool:
        """Whether the reader was away from ``channel`` at ``at`` (any outage)."""
        return any(
            o["channel"] == channel and o["start"] - SLACK <= at <= o["end"] + SLACK
            for o in self.outages
        ) or any(start - SLACK <= at <= end + SLACK for start, end in self.write_gaps)


def max_stall(faults: list[Fault]) -> float:
    """The longest stall between files a capture may take: :data:`MAX_STALL`, plus the full
    disk's :data:`FULL` where one came right after a recorder pause (in short runs faults
    come faster than a pause lasts, so the two stalls add up)."""
    chained = any(
        a.kind == "recorder pause" and b.kind == "full disk" and b.at - a.at < MAX_STALL
        for a, b in itertools.pairwise(faults)
    )
    return MAX_STALL + (FULL if chained else 0.0)


def removed_later(seen: Seen) -> set[tuple[int, str]]:
    """The messages the observer saw removed (by id, by author, or by a clear)."""
    gone: set[tuple[int, str]] = set()
    for kind, channel, key, at in seen.removals:
        for (ch, message_id), (said, user) in seen.messages.items():
            if ch != channel or said > at:
                continue
            if (
                kind == "clear"
                or (kind == "delete" and key == message_id)
                or (kind == "purge" and key == user)
            ):
                gone.add((ch, message_id))
    return gone


def world_ahead(base_url: str) -> float:
    """How far the platform's world clock runs ahead of this machine's (seconds): what dates a
    capture's events, while the observer and the write gaps use this machine's clock. The
    soak's platform runs at speed 1, so the difference holds for the whole run."""
    before = time.time()
    headers = httpx.get(f"{base_url}/types", params={"limit": 1}, timeout=30).headers
    world = world_time(headers)
    return 0.0 if world is None else world - (before + time.time()) / 2


def observer_away(seen: Seen, channel: int, at: float) -> bool:
    return any(start - SLACK <= at <= end + SLACK for start, end in seen.away.get(channel, []))


# --- the run ---------------------------------------------------------------------------


def busiest(base_url: str, count: int) -> list[int]:
    """The ``count`` online channels with the most viewers (the simulator's busiest)."""
    import explorer

    with explorer.connect(base_url, progress=False) as api:
        frame = api.channels(
            where={"online": True}, order="viewersCurrent:desc", fields=("id",), max_rows=count
        )
    return [int(i) for i in frame.index]


def run(minutes: float, nodes: int, channels: int, sim_rate: float, channel_rate: float) -> str:
    """One soak; returns the verdict line (the report is printed as it goes)."""
    duration = minutes * 60
    scratch = Path(tempfile.mkdtemp(prefix="explorer-soak-"))
    disk = Disk(scratch / "disk")
    rest_args = [
        "--simulate",
        "--sim-rate",
        str(sim_rate),
        "--sim-channel-rate",
        str(channel_rate),
        "--sim-channels",
        str(max(channels * 2, 40)),
    ]
    try:
        with Fleet(
            scratch / "platform.db", nodes=nodes, channels=WORLD, rest_args=rest_args
        ) as fleet:
            return _soak(fleet, disk, scratch, duration, channels)
    finally:
        disk.close()
        shutil.rmtree(scratch, ignore_errors=True)


def _soak(fleet: Fleet, disk: Disk, scratch: Path, duration: float, count: int) -> str:
    base = fleet.base_url
    ids = busiest(base, count)
    listed = ",".join(map(str, ids))
    print(
        f"platform: REST + {len(fleet.nodes)} chat nodes + Redis, simulation on; "
        f"{len(ids)} channels; {duration / 60:g} min",
        flush=True,
    )
    record_out, watch_out = disk.path / "record", disk.path / "watch"
    recorder = Child(
        [
            sys.executable,
            "-m",
            "explorer.cli",
            "record",
            "--channels",
            listed,
            "--url",
            base,
            "--out",
            str(record_out),
            "--flush-every",
            "2s",
            "--snapshot-every",
            "1h",
        ],
        scratch / "record.log",
        ready=lambda line: "channels" in line,
    ).start()
    watcher = Child(
        [sys.executable, "-m", "benchmarks.soak", "watch", base, str(watch_out), listed],
        scratch / "watch.log",
        ready=lambda line: line.startswith("WATCHING"),
    ).start()
    recorder.wait_ready(timeout=120)
    watcher.wait_ready(timeout=120)
    stable = fleet.nodes[0]
    observer = Observer(stable.address, ids)
    observer.start()
    roles: dict[str, Any] = {
        "rest": lambda: fleet.rest.pid if fleet.rest and fleet.rest.running() else None,
        "redis": lambda: (
            fleet.redis.child.pid if fleet.redis.running() and fleet.redis.child else None
        ),
        "recorder": lambda: recorder.pid if recorder.running() else None,
        "recorder worker": lambda: next(iter(children(recorder.pid)), None),
        "watch": lambda: watcher.pid if watcher.running() else None,
        "watch worker": lambda: next(iter(children(watcher.pid)), None),
        "node (stable)": lambda: stable.pid,
    }
    sampler = Sampler(roles)
    sampler.start()
    started = time.time()
    first = started + duration * WARM_UP
    last = started + duration * (1 - WARM_UP)
    interval = min(max((last - first) / 8, INTERVAL[0]), INTERVAL[1])
    faults: list[Fault] = []
    at = first
    while at <= last:
        time.sleep(max(0.0, at - time.time()))
        kind = FAULTS[len(faults) % len(FAULTS)]
        begun = time.time()
        note, cut = inject(kind, fleet, (recorder, watcher), disk, stable)
        faults.append(Fault(kind, begun, note, cut))
        print(f"  {time.time() - started:6.0f} s  {kind} {note}", flush=True)
        at += interval
    time.sleep(max(0.0, started + duration - time.time()))
    ended = time.time()
    observer.stop()
    time.sleep(GRACE)
    sampler.stop()
    recorder.stop(grace=60)
    watcher.stop(grace=60)
    logs = {
        name: (scratch / f"{name}.log").read_text(errors="replace") for name in ("record", "watch")
    }
    summary = logs["record"][logs["record"].rfind("explorer record:") :].splitlines()
    for name, text in logs.items():
        print(f"{name}: {text.count('No space left')} writes refused by the full disk (logged)")
    ahead = world_ahead(base)
    captures = [
        Capture.read(n, p, ahead) for n, p in (("record", record_out), ("watch", watch_out))
    ]
    return report(
        observer.said,
        captures,
        faults,
        sampler.samples,
        started,
        ended,
        summary,
    )


# --- the report ------------------------------------------------------------------------


def report(
    seen: Seen,
    captures: list[Capture],
    faults: list[Fault],
    samples: list[tuple[float, str, float, int]],
    started: float,
    ended: float,
    summary: list[str],
) -> str:
    """Print the tables; the verdict line."""
    gone = removed_later(seen)
    stall = max_stall(faults)
    windows = [
        (f.kind, f.at, faults[i + 1].at if i + 1 < len(faults) else ended)
        for i, f in enumerate(faults)
    ]
    windows.insert(0, ("(before the faults)", started, faults[0].at if faults else ended))
    print(
        f"\nobserver: {len(seen.messages):,} messages "
        f"({len(seen.messages) / max(ended - started, 1.0):.1f}/s), {len(seen.removals)} removals; "
        f"its own outages: {sum(len(v) for v in seen.away.values())}"
    )
    header = f"{'window':<22}{'seen':>7}" + "".join(
        f"{c.name + ' missing':>16}{'reported':>10}{'removals':>10}" for c in captures
    )
    print(header)
    totals = {c.name: [0, 0, 0] for c in captures}
    for kind, begin, end in windows:
        said = [
            (k, v)
            for k, v in seen.messages.items()
            if begin <= v[0] < end and not observer_away(seen, k[0], v[0])
        ]
        cells = ""
        for capture in captures:
            missing = [(k, v) for k, v in said if k not in capture.ids]
            reported = sum(capture.covered(k[0], v[0], k in gone) for k, v in missing)
            removals = [
                r
                for r in seen.removals
                if begin <= r[3] < end
                and (r[0], r[1], r[2]) not in capture.removals
                and not capture.away(r[1], r[3])
            ]
            totals[capture.name][0] += len(missing) - reported
            totals[capture.name][1] += reported
            totals[capture.name][2] += len(removals)
            cells += f"{len(missing):>16}{reported:>10}{len(removals):>10}"
        print(f"{kind:<22}{len(said):>7}{cells}")
    print(
        "(missing: seen by the observer, not in the capture; reported: of those, covered by "
        "a reported loss; removals: seen, neither captured nor inside a reported outage)"
    )
    verdicts: list[str] = []
    kills = [f for f in faults if f.kind == "node kill -9"]
    if kills and not any(f.cut for f in kills):
        print("\nno node kill cut a capture's connection: the reconnect goal was not exercised")
        verdicts.append("reconnects NOT EXERCISED")
    for capture in captures:
        doubles = sum(n - 1 for n in capture.ids.values() if n > 1)
        after_kill = [
            o["end"] - o["start"]
            for o in capture.outages
            if any(k.at - SLACK <= o["start"] <= k.at + 10 for k in kills)
        ]
        every = [o["end"] - o["start"] for o in capture.outages]
        longest = max(after_kill, default=0.0)
        print(
            f"\n{capture.name}: doubles {doubles}, unreadable files {capture.unreadable}, "
            f"longest stall between files {capture.stalled:.1f} s (allowed {stall:g}), "
            f"channels dropped {len(capture.failed)}, reconnects {len(every)}"
            + (
                f" (p50 {statistics.median(every):.2f} s, max {max(every):.2f} s; "
                f"after node kills max {longest:.2f} s)"
                if every
                else ""
            )
        )
        unreported, _, unmatched = totals[capture.name]
        ok = (
            unreported == 0
            and unmatched == 0
            and doubles == 0
            and capture.unreadable == 0
            and longest < MAX_RECONNECT
            and capture.stalled < stall
            and not capture.failed
        )
        verdicts.append(f"{capture.name} {'PASS' if ok else 'FAIL'}")
    if summary:
        print("\nexplorer record's summary:")
        print("\n".join(summary))
    print()
    for capture in captures:
        print(warm_up(capture, started, ended))
    warm = {role: c.warm for c in captures for role in READERS.get(c.name, ())}
    verdicts.append(resource_table(samples, started, ended, warm))
    return "verdict: " + ", ".join(verdicts)


def warm_up(capture: Capture, started: float, ended: float) -> str:
    """When ``capture``'s log was full (:data:`WARM_ROWS`), or when at this run's rate it
    would be, and the run that would judge its memory."""
    minutes = (ended - started) / 60
    if capture.warm is not None:
        full = (capture.warm - started) / 60
        return f"{capture.name}'s log full ({WARM_ROWS:,} rows) at {full:.1f} min"
    if not capture.rows:
        return f"{capture.name}'s log: no rows"
    full = minutes * WARM_ROWS / capture.rows
    return (
        f"{capture.name}'s log never full: {capture.rows:,} of {WARM_ROWS:,} rows in "
        f"{minutes:.1f} min; at this rate full at about {full:.0f} min, so its memory is "
        f"judged in runs of {max(2 * full, JUDGED_MINUTES):.0f} minutes or more"
    )


def resource_table(
    samples: list[tuple[float, str, float, int]],
    started: float,
    ended: float,
    warm: dict[str, float | None],
) -> str:
    """Memory and open files per process over time; a verdict on the last half (issue 28:
    each process under :data:`MAX_GROWTH_MB` of growth, open files flat), for the processes
    that were warm when it began (``warm``: when each role's log was full, None: never;
    roles not in it have no tail to fill; see the module docstring)."""
    middle = (started + ended) / 2
    print(
        f"\nresident MB / open files per process over time (every tenth of the run); growth "
        f"over the last half: the median of its last {ENDS:.0%} of samples less that of its "
        f"first {ENDS:.0%} (goal: under {MAX_GROWTH_MB:g} MB and {MAX_GROWTH_FILES} files; "
        f"judged in runs of {JUDGED_MINUTES:g} minutes or more, once a reader's log held "
        f"{WARM_ROWS:,} rows):"
    )
    roles = sorted({s[1] for s in samples})
    marks = [started + (ended - started) * i / 10 for i in range(11)]
    print(f"{'process':<16}" + "".join(f"{(m - started) / 60:>11.1f}m" for m in marks))
    verdicts: dict[str, list[str]] = defaultdict(list)
    for role in roles:
        mine = [s for s in samples if s[1] == role]
        cells = []
        for mark in marks:
            near = min(mine, key=lambda s: abs(s[0] - mark))
            cells.append(f"{near[2]:>7.0f}/{near[3]:<4}" if abs(near[0] - mark) < 60 else " " * 12)
        growth, files = half_growth(mine, middle)
        verdict = judged(role, growth, files, ended - started, middle, warm)
        verdicts[verdict.split(":")[0]].append(role)
        print(
            f"{role:<16}"
            + "".join(cells)
            + f"  last half: {growth:+.1f} MB, {files:+.0f} files {verdict}"
        )
    flat = "NOT flat" if verdicts["FAIL"] else "flat"
    skipped = verdicts["not judged"]
    if not verdicts["PASS"] and not verdicts["FAIL"]:
        return f"memory and files not judged ({', '.join(skipped)} still warming up)"
    return f"memory and files {flat} over the last half" + (
        f" (not judged, still warming up: {', '.join(skipped)})" if skipped else ""
    )


def judged(
    role: str,
    growth: float,
    files: float,
    length: float,
    middle: float,
    warm: dict[str, float | None],
) -> str:
    """``PASS``, ``FAIL`` or ``not judged: why`` for one process's last-half growth."""
    if length < JUDGED_MINUTES * 60:
        return f"not judged: run shorter than {JUDGED_MINUTES:g} minutes"
    if role in warm:
        at = warm[role]
        if at is None:
            return f"not judged: its log never held {WARM_ROWS:,} rows"
        if at > middle:
            full = (at - (middle - length / 2)) / 60
            return (
                f"not judged: its log was full only at {full:.1f} min, after the half "
                f"(at this rate, run {2 * full:.0f} minutes or more)"
            )
    return "PASS" if growth < MAX_GROWTH_MB and files <= MAX_GROWTH_FILES else "FAIL"


def half_growth(samples: list[tuple[float, str, float, int]], middle: float) -> tuple[float, float]:
    """Growth in MB and open files of one process's samples from ``middle`` on: the median
    of the last :data:`ENDS` of them less the median of the first (0 with fewer than 2)."""
    half = [s for s in samples if s[0] >= middle]
    if len(half) < 2:
        return 0.0, 0.0
    ends = max(1, round(len(half) * ENDS))
    first, last = half[:ends], half[-ends:]
    return (
        statistics.median(s[2] for s in last) - statistics.median(s[2] for s in first),
        statistics.median(s[3] for s in last) - statistics.median(s[3] for s in first),
    )


def main(argv: Sequence[str] | None = None) -> None:
    """Run one soak (``argv`` None: the short suite run of ``make bench``)."""
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks soak",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--minutes", type=float, default=10.0, help="length of the run (10)")
    parser.add_argument("--nodes", type=int, default=3, help="chat-node processes (3)")
    parser.add_argument("--channels", type=int, default=20, help="busiest channels read (20)")
    parser.add_argument(
        "--sim-rate",
        type=float,
        default=100.0,
        help="simulated messages per second, all channels (100; default 40)",
    )
    parser.add_argument(
        "--sim-channel-rate",
        type=float,
        default=10.0,
        help="in the busiest channel (10; the platform's default 5)",
    )
    args = parser.parse_args(["--minutes", str(SUITE_MINUTES)] if argv is None else argv)
    if shutil.which("redis-server") is None:
        print("soak: skipped, no redis-server (Debian: apt install redis-server)")
        return
    verdict = run(args.minutes, args.nodes, args.channels, args.sim_rate, args.sim_channel_rate)
    print(f"\n{verdict}", flush=True)


if __name__ == "__main__":
    if sys.argv[1:2] == ["watch"]:
        raise SystemExit(watch_main(*sys.argv[2:5]))
    main(sys.argv[1:])
