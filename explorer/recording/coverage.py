"""What a capture covers when several recorders wrote it (``explorer record --shard K/N`` on
several hosts into one bucket): which shard wrote what, and the gaps.

Read from the recorders' manifests (``recorders/<name>.json``: shard, host, started, last
flush, rows) and the channels the capture holds, :func:`coverage` reports

- shards no recorder wrote (of each ``N`` seen, every ``K`` from 1 to ``N``);
- channels expected (given) that have no rows, with the shard that should have had them
  (channel ``c`` belongs to shard ``c % N + 1``, the rule of ``api.watch`` and ``api.track``);
- intervals a shard missed: inside the recording's window (from the first recorder's start to
  the last flush of any, or the ``start`` and ``end`` given), the times none of the shard's
  recorders covered. A recorder covers from its start to its last flush that wrote rows, less
  the stretches when it could not write and dropped rows (the write-failure gaps of its
  manifest): a recorder killed with ``kill -9`` covers up to its last flush, and the one
  started in its place from its start, so the time between is a gap. Gaps shorter than
  ``tolerance`` (by default twice the longest flush interval: a recorder's first flush comes
  a flush interval after its start) are not reported.

``Capture.coverage`` and the ``explorer coverage`` command call it.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import pandas as pd

#: The shard key of recorders that were not sharded.
WHOLE = "all"


@dataclass(frozen=True)
class Coverage:
    """The result of :func:`coverage`: per-shard totals, and what is missing."""

    #: One row per shard (``K/N``, or ``all``): recorders, hosts, first start, last flush,
    #: events, snapshots, channels.
    shards: pd.DataFrame
    #: Shards (``K/N``) no recorder wrote.
    missing_shards: list[str]
    #: Expected channels without rows, each with the shard that should have had it.
    missing_channels: dict[int, str]
    #: Intervals a shard missed: columns ``shard``, ``start``, ``end``, ``seconds``.
    gaps: pd.DataFrame

    @property
    def complete(self) -> bool:
        """Whether nothing is missing."""
        return not (self.missing_shards or self.missing_channels or len(self.gaps))

    def report(self) -> str:
        """The findings as lines of text, the per-shard table first."""
        lines = [self.shards.to_string(index=False) if len(self.shards) else "no recorders"]
        lines += [f"missing shard {shard}: no recorder wrote it" for shard in self.missing_shards]
        lines += [
            f"missing channel {channel}: no rows (shard {shard})"
            for channel, shard in self.missing_channels.items()
        ]
        lines += [
            f"gap in shard {row.shard}: {row.start:%Y-%m-%d %H:%M:%S} to "
            f"{row.end:%Y-%m-%d %H:%M:%S} UTC ({row.seconds:.1f} s)"
            for row in self.gaps.itertuples()
        ]
        lines.append("complete" if self.complete else "incomplete")
        return "\n".join(lines)


def shard_key(shard: object) -> str:
    """A manifest's shard (``[K, N]`` or None) as ``K/N`` or ``all``."""
    if isinstance(shard, list | tuple) and len(shard) == 2:
        return f"{int(shard[0])}/{int(shard[1])}"
    return WHOLE


def coverage(
    manifests: pd.DataFrame,
    channels: Iterable[int],
    *,
    expected: Iterable[int] | None = None,
    start: pd.Timestamp | None = None,
    end: pd.Timestamp | None = None,
    tolerance: float | None = None,
) -> Coverage:
    """The coverage of a capture whose recorders' manifests are ``manifests`` (what
    ``Capture.recorders()`` gives: ``started`` and ``last_flush`` as UTC times) and whose rows
    hold ``channels``; ``expected`` channels are checked, gaps looked for in
    ``[start, end]`` (default: the recording's span), shorter ones than ``tolerance``
    seconds ignored (see the module docstring)."""
    if not len(manifests):
        empty = pd.DataFrame(columns=["shard", "start", "end", "seconds"])
        return Coverage(pd.DataFrame(), [], {}, empty)
    frame = manifests.assign(
        shard=[shard_key(s) for s in manifests["shard"]],
        until=manifests["last_flush"].fillna(manifests["started"]),
    )
    shards = (
        frame.groupby("shard", sort=True)
        .agg(
            recorders=("name", "count"),
            hosts=("host", lambda hosts: ",".join(sorted(set(hosts)))),
            first=("started", "min"),
            last=("until", "max"),
            events=("events", "sum"),
            snapshots=("snapshots", "sum"),
            channels=("channels", lambda lists: len({c for cs in lists for c in cs})),
        )
        .reset_index()
    )
    sizes = {int(s[1]) for s in frame["shard"].str.split("/") if len(s) == 2}
    present = set(frame["shard"])
    missing_shards = [f"{k}/{n}" for n in sorted(sizes) for k in range(1, n + 1)]
    missing_shards = [key for key in missing_shards if key not in present]
    seen = set(channels)
    missing_channels = {
        int(c): _owner(int(c), sizes) for c in sorted(set(expected or ())) if int(c) not in seen
    }
    window = (
        frame["started"].min() if start is None else start,
        frame["until"].max() if end is None else end,
    )
    slack = 2 * float(frame["flush_every"].max()) if tolerance is None else tolerance
    gaps = [
        (key, first, last, (last - first).total_seconds())
        for key, group in frame.groupby("shard", sort=True)
        for first, last in _uncovered(
            [span for row in group.itertuples() for span in _spans(row)], *window
        )
        if (last - first).total_seconds() > slack
    ]
    return Coverage(
        shards,
        missing_shards,
        missing_channels,
        pd.DataFrame(gaps, columns=["shard", "start", "end", "seconds"]),
    )


def _spans(recorder: Any) -> list[tuple[pd.Timestamp, pd.Timestamp]]:
    """The times a recorder (a manifest row) covered: from its start to its last flush, less
    the write failures that dropped rows."""
    spans = [(recorder.started, recorder.until)]
    failures = getattr(recorder, "gaps", None)
    for failure in failures if isinstance(failures, list) else []:
        if not failure.get("events", 0) + failure.get("snapshots", 0):
            continue  # nothing dropped: the rows were written once writing worked again
        lost = pd.Timestamp(failure["start"], unit="s", tz="UTC")
        end = failure.get("end")
        back = recorder.until if end is None else pd.Timestamp(end, unit="s", tz="UTC")
        spans = [
            piece
            for first, last in spans
            for piece in ((first, min(last, lost)), (max(first, back), last))
            if piece[1] > piece[0]
        ]
    return spans


def _owner(channel: int, sizes: set[int]) -> str:
    """The shard(s) a channel belongs to, for each shard count seen."""
    return ", ".join(f"{channel % n + 1}/{n}" for n in sorted(sizes)) or WHOLE


def _uncovered(
    spans: list[tuple[pd.Timestamp, pd.Timestamp]], start: pd.Timestamp, end: pd.Timestamp
) -> list[tuple[pd.Timestamp, pd.Timestamp]]:
    """The parts of ``[start, end]`` that no span covers, in order."""
    holes = []
    at = start
    for first, last in sorted(spans):
        if first > at:
            holes.append((at, min(first, end)))
        at = max(at, last)
        if at >= end:
            break
    if at < end:
        holes.append((at, end))
    return [(first, last) for first, last in holes if last > first]
