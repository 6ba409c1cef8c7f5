"""Recording a capture: what ``kill -9`` loses, resident memory over a long recording, and
throughput with and without the disk.

Each part runs in a fresh process (``python -m benchmarks.recording PART ...``) fed with
synthetic ChatMessage packets (``benchmarks.eventlog.make_packets``) the way the chat client
adds them (``orjson.loads`` then ``EventLog.append_event`` with the frame's bytes), while a
:class:`~explorer.recording.recorder.Recorder` follows the log and its ``run()`` flushes on the
toolkit's loop, writing in a worker thread, as ``api.watch(to=...)`` does.

* ``kill -9``: a feeder at a steady rate is killed (SIGKILL) at a random moment after its
  manifest shows three flushes; it keeps the number of events it added in a shared counter
  file. Rows lost (added - written) against one flush interval's worth (goal: at most one);
  every file must read.
* Memory: a busy feed for a bounded time (the issue's 30 minutes scaled down) with a bounded
  log (``max_rows``); resident memory sampled over time must stay flat after warm-up.
* Throughput: the same events fed with a recorder and without one (goal: at least 0.8;
  THROUGHPUT_ROUNDS rounds of the three modes in turn, medians), first at a busy steady rate (20,000
  events/s: 200 channels at 100 a second), then as fast as one core allows. A recorder builds chat
  messages' rows with Arrow's JSON reader in C (``explorer.events.tables``: about 1.3 us a row to
  parse, 0.7 us to write, 2.5 us of CPU a row in all, built 32,768 rows at a time so that each
  step's buffers stay in the caches and in the allocator's reused memory; it was 8 us of Python
  before), off the GIL, so a recorder writing in its own process (``worker_rows``) keeps the
  watching process at about the CPU per event it has without disk, and one writing in-process costs
  it the Python left around the C (decompressing, the file's staging). Flat out, the synthetic feed
  costs about 2.3 us an event (no sockets), as much as the worker's row, so the feed and the worker
  each need one of the machine's two cores: a flush is due as soon as ``FLUSH_ROWS`` (65,536) events
  wait, so the worker builds in small steps while the feed goes on rather than a whole interval's
  rows at once, at a lower priority than the feed, and returns freed memory to the system at most
  once a second. A chat client costs about 34 us an event (the watch figures below): one core of a
  real watch takes in some 30,000 events/s, which the worker outpaces more than ten times.
  Each mode first feeds and flushes THROUGHPUT_WARM events outside the timing, which starts the
  worker process: its start (a second of imports) is paid once per recording, not per event, and in
  a run of a fraction of a second it was most of the figure. The flat-out feed (THROUGHPUT_EVENTS)
  lasts some ten flush intervals, as in a long recording; the figure includes the last flush at
  close (until every event is written). The goal is judged on the worker (what ``api.watch(to=)``
  and ``explorer record`` use for every flush of ``worker_rows`` or more); the in-process recorder
  is shown beside it, as in the watch part below.

Then the same two figures on a real watch: ``explorer serve`` in its own process (127.0.0.1,
port 0, simulation over the WATCH_TOP busiest channels, no rate limits) and, in a fresh
process per run, ``api.watch(top=WATCH_TOP)`` without disk, with
``to=`` (big flushes built in the recorder's worker process) and with a recorder following its
log in-process (``worker_rows=None``), in turns. The platform sets the events/s a watch takes
in, so the throughput ratio is the CPU per event of the watching process without disk over
that with a recorder (events/s one core could take in); the worker's own CPU is shown beside
it. The world's chat (some tens of events/s over the busiest 200 channels at speed 1:
realistic rates) is far too sparse for that: per-event CPU would be the fixed
costs of flush ticks and worker round trips. So the platform runs at ``--speed``
WATCH_SPEED, whose chat (thinned to at most ``--sim-rate`` WATCH_RATE, no other cap per
channel) gives the watch about WATCH_RATE events a second; the events/s taken in are
printed beside each figure. A flush's fixed costs (a Parquet file's staging, the manifest, a
round trip to the worker) still weigh on every event, and a run's one-time costs more: so,
as in the synthetic part, each run first takes in
WATCH_WARM events and flushes them outside the timing (that first flush starts the worker
process and writes this process's first file). The ratio judged is that of ``to=``,
what ``api.watch`` does; the in-process recorder is shown beside it to say why the worker is
there. The memory run records for MEMORY_WATCH_SECONDS with a small tail (WATCH_MAX_ROWS),
which passes through many times, sampling the watching process's RSS every second.
"""

