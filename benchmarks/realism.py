"""The realism benchmark (issue 20): the world measured through the toolkit, as an analyst would,
against the published targets of ``docs/realism.md`` (rows 1-12).

``python -m benchmarks realism [--channels N] [--speed S] [--quick]`` starts its own platforms
(``explorer serve`` in a subprocess, rate limits off, a fresh database in a temporary folder)
and measures in two phases:

* **chat**, at ``--chat-speed`` (40: forty times the messages of real time in a wall second),
  on a platform whose chat budgets are raised so that it thins as little as it can: the live
  directory (``api.channels``), then the chats of the busiest live channels and a random
  sample of the others (``api.watch``) while ``api.track`` follows their audiences. Rows 8-12
  (chat rate, chat against audience, emotes, message length, moderation) come from what
  arrived live; rates are per world minute and corrected by the share of chat the platform
  says it kept (``GET /_emulator/clock``, read every few seconds); platform-wide figures weight
  the random sample by the channels it stands for.
* **window**, at ``--speed``: ``api.track`` of the live directory over a simulated window (30
  days, or 7 with ``--quick``) gives rows 1-5 (audience per live channel, the busiest channels'
  share of viewer-hours, the rank-size exponent, per-channel averages); then the recordings of
  a random sample of channels (``channel.recordings()``, each session's start and duration)
  give row 6's denominator (channels that went live in the last 30 days) and row 7 (session
  lengths from start and end, not from snapshots).

It prints one row per target: measured, target and tolerance, source, confidence, PASS or
FAIL, then how each row was measured and a verdict. Rows resting on a sample carry a 95%
interval and pass when it meets the band: rare counts (12), the window's days resampled (round 2's
rows of the directory) and the sampled channels resampled (7; ``benchmarks/resampling.py``).
Every loop is bounded in count and time.
"""

from __future__ import annotations

import argparse
import math
import random
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import numpy as np
import pandas as pd

import explorer
from benchmarks import chatstats, directory, resampling
from explorer.core.processes import serve
from explorer.core.ranksize import rank_size_exponent
from explorer.events.log import EventLog

#: The speed of the window phase in the default world, slower in proportion for a bigger one
#: (a snapshot lists its live channels page by page, and must come every simulated half
#: hour: sparser ones miss short sessions of small channels, which moves rows 4 and 5), and
#: the simulated days it tracks (``--quick``: fewer).
SPEED = 7_200
SPEED_CHANNELS = 50_000
WINDOW_DAYS = 30.0
QUICK_WINDOW_DAYS = 7.0
#: Rows 2, 4 and 5 are judged only over a window this long (a tracked span a little short of
#: the 30 days asked for, by the time the first snapshot takes, still counts).
MONTH_DAYS = 29.0
#: World seconds between snapshots of the live directory while tracking the window (at
#: most: a snapshot that takes longer delays the next, and the report gives the largest gap).
SNAPSHOT_EVERY = 1_800.0
#: The window phase reads the directory, not chat: its simulator runs the chat of a few
#: channels only (sessions and audiences are never thinned), which at its speed it would
#: thin to nothing anyway, and spends its time on the world's sessions.
WINDOW_OPTIONS = ("--sim-channels", "10")
#: The channel fields each snapshot of the window carries.
WINDOW_FIELDS = [
    "viewersCurrent",
    "online",
    "typeId",
    "languageId",
    "partnered",
    "numFollowers",
    "hosteeId",
]
#: Wall seconds of live chat watched (``--quick``: fewer), at this speed, on a platform whose
#: chat budgets (messages a second performed, all channels and the busiest) are raised so that
#: it thins as little as it can: the model's chat is the same, the sample bigger.
CHAT_SECONDS = 180.0
QUICK_CHAT_SECONDS = 45.0
CHAT_SPEED = 40.0
CHAT_BUDGETS = ("--sim-rate", "400", "--sim-channel-rate", "100")
#: Seconds between readings of the share of chat kept.
KEPT_EVERY = 5.0
#: Row 9b fits chat against audience over channels with at least this many viewers (growing
#: chats, closer to the anchor's 13,000); row 9a over every watched channel with viewers.
LARGE_AUDIENCE = 100
#: Chats watched: the busiest live channels, and a random sample of the other live ones.
CHAT_TOP = 150
CHAT_SAMPLE = 150
#: Channels whose recordings are read (a uniform random sample), and the busiest ones added
#: to compare session lengths by audience (row 7c).
RECORDING_SAMPLE = 400
QUICK_RECORDING_SAMPLE = 150
RECORDING_BIG = 40
#: Seconds a platform gets to start (a million channels take longer than the default world).
START_TIMEOUT = 180.0
#: The audience for which row 9 quotes a per-viewer rate (xQc's April 2019 average), and how
#: many times smaller the biggest chat watched may be for the fit to be extrapolated to it.
ROW9_VIEWERS = 13_000
ROW9_REACH = 3.0
DAY = 86_400.0


@dataclass(frozen=True)
class Target:
    """One checked quantity: a row (or part of a row) of the targets table."""

    row: str
    quantity: str
    low: float
    high: float
    shown: str
    source: str
    confidence: str
    #: Format of the measured value.
    unit: str = "{:.3g}"


def _band(name: str) -> tuple[float, float]:
    """The bounds ``benchmarks/chatstats.py`` gives a chat quantity (one table for both)."""
    target = chatstats.TARGETS[name]
    return target.low, target.high


