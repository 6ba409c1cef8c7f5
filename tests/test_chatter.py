"""Chat content and the chat rate law: seeded voices, lines the platform parses, emotes of
the platform's pack, a rate that grows slower than the audience, known moderation kinds.

Statistical targets (lengths, emote share, concentration, bursts) are measured in
``benchmarks/chat_content.py``, not here.
"""

from __future__ import annotations

import base64
import random
import struct
from collections.abc import Sequence

import pytest

from explorer.emulator import chatter
from explorer.emulator.chat import dispatch
from explorer.emulator.chat.emoticons import EMOTICONS, PACK, SIZE, image, sheet
from explorer.emulator.chat.messages import compose
from explorer.emulator.chat.moderation import MAX_TIMEOUT_SECONDS, parse_duration
from explorer.emulator.chatter import ChannelVoice, chat_rate, moderation, timeout_duration
from explorer.events.rows import message_text

NAMES = [f"chatter_{index}" for index in range(200)]
KNOWN = {name: (index + 1, name) for index, name in enumerate(NAMES)}


def _chat(seed: int, lines: int = 3000) -> list[tuple[object, ...]]:
    """``lines`` steps of one channel's chat: (speaker, line, moderation), an intensity per 60."""
    voice = ChannelVoice(seed, 7, NAMES)
    rng = random.Random(seed)
    steps: list[tuple[object, ...]] = []
    for index in range(lines):
        if index % 60 == 0:
            steps.append(("minute", voice.intensity(rng)))
        speaker = voice.speaker(rng)
        steps.append((speaker, voice.line(rng, speaker), moderation(rng)))
    return steps


def _components(line: str) -> list[dict[str, object]]:
    components, _ = compose(line, lambda name: KNOWN.get(name))
    return components


def test_same_seed_same_chat() -> None:
    """The same seed and rng sequence give the same speakers, lines, intensities and
    moderation; another seed gives another chat."""
    assert _chat(1) == _chat(1) != _chat(2)


def test_every_line_parses_into_components() -> None:
    """Every line composes into components whose text is the line (``/me`` aside), and
    mentions of chatters become tags."""
    lines = [step[1] for step in _chat(3) if step[0] != "minute"]
    kinds: set[object] = set()
    for line in map(str, lines):
        components, meta = compose(line, lambda name: KNOWN.get(name))
        assert components and 0 < len(line) <= 360
        shown = message_text({"message": {"message": components}})
        typed = line.removeprefix("/me ") if meta.get("me") else line
        assert shown.split() == typed.replace("https://", "").split()
        kinds |= {component["type"] for component in components}
    assert kinds == {"text", "emoticon", "tag", "link"}
    assert any(line.startswith("/me ") for line in lines)
    assert any(line.startswith("!") for line in lines)


def test_emote_texts_become_emoticon_components() -> None:
    """Each emote chat uses is an emoticon of the default pack: alone or among words it
    becomes an emoticon component with its cell on the sprite sheet."""
    assert set(chatter.EMOTES) == set(EMOTICONS)
    for text in chatter.EMOTES:
        components = _components(f"wow {text} {text}")
        emoticons = [c for c in components if c["type"] == "emoticon"]
        assert [c["text"] for c in emoticons] == [text, text]
        assert emoticons[0]["pack"] == PACK and emoticons[0]["coords"] == EMOTICONS[text].coords


def test_named_emotes_are_drawn_on_the_sheet() -> None:
    """The sprite sheet has a cell for every emoticon, and each emoticon's image is a 24x24
    PNG that differs from the others."""
    width, height = struct.unpack(">II", sheet()[16:24])
    assert all(
        e.coords["x"] + SIZE <= width and e.coords["y"] + SIZE <= height for e in EMOTICONS.values()
    )
    images = {text: image(text) for text in EMOTICONS}
    assert len(set(images.values())) == len(images)
    assert struct.unpack(">II", base64.b64decode(images["PogFace"])[16:24]) == (SIZE, SIZE)


def test_chat_rate_grows_slower_than_the_audience() -> None:
    """Messages a minute rise with viewers while each viewer chats less; a channel nobody
    watches still chats a little, and 13,454 viewers chat 0.036 per viewer-minute."""
    audiences = [0, 1, 2, 5, 10, 50, 100, 1_000, 13_454, 100_000, 1_000_000]
    rates = [chat_rate(viewers) for viewers in audiences]
    assert rates[0] > 0 and rates == sorted(set(rates))
    per_viewer = [rate / viewers for rate, viewers in zip(rates[1:], audiences[1:], strict=True)]
    assert per_viewer == sorted(per_viewer, reverse=True)
    assert chat_rate(13_454) / 13_454 == pytest.approx(0.036, abs=1e-4)


@pytest.mark.parametrize("bad", [-1, float("nan")])
def test_chat_rate_refuses_impossible_audiences(bad: float) -> None:
    """A negative or NaN audience is a ValueError naming the value."""
    with pytest.raises(ValueError, match="viewers must be"):
        chat_rate(bad)


def test_moderation_kinds_are_chat_methods_the_simulator_performs() -> None:
    """moderation returns None or a kind whose chat method the platform's rooms declare, and
    timeouts last a duration the chat's timeout takes (bans the longest)."""
    rng = random.Random(0)
    kinds = {moderation(rng) for _ in range(20_000)}
    assert kinds == {None, *chatter.MODERATION_METHODS}
    assert set(chatter.MODERATION_METHODS.values()) <= set(dispatch.METHODS)
    durations = {timeout_duration(rng) for _ in range(200)}
    assert chatter.BAN in durations and len(durations) > 3
    assert all(0 < (parse_duration(d) or 0) <= MAX_TIMEOUT_SECONDS for d in durations)
    assert parse_duration(chatter.BAN) == MAX_TIMEOUT_SECONDS


def test_intensity_is_positive_and_averages_one() -> None:
    """Intensity multiplies the rate by a positive factor whose long-run mean is 1, so
    chat_rate stays the expected rate."""
    voice = ChannelVoice(0, 1, NAMES)
    rng = random.Random(0)
    values = [voice.intensity(rng) for _ in range(50_000)]
    assert min(values) > 0 and max(values) > 3
    assert sum(values) / len(values) == pytest.approx(1.0, abs=0.05)


def test_speakers_index_the_names_and_a_lone_chatter_mentions_nobody() -> None:
    """speaker() indexes names; with one name every line is that chatter's and names nobody."""
    voice = ChannelVoice(0, 1, ["alone"])
    rng = random.Random(0)
    for _ in range(500):
        assert voice.speaker(rng) == 0
        assert "@" not in voice.line(rng, 0)
    with pytest.raises(ValueError, match="at least one"):
        ChannelVoice(0, 1, [])


def test_a_channel_chats_in_its_language() -> None:
    """A Spanish channel says many lines in Spanish; English chat (and that of a language
    without lines of its own) mixes in a few lines of every language."""

    def share(language: str, phrases: Sequence[str]) -> float:
        voice = ChannelVoice(0, 1, NAMES, language)
        rng = random.Random(0)
        lines = [voice.line(rng, voice.speaker(rng)) for _ in range(2000)]
        return sum(any(phrase in line for phrase in phrases) for line in lines) / len(lines)

    every = [line for lines in chatter.LOCAL_LINES.values() for line in lines]
    assert share("es", chatter.LOCAL_LINES["es"]) > 0.2
    assert 0.005 < share("en", every) == share("xx", every) < 0.05