from __future__ import annotations

import asyncio
import contextlib
import mmap
import random
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from concurrent.futures import Future
from pathlib import Path

import orjson
import pyarrow.dataset as ds
import pyarrow.parquet as pq

import explorer
from benchmarks import verdict
from benchmarks.eventlog import make_packets
from explorer.core import loop
from explorer.events.log import EventLog
from explorer.recording.recorder import RECORDING_ROWS, Recorder

FLUSH_EVERY = 1.0
KILL_RATE = 4_000
KILL_ROUNDS = 3
MEMORY_RATE = 5_000
MEMORY_SECONDS = 12
MEMORY_MAX_ROWS = 20_000
#: The flat-out feed: some ten flush intervals at 300,000-400,000 events/s (see the docstring).
THROUGHPUT_EVENTS = 4_000_000
#: Events fed and flushed before the timing starts (the worker process starts there).
THROUGHPUT_WARM = 5_000
THROUGHPUT_RATE = 20_000
THROUGHPUT_SECONDS = 5.0
#: Goal: recording through the worker process keeps this share of the feed's rate without disk.
WORKER_GOAL = 0.8
#: Rounds of the three modes in turn; each figure is the median of its rounds.
THROUGHPUT_ROUNDS = 3
_CHANNELS = 200
_DISTINCT = 20_000
_BATCH = 50
#: The watch-based figures: channels watched, messages a second the platform simulates over
#: them, seconds per throughput run (runs per mode, interleaved), and the memory run.
WATCH_TOP = 200
WATCH_RATE = 4_000
#: The world's speed for the watch figures: the busiest WATCH_TOP channels' natural chat
#: times this is over WATCH_RATE, so the platform thins it to WATCH_RATE (about
#: 4,000 events/s taken in, as measured). Faster worlds end and start so many
#: sessions a second that the platform stalls, and a watch's channels stop being the
#: simulated ones within a run.
WATCH_SPEED = 300
WATCH_SECONDS = 6.0
#: Events a watch takes in, and flushes, before its timing starts: more than a recorder's
#: ``worker_rows`` (2,000 by default), so the first flush starts the worker process.
WATCH_WARM = 2_500
WATCH_ROUNDS = 3
MEMORY_WATCH_SECONDS = 45.0
#: Rows the memory run keeps in memory: the tail passes through many times.
WATCH_MAX_ROWS = 10_000
#: ``api.watch``'s default.
WATCH_FLUSH_EVERY = 5.0
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
    path: str, log: EventLog, worker_rows: int | None = 2000, flush_every: float = FLUSH_EVERY
) -> tuple[Recorder, Future[None]]:
    """A recorder following ``log``, its ``run()`` started on the toolkit's loop."""
    recorder = Recorder(path, flush_every=flush_every, name="bench", worker_rows=worker_rows)
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
    the first timed event on) and of its children (the worker, its start-up included)."""
    wire = make_packets(_DISTINCT)
    log = EventLog(max_rows=MEMORY_MAX_ROWS)
    if mode != "plain":
        recorder, running = _recording(path, log, None if mode == "inline" else 2000)
    _feed(log, wire, 0, THROUGHPUT_WARM)
    if mode != "plain":
        recorder.flush()  # the worker process starts here, outside the timing
    before = _cpu(resource.RUSAGE_SELF)
    started = time.perf_counter()
    if rate is None:
        added = THROUGHPUT_EVENTS
        for first in range(0, added, _BATCH * 20):
            _feed(log, wire, THROUGHPUT_WARM + first, _BATCH * 20)
            time.sleep(0)  # where a chat client awaits its socket
    else:
        added = _paced(log, wire, rate, THROUGHPUT_SECONDS, lambda added: None)
    if mode != "plain":
        _stop(recorder, running)
        assert recorder.stats.events == THROUGHPUT_WARM + added
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


def _rss(pid: int | str = "self") -> int:
    """Resident memory of process ``pid`` (default this one) in bytes."""
    with open(f"/proc/{pid}/statm") as statm:
        return int(statm.read().split()[1]) * _PAGE


# Watch-based figures: a platform served by ``explorer serve`` in its own process, a real
# ``api.watch(top=WATCH_TOP)`` in a fresh benchmark process per run.


def _watch_target(url: str, mode: str, seconds: float, max_rows: int, path: str) -> None:
    """Watch the WATCH_TOP busiest channels of ``url`` for ``seconds``, keeping ``max_rows``
    rows in memory: without disk
    (``plain``), recording through ``to=`` (``worker``: the recorder's worker process builds
    big flushes), or with a recorder following the watch's log in this process (``inline``:
    ``worker_rows=None``; ``api.watch`` has no such option). Prints, from the end of the joins
    to the end of ``close()`` (the last flush included), the events taken in per second, the
    CPU per event of this process and of its children (the worker), and the rows written."""
    api = explorer.connect(url, progress=False)
    to = path if mode == "worker" else None
    watch = api.watch(top=WATCH_TOP, to=to, max_rows=max_rows)
    recorder = running = None
    if mode == "inline":
        recorder, running = _recording(path, watch.log, None, WATCH_FLUSH_EVERY)
    deadline = time.monotonic() + 30  # warm-up, outside the timing (see the module docstring)
    while watch.log.total < WATCH_WARM and time.monotonic() < deadline:
        time.sleep(0.05)
    for warming in (watch.recorder, recorder):
        if warming is not None:
            warming.flush()
    first, before, started = watch.log.total, _cpu(resource.RUSAGE_SELF), time.perf_counter()
    print(orjson.dumps({"joined": len(watch.channels)}).decode(), flush=True)
    time.sleep(seconds)
    watch.close()
    if recorder is not None and running is not None:
        _stop(recorder, running)
    elapsed = time.perf_counter() - started
    events = max(watch.log.total - first, 1)
    written = watch.recorder or recorder
    result = {
        "rate": events / elapsed,
        "cpu_us": (_cpu(resource.RUSAGE_SELF) - before) / events * 1e6,
        "worker_us": _cpu(resource.RUSAGE_CHILDREN) / events * 1e6,
        "written": written.stats.events if written is not None else 0,
        "events": events,
    }
    api.close()
    print(orjson.dumps(result).decode(), flush=True)


@contextlib.contextmanager
def served(sim_rate: float) -> Iterator[str]:
    """``explorer serve`` on 127.0.0.1 port 0 in its own process at WATCH_SPEED, its chat
    thinned to ``sim_rate`` messages a second over the busiest WATCH_TOP channels, without
    rate limits; its REST URL.
    Ends the process (the one it started, by PID) on exit."""
    command = [
        str(Path(sys.executable).with_name("explorer")),
        "serve", "--host", "127.0.0.1", "--port", "0", "--db", ":memory:",
        "--no-rate-limits", "--sim-rate", str(sim_rate),
        "--sim-channel-rate", str(sim_rate), "--sim-channels", str(WATCH_TOP),
        "--speed", str(WATCH_SPEED),
    ]  # fmt: skip
    process = subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True
    )
    try:
        assert process.stdout is not None
        deadline = time.monotonic() + 60
        for line in process.stdout:
            if line.startswith("REST "):
                break
            if time.monotonic() > deadline:
                raise TimeoutError("explorer serve did not start in time")
        else:
            raise RuntimeError("explorer serve ended before it announced its URL")
        yield line.split()[1]
    finally:
        process.terminate()
        try:
            process.wait(15)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(15)


def watched(
    url: str,
    mode: str,
    seconds: float,
    max_rows: int = RECORDING_ROWS,
    sample: Callable[[float, int], None] | None = None,
) -> dict[str, float]:
    """One watch run in a fresh process (see ``_watch_target``); ``sample(t, rss)`` gets its
    resident memory every second from the end of its joins."""
    with tempfile.TemporaryDirectory() as folder:
        capture = str(Path(folder) / "capture")
        args = ["watcher", url, mode, str(seconds), str(max_rows), capture]
        process = _child(*args)
        try:
            assert process.stdout is not None
            process.stdout.readline()  # joined
            started = time.monotonic()
            while process.poll() is None and (elapsed := time.monotonic() - started) < seconds:
                if sample is not None:
                    with contextlib.suppress(FileNotFoundError, ProcessLookupError):
                        sample(elapsed, _rss(process.pid))
                time.sleep(1.0)
            output, _ = process.communicate(timeout=60)
        finally:
            if process.poll() is None:
                process.kill()
                process.wait(10)
    return _result(output, process, f"the {mode} watch")


# The measurements, each target in its own process.


def _result(output: str, process: subprocess.Popen[str], what: str) -> dict[str, float]:
    """The result ``process`` printed last, or an error saying it printed none (its own
    error, on the shared standard error, is above)."""
    lines = output.splitlines()
    if not lines:
        raise RuntimeError(f"{what} ended (status {process.returncode}) without its result")
    result: dict[str, float] = orjson.loads(lines[-1])
    return result


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
    _result(output, process, "the memory run")
    lines = [orjson.loads(line) for line in output.splitlines()]
    return lines[:-1], lines[-1]


def throughput(mode: str, rate: float | None) -> dict[str, float]:
    """One throughput run (see ``_throughput_target``)."""
    with tempfile.TemporaryDirectory() as folder:
        args = ["throughput", str(Path(folder) / "capture"), mode, str(rate)]
        process = _child(*args)
        output, _ = process.communicate(timeout=120)
    return _result(output, process, f"the {mode} throughput run")


def watch_figures() -> None:
    """Print the watch-based throughput (in turns: without disk, recording through the worker
    process, recording in-process) and memory figures against one served platform."""
    modes = (
        ("plain", "without disk"),
        ("worker", "to= (worker process)"),
        ("inline", "recorder in process"),
    )
    samples: list[tuple[float, int]] = []
    with served(WATCH_RATE) as url:
        runs: dict[str, list[dict[str, float]]] = {mode: [] for mode, _ in modes}
        for _ in range(WATCH_ROUNDS):
            for mode, _label in modes:
                runs[mode].append(watched(url, mode, WATCH_SECONDS))
        memory = watched(
            url,
            "worker",
            MEMORY_WATCH_SECONDS,
            WATCH_MAX_ROWS,
            lambda t, rss: samples.append((t, rss)),
        )
    print(
        f"Throughput of api.watch(top={WATCH_TOP}) against explorer serve in its own process "
        f"(speed {WATCH_SPEED:,}, chat at most {WATCH_RATE:,} messages/s), {WATCH_ROUNDS} runs "
        f"of {WATCH_SECONDS:g} s per mode in turns (medians), the last flush included"
    )
    plain, plain_rate = _median(runs["plain"], "cpu_us"), _median(runs["plain"], "rate")
    for mode, label in modes:
        rate, cpu = _median(runs[mode], "rate"), _median(runs[mode], "cpu_us")
        worker = _median(runs[mode], "worker_us")
        each = ", ".join(f"{run['cpu_us']:.1f}" for run in runs[mode])
        line = f"  {label:<21} {rate:>7,.0f} events/s taken in   {cpu:>5.1f} us CPU per event"
        if mode != "plain":
            goal = "goal >= 0.8" if mode == "worker" else "no goal: api.watch uses the worker"
            line += f" (ratio {plain / cpu:.2f}, {goal}; events/s ratio {rate / plain_rate:.2f})"
        if worker > 0.05:
            line += f", + {worker:.1f} us in the worker (all: {plain / (cpu + worker):.2f})"
        print(f"{line}; runs: {each} us")
    print(
        "  (the platform sets the events/s; the ratio is the events/s one core of the watching "
        "process could take in, against the same watch without disk)"
    )
    warm = next(i for i, (t, _) in enumerate(samples) if t >= MEMORY_WATCH_SECONDS / 3)
    after = samples[warm:]
    slope = _slope([(t / 60, rss / 2**20) for t, rss in after])
    print(
        f"Resident memory of api.watch(top={WATCH_TOP}, to=..., max_rows={WATCH_MAX_ROWS:,}) "
        f"for {MEMORY_WATCH_SECONDS:g} s: {memory['written']:,.0f} rows written "
        f"({memory['written'] / WATCH_MAX_ROWS:.0f} times the tail)"
    )
    print("  " + "  ".join(f"{t:>3.0f}s {rss / 2**20:>4.0f}MB" for t, rss in samples[::6]))
    print(
        f"  after warm-up ({after[0][0]:.0f} s) {after[0][1] / 2**20:.0f} MB, at the end "
        f"{after[-1][1] / 2**20:.0f} MB, slope {slope:+.2f} MB/min (flat is ~0)"
    )


def _median(runs: list[dict[str, float]], key: str) -> float:
    return statistics.median(run[key] for run in runs)


def _slope(points: list[tuple[float, float]]) -> float:
    """Least-squares slope of ``points`` (x, y)."""
    n = len(points)
    mx = sum(x for x, _ in points) / n
    my = sum(y for _, y in points) / n
    spread = sum((x - mx) ** 2 for x, _ in points)
    return sum((x - mx) * (y - my) for x, y in points) / spread if spread else 0.0


def main() -> None:
    """Print the figures side by side: synthetic feed first, then a real watch."""
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
        rounds = [
            {mode: throughput(mode, rate) for mode in ("plain", "worker", "inline")}
            for _ in range(THROUGHPUT_ROUNDS)
        ]
        for mode, label in (
            ("plain", "without disk"),
            ("worker", "recorder (worker process)"),
            ("inline", "recorder (in process)"),
        ):
            runs = [r[mode] for r in rounds]
            worker_us = _median(runs, "worker_us")
            worker = f", + {worker_us:.1f} us in the worker" if worker_us > 0.05 else ""
            print(
                f"  {label:<27} {_median(runs, 'rate'):>9,.0f} events/s   "
                f"{_median(runs, 'cpu_us'):>5.1f} us CPU per event in the process{worker}"
            )
        for mode in ("worker", "inline"):
            ratios = [r[mode]["rate"] / r["plain"]["rate"] for r in rounds]
            ratio = statistics.median(ratios)
            goal = (
                f"goal >= {WORKER_GOAL}: {verdict(ratio >= WORKER_GOAL)}"
                if mode == "worker"
                else "no goal: big flushes use the worker"
            )
            print(
                f"  ratio {mode:<21} {ratio:>9.2f}   {goal} "
                f"(rounds: {', '.join(f'{ratio:.2f}' for ratio in ratios)})"
            )
    watch_figures()


if __name__ == "__main__":
    part = sys.argv[1] if len(sys.argv) > 1 else "main"
    if part == "kill":
        _kill_target(sys.argv[2], sys.argv[3])
    elif part == "memory":
        _memory_target(sys.argv[2])
    elif part == "watcher":
        _watch_target(sys.argv[2], sys.argv[3], float(sys.argv[4]), int(sys.argv[5]), sys.argv[6])
    elif part == "throughput":
        _throughput_target(
            sys.argv[2], sys.argv[3], None if sys.argv[4] == "None" else float(sys.argv[4])
        )
    else:
        main()