TARGETS = {
    target.row: target
    for target in (
        Target(
            "1",
            "mean concurrent viewers per live channel",
            20,
            32,
            "26 ± 6 (Twitch-like)",
            "TwitchTracker 2021-24",
            "primary",
            "{:.1f}",
        ),
        Target(
            "2",
            "top 0.5% of went-live channels' share of viewer-hours",
            0.76,
            0.90,
            "0.76-0.90",
            "StreamElements 2023; Zhang & Liu 2015",
            "secondary",
            "{:.2f}",
        ),
        Target(
            "3",
            "rank-size exponent α of live audiences (top 10%)",
            1.1,
            1.6,
            "1.1-1.6",
            "none published; consistent with 2, 4, 5",
            "modelling",
            "{:.2f}",
        ),
        Target(
            "4",
            "share of went-live channels averaging ≤ 5 viewers",
            0.90,
            0.96,
            "0.93 ± 0.03",
            "SullyGnome via Bussey 2022; inthirdperson 2020",
            "secondary",
            "{:.3f}",
        ),
        Target(
            "5",
            "99th percentile of per-channel average viewers",
            20,
            30,
            "20-30",
            "SullyGnome via Bussey 2022; inthirdperson 2020",
            "secondary",
            "{:.1f}",
        ),
        Target(
            "6",
            "live ÷ went live in the last 30 days",
            0.009,
            0.017,
            "1.3% ± 0.4 pp",
            "TwitchTracker",
            "primary",
            "{:.2%}",
        ),
        Target(
            "7a",
            "session length, mean (hours)",
            2.0,
            4.0,
            "3.0 ± 1.0 h",
            "Zhang & Liu 2015; Statista 2023-24",
            "secondary",
            "{:.2f}",
        ),
        Target(
            "7b",
            "share of sessions over 4 h",
            0.20,
            0.40,
            "0.30 ± 0.10",
            "Zhang & Liu 2015",
            "secondary",
            "{:.2f}",
        ),
        Target(
            "7c",
            "busiest channels' mean session ÷ all sessions' mean",
            1.0,
            math.inf,
            "> 1",
            "Statista 2023-24",
            "secondary",
            "{:.2f}",
        ),
        Target(
            "8",
            "messages ÷ viewer-minutes, whole platform",
            *_band("messages per viewer-minute"),
            "0.050 (0.036-0.056)",
            "Twitch transparency 2020 + TwitchTracker",
            "primary (derived)",
            "{:.4f}",
        ),
        Target(
            "9a",
            "β in messages/min ∝ viewers^β",
            -math.inf,
            1.0,
            "< 1",
            "Nematzadeh et al. 2019",
            "qualitative",
            "{:.2f}",
        ),
        Target(
            "9b",
            f"messages per viewer-minute at {ROW9_VIEWERS:,} viewers (fit)",
            0.026,
            0.046,
            "≈ 0.036 (± 0.010, ours)",
            "vAudience 2019 (xQc)",
            "primary",
            "{:.4f}",
        ),
        Target(
            "10a",
            "share of messages with an emote",
            *_band("emote share"),
            "0.55 ± 0.10",
            "Twitch blog 2019; 2018 labelled sample",
            "secondary",
            "{:.2f}",
        ),
        Target(
            "10b",
            "emotes per message that has one",
            *_band("emotes per emote message"),
            "about 2 (1.6-2.4)",
            "Twitch blog 2019; 2018 labelled sample",
            "secondary",
            "{:.2f}",
        ),
        Target(
            "11a",
            "median message, words",
            *_band("median words"),
            "2-3",
            "Kobs et al.; an 87-minute event log",
            "secondary",
            "{:.1f}",
        ),
        Target(
            "11b",
            "median message, characters",
            *_band("median characters"),
            "14-21",
            "Kobs et al.; an 87-minute event log",
            "secondary",
            "{:.1f}",
        ),
        Target(
            "11c",
            "mean ÷ median characters (heavy tail)",
            *_band("mean / median characters"),
            "1.5-3 (mean ≈ 30)",
            "Kobs et al.; an 87-minute event log",
            "secondary",
            "{:.2f}",
        ),
        Target(
            "12a",
            "messages removed per 1,000",
            *_band("removed per 1,000"),
            "3.6 ± 0.8",
            "Twitch transparency 2020-21",
            "primary",
            "{:.2f}",
        ),
        Target(
            "12b",
            "timeouts and bans per 1,000 messages",
            *_band("timeouts and bans per 1,000"),
            "1.25 ± 50%",
            "a YouTube live-chat dataset",
            "secondary",
            "{:.2f}",
        ),
        Target(
            "1h",
            "row 1 at every UTC hour: lowest ÷ 26 (highest below)",
            0.6,
            1.4,
            "26 ± 40% every hour",
            "TwitchTracker 2021-24 (round 2)",
            "primary",
            "{:.2f}",
        ),
        Target(
            "1H",
            "row 1 at every UTC hour: highest ÷ 26",
            0.6,
            1.4,
            "26 ± 40% every hour",
            "TwitchTracker 2021-24 (round 2)",
            "primary",
            "{:.2f}",
        ),
        Target(
            "1s",
            "row 1 at the world's starting instant",
            20,
            32,
            "26 ± 6",
            "TwitchTracker 2021-24 (round 2)",
            "primary",
            "{:.1f}",
        ),
        Target(
            "13",
            "live channels: busiest UTC hour ÷ quietest",
            1.6,
            3.0,
            "2.2 (1.6-3.0)",
            "Twitch 2014; Mixer 2020; YouTube Live 2014",
            "secondary",
            "{:.2f}",
        ),
        Target(
            "14a",
            "concurrent viewers: busiest UTC hour ÷ quietest",
            1.6,
            3.5,
            "2.0-3.0 (1.6-3.5)",
            "XSplit with TwitchTracker; Mixer",
            "secondary",
            "{:.2f}",
        ),
        Target(
            "14b",
            "UTC hour of the viewers' daily peak",
            -1,
            3,
            "23-03 UTC",
            "XSplit with TwitchTracker; Mixer",
            "secondary",
            "{:.0f}",
        ),
        Target(
            "15a",
            "weekend ÷ weekday mean daily viewer-hours",
            1.02,
            1.12,
            "1.07 ± 0.05",
            "Gamesight 2021; Stream Hatchet 2022; SullyGnome",
            "secondary",
            "{:.3f}",
        ),
        Target(
            "15b",
            "weekend ÷ weekday mean live channels",
            1.0,
            1.12,
            "1.0-1.12",
            "Gamesight 2021; Stream Hatchet 2022; SullyGnome",
            "secondary",
            "{:.3f}",
        ),
        Target(
            "16a",
            "share of viewer-hours in the top category",
            0.10,
            0.20,
            "0.10-0.20",
            "TwitchTracker categories 2019-21",
            "secondary (derived)",
            "{:.3f}",
        ),
        Target(
            "16b",
            "share of viewer-hours in the top ten categories",
            0.48,
            0.63,
            "0.48-0.63",
            "TwitchTracker categories 2019-21",
            "secondary (derived)",
            "{:.3f}",
        ),
        Target(
            "17a",
            "distinct categories streamed in 30 days, per 50,000 channels",
            60,
            150,
            "≈ 60-150 per 50,000",
            "TwitchTracker categories 2019-21",
            "secondary (derived)",
            "{:.0f}",
        ),
        Target(
            "17b",
            f"viewers per live channel, top {directory.TOP_CATEGORIES} categories: p90 ÷ p10",
            4,
            10,
            "4-10",
            "TwitchTracker categories 2019-21",
            "secondary (derived)",
            "{:.1f}",
        ),
        Target(
            "18",
            "followers gained in 30 days ÷ followers (≥ 1,000 viewers)",
            0.016,
            0.040,
            "0.028 ± 0.012",
            "top 1,000 Twitch channels over a year",
            "secondary (derived)",
            "{:.4f}",
        ),
        Target(
            "19",
            "partnered channels among channels live in 30 days",
            0.003,
            0.007,
            "0.3-0.7%",
            "Zach Bussey 2022; Twitch 2015",
            "secondary",
            "{:.2%}",
        ),
        Target(
            "20a",
            "English share of viewer-hours",
            0.50,
            0.60,
            "0.50-0.60",
            "TwitchTracker top 1,000 by language",
            "secondary",
            "{:.3f}",
        ),
        Target(
            "20b",
            "English ÷ Spanish live-channel-hours",
            4.5,
            math.inf,
            "≥ 4.5",
            "a Sherwood language study",
            "secondary",
            "{:.1f}",
        ),
        Target(
            "21",
            "emote-only messages among all messages",
            *_band("emote-only share"),
            "0.22 ± 0.05",
            "two labelled chat samples",
            "low",
            "{:.3f}",
        ),
        Target(
            "22",
            "paid subscriptions per 1,000 viewer-hours",
            2.25,
            9.0,
            "4.5 (low; ± a factor 2, ours)",
            "Stream Hatchet 2020",
            "low",
            "{:.2f}",
        ),
    )
}


