"""A fresh platform's first minute of chat: neither busier nor quieter than the rate law
(the busiest chat no longer starts in a highlight because it is planned first)."""

from __future__ import annotations

import random
import statistics

from explorer.emulator import chatter
from explorer.emulator.context import Config
from explorer.emulator.simulate import Script

NAMES = {user: f"user{user}" for user in range(10, 300)}


def intensity_of(channel: int, live: list[tuple[int, int, int, str]]) -> float:
    """``channel``'s intensity in the first minute of a fresh script running ``live``."""
    script = Script(0, range(10, 300), Config(), 1.0)
    script.set_live(live, 0, NAMES)
    return script.plans[channel].intensity


def test_a_channels_bursts_do_not_hang_on_the_channels_planned_before_it() -> None:
    """A channel's first-minute intensity is the same alone or after a busier channel."""
    alone = intensity_of(2, [(2, 5, 100, "en")])
    second = intensity_of(2, [(1, 4, 5000, "en"), (2, 5, 100, "en")])
    assert alone == second


def test_a_voices_first_minute_is_as_busy_as_any_other_on_average() -> None:
    """Over many channels, a voice's first intensity averages 1, as its later ones do."""
    first = []
    for channel in range(4000):
        voice = chatter.ChannelVoice(0, 100_000 + channel, ["a", "b"])
        first.append(voice.intensity(random.Random(channel)))
    assert abs(statistics.mean(first) - 1.0) < 0.04
