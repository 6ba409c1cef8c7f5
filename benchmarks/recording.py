"""Recording a capture: what ``kill -9`` loses, resident memory over a long recording, and
throughput with and without the disk.

Each part runs in a fresh process (``python -m benchmarks.recording PART ...``) fed with
synthetic ChatMessage packets (``benchmarks.eventlog.make_packets``) the way the chat client
adds them (``orjson.loads`` then ``EventLog.append_event`` with the frame's bytes), while a
:class:`~explorer.recorder.Recorder` follows the log and its ``run()`` flushes on the
toolkit's loop, writing in a worker thread, as ``api.watch(to=...)`` does.

* ``kill -9``: a feeder at a steady rate is killed (SIGKILL) at a random moment after its
  manifest shows three flushes; it keeps the number of events it added in a shared counter
  file. Rows lost (added - written) against one flush interval's worth (goal: at most one);
  every file must read.
* Memory: a busy feed for a bounded time (the issue's 30 minutes scaled down) with a bounded
  log (``max_rows``); resident memory sampled over time must stay flat after warm-up.
* Throughput: the same events fed with a recorder and without one (goal: at least 0.8),
  first at a busy steady rate (20,000 events/s: 200 channels at 100 a second), then as fast
  as one core allows. Building a row from its packet costs about 7 us of Python, more than
  this synthetic feed costs per event (about 3 us: no sockets), so a recorder writing in its
  own process (``worker_rows``) keeps the watching process at about the CPU per event it has
  without disk, while one writing in-process triples it; flat out, the rows built per second
  bound recording (the figure includes the final flush at close).
"""

from __future__ import annotations

import asyncio
import mmap
import random
import resource
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from concurrent.futures import Future
from pathlib import Path

import orjson
import pyarrow.dataset as ds
import pyarrow.parquet as pq

from benchmarks.eventlog import make_packets
from explorer import loop
from explorer.eventlog import EventLog
from explorer.recorder import Recorder

FLUSH_EVERY = 1.0
KILL_RATE = 4_000
KILL_ROUNDS = 3
MEMORY_RATE = 5_000
MEMORY_SECONDS = 24
MEMORY_MAX_ROWS = 20_000
THROUGHPUT_EVENTS = 150_000
THROUGHPUT_RATE = 20_000
THROUGHPUT_SECONDS = 5.0
_CHANNELS = 200
_DISTINCT = 20_000
_BATCH = 50
_PAGE = resource.getpagesize()


def _feed(log: EventLog, wire: list[bytes], first: int, count: int) -> None:
    """Add ``count`` packets, numbered from ``first``, as the chat client does."""
    for i in range(first, first + count):
        raw = wire[i % len(wire)]
        packet = orjson.loads(raw)
        data = packet["data"]
        at = 1_700_000_000.0 + i / 1000
        log.append_event(packet["event"], data, raw, at, data["id"], channel=i % _CHANNELS)


def _recording(
    path: str, log: EventLog, worker_rows: int | None = 2000
) -> tuple[Recorder, Future[None]]:
    """A recorder following ``log``, its ``run()`` started on the toolkit's loop."""
    recorder = Recorder(path, flush_every=FLUSH_EVERY, name="bench", worker_rows=worker_rows)
    recorder.follow(log)
    return recorder, asyncio.run_coroutine_threadsafe(recorder.run(), loop.get_loop())


def _stop(recorder: Recorder, running: Future[None]) -> None:
    """Cancel ``run()`` (which closes the recorder on the loop) and close it here too: that
    waits for the loop's close, or does it first."""
    running.cancel()
    recorder.close()


def _paced(
    log: EventLog, wire: list[bytes], rate: float, seconds: float, tick: Callable[[int], None]
) -> int:
    """Feed at ``rate`` events/s for ``seconds`` (bounded), calling ``tick(added)`` after each
    batch; events added."""
    started = time.monotonic()
    added = 0
    while (elapsed := time.monotonic() - started) < seconds:
        due = int(elapsed * rate) - added
        if due <= 0:
            time.sleep(min(_BATCH / rate, 0.01))
            continue
        count = min(due, 10 * _BATCH)
        _feed(log, wire, added, count)
        added += count
        tick(added)
    return added


# The processes.