@dataclass
class Result:
    """A measured value for one target, how it was measured, and its 95% interval where the
    value rests on a sample (rare counts; a window's days or sampled channels, resampled):
    then PASS means the interval meets the target band."""

    value: float | None
    method: str
    interval: tuple[float, float] | None = None
    #: False where the world cannot give the statistic a meaning (reported, not judged).
    meaningful: bool = True

    def passed(self, target: Target) -> bool:
        """Whether the value (or its interval) lies within the target's band."""
        if self.value is None or math.isnan(self.value):
            return False
        if self.interval is not None:
            return self.interval[0] <= target.high and self.interval[1] >= target.low
        return target.low <= self.value <= target.high


# --- measuring: pure functions of frames ----------------------------------------------------


def poisson_power_law(
    counts: np.ndarray, viewers: np.ndarray, minutes: np.ndarray
) -> tuple[float, float]:
    """(β, log c) of ``counts ~ Poisson(minutes · c · viewers^β)``, fitted by maximum likelihood
    (Newton's method on two parameters), so channels that said nothing count too."""
    x = np.log(viewers)
    offset = np.log(minutes)
    beta = np.array([math.log(max(counts.sum(), 1) / (minutes * viewers).sum()), 1.0])
    for _ in range(100):
        mu = np.exp(offset + beta[0] + beta[1] * x)
        gradient = np.array([(counts - mu).sum(), ((counts - mu) * x).sum()])
        hessian = np.array([[mu.sum(), (mu * x).sum()], [(mu * x).sum(), (mu * x * x).sum()]])
        step = np.linalg.solve(hessian, gradient)
        beta = beta + step
        if np.abs(step).max() < 1e-9:
            break
    return float(beta[1]), float(beta[0])


def live_exposure(snapshots: pd.DataFrame, window: float) -> pd.DataFrame:
    """Per channel of ``api.track`` snapshots (``online``, ``viewersCurrent``) over a window of
    ``window`` world minutes: its mean audience while live and its live minutes (the share of
    its snapshots that were live). A session that starts or ends within the window chats only
    in that part, so its viewer-minutes are not its audience times the whole window."""
    live = snapshots["online"].fillna(False).astype(bool)
    return pd.DataFrame(
        {
            "viewers": snapshots.loc[live].groupby("channel")["viewersCurrent"].mean(),
            "minutes": live.groupby(snapshots["channel"]).mean() * window,
        }
    )


def poisson_interval(count: int) -> tuple[float, float]:
    """A 95% interval of a Poisson mean from one ``count`` (Byar's approximation)."""
    if count == 0:
        return 0.0, 3.69
    low = count * (1 - 1 / (9 * count) - 1.96 / (3 * math.sqrt(count))) ** 3
    upper = count + 1
    high = upper * (1 - 1 / (9 * upper) + 1.96 / (3 * math.sqrt(upper))) ** 3
    return low, high


