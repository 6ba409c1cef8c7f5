"""``explorer tour``: the recipes in a terminal, for scripts and a first look without Jupyter.

Four steps, each printing a compact table and saving its plots as PNG files into ``--out``:

1. rank every channel by ``viewersTotal`` (top ten, the heavy tail, views by language) and
   the live channels by ``viewersCurrent``, fitting the rank-size law's exponent;
2. watch the busiest live chat for a few seconds, printing messages as they arrive;
3. sign in as ``streamer``, start a poll in its channel and follow the bots' votes;
4. sample chat history across channels: the most viewed, random ones, and a few per language
   (message length in words and characters, emote use).

It talks to ``EXPLORER_BASE_URL`` (or ``--base-url``) and otherwise starts the embedded
platform in this process, with simulated activity, so the chat steps have something to show.
Nothing of Jupyter is imported: the plots are drawn with matplotlib's object API
(``Figure.savefig``, no pyplot and no GUI backend), imported only when the first is saved.
The notebooks in ``notebooks/`` tell the same story with prose and live widgets.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

import explorer
from explorer.cli.terminal import inert
from explorer.core.ranksize import rank_size_exponent
from explorer.errors import ChatError, ChatErrorCode
from explorer.events.rows import message_text

if TYPE_CHECKING:
    from matplotlib.figure import Figure

    from explorer.chat import Chat

Write = Callable[[str], None]

POLL_QUESTION = "Which map should we play next?"
POLL_ANSWERS = ("Dust", "Mirage", "Inferno", "Nuke")
#: The longest a poll of the simulated streamer runs; ours waits at most this for it to end.
BOT_POLL_WAIT = 100.0
_PRINTED_MESSAGES = 12
_WIDTH = 100
_RANK_FIELDS = ("id", "token", "online", "viewersTotal", "viewersCurrent", "languageId", "type")


@dataclass
class Tour:
    """One run of the tour: where to write, how long to watch, what was saved."""

    out: Path
    watch: float = 5.0
    poll: float = 10.0
    sample: int = 10
    base_url: str | None = None
    write: Write = print
    saved: list[Path] = field(default_factory=list)

    def run(self) -> list[Path]:
        """Run the four steps; the PNG files saved, in order."""
        self.out.mkdir(parents=True, exist_ok=True)
        with explorer.connect(self.base_url, progress=False) as api:
            self.say(f"Platform: {api.base_url}\n")
            channels = self.rank(api)
            self.watch_busiest(api)
            self.run_poll(api.base_url)
            self.sample_history(api, channels)
        self.say(f"\nSaved {len(self.saved)} plots in {self.out}/:")
        for path in self.saved:
            self.say(f"  {path.name}")
        return self.saved

    # -- 1. ranking ---------------------------------------------------------------------------

    def rank(self, api: explorer.Client) -> pd.DataFrame:
        """Rank every channel by viewersTotal; print the top and the tail; plot both."""
        self.heading("1/4  Ranking channels by viewersTotal")
        channels = api.channels(
            order="viewersTotal:desc",
            fields=_RANK_FIELDS,
        ).rename(columns={"type.name": "type"})
        channels.insert(0, "rank", np.arange(1, len(channels) + 1))
        columns = ["rank", "token", "viewersTotal", "viewersCurrent", "languageId", "type"]
        self.table(channels.head(10)[columns], f"The top 10 of {len(channels):,} channels")
        total = channels["viewersTotal"].sum()
        top = channels.head(max(1, len(channels) // 100))["viewersTotal"].sum()
        self.say(
            f"The top 1% of channels hold {top / total:.0%} of all views; "
            f"the median channel has {channels['viewersTotal'].median():.0f}."
        )
        live = channels.loc[channels["online"].eq(True), "viewersCurrent"].to_numpy(dtype=float)
        alpha, fitted = rank_size_exponent(live)
        self.say(
            f"Live audiences follow a rank-size law, α = {alpha:.2f} (fitted over the top "
            f"{fitted} of {len(live):,} live channels).\nNo study publishes α, but the audience "
            "concentration real platforms report implies 1.1-1.6,\nand the platform is "
            "calibrated to those reports (docs/realism.md).\n"
        )
        by_language = (
            channels.groupby("languageId", observed=True)
            .agg(
                channels=("token", "size"),
                views=("viewersTotal", "sum"),
                top_channel=("token", "first"),
            )
            .sort_values("views", ascending=False)
        )
        self.table(by_language.head(5), "Views by language (top 5)")
        self.save("ranking.png", _ranking_figure, channels, live, alpha, fitted)
        self.save("languages.png", _languages_figure, by_language)
        return channels

    # -- 2. live chat -------------------------------------------------------------------------

    def watch_busiest(self, api: explorer.Client) -> None:
        """Join the busiest live channel's chat and print what it says for a few seconds."""
        live = api.channels(
            where={"online": True},
            order="viewersCurrent:desc",
            fields=["id", "token", "viewersCurrent"],
            max_rows=1,
        )
        if live.empty:
            self.heading("2/4  No channel is live: nothing to watch")
            return
        channel_id, token = int(live.index[0]), str(live["token"].iloc[0])
        viewers = int(live["viewersCurrent"].iloc[0])
        self.heading(f"2/4  Watching {token}'s chat ({viewers:,} viewers) for {self.watch:g} s")
        with api.chat(channel_id) as chat:
            printed = 0
            for event in chat.events("ChatMessage", timeout=self.watch):
                if printed < _PRINTED_MESSAGES:
                    data = event.data
                    self.say(f"  {data.get('user_name', '?'):>16}: {message_text(data)}"[:_WIDTH])
                printed += 1
            if printed > _PRINTED_MESSAGES:
                self.say(f"  ... and {printed - _PRINTED_MESSAGES} more")
            messages = chat.log.messages()
            counts = ", ".join(f"{n} {c}" for n, c in sorted(chat.log.counts.items()))
        self.say(
            f"\n{len(messages)} messages in {self.watch:g} s "
            f"({len(messages) / max(self.watch, 1e-9):.1f}/s); all events: {counts}\n"
        )
        self.save("chat-rate.png", _rate_figure, messages, token)

    # -- 3. a poll ----------------------------------------------------------------------------

    def run_poll(self, base_url: str) -> None:
        """Start a poll as ``streamer`` and follow the votes until it ends."""
        self.heading(f"3/4  A {self.poll:g}-second poll in streamer's channel")
        with (
            explorer.connect(
                base_url, username="streamer", password="explorer", progress=False
            ) as api,
            api.chat("streamer") as chat,
        ):
            if not self._start_poll(chat):
                return
            deadline = time.monotonic() + self.poll + 15
            for event in chat.events("PollStart", "PollEnd", timeout=self.poll + 15):
                data = event.data
                if data.get("q") != POLL_QUESTION:
                    continue
                votes = "  ".join(f"{a} {n}" for a, n in (data.get("responses") or {}).items())
                self.say(f"  {event.event:<9} voters {data.get('voters', 0):>3}   {votes}")
                if event.event == "PollEnd" or time.monotonic() > deadline:
                    break
            polls = chat.log.polls()
        ours = polls[polls["question"] == POLL_QUESTION]
        final = ours[ours["ended"]].set_index("answer")[["votes"]]
        if final.empty:
            self.say("The poll did not end in time.\n")
            return
        final["share"] = (final["votes"] / max(int(final["votes"].sum()), 1)).round(2)
        self.say("")
        self.table(final, POLL_QUESTION)
        self.save("poll.png", _poll_figure, ours)

    def _start_poll(self, chat: Chat) -> bool:
        """Start our poll, first waiting out a running poll of the simulated streamer."""
        with chat.events("PollEnd", timeout=BOT_POLL_WAIT) as poll_ends:
            while True:
                try:
                    chat.start_poll(POLL_QUESTION, list(POLL_ANSWERS), self.poll)
                    return True
                except ChatError as refused:
                    if refused.code != ChatErrorCode.POLL_ERROR:
                        raise
                    self.say("  (the bots' own poll is running: waiting for it to end)")
                    if next(poll_ends, None) is None:
                        self.say("  It did not end in time; skipping the poll.\n")
                        return False

    # -- 4. history ---------------------------------------------------------------------------

    def sample_history(self, api: explorer.Client, channels: pd.DataFrame) -> None:
        """Sample chat history from the most viewed, random, and per-language channels."""
        n = self.sample
        self.heading(f"4/4  Sampling chat history ({n} top, {n} random, 1 per language)")
        samples = {
            "top": channels.head(n),
            "random": channels.sample(min(n, len(channels)), random_state=1),
            "by language": channels.head(400)
            .sample(frac=1, random_state=1)
            .groupby("languageId", observed=True)
            .head(1),
        }
        history: list[pd.DataFrame] = []
        for name, chosen in samples.items():
            for channel_id in chosen.index:
                with api.chat(int(channel_id), backlog=100) as chat:
                    messages = chat.log.messages()
                history.append(messages[messages["from_history"]].assign(sample=name))
        frame = pd.concat(history, ignore_index=True)
        frame["length"] = frame["text"].str.len().fillna(0).astype(int)
        per_channel = frame.groupby(["sample", "channel"]).size()
        counts = {
            "channels": pd.Series({name: len(chosen) for name, chosen in samples.items()}),
            "with_history": per_channel.groupby("sample").size(),
            "messages": per_channel.groupby("sample").sum(),
        }
        summary = pd.DataFrame(counts).fillna(0).astype(int)
        by_sample = frame.assign(
            words=frame["text"].fillna("").str.split().str.len(),
            emote=frame["components"].fillna("").str.contains("emoticon"),
        ).groupby("sample")
        summary["median_words"] = by_sample["words"].median()
        summary["median_chars"] = by_sample["length"].median()
        summary["mean_chars"] = by_sample["length"].mean().round(1)
        summary["with_emote"] = by_sample["emote"].mean().round(2)
        self.table(summary, "History per sample")
        chatters = (
            frame.drop_duplicates("message_id")
            .groupby("user_name")
            .size()
            .sort_values(ascending=False)
            .head(5)
            .rename("messages")
        )
        self.table(chatters.to_frame(), "Top chatters in the sampled history")
        self.save("history-lengths.png", _lengths_figure, frame)

    # -- output -------------------------------------------------------------------------------

    def say(self, text: str) -> None:
        """Write ``text``, what the platform sent in it made inert for a terminal."""
        self.write(inert(text))

    def heading(self, text: str) -> None:
        """Print a step's title."""
        self.say(f"\n{text}\n{'-' * len(text)}")

    def table(self, frame: pd.DataFrame, title: str) -> None:
        """Print ``frame`` compactly under ``title``."""
        self.say(f"{title}:")
        self.say(frame.to_string(max_colwidth=24, line_width=_WIDTH) + "\n")

    def save(self, name: str, draw: Callable[..., Figure], *data: Any) -> None:
        """Draw a figure with ``draw(*data)`` and save it as ``name`` in the output folder."""
        path = self.out / name
        draw(*data).savefig(path, dpi=100)
        self.saved.append(path)