def _kill_target(path: str, counter: str) -> None:
    """Feed at KILL_RATE until killed (at most 60 s), the count kept in ``counter``."""
    with open(counter, "r+b") as file:
        shared = mmap.mmap(file.fileno(), 8)
    wire = make_packets(_DISTINCT)
    log = EventLog(max_rows=MEMORY_MAX_ROWS)
    _recording(path, log)

    def tick(added: int) -> None:
        shared[:8] = added.to_bytes(8, "little")

    _paced(log, wire, KILL_RATE, 60.0, tick)


def _memory_target(path: str) -> None:
    """Feed at MEMORY_RATE for MEMORY_SECONDS, printing resident memory every 2 s."""
    wire = make_packets(_DISTINCT)
    log = EventLog(max_rows=MEMORY_MAX_ROWS)
    recorder, running = _recording(path, log)
    started = time.monotonic()
    next_sample = [0.0]

    def tick(added: int) -> None:
        now = time.monotonic() - started
        if now >= next_sample[0]:
            next_sample[0] += 2.0
            sample = {"t": round(now, 1), "rss": _rss(), "added": added}
            print(orjson.dumps(sample).decode(), flush=True)

    added = _paced(log, wire, MEMORY_RATE, MEMORY_SECONDS, tick)
    _stop(recorder, running)
    print(orjson.dumps({"added": added, "written": recorder.stats.events}).decode(), flush=True)


def _throughput_target(path: str, mode: str, rate: float | None) -> None:
    """Feed events at ``rate`` for THROUGHPUT_SECONDS, or THROUGHPUT_EVENTS as fast as
    possible (``rate`` None), without disk (``plain``) or with a recorder writing through its
    worker process (``worker``) or in this one (``inline``). Prints the events per second of
    wall time (the recorder's close included) and the CPU per event of this process (from
    the first event on) and of its children (the worker, its start-up included)."""
    wire = make_packets(_DISTINCT)
    log = EventLog(max_rows=MEMORY_MAX_ROWS)
    before = _cpu(resource.RUSAGE_SELF)
    started = time.perf_counter()
    if mode != "plain":
        recorder, running = _recording(path, log, None if mode == "inline" else 2000)
    if rate is None:
        added = THROUGHPUT_EVENTS
        for first in range(0, added, _BATCH * 20):
            _feed(log, wire, first, _BATCH * 20)
            time.sleep(0)  # where a chat client awaits its socket
    else:
        added = _paced(log, wire, rate, THROUGHPUT_SECONDS, lambda added: None)
    if mode != "plain":
        _stop(recorder, running)
        assert recorder.stats.events == added
    elapsed = time.perf_counter() - started
    result = {
        "rate": added / elapsed,
        "cpu_us": (_cpu(resource.RUSAGE_SELF) - before) / added * 1e6,
        "worker_us": _cpu(resource.RUSAGE_CHILDREN) / added * 1e6,
    }
    print(orjson.dumps(result).decode(), flush=True)


def _cpu(who: int) -> float:
    """CPU seconds (user and system) of this process or of its children."""
    usage = resource.getrusage(who)
    return usage.ru_utime + usage.ru_stime


def _rss() -> int:
    """This process's resident memory in bytes."""
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * _PAGE


# The measurements, each target in its own process.


def _child(*args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "benchmarks.recording", *args], stdout=subprocess.PIPE, text=True
    )


def _flushes(path: Path) -> int:
    manifest = path / "recorders" / "bench.json"
    try:
        return int(orjson.loads(manifest.read_bytes())["flushes"])
    except (FileNotFoundError, orjson.JSONDecodeError):
        return 0


def kill_round(rng: random.Random) -> tuple[int, int, int]:
    """One killed feeder: (rows lost, files, files readable)."""
    with tempfile.TemporaryDirectory() as folder:
        path, counter = Path(folder) / "capture", Path(folder) / "counter"
        counter.write_bytes(bytes(8))
        process = _child("kill", str(path), str(counter))
        try:
            deadline = time.monotonic() + 60
            while _flushes(path) < 3:
                if time.monotonic() > deadline or process.poll() is not None:
                    raise RuntimeError("the feeder did not flush three times")
                time.sleep(0.05)
            time.sleep(rng.uniform(0, FLUSH_EVERY))
        finally:
            process.kill()
            process.wait(10)
        added = int.from_bytes(counter.read_bytes(), "little")
        files = sorted((path / "events").glob("*/*.parquet"))
        readable = 0
        for file in files:
            pq.read_table(file)
            readable += 1
        written = ds.dataset(path / "events", format="parquet").count_rows()
        return added - written, len(files), readable