def timeouts_seen(log: EventLog, frame: pd.DataFrame) -> int:
    """Timeouts (bans included) among ``frame``'s events as an onlooker sees them: a timeout
    reaches only its target as ``UserTimeout``; everyone else sees the ``PurgeMessage`` of the
    target's messages with ``cause.type`` ``timeout``, kept in the log's packets."""
    purges = frame.index[frame["event"] == "PurgeMessage"]
    causes = (packet["data"].get("cause") or {} for packet in log.packets(purges))
    return sum(cause.get("type") == "timeout" for cause in causes)


# --- the platforms ------------------------------------------------------------------------


@contextmanager
def platform(
    folder: Path,
    name: str,
    channels: int | None,
    speed: float,
    seed: int,
    extra: Sequence[str] = (),
) -> Iterator[str]:
    """``explorer serve`` on a fresh database in ``folder``, rate limits off, with ``extra``
    arguments; its REST URL. ``--speed`` is passed only when it is not 1."""
    arguments = ["--db", str(folder / f"{name}.db"), "--port", "0", "--no-rate-limits"]
    arguments += ["--chat-nodes", "1", "--seed", str(seed), *extra]
    if channels is not None:
        arguments += ["--channels", str(channels)]
    if speed != 1:
        arguments += ["--speed", f"{speed:g}"]
    child = serve(arguments, folder / f"{name}.log").start()
    try:
        child.wait_ready(2, timeout=START_TIMEOUT)
        yield child.address
    finally:
        child.stop()


def chat_kept(base_url: str) -> float:
    """The share of chat the platform keeps at its speed (``GET /_emulator/clock``); 1 where
    the platform does not say."""
    root = base_url.removesuffix("/api/v1")
    try:
        response = httpx.get(f"{root}/_emulator/clock", timeout=10)
    except httpx.HTTPError:
        return 1.0
    if response.status_code != 200:
        return 1.0
    return float(response.json().get("chatKept", 1.0))


# --- phase 1: chat ---------------------------------------------------------------------------


@dataclass
class Phases:
    """What the run measured, row by row, and notes for the report."""

    results: dict[str, Result] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)


def measure_chat(
    api: explorer.Client, seconds: float, speed: float, rng: random.Random, out: Phases
) -> None:
    """Rows 8-12 from ``seconds`` of live chat in the busiest live channels and a random
    sample of the rest at ``speed``, their audiences tracked meanwhile; the share of chat the
    platform keeps is read every few seconds and rates are corrected by its mean."""
    live = api.channels(
        where={"online": True},
        order="viewersCurrent:desc",
        fields=["id", "token", "viewersCurrent"],
        progress=False,
    )
    live = live[~live.index.duplicated()]
    out.results["1s"] = Result(
        float(live["viewersCurrent"].mean()),
        f"the live directory's first listing ({len(live):,} channels), on a fresh platform at "
        f"speed {speed:g} (its world's starting instant, give or take its start-up)",
    )
    top = list(live.index[:CHAT_TOP])
    rest = list(live.index[CHAT_TOP:])
    sampled = rng.sample(rest, min(CHAT_SAMPLE, len(rest)))
    weight = {channel: 1.0 for channel in top}
    weight.update({channel: len(rest) / len(sampled) for channel in sampled})
    watched = top + sampled
    watch = api.watch(watched, backlog=0)
    track = api.track(watched, every="5s", fields=["viewersCurrent", "online"])
    started = time.monotonic()
    since = api.clock()  # events are dated on the world clock (docs/storage.md, "One clock")
    readings = [chat_kept(api.base_url)]
    while time.monotonic() - started < seconds:
        time.sleep(min(KEPT_EVERY, max(0.0, seconds - (time.monotonic() - started))))
        readings.append(chat_kept(api.base_url))
    elapsed = time.monotonic() - started
    kept = float(np.mean(readings))
    track.close()
    watch.close()
    frame = watch.log.frame
    # Only what arrived within the timed look: joining hundreds of chats takes seconds, and
    # the chats joined first speak meanwhile (counted without their minutes, they inflated a
    # short look by a third on a busy machine).
    frame = frame.loc[
        ~frame["from_history"].fillna(False).astype(bool) & (frame["received_at"] >= since)
    ]
    said = chatstats.from_events(frame)
    snapshots = track.frame
    exposure = live_exposure(snapshots, elapsed / 60 * speed * kept)
    per_channel = pd.DataFrame(
        {
            "messages": said.groupby("channel").size().reindex(watched, fill_value=0),
            "viewers": exposure["viewers"].reindex(watched),
            "minutes": exposure["minutes"].reindex(watched),
            "weight": pd.Series(weight),
        }
    ).dropna()
    per_channel = per_channel.loc[(per_channel["viewers"] > 0) & (per_channel["minutes"] > 0)]
    weighted_messages = (per_channel["messages"] * per_channel["weight"]).sum()
    viewer_minutes = (per_channel["viewers"] * per_channel["minutes"] * per_channel["weight"]).sum()
    rate = weighted_messages / viewer_minutes if viewer_minutes else math.nan
    described = (
        f"api.watch of the {len(top)} busiest live channels and {len(sampled)} of the other "
        f"{len(rest)} at random (weighted {len(rest) / max(1, len(sampled)):.1f}), "
        f"{elapsed:.0f} s at speed {speed:g} (the platform kept {kept:.0%} of chat: rates "
        "corrected), audiences by api.track every 5 s"
    )
    out.results["8"] = Result(rate, f"{len(said):,} messages; {described}")
    fits = {}
    for name, chosen in (
        ("all", per_channel),
        ("large", per_channel.loc[per_channel["viewers"] >= LARGE_AUDIENCE]),
    ):
        if len(chosen) >= 5 and chosen["messages"].sum() > 0:
            fits[name] = (
                *poisson_power_law(
                    chosen["messages"].to_numpy(float),
                    chosen["viewers"].to_numpy(float),
                    chosen["minutes"].to_numpy(float),
                ),
                len(chosen),
                chosen["viewers"].min(),
                chosen["viewers"].max(),
            )
    if "all" in fits:
        beta, _, count, low, high = fits["all"]
        also = (
            f"; over the {fits['large'][2]} with {LARGE_AUDIENCE} viewers or more, "
            f"β = {fits['large'][0]:.2f}"
            if "large" in fits
            else ""
        )
        out.results["9a"] = Result(
            beta,
            f"Poisson fit of messages per channel against its audience over the {count} watched "
            f"channels with viewers ({low:.0f}-{high:.0f}), silent ones included{also}",
        )
    else:
        out.results["9a"] = Result(None, "fewer than 5 watched channels with viewers")
    if "large" in fits:
        beta, log_c, count, low, high = fits["large"]
        at = math.exp(log_c) * ROW9_VIEWERS ** (beta - 1)
        meaningful = high >= ROW9_VIEWERS / ROW9_REACH
        out.results["9b"] = Result(
            at,
            f"the Poisson fit over the {count} watched channels with {LARGE_AUDIENCE} viewers or "
            f"more ({low:.0f}-{high:.0f}), at {ROW9_VIEWERS:,} viewers"
            + (
                ""
                if meaningful
                else f": not meaningful, the biggest chat watched is more than {ROW9_REACH:g} "
                f"times smaller than {ROW9_VIEWERS:,} (a bigger world has bigger channels)"
            ),
            meaningful=meaningful,
        )
    else:
        out.results["9b"] = Result(
            None, f"fewer than 5 watched channels with {LARGE_AUDIENCE} viewers or more"
        )
    emotes = chatstats.emote_use(said)
    method = f"every live message watched ({len(said):,}), benchmarks/chatstats.py"
    out.results["10a"] = Result(emotes["emote share"], method)
    out.results["10b"] = Result(emotes["emotes per emote message"], method)
    out.results["21"] = Result(chatstats.emote_only(said), method)
    length = chatstats.lengths(said)
    out.results["11a"] = Result(length["median words"], method)
    out.results["11b"] = Result(
        length["median characters"],
        f"{method}; mean {length['mean characters']:.1f} characters, "
        f"{length['mean words']:.1f} words",
    )
    out.results["11c"] = Result(length["mean / median characters"], method)
    total = len(said)
    deletes = int((frame["event"] == "DeleteMessage").sum())
    timeouts = timeouts_seen(watch.log, frame)
    rates = chatstats.moderation(total, deletes, timeouts)
    for row, name, count, what in (
        ("12a", "removed per 1,000", deletes + timeouts, "deletes and timeouts"),
        (
            "12b",
            "timeouts and bans per 1,000",
            timeouts,
            "timeouts (bans included: purges caused by a timeout)",
        ),
    ):
        low, high = poisson_interval(count)
        out.results[row] = Result(
            rates[name],
            f"{count} {what} in {total:,} messages; PASS when the 95% interval meets the band",
            (1000 * low / total, 1000 * high / total) if total else None,
        )
    busiest = said.loc[said["channel"] == top[0]] if top else said.iloc[:0]
    if len(busiest) >= 100:
        top10, top1, once = chatstats.concentration(busiest).values()
        out.notes.append(
            f"secondary: in the busiest chat ({len(busiest):,} messages) the top 10% of "
            f"chatters sent {top10:.0%}, the top 1% {top1:.0%}; {once:.0%} posted once "
            "(targets 45-50%, 10-12%, about a third)"
        )