def _figure(width: float = 8.0, height: float = 4.0) -> Figure:
    from matplotlib.figure import Figure

    return Figure(figsize=(width, height), layout="constrained")


def _ranking_figure(channels: pd.DataFrame, live: np.ndarray, alpha: float, fitted: int) -> Figure:
    """The top 20 as bars, views by rank on log-log axes, and the live audiences by rank with
    the rank-size fit over their top ``fitted``."""
    figure = _figure(16, 4.5)
    bars, tail, law = figure.subplots(1, 3)
    top = channels.head(20).iloc[::-1]
    bars.barh(top["token"].astype(str), top["viewersTotal"].to_numpy(dtype=float))
    bars.set(xlabel="viewersTotal", title="The 20 most viewed channels")
    watched = channels[channels["viewersTotal"] > 0]
    tail.loglog(watched["rank"], watched["viewersTotal"].to_numpy(dtype=float), ".", ms=3)
    tail.set(xlabel="rank", ylabel="viewersTotal", title="Views by rank (log-log)")
    audience = np.sort(live[live > 0])[::-1]
    ranks = np.arange(1, len(audience) + 1)
    law.loglog(ranks, audience, ".", ms=3)
    if fitted:
        head = ranks[:fitted]
        scale = np.exp(np.mean(np.log(audience[:fitted]) + alpha * np.log(head)))
        law.loglog(head, scale * head**-alpha, "-", color="C3", label=f"α = {alpha:.2f}")
        law.legend()
    law.set(xlabel="rank", ylabel="viewersCurrent", title="Live audiences: rank-size law")
    return figure


