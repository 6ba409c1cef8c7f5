"""Compaction (issue 40): a month of eight recorders' small files, opened and a day's messages
queried, before and after ``explorer.compact``.

The capture is generated directly (no platform, no recorder): 30 days, eight recorders in four
redundant pairs (each pair records the same channels, so every event is written twice),
FILES_PER_DAY events files per recorder per day of ROWS_PER_FILE chat messages each, named and
typed as a recorder writes them. A real month at ``--flush-every 5s`` is 17,280 files per
recorder per day; the count here is bounded so that the run stays short, and the figure before
compaction grows with the files while the one after does not. Each measurement opens the
capture afresh (``open_capture``) and reads one day's messages (``Capture.messages(start=,
end=)``), ROUNDS times, median. Goal: under a second after compaction. Loopback only: the
capture is a temporary folder.
"""

from __future__ import annotations

import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

import orjson
import pyarrow as pa
import pyarrow.parquet as pq

from explorer.events.tables import EVENT_SCHEMA
from explorer.recording.capture import open_capture
from explorer.recording.compaction import compact

DAYS = 30
RECORDERS = 8
FILES_PER_DAY = 60
ROWS_PER_FILE = 40
CHANNELS_PER_PAIR = 25
ROUNDS = 3
GOAL = 1.0
#: 2020-07-01 00:00 UTC, the month's first day.
START = 1_593_561_600.0


def _table(pair: int, day: int, file: int, offset: float) -> pa.Table:
    """One flush's rows: ROWS_PER_FILE messages of the pair's channels, received ``offset``
    seconds after the pair's other recorder received them."""
    first = (day * FILES_PER_DAY + file) * ROWS_PER_FILE
    span = 86_400.0 / (FILES_PER_DAY * ROWS_PER_FILE)
    times, channels, ids, packets = [], [], [], []
    for i in range(first, first + ROWS_PER_FILE):
        channel = 1000 + pair * CHANNELS_PER_PAIR + i % CHANNELS_PER_PAIR
        ident = f"p{pair}-{i}"
        data = {"channel": channel, "id": ident, "user_name": f"u{i % 97}", "user_id": i % 97}
        data["message"] = {"message": [{"type": "text", "text": f"message {i}"}], "meta": {}}
        times.append(
            int(
                (START + day * 86_400 + (i - day * FILES_PER_DAY * ROWS_PER_FILE) * span + offset)
                * 1000
            )
        )
        channels.append(channel)
        ids.append(ident)
        packets.append(
            orjson.dumps({"type": "event", "event": "ChatMessage", "data": data}).decode()
        )
    rows = len(times)
    columns = {
        "received_at": pa.array(times, pa.timestamp("ms", tz="UTC")),
        "event": pa.array(["ChatMessage"] * rows),
        "channel": pa.array(channels, pa.int64()),
        "message_id": pa.array(ids),
        "user_name": pa.array([f"u{i % 97}" for i in range(rows)]),
        "user_id": pa.array([i % 97 for i in range(rows)], pa.int64()),
        "text": pa.array([f"message {i}" for i in range(rows)]),
        "components": pa.array(["text"] * rows),
        "whisper": pa.array([False] * rows),
        "me": pa.array([False] * rows),
        "from_history": pa.array([False] * rows),
        "row": pa.array(range(first, first + rows), pa.int64()),
        "packet": pa.array(packets),
    }
    arrays = [columns.get(f.name, pa.nulls(rows, f.type)) for f in EVENT_SCHEMA]
    return pa.Table.from_arrays(arrays, schema=EVENT_SCHEMA)


def generate(root: Path) -> int:
    """Write the month's files into ``root``; how many."""
    count = 0
    for day in range(DAYS):
        date = time.strftime("%Y-%m-%d", time.gmtime(START + day * 86_400))
        folder = root / "events" / f"date={date}"
        folder.mkdir(parents=True)
        for recorder in range(RECORDERS):
            pair, late = divmod(recorder, 2)
            for file in range(FILES_PER_DAY):
                table = _table(pair, day, file, offset=0.05 * late)
                seq = day * FILES_PER_DAY + file
                pq.write_table(
                    table, folder / f"rec{recorder}-{seq:06d}.parquet", compression="zstd"
                )
                count += 1
    (root / "snapshots").mkdir()
    (root / "recorders").mkdir()
    return count


def open_and_query(root: Path) -> tuple[float, int]:
    """Seconds to open the capture and read one mid-month day's messages (median of ROUNDS),
    and the messages read."""
    day = START + 15 * 86_400
    timings, rows = [], 0
    for _ in range(ROUNDS):
        began = time.perf_counter()
        rows = len(open_capture(root).messages(start=day, end=day + 86_400))
        timings.append(time.perf_counter() - began)
    return statistics.median(timings), rows


def main() -> None:
    """Generate the month, measure, compact, measure again, print the verdict."""
    root = Path(tempfile.mkdtemp(prefix="explorer-bench-compaction-"))
    try:
        began = time.perf_counter()
        files = generate(root)
        made = time.perf_counter() - began
        print(
            f"Compaction: {DAYS} days x {RECORDERS} recorders (4 redundant pairs) x "
            f"{FILES_PER_DAY} files of {ROWS_PER_FILE} messages: {files:,} files "
            f"(made in {made:.1f} s)"
        )
        before, rows_before = open_and_query(root)
        print(
            f"  before: open + a day's messages {before:6.2f} s ({rows_before:,} rows, "
            "each message twice)"
        )
        began = time.perf_counter()
        stats = compact(root, grace=0)
        took = time.perf_counter() - began
        print(
            f"  compact: {took:.1f} s, {stats.partitions} partitions, {stats.merged:,} files "
            f"merged, {stats.doubles:,} doubles dropped, {stats.removed:,} files removed"
        )
        after, rows_after = open_and_query(root)
        left = len(list((root / "events").glob("*/*.parquet")))
        verdict = "PASS" if after < GOAL else "FAIL"
        print(
            f"  after:  open + a day's messages {after:6.2f} s ({rows_after:,} rows, "
            f"{left} files) goal < {GOAL:g} s {verdict}"
        )
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
    sys.exit(0)