# --- phase 2: a window at speed -------------------------------------------------------------


def track_window(api: explorer.Client, days: float, speed: float) -> pd.DataFrame:
    """``api.track`` of the live directory every :data:`SNAPSHOT_EVERY` world seconds for
    ``days`` simulated days at ``speed``; its long frame (``time`` is the platform's clock)."""
    wall = days * DAY / speed
    tracker = api.track(
        {"where": {"online": True}},
        every=SNAPSHOT_EVERY / speed,
        fields=WINDOW_FIELDS,
    )
    time.sleep(wall)
    tracker.close()
    frame = tracker.frame
    return frame.loc[frame["online"].fillna(False).astype(bool)]


def measure_window(snapshots: pd.DataFrame, went_live: float, out: Phases) -> None:
    """Rows 1-5 from the tracked live directory; ``went_live`` estimates how many channels
    went live over the tracked window (for row 2's top 0.5%)."""
    per_snapshot = snapshots.groupby("time")["viewersCurrent"]
    count = per_snapshot.size()
    span = (snapshots["time"].max() - snapshots["time"].min()).total_seconds() / DAY
    described = f"{len(count):,} snapshots of the live directory over {span:.1f} simulated days"
    out.results["1"] = Result(
        float(per_snapshot.sum().sum() / count.sum()),
        f"viewers ÷ live channels summed over {described}",
    )
    alphas = per_snapshot.apply(lambda viewers: rank_size_exponent(viewers)[0])
    out.results["3"] = Result(
        float(alphas.median()),
        f"median over snapshots of the fit to the top 10% (IQR "
        f"{alphas.quantile(0.25):.2f}-{alphas.quantile(0.75):.2f}) of {described}",
    )
    viewer_time = snapshots.groupby("channel")["viewersCurrent"].sum().sort_values(ascending=False)
    top = max(1, round(0.005 * max(went_live, len(viewer_time))))
    out.results["2"] = Result(
        float(viewer_time.iloc[:top].sum() / viewer_time.sum()),
        f"viewer-time per channel from the snapshots; top {top:,} of "
        f"{max(went_live, len(viewer_time)):,.0f} went-live channels",
    )
    average = snapshots.groupby("channel")["viewersCurrent"].mean()
    out.results["4"] = Result(
        float((average <= 5).mean()),
        f"mean viewersCurrent over each channel's live snapshots; {len(average):,} channels seen",
    )
    out.results["5"] = Result(float(average.quantile(0.99)), "the same per-channel averages")
    if span < MONTH_DAYS:
        # Rows 2, 4 and 5 are defined over 30 days: a shorter window sees the frequent (and
        # bigger) streamers and misses the rare ones, so its figure is reported, not judged.
        for row in ("2", "4", "5"):
            measured = out.results[row]
            out.results[row] = Result(
                measured.value,
                f"{measured.method}; defined over 30 days, this window is {span:.1f}",
                meaningful=False,
            )


