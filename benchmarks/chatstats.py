"""Chat statistics as an analyst measures them, against the realism targets (rows 10-12 and
the secondary rows of ``docs/realism.md``).

Pure functions over a frame of messages with ``text`` (what the message shows: its
components' text joined, the event log's ``text`` column), ``user`` (who sent it) and
``emotes`` (how many emoticon components it has) columns; :func:`from_events` makes that
frame from an event log's frame (``EventLog.frame``, a capture, ``api.watch``), so generated
and live chat are measured the same way. ``benchmarks/chat_content.py`` and
``benchmarks/realism.py`` both use them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd


@dataclass(frozen=True, slots=True)
class Target:
    """A measured quantity's goal: ``low <= value <= high``."""

    name: str
    low: float
    high: float
    source: str

    def verdict(self, value: float) -> str:
        """PASS or FAIL."""
        return "PASS" if self.low <= value <= self.high else "FAIL"


#: Rows 10-12 and the secondary chat rows of the realism targets.
TARGETS: dict[str, Target] = {
    target.name: target
    for target in (
        Target("emote share", 0.45, 0.65, "row 10: 0.55 +- 0.10"),
        Target("emotes per emote message", 1.6, 2.4, "row 10: about 2"),
        Target("median words", 2.0, 3.0, "row 11: 2-3"),
        Target("median characters", 14.0, 21.0, "row 11: 14-21"),
        Target("mean words", 4.0, 6.0, "row 11: about 5, >= 1.5 x median"),
        Target("mean characters", 25.0, 35.0, "row 11: about 30, >= 1.5 x median"),
        Target("mean / median characters", 1.5, 3.0, "row 11: a heavy tail"),
        Target("top 10% chatters' share", 0.42, 0.53, "secondary: 45-50%"),
        Target("top 1% chatters' share", 0.08, 0.14, "secondary: 10-12%"),
        Target("chatters posting once", 0.25, 0.42, "secondary: about a third"),
        Target("peak minute / mean", 4.5, 7.0, "secondary: 5-6x at highlights"),
        Target("per-minute variance / mean", 2.0, float("inf"), "secondary: >> Poisson (1)"),
        Target("removed per 1,000", 2.8, 4.4, "row 12: 3.6 +- 0.8"),
        Target("timeouts and bans per 1,000", 0.625, 1.875, "row 12: 1.25 +- 50%"),
        Target("messages per viewer-minute", 0.036, 0.056, "row 8: 0.050, 0.036-0.056"),
        Target("emote-only share", 0.17, 0.27, "row 21: 0.22 +- 0.05"),
    )
}


def from_events(frame: pd.DataFrame) -> pd.DataFrame:
    """The ``text``/``user``/``emotes`` frame (plus ``received_at`` and ``channel``) of an
    event frame's ChatMessage rows; ``emotes`` counts the ``emoticon`` entries of
    ``components``."""
    rows = frame.loc[frame["event"] == "ChatMessage"]
    components = rows["components"].fillna("")
    return pd.DataFrame(
        {
            "received_at": rows["received_at"],
            "channel": rows["channel"],
            "text": rows["text"].fillna(""),
            "user": rows["user_name"],
            "emotes": components.str.split(",").map(lambda kinds: kinds.count("emoticon")),
        }
    )


def emote_use(messages: pd.DataFrame) -> dict[str, float]:
    """Share of messages with an emote, and emotes per such message (row 10)."""
    emotes = messages["emotes"].to_numpy()
    with_any = emotes > 0
    return {
        "emote share": float(with_any.mean()),
        "emotes per emote message": float(emotes[with_any].mean()) if with_any.any() else 0.0,
    }


def emote_only(messages: pd.DataFrame) -> float:
    """Share of messages made of emotes alone (row 21): as many words in the text as
    emoticon components (an emote's code is one word), and at least one."""
    words = messages["text"].str.split().str.len().to_numpy()
    emotes = messages["emotes"].to_numpy()
    return float(((emotes > 0) & (words == emotes)).mean()) if len(messages) else 0.0


def lengths(messages: pd.DataFrame) -> dict[str, float]:
    """Median and mean words and characters of the messages' text (row 11)."""
    text = messages["text"]
    words = text.str.split().str.len().to_numpy()
    chars = text.str.len().to_numpy()
    return {
        "median words": float(np.median(words)),
        "median characters": float(np.median(chars)),
        "mean words": float(words.mean()),
        "mean characters": float(chars.mean()),
        "mean / median characters": float(chars.mean() / max(1.0, float(np.median(chars)))),
    }


def concentration(messages: pd.DataFrame) -> dict[str, float]:
    """Shares of messages sent by the top 10% and 1% of chatters, and the share of chatters
    who posted once (secondary rows)."""
    counts = np.sort(messages["user"].value_counts().to_numpy())[::-1]
    total = counts.sum()
    return {
        "top 10% chatters' share": float(counts[: max(1, len(counts) // 10)].sum() / total),
        "top 1% chatters' share": float(counts[: max(1, len(counts) // 100)].sum() / total),
        "chatters posting once": float((counts == 1).mean()),
    }


def per_minute(messages: pd.DataFrame) -> np.ndarray:
    """Messages in each whole minute since the first (``received_at``), empty minutes too."""
    times = pd.to_datetime(messages["received_at"], utc=True)
    minutes = ((times - times.min()).dt.total_seconds() // 60).astype(int).to_numpy()
    return np.bincount(minutes)


def burstiness(counts: Sequence[int] | np.ndarray) -> dict[str, float]:
    """How a stream's per-minute message counts peak and spread (secondary rows): the busiest
    minute over the mean, and the variance over the mean (1 for a Poisson process)."""
    values = np.asarray(counts, dtype=float)
    mean = values.mean()
    return {
        "peak minute / mean": float(values.max() / mean),
        "per-minute variance / mean": float(values.var() / mean),
    }


def moderation(messages: int, deletes: int, timeouts: int) -> dict[str, float]:
    """Removals and timeouts (bans included) per 1,000 messages (row 12). A timeout removes
    at least the message it answers, so it counts as a removal too."""
    per = 1000 / max(1, messages)
    return {
        "removed per 1,000": (deletes + timeouts) * per,
        "timeouts and bans per 1,000": timeouts * per,
    }


def report(measured: dict[str, float]) -> list[str]:
    """One line per measured quantity: value, target, source and PASS/FAIL when it has a
    target."""
    lines = []
    for name, value in measured.items():
        target = TARGETS.get(name)
        if target is None:
            lines.append(f"  {name:<30} {value:10.3f}")
        else:
            bounds = f"[{target.low:g}, {target.high:g}]"
            lines.append(
                f"  {name:<30} {value:10.3f}  {bounds:<16} {target.verdict(value)}"
                f"  ({target.source})"
            )
    return lines