def memory() -> tuple[list[dict[str, float]], dict[str, int]]:
    """Resident memory samples of a long recording, and its totals."""
    with tempfile.TemporaryDirectory() as folder:
        process = _child("memory", str(Path(folder) / "capture"))
        output, _ = process.communicate(timeout=MEMORY_SECONDS + 60)
    lines = [orjson.loads(line) for line in output.splitlines()]
    return lines[:-1], lines[-1]


def throughput(mode: str, rate: float | None) -> dict[str, float]:
    """One throughput run (see ``_throughput_target``)."""
    with tempfile.TemporaryDirectory() as folder:
        args = ["throughput", str(Path(folder) / "capture"), mode, str(rate)]
        process = _child(*args)
        output, _ = process.communicate(timeout=120)
    result: dict[str, float] = orjson.loads(output.splitlines()[-1])
    return result


def main() -> None:
    """Print the three figures side by side."""
    rng = random.Random(0)
    print(f"kill -9 of a recorder fed {KILL_RATE:,} events/s, flushing every {FLUSH_EVERY:g} s")
    interval = int(KILL_RATE * FLUSH_EVERY)
    for _ in range(KILL_ROUNDS):
        lost, files, readable = kill_round(rng)
        print(
            f"  rows lost {lost:>7,}   one flush interval {interval:>7,} rows   "
            f"ratio {lost / interval:.2f} (goal <= 1)   files readable {readable}/{files}"
        )
    samples, totals = memory()
    print(
        f"Resident memory, {MEMORY_RATE:,} events/s for {MEMORY_SECONDS} s "
        f"(max_rows {MEMORY_MAX_ROWS:,}, flush every {FLUSH_EVERY:g} s)"
    )
    print("  " + "  ".join(f"{s['t']:>4.0f}s {s['rss'] / 2**20:>5.0f}MB" for s in samples))
    warm = samples[len(samples) // 3]
    growth = samples[-1]["rss"] - warm["rss"]
    print(
        f"  after warm-up ({warm['t']:.0f} s): {growth / 2**20:+.1f} MB while "
        f"{samples[-1]['added'] - warm['added']:,} more events were recorded "
        f"({growth / max(samples[-1]['added'] - warm['added'], 1):.1f} bytes/event; flat is ~0); "
        f"written {totals['written']:,} of {totals['added']:,}"
    )
    for rate in (THROUGHPUT_RATE, None):
        if rate is None:
            print(
                f"Throughput, {THROUGHPUT_EVENTS:,} events fed as fast as one core allows "
                "(until all are written)"
            )
        else:
            print(
                f"Throughput at a busy steady rate, {rate:,} events/s for {THROUGHPUT_SECONDS:g} s"
            )
        runs = {mode: throughput(mode, rate) for mode in ("plain", "worker", "inline")}
        for mode, label in (
            ("plain", "without disk"),
            ("worker", "recorder (worker process)"),
            ("inline", "recorder (in process)"),
        ):
            r = runs[mode]
            worker = f", + {r['worker_us']:.1f} us in the worker" if r["worker_us"] > 0.05 else ""
            print(
                f"  {label:<27} {r['rate']:>9,.0f} events/s   "
                f"{r['cpu_us']:>5.1f} us CPU per event in the process{worker}"
            )
        for mode in ("worker", "inline"):
            ratio = runs[mode]["rate"] / runs["plain"]["rate"]
            print(f"  ratio {mode:<21} {ratio:>9.2f}   goal >= 0.8")


if __name__ == "__main__":
    part = sys.argv[1] if len(sys.argv) > 1 else "main"
    if part == "kill":
        _kill_target(sys.argv[2], sys.argv[3])
    elif part == "memory":
        _memory_target(sys.argv[2])
    elif part == "throughput":
        _throughput_target(
            sys.argv[2], sys.argv[3], None if sys.argv[4] == "None" else float(sys.argv[4])
        )
    else:
        main()