#: The rows of the tracked directory judged by their interval over resampled days.
RESAMPLED_ROWS = ("1h", "1H", "13", "14a", "15a", "15b", "16a", "16b", "17b", "20a", "20b")


#: What :func:`directory_figures` reads of the directory: the day, the week, the categories
#: and the languages.
Reading = tuple[directory.DaySwing, directory.WeekSwing, directory.Categories, directory.Languages]


def read_directory(snapshots: pd.DataFrame) -> Reading:
    """The day, the week, the categories and the languages of the tracked live directory."""
    return (
        directory.day_swing(snapshots),
        directory.week_swing(snapshots),
        directory.categories(snapshots),
        directory.languages(snapshots),
    )


def directory_figures(snapshots: pd.DataFrame) -> dict[str, float]:
    """The figures of :data:`RESAMPLED_ROWS` from the tracked live directory."""
    return _figures(read_directory(snapshots))


def _figures(reading: Reading) -> dict[str, float]:
    """:func:`directory_figures` from what was read once."""
    swing, week, kinds, spoken = reading
    return {
        "1h": swing.per_channel_low / 26,
        "1H": swing.per_channel_high / 26,
        "13": swing.live,
        "14a": swing.viewers,
        "15a": week.viewers,
        "15b": week.live,
        "16a": kinds.top,
        "16b": kinds.top_ten,
        "17b": kinds.spread,
        "20a": spoken.english_share,
        "20b": spoken.english_to_spanish,
    }


def measure_directory(
    snapshots: pd.DataFrame, population: int, rng: np.random.Generator, out: Phases
) -> None:
    """Round 2's rows of the tracked live directory: row 1 hour by hour and at the start, the
    day and the week (13-15), categories (16, 17), growth (18) and languages (20); each of
    :data:`RESAMPLED_ROWS` with its 95% interval over the window's days resampled (``rng``)."""
    span = (snapshots["time"].max() - snapshots["time"].min()).total_seconds() / DAY
    gap = directory.largest_gap(snapshots) / 60
    described = (
        f"{snapshots['time'].nunique():,} snapshots of the live directory over {span:.1f} "
        f"simulated days (at most {gap:.0f} simulated minutes apart)"
    )
    reading = read_directory(snapshots)
    swing, week, kinds, _ = reading
    figures = _figures(reading)
    intervals = resampling.by_days(snapshots, directory_figures, rng)
    by_hour = f"viewers ÷ live channels per UTC hour of day, {described}"
    hourly = f"mean per snapshot in each UTC hour, {described}"
    weekly = (
        f"hour by hour, weekend days' mean ÷ weekdays' (Sat, Sun, UTC; {week.weekend_days} "
        f"weekend days and {week.weekdays} weekdays seen)"
    )
    by_type = (
        f"viewer-time per typeId over {described}; {kinds.uncategorised:.1%} of live "
        "channel-time without a category"
    )
    methods = {
        "1h": f"lowest hour {swing.per_channel_low:.1f}; {by_hour}",
        "1H": f"highest hour {swing.per_channel_high:.1f}; {by_hour}",
        "13": f"live channels: {hourly}",
        "14a": f"summed viewersCurrent: {hourly}",
        "15a": f"summed viewers: {weekly}",
        "15b": f"live channels: {weekly}",
        "16a": by_type,
        "16b": by_type,
        "17b": f"viewers ÷ live channels per category, the {directory.TOP_CATEGORIES} with the "
        "most viewer-time",
        "20a": f"viewer-time by languageId, {described}",
        "20b": f"live channel-time 'en' ÷ 'es', {described}",
    }
    days = f"{snapshots['time'].dt.floor('D').nunique()} days"
    for row in RESAMPLED_ROWS:
        out.results[row] = _with_interval(figures[row], methods[row], intervals.get(row), days)
    out.results["14b"] = Result(
        swing.peak_hour - 24 if swing.peak_hour >= 12 else swing.peak_hour,
        f"the peak is at {swing.peak_hour:02d}:00 UTC (hours after 12 shown less 24)",
    )
    out.results["17a"] = Result(
        kinds.distinct * SPEED_CHANNELS / population,
        f"{kinds.distinct} distinct typeId seen live in {population:,} channels, per "
        f"{SPEED_CHANNELS:,} (the target scales with the world), {described}",
    )
    growth = directory.follower_growth(snapshots)
    out.results["18"] = Result(
        growth.median,
        f"median over {growth.channels} channels averaging ≥ {directory.BIG_AUDIENCE:,} viewers "
        f"of numFollowers' growth between first and last live sight (≥ "
        f"{directory.GROWTH_SPAN_DAYS:g} days apart), scaled to 30 days",
        meaningful=growth.channels > 0,
    )
    if span < MONTH_DAYS:
        for row in ("17a", "18"):
            measured = out.results[row]
            out.results[row] = Result(
                measured.value,
                f"{measured.method}; defined over 30 days, this window is {span:.1f}",
                meaningful=False,
            )


def _with_interval(
    value: float, method: str, interval: tuple[float, float] | None, units: str
) -> Result:
    """A row's figure judged by its 95% interval over ``units`` resampled (by its value alone
    where no draw defined it)."""
    if interval is None:
        return Result(value, method)
    return Result(
        value,
        f"{method}; 95% interval {interval[0]:.3g}-{interval[1]:.3g} over {units} resampled, "
        "PASS when it meets the band",
        interval,
    )


