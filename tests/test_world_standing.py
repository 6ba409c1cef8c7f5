"""Growth and standing, computed from the session schedule and the chat voice
(``realism.md`` rows 18-22)."""

from __future__ import annotations

import functools
import random

import numpy as np
import numpy.typing as npt

from explorer.emulator import chatter, growth, sessions, status
from explorer.emulator.sessions import Block, Habits, Schedule
from explorer.emulator.world import LANGUAGES

CHANNELS = 50_000


@functools.cache
def world() -> tuple[Habits, Block]:
    """The seed-0 world's habits and its first month after the world's instant."""
    traits = sessions.habits(0, CHANNELS)
    return traits, Schedule(0, traits).block(1)


def per_channel(values: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
    """``values`` of the month's sessions summed per channel."""
    block = world()[1]
    summed: npt.NDArray[np.float64] = np.bincount(block.channel, values, minlength=CHANNELS)
    return summed


def session_hours() -> npt.NDArray[np.float64]:
    """The length in hours of each of the month's sessions."""
    block = world()[1]
    hours: npt.NDArray[np.float64] = (block.end - block.start) / sessions.HOUR
    return hours


def test_big_channels_gain_about_three_percent_of_their_followers_a_month() -> None:
    """Channels averaging 1,000+ viewers gain 1.6-4.0% of their followers in 30 days."""
    traits, block = world()
    hours = session_hours()
    follows = [growth.expected_follows(a, h) for a, h in zip(block.audience, hours, strict=True)]
    gained = per_channel(np.minimum(np.array(follows), growth.MAX_FOLLOWS))
    watched, streamed = per_channel(block.audience * hours), per_channel(hours)
    big = streamed > 0
    big[big] = watched[big] / streamed[big] >= 1000
    monthly = gained[big] / (120 * traits.audience[big])  # seeded: about 120x the audience
    assert big.sum() >= 3 and 0.016 <= float(np.median(monthly)) <= 0.040


def test_partners_are_half_a_percent_of_the_channels_that_stream() -> None:
    """Partnered channels are 0.3-0.7% of the channels that went live in a month."""
    traits = world()[0]
    went_live = per_channel(session_hours()) > 0
    assert 0.003 <= status.partnered(traits.audience)[went_live].mean() <= 0.007


def test_english_holds_over_half_the_viewing_and_far_outstreams_spanish() -> None:
    """English holds 0.50-0.60 of viewer-hours (5% of channels name no language) and
    streams at least 4.5x the hours Spanish does."""
    traits = world()[0]
    hours = session_hours()
    language = status.languages(traits.audience)
    english, spanish = language == 0, language == 1
    assert LANGUAGES[0][0] == "en" and LANGUAGES[1][0] == "es"
    watched = per_channel(world()[1].audience * hours)
    assert 0.50 <= 0.95 * watched[english].sum() / watched.sum() <= 0.60
    streamed = per_channel(hours)
    assert streamed[english].sum() / streamed[spanish].sum() >= 4.5


def test_partners_pay_about_four_and_a_half_subscriptions_per_thousand_viewer_hours() -> None:
    """Partners' subscribers over the platform's viewer-hours: 3.5-5.5 per 1,000, and 10-30
    per 1,000 for a partner of about a hundred viewers."""
    traits = world()[0]
    partners = np.flatnonzero(status.partnered(traits.audience))
    paid = sum(status.subscribers(traits.audience[i], traits.hours[i]) for i in partners)
    watched = per_channel(world()[1].audience * session_hours()).sum()
    assert 3.5 <= paid / watched * 1000 <= 5.5
    assert 10 <= status.subscriptions_per_viewer_hour(120.0) * 1000 <= 30


def test_about_a_fifth_of_chat_lines_are_emotes_alone() -> None:
    """Emote-only lines are 0.17-0.27 of a chat's messages (highlights included)."""
    emotes, only, lines = set(chatter.EMOTES), 0, 0
    for channel in range(20):
        voice = chatter.ChannelVoice(0, 100_000 + channel, [f"u{i}" for i in range(40)])
        rng = random.Random(channel)
        for _ in range(60):
            for _ in range(round(20 * voice.intensity(rng))):  # busier minutes say more
                words = voice.line(rng, voice.speaker(rng)).split()
                only += all(word in emotes for word in words)
                lines += 1
    assert 0.17 <= only / lines <= 0.27
