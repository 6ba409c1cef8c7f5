"""Chat content and rates from ``explorer.emulator.chatter`` against the realism targets.

Offline (no platform): a big stream's chat, 13,454 viewers as in row 9, is generated minute
by minute for about half an hour (``chat_rate`` times ``intensity`` messages a minute,
speakers and lines from one ``ChannelVoice``, moderation per message). Each line is composed
into message components by the platform's composer and its ChatMessage packet flattened into
an event frame, so ``text`` and emote counts are what an analyst reads from a live chat.
Measured with ``benchmarks.chatstats``: emote use (row 10), lengths (row 11), chatter
concentration, moderation (row 12); then per-minute burstiness over 200 four-hour streams
(the median stream's peak minute over its mean), and the rate law: per-viewer rates, the
fitted exponent, and messages per viewer-minute of whole platforms of rank-size audiences
(row 8: viewers of the rank-r live channel ∝ r^-α, 26 on average, α and the number of live
channels spanning rows 1-3). ``python -m benchmarks chat_content``.
"""

from __future__ import annotations

import math
import random
import time
from typing import Any

import numpy as np
import pandas as pd

from benchmarks import chatstats
from explorer.emulator.chat.messages import Component, compose, message_data
from explorer.emulator.chatter import (
    ANCHOR_VIEWERS,
    ChannelVoice,
    chat_rate,
    moderation,
    timeout_duration,
)
from explorer.events.rows import Row, flatten, rows_frame
from explorer.wire.events import EVENTS

SEED = 20
#: The big stream: its audience, chatters and how many lines to generate at least.
VIEWERS = ANCHOR_VIEWERS
CHATTERS = 8_000
LINES = 24_000
#: Streams and minutes each for burstiness, and the audience they chat at.
STREAMS = 200
MINUTES = 240
STREAM_VIEWERS = 500.0
#: Whole platforms for row 8: (rank-size exponent, live channels), 26 viewers on average.
PLATFORMS = ((1.2, 1_300), (1.2, 4_000), (1.2, 13_000), (1.4, 1_300), (1.4, 4_000), (1.4, 13_000))
MEAN_VIEWERS = 26.0


def _poisson(rng: random.Random, mean: float) -> int:
    """A Poisson draw (normal approximation above 50, as counts here are large)."""
    if mean > 50:
        return max(0, round(rng.gauss(mean, math.sqrt(mean))))
    limit, count, product = math.exp(-mean), 0, rng.random()
    while product > limit:
        count += 1
        product *= rng.random()
    return count


def big_stream() -> tuple[pd.DataFrame, dict[str, float]]:
    """At least :data:`LINES` messages of one big stream's chat as an analyst reads them
    (ChatMessage packets flattened into an event frame, then :func:`chatstats.from_events`),
    and its moderation counts."""
    rng = random.Random(SEED)
    names = [f"viewer_{index:05d}" for index in range(CHATTERS)]
    known = {name.lower(): (index, name) for index, name in enumerate(names)}
    voice = ChannelVoice(SEED, 1, names)
    rows: list[Row] = []
    deletes = timeouts = 0
    parsed: dict[str, tuple[list[Component], dict[str, Any]]] = {}
    minute = 0
    while len(rows) < LINES:
        count = _poisson(rng, chat_rate(VIEWERS) * voice.intensity(rng))
        for index in range(count):
            speaker = voice.speaker(rng)
            line = voice.line(rng, speaker)
            if line not in parsed:
                parsed[line] = compose(line, lambda name: known.get(name.lower()))
            identity = {"user_name": names[speaker], "user_id": speaker, "user_roles": ["User"]}
            data = message_data(1, str(len(rows)), identity, *parsed[line])
            at = minute * 60 + 60 * index / count
            rows.append(flatten({"type": "event", "event": "ChatMessage", "data": data}, at))
            kind = moderation(rng)
            if kind == "delete":
                deletes += 1
            elif kind == "timeout":
                timeouts += 1
                timeout_duration(rng)
        minute += 1
    frame = chatstats.from_events(rows_frame(rows, pd.CategoricalDtype(EVENTS)))
    return frame, chatstats.moderation(len(frame), deletes, timeouts)


def streams() -> dict[str, float]:
    """Burstiness of :data:`STREAMS` streams: each measure's median over the streams."""
    rng = random.Random(SEED + 1)
    measured: list[dict[str, float]] = []
    for channel in range(STREAMS):
        voice = ChannelVoice(SEED, channel, ["a", "b"])
        rate = chat_rate(STREAM_VIEWERS)
        counts = [_poisson(rng, rate * voice.intensity(rng)) for _ in range(MINUTES)]
        measured.append(chatstats.burstiness(counts))
    return {name: float(np.median([m[name] for m in measured])) for name in measured[0]}


def platforms() -> list[tuple[str, float]]:
    """Messages per viewer-minute of whole platforms of rank-size audiences."""
    results = []
    for alpha, live in PLATFORMS:
        viewers = np.arange(1, live + 1, dtype=float) ** -alpha
        viewers *= MEAN_VIEWERS / viewers.mean()
        messages = sum(chat_rate(v) for v in viewers)
        results.append((f"alpha {alpha}, {live:,} live", messages / viewers.sum()))
    return results


def main() -> None:
    """Generate, measure and print against the targets."""
    started = time.perf_counter()
    frame, moderated = big_stream()
    seconds = time.perf_counter() - started
    print(
        f"a {VIEWERS:,.0f}-viewer stream: {len(frame):,} lines from {frame['user'].nunique():,}"
        f" chatters in {frame['received_at'].dt.floor('min').nunique()} minutes"
        f" ({len(frame) / seconds:,.0f} lines/s generated and composed)"
    )
    measured = {
        **chatstats.emote_use(frame),
        "emote-only share": chatstats.emote_only(frame),
        **chatstats.lengths(frame),
        **chatstats.concentration(frame),
        **moderated,
    }
    print("\n".join(chatstats.report(measured)))
    print(f"{STREAMS} streams of {MINUTES} minutes at {STREAM_VIEWERS:,.0f} viewers (medians):")
    print("\n".join(chatstats.report(streams())))
    print("the rate law: viewers -> messages a minute (per viewer-minute)")
    for viewers in (0, 1, 10, 100, 1_000, 3_000, ANCHOR_VIEWERS, 100_000):
        rate = chat_rate(viewers)
        print(f"  {viewers:>9,.0f} -> {rate:9.2f}  ({rate / max(1.0, viewers):.4f})")
    slope = math.log(chat_rate(100_000) / chat_rate(1_000)) / math.log(100)
    verdict = "PASS" if slope < 1 else "FAIL"
    print(f"  fitted exponent 1,000-100,000 viewers: {slope:.3f}  (< 1) {verdict}  (row 9)")
    anchor = chat_rate(ANCHOR_VIEWERS) / ANCHOR_VIEWERS
    verdict = "PASS" if abs(anchor - 0.036) < 0.002 else "FAIL"
    print(f"  per viewer-minute at {ANCHOR_VIEWERS:,.0f}: {anchor:.4f}  (0.036) {verdict}  (row 9)")
    for name, ratio in platforms():
        print(f"  platform, {name}:")
        print("\n".join(chatstats.report({"messages per viewer-minute": ratio})))


if __name__ == "__main__":
    main()