def measure_subscriptions(
    url: str, snapshots: pd.DataFrame, now: pd.Timestamp, out: Phases
) -> None:
    """Row 22: the subscribers of every partner seen live (``analytics("subscriptions")`` read
    as ``staff``, who may read any channel's; a subscriber pays once a month) ÷ the platform's
    viewer-hours over 30 days (summed viewers per snapshot times the time between snapshots,
    scaled from the window)."""
    partners = directory.partners(snapshots)
    with explorer.connect(url, username="staff", password="explorer", progress=False) as staff:
        paid = 0
        for channel in partners:
            series = staff.channel(int(channel)).analytics(
                "subscriptions", now - pd.Timedelta(days=2), now
            )
            paid += int(series["total"].iloc[-1]) if not series.empty else 0
    counts = directory.per_snapshot(snapshots)
    span = (counts.index.max() - counts.index.min()).total_seconds() / 3600
    viewer_hours = float(counts["viewers"].mean()) * 30 * 24
    out.results["22"] = Result(
        1000 * paid / viewer_hours if viewer_hours else None,
        f"{paid:,} subscribers of the {len(partners)} partners seen live (analytics as staff) ÷ "
        f"{viewer_hours:,.0f} viewer-hours a month (mean summed viewers over {span:.0f} "
        "simulated hours of snapshots)",
    )


def measure_recordings(
    api: explorer.Client,
    sample: Sequence[int],
    big: Sequence[int],
    now: pd.Timestamp,
    since: pd.Timestamp,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Sessions of the last 30 days before ``now`` of the ``sample`` and of the ``big``
    channels, from their recordings: ``channel``, ``start``, ``hours``, and whether the
    session overlaps the tracked window (from ``since``)."""

    def sessions(channels: Sequence[int]) -> pd.DataFrame:
        frames = []
        for channel in channels:
            recordings = api.channel(int(channel)).recordings(progress=False)
            if recordings.empty:
                continue
            start = recordings["createdAt"]
            hours = recordings["duration"].astype(float) / 3600
            end = start + pd.to_timedelta(hours, unit="h")
            frames.append(
                pd.DataFrame(
                    {
                        "channel": channel,
                        "start": start,
                        "hours": hours,
                        "in_month": end >= now - pd.Timedelta(days=30),
                        "in_window": end >= since,
                    }
                )
            )
        columns = ["channel", "start", "hours", "in_month", "in_window"]
        return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=columns)

    return sessions(sample), sessions(big)


def session_figures(frames: Mapping[str, pd.DataFrame]) -> dict[str, float]:
    """Rows 7a-7c from the ``sampled`` and ``big`` channels' recordings of the month."""
    hours, big = frames["sampled"]["hours"], frames["big"]["hours"]
    mean = float(hours.mean()) if len(hours) else math.nan
    return {
        "7a": mean,
        "7b": float((hours > 4).mean()) if len(hours) else math.nan,
        "7c": float(big.mean() / mean) if len(big) and mean else math.nan,
    }


def measure_sessions(
    sampled: pd.DataFrame,
    big: pd.DataFrame,
    sample_size: int,
    rng: np.random.Generator,
    out: Phases,
) -> None:
    """Rows 7a-7c from the sampled channels' recordings in the last 30 days, each with its 95%
    interval over the channels resampled (``rng``)."""
    month = {
        "sampled": sampled.loc[sampled["in_month"].astype(bool)],
        "big": big.loc[big["in_month"].astype(bool)],
    }
    described = (
        f"{len(month['sampled']):,} recordings (start and duration) of {sample_size} random "
        "channels"
    )
    if month["sampled"].empty:
        for row in ("7a", "7b", "7c"):
            out.results[row] = Result(None, f"no recordings in the last 30 days; {described}")
        return
    figures = session_figures(month)
    intervals = resampling.by_groups(month, "channel", session_figures, rng)
    methods = {
        "7a": described,
        "7b": described,
        "7c": f"{len(month['big']):,} recordings of the {RECORDING_BIG} channels with the most "
        "viewer-time in the window",
    }
    sampled_channels = f"{month['sampled']['channel'].nunique()} channels"
    units = {
        "7a": sampled_channels,
        "7b": sampled_channels,
        "7c": f"{month['big']['channel'].nunique()} busiest and {sampled_channels}",
    }
    for row, method in methods.items():
        value = figures[row]
        out.results[row] = (
            _with_interval(value, method, intervals.get(row), units[row])
            if not math.isnan(value)
            else Result(None, method)
        )


# --- the report -----------------------------------------------------------------------------


def report(out: Phases, context: str, write: Callable[[str], None] = print) -> bool:
    """Print the table, how each row was measured, and the verdict; whether all passed."""
    write(f"\nRealism: {context}")
    header = f"{'#':<4} {'quantity':<54} {'measured':>10}  {'target':<24} {'confidence':<17} result"
    write(header)
    write("-" * len(header))
    failed, moot = [], []
    for row, target in TARGETS.items():
        result = out.results.get(row, Result(None, "not measured"))
        passed = result.passed(target)
        if not result.meaningful:
            moot.append(row)
        elif not passed:
            failed.append(row)
        shown = "-" if result.value is None else target.unit.format(result.value)
        verdict = "n/a" if not result.meaningful else "PASS" if passed else "FAIL"
        write(
            f"{row:<4} {target.quantity:<54} {shown:>10}  {target.shown:<24} "
            f"{target.confidence:<17} {verdict}"
        )
    write("\nSources and methods:")
    for row, target in TARGETS.items():
        result = out.results.get(row, Result(None, "not measured"))
        write(f"  {row:<4} {target.source}. Measured: {result.method}")
    for note in out.notes:
        write(f"  note: {note}")
    judged = len(TARGETS) - len(moot)
    verdict = (
        f"every row within its tolerance ({judged} checks)"
        if not failed
        else f"{len(failed)} of {judged} checks outside their tolerance: {', '.join(failed)}"
    )
    if moot:
        verdict += f"; not meaningful in this world: {', '.join(moot)}"
    write(f"\nVerdict: {verdict}")
    return not failed


def window_speed(channels: int | None) -> float:
    """The window phase's speed for a world of ``channels`` (None: the default world)."""
    return SPEED * SPEED_CHANNELS / max(SPEED_CHANNELS, channels or SPEED_CHANNELS)


def run(
    channels: int | None,
    speed: float | None,
    quick: bool,
    seed: int,
    days: float | None,
    chat_speed: float = CHAT_SPEED,
) -> bool:
    """Both phases against fresh platforms; the report; whether every row passed."""
    rng = random.Random(seed)
    out = Phases()
    speed = speed or window_speed(channels)
    days = days or (QUICK_WINDOW_DAYS if quick else WINDOW_DAYS)
    chat_seconds = QUICK_CHAT_SECONDS if quick else CHAT_SECONDS
    sample_size = QUICK_RECORDING_SAMPLE if quick else RECORDING_SAMPLE
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="realism-") as folder:
        with (
            platform(Path(folder), "chat", channels, chat_speed, seed, CHAT_BUDGETS) as url,
            explorer.connect(url, progress=False) as api,
        ):
            measure_chat(api, chat_seconds, chat_speed, rng, out)
        with (
            platform(Path(folder), "window", channels, speed, seed, WINDOW_OPTIONS) as url,
            explorer.connect(url, progress=False) as api,
        ):
            snapshots = track_window(api, days, speed)
            everyone = api.channels(fields=["id"], progress=False)
            population = len(everyone.index.unique())
            sample = rng.sample(sorted(everyone.index.unique()), min(sample_size, population))
            viewer_time = snapshots.groupby("channel")["viewersCurrent"].sum()
            big = list(viewer_time.sort_values(ascending=False).index[:RECORDING_BIG])
            now = snapshots["time"].max()
            sampled, biggest = measure_recordings(api, sample, big, now, snapshots["time"].min())
            measure_subscriptions(url, snapshots, now, out)
    went_month = sampled.loc[sampled["in_month"].astype(bool), "channel"].nunique()
    went_window = sampled.loc[sampled["in_window"].astype(bool), "channel"].nunique()
    per_channel = population / len(sample)
    measure_window(snapshots, went_window * per_channel, out)
    live = snapshots.groupby("time").size().mean()
    share = went_month / len(sample)
    seen = snapshots["channel"].nunique()
    # Only channels that keep their streams (hasVod) have recordings, so the sample's count
    # is a lower bound, as is the count of channels the snapshots saw live: the larger wins.
    went_live = max(share * population, seen)
    out.results["6"] = Result(
        live / went_live if went_live else None,
        f"mean live count ({live:,.1f}) over the tracked window ÷ channels that went live in "
        f"the last 30 days ({went_live:,.0f}: the larger of the channels seen live in the "
        f"window and the {went_month} of {len(sample)} sampled with a recording then, of "
        f"{population:,})",
    )
    out.notes.append(
        f"tracking saw {seen:,} channels live; the recordings sample says "
        f"{went_window * per_channel:,.0f} went live in the tracked window"
    )
    resampled = np.random.default_rng(seed)
    measure_sessions(sampled, biggest, len(sample), resampled, out)
    measure_directory(snapshots, population, resampled, out)
    partnered = directory.partners_seen(snapshots)
    out.results["19"] = Result(
        partnered / went_live if went_live else None,
        f"partnered channels seen live ({partnered}) ÷ channels that "
        f"went live in the last 30 days (row 6's count, {went_live:,.0f})",
        meaningful=(snapshots["time"].max() - snapshots["time"].min()).total_seconds() / DAY
        >= MONTH_DAYS,
    )
    context = (
        f"{population:,} channels, seed {seed}, window at speed {speed:g}"
        f"{' (--quick)' if quick else ''}; run took {time.monotonic() - started:.0f} s"
    )
    return report(out, context)