def _languages_figure(by_language: pd.DataFrame) -> Figure:
    figure = _figure(8, 3.5)
    axes = figure.subplots()
    axes.bar(by_language.index.astype(str), by_language["views"].to_numpy(dtype=float))
    axes.set_yscale("log")
    axes.set(xlabel="language", ylabel="views (log scale)", title="Views by language")
    return figure


def _rate_figure(messages: pd.DataFrame, token: str) -> Figure:
    """Messages per second while watching."""
    figure = _figure(8, 3)
    axes = figure.subplots()
    live = messages[~messages["from_history"].astype(bool)]
    if len(live):
        per_second = live.set_index("received_at").resample("1s").size()
        seconds = (per_second.index - per_second.index[0]).total_seconds()
        axes.bar(seconds, per_second.to_numpy(dtype=float), width=0.9, align="edge")
    axes.set(xlabel="seconds", ylabel="messages", title=f"{token}: chat messages per second")
    return figure


def _poll_figure(poll: pd.DataFrame) -> Figure:
    """Each answer's votes against the seconds since the poll started."""
    figure = _figure(8, 4)
    axes = figure.subplots()
    start = poll["time"].min()
    for answer, rows in poll.groupby("answer", sort=False):
        elapsed = (rows["time"] - start).dt.total_seconds()
        axes.step(elapsed, rows["votes"].to_numpy(dtype=float), where="post", label=str(answer))
    axes.set(xlabel="seconds since the poll started", ylabel="votes", title=POLL_QUESTION)
    axes.legend(loc="upper left")
    return figure


def length_shares(history: pd.DataFrame, width: int = 2) -> pd.DataFrame:
    """The share of each sample's messages per message length: one row per bin of ``width``
    characters (indexed by its first length), one column per sample, each summing to 1."""
    bins = (history["length"] // width * width).rename("characters")
    shares = bins.groupby(history["sample"]).value_counts(normalize=True)
    table = shares.unstack("sample", fill_value=0.0).sort_index()
    return table.reindex(range(0, int(bins.max()) + 1 if len(bins) else 0, width), fill_value=0.0)


def _lengths_figure(history: pd.DataFrame) -> Figure:
    """Per sample, the share of messages in each 2-character bin of length."""
    figure = _figure(8, 3.5)
    axes = figure.subplots()
    shares = length_shares(history)
    edges = np.arange(len(shares) + 1) * 2
    for name in shares.columns:
        axes.stairs(shares[name].to_numpy(), edges, label=str(name))
    axes.set(
        xlabel="characters (bins of 2)",
        ylabel="share of messages",
        title="Message length in history",
    )
    axes.legend()
    return figure