def main(argv: Sequence[str] | None = ()) -> None:
    """``python -m benchmarks realism [--channels N] [--speed S] [--quick] [--seed K]``; ``None``
    (a run of every suite) is ``--quick``."""
    parser = argparse.ArgumentParser(prog="python -m benchmarks realism", description=__doc__)
    parser.add_argument(
        "--channels", type=int, default=None, help="channels in the world (default: serve's)"
    )
    parser.add_argument(
        "--speed",
        type=float,
        default=None,
        help=f"speed of the window phase (default {SPEED:g} at {SPEED_CHANNELS:,} channels, "
        "slower in proportion for a bigger world)",
    )
    parser.add_argument(
        "--quick",
        action="store_true",
        help=f"a {QUICK_WINDOW_DAYS:g}-day window, {QUICK_CHAT_SECONDS:g} s of chat, "
        f"{QUICK_RECORDING_SAMPLE} channels' recordings",
    )
    parser.add_argument(
        "--days",
        type=float,
        default=None,
        help=f"simulated days the window phase tracks (default {WINDOW_DAYS:g})",
    )
    parser.add_argument(
        "--chat-speed",
        type=float,
        default=CHAT_SPEED,
        help=f"speed of the chat phase (default {CHAT_SPEED:g})",
    )
    parser.add_argument("--seed", type=int, default=0, help="world seed (default 0)")
    args = parser.parse_args(["--quick"] if argv is None else list(argv))
    run(args.channels, args.speed, args.quick, args.seed, args.days, args.chat_speed)


if __name__ == "__main__":
    main(sys.argv[1:])
