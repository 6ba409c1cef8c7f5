"""What a live channel's chat says and how much: the chat rate law, speakers, lines, bursts
and moderation, calibrated to published measurements (``docs/realism.md``, rows 8-12).

Pure and seeded: no clock, no I/O, no store. The simulator owns time and the world; it asks
:func:`chat_rate` how many messages a minute a channel of some audience makes, multiplies by
:meth:`ChannelVoice.intensity` once per simulated minute, and for each message asks the
channel's :class:`ChannelVoice` who speaks (:meth:`~ChannelVoice.speaker`) and what they say
(:meth:`~ChannelVoice.line`), then :func:`moderation` whether it is removed. Every draw comes
from the ``rng`` the caller passes (the voice's own traits from ``seed`` and the channel id),
so the same seed and call sequence give the same chat.

**The rate law.** Messages a minute grow slower than the audience (row 9: per-viewer
participation falls as chats grow), as ``FLOOR + SCALE * ((v + KNEE)**EXPONENT -
KNEE**EXPONENT)``: a power law of exponent :data:`EXPONENT` = 0.85 for large audiences, whose
scale is solved so that 13,454 viewers chat at 0.036 messages per viewer-minute (xQc's
measured 478 a minute, row 9). :data:`KNEE` is where the power law takes over: below a few
thousand viewers each viewer chats at much the same rate (0.040 at 3,000 viewers, 0.0415 at
1,000, 0.044 at 100, 0.062 at 10, the streamer's own lines showing in the smallest), so the
live world, whose viewing sits in channels of tens to a few hundred viewers, chats at 0.050
per viewer-minute over its live audiences (row 8; 0.042-0.048 over the rank-size platforms
``benchmarks/chat_content.py`` tries, whose viewing leans more to the big channels).
:data:`FLOOR` is the streamer alone, who still chats now and then (0.2 a minute).

**Content** (row 10, 11 and the secondary rows): short reactions, emote-only lines and emote
spam, questions, ``@name`` replies to recent chatters, ``!commands``, ``/me`` actions, links,
greetings, lines in the channel's language (a few of every language in English chats), some
longer sentences, and copypasta that catches on and is repeated for a while. Emotes are the
platform's own ``default`` pack (:mod:`~explorer.emulator.chat.emoticons`), popular ones far
more than others, each channel with favourites. Highlights (see
:meth:`ChannelVoice.intensity`) make chat emote-heavier and start copypasta.

**Speakers** have heavy-tailed activity (log-normal weights, the very top capped), so in a
big chat the top 10% of chatters send about half the messages and the top 1% about a tenth;
how many post once depends on how many names the caller gives a channel against how many
lines it draws (about a third when there are a third as many names as lines).

**Moderation** (row 12), per message: ``delete`` (the message is removed: mostly a platform
filter, the rest a moderator) or ``timeout`` (the sender is silenced, which also removes the
message); one timeout in five is a ban. Bans on the platform are a REST role change, which
the chat cannot make, so a ban is performed as the longest timeout the chat takes
(:data:`BAN`, 7 days; :func:`timeout_duration`).
"""

from __future__ import annotations

import bisect
import math
import random
from collections import deque
from collections.abc import Sequence
from itertools import accumulate

from explorer.emulator import highlights
from explorer.emulator.chat.moderation import MAX_TIMEOUT_SECONDS, format_duration
from explorer.emulator.highlights import HIGHLIGHT_DECAY, MEAN_EXCESS

# --- the rate law -------------------------------------------------------------------------

#: Exponent β of messages a minute against viewers, for large audiences.
EXPONENT = 0.85
#: Viewers below which per-viewer participation stops rising: the power law holds above it.
KNEE = 3000.0
#: Messages a minute of a channel nobody watches: the streamer, now and then.
FLOOR = 0.2
#: The anchor: xQc's 13,454 average viewers chatting 0.036 messages per viewer-minute.
ANCHOR_VIEWERS = 13_454.0
ANCHOR_PER_VIEWER = 0.036
#: Solved so that the law passes through the anchor.
SCALE = (ANCHOR_PER_VIEWER * ANCHOR_VIEWERS - FLOOR) / (
    (ANCHOR_VIEWERS + KNEE) ** EXPONENT - KNEE**EXPONENT
)


def chat_rate(viewers: float) -> float:
    """Expected messages per minute of a live channel with ``viewers`` concurrent viewers."""
    if not viewers >= 0:  # also refuses NaN
        raise ValueError(f"viewers must be a number >= 0, not {viewers!r}")
    return FLOOR + SCALE * ((viewers + KNEE) ** EXPONENT - KNEE**EXPONENT)


# --- bursts ---------------------------------------------------------------------------------

#: Per-minute log-normal noise of the chat rate, and its persistence from minute to minute.
NOISE_SIGMA = 0.3
NOISE_MEMORY = 0.8
#: Minutes of highlights a voice has behind it when first heard: a chat joined (or a platform
#: started) mid-stream is as likely to be in or after a highlight as at any other minute, so
#: its first minute is neither quieter (no highlight yet) nor busier than the law.
WARM_UP = 12

# --- moderation -----------------------------------------------------------------------------

#: Per message: removed (a filter or a moderator), or its sender timed out (or banned).
DELETE_ODDS = 2.35 / 1000
TIMEOUT_ODDS = 1.25 / 1000
#: The share of timeouts that stand for bans, and the timeout a ban is performed as.
BAN_SHARE = 0.2
BAN = format_duration(MAX_TIMEOUT_SECONDS)
#: Moderation kinds :func:`moderation` returns, each with the chat method that performs it.
MODERATION_METHODS = {"delete": "deleteMessage", "timeout": "timeout"}
_TIMEOUTS = ("10s", "30s", "1m", "1m", "5m", "5m", "10m", "10m", "30m", "1h")


def moderation(rng: random.Random) -> str | None:
    """What moderation does about one message just sent: None (most of the time), ``delete``
    (the message is removed) or ``timeout`` (its sender is silenced and their messages
    removed; :func:`timeout_duration` says for how long)."""
    roll = rng.random()
    if roll < DELETE_ODDS:
        return "delete"
    if roll < DELETE_ODDS + TIMEOUT_ODDS:
        return "timeout"
    return None


def timeout_duration(rng: random.Random) -> str:
    """How long a ``timeout`` lasts, as the chat's ``timeout`` method takes it: seconds to an
    hour, or :data:`BAN` (7 days) for the one in five that stands for a ban."""
    return BAN if rng.random() < BAN_SHARE else rng.choice(_TIMEOUTS)


# --- what chat says -------------------------------------------------------------------------

#: The pack's emotes, most used first (named emotes, like a platform's globals, lead).
EMOTES: tuple[str, ...] = (
    "LulFace",
    "PogFace",
    "HypeFace",
    ":)",
    "<3",
    "CryLaugh",
    "HeartEyes",
    ":D",
    "ThinkFace",
    "ClapClap",
    "FireUp",
    "SadFace",
    "WaveHi",
    "EasyWin",
    "XD",
    "GoodGame",
    "SweatFace",
    "WowFace",
    "RageFace",
    ":(",
    "CoolCat",
    "SaltyFace",
    ";)",
    ":P",
    "B)",
    "DeadFace",
    "SleepyFace",
    "BlushFace",
    ":O",
    ":'(",
    ":|",
    ":*",
)
#: Zipf exponent of emote popularity.
EMOTE_ZIPF = 1.1
#: How many of the popular emotes (the first ``FAVOURITE_POOL``) a channel favours, and how
#: much more it uses them.
FAVOURITES = 3
FAVOURITE_POOL = 12
FAVOURITE_BOOST = 3.0
#: Emotes in a line that has any: 1, 2, 3, or a spam run of 4-8 of one emote.
_EMOTE_RUNS = ((1, 0.56), (2, 0.2), (3, 0.1), (0, 0.14))
#: Log-normal spread of chatters' activity, capped at this many standard deviations (the
#: keenest 1% send about a tenth of the messages, not a sixth).
ACTIVITY_SIGMA = 1.6
ACTIVITY_CAP = 2.5
#: Recent speakers a mention picks from.
RECENT = 30

_REACTIONS = (
    "gg",
    "lol",
    "LOL",
    "no way",
    "LETS GOOO",
    "lets gooo",
    "WHAT",
    "omg",
    "nice",
    "clean",
    "insane",
    "sheesh",
    "rip",
    "F",
    "W",
    "huge",
    "so close",
    "unlucky",
    "hahaha",
    "wow",
    "pog",
    "clutch",
    "big brain",
    "true",
    "facts",
    "yikes",
    "oof",
    "nice one",
    "no shot",
    "HUH",
    "bruh",
    "not like this",
    "lmao",
    "called it",
    "GG WP",
    "what a shot",
    "that was close",
    "let's go",
    "so good",
    "this is hype",
    "what a play",
    "he's cooking",
    "actually cracked",
    "we're so back",
    "its over",
    "chat is wild",
    "down bad",
    "ez clap",
    "first try",
    "how",
)
#: Lines in a channel's own language, by the world's language codes (``world.LANGUAGES``).
LOCAL_LINES: dict[str, tuple[str, ...]] = {
    "es": ("jajaja", "que buena jugada", "hola a todos", "vamos!", "no puede ser", "qué locura"),
    "de": ("krass", "moin moin", "was geht", "sehr gut", "na los", "guten Abend zusammen"),
    "fr": ("mdr", "trop fort", "bonsoir le chat", "c'est incroyable", "allez!", "pas mal"),
    "pt": ("kkkkkkk", "bom dia chat", "que isso", "muito bom", "boa noite galera"),
    "ru": ("давай давай", "ахаха", "всем привет", "красиво", "ну ты даёшь"),
    "ja": ("sugoi", "すごい", "こんばんは", "ナイス", "やばい"),
    "ko": ("ㅋㅋㅋㅋ", "대박", "안녕하세요", "와 진짜"),
    "it": ("grande", "che giocata", "ciao a tutti", "dai dai dai", "pazzesco"),
    "pl": ("siema", "ale akcja", "dobra robota", "o kurcze"),
    "nl": ("wat een actie", "goeienavond chat", "echt goed", "jammer"),
    "sv": ("snyggt", "hej chatten", "vad hände", "grymt"),
    "tr": ("cok iyi", "selam millet", "helal olsun", "inanilmaz"),
    "zh": ("哈哈哈", "太强了", "大家好", "厉害"),
    "ar": ("ههههه", "مرحبا", "رائع"),
}
#: Share of lines in the channel's own language where it is not English; English chats mix in
#: a few lines of every language.
LOCAL_SHARE = 0.35
_FOREIGN = tuple(line for lines in LOCAL_LINES.values() for line in lines)
_QUESTIONS = (
    "what rank is this?",
    "how long have you been streaming today?",
    "what's the song called?",
    "is this the new patch?",
    "when is the next stream?",
    "what settings do you use?",
    "what mouse is that?",
    "how do you get that skin?",
    "is this ranked or casual?",
    "did you see the patch notes?",
    "where is the discord link?",
    "are you in the tournament this weekend?",
    "what happened? just got here",
    "how many hours do you have in this game?",
    "can you show the build again?",
    "why did he go left there?",
    "is that a new keyboard?",
    "who won the last round?",
    "are we doing the challenge later?",
    "wait what just happened?",
)
_COMMENTS = (
    "that was the cleanest play I've seen all week",
    "chat is moving so fast nobody will see this",
    "I can't believe that worked",
    "he always does this in the last round",
    "the music tonight is really good",
    "this map is so much better after the update",
    "I would have panicked so hard there",
    "you should try the other build next game",
    "the timing on that was perfect",
    "my money is on the blue team",
    "watching this instead of doing homework",
    "honestly the best stream on the platform",
    "I missed it, can someone clip that",
    "the enemy team is playing really well",
    "that boss fight looks impossible",
    "remember to drink some water",
    "this is my favourite part of the game",
    "the comeback is real",
    "we need a replay of that",
    "no way that was legit",
    "that strat is actually genius",
    "I have been here since the start",
    "the lag is not your fault",
    "this song goes hard",
    "just got off work, perfect timing",
)
_GREETINGS = (
    "hi",
    "hello chat",
    "hey everyone",
    "yo",
    "good evening chat",
    "hiya",
    "o/",
    "hello from Brazil",
    "morning from Europe",
    "back from work",
    "just got here, what did I miss?",
    "hey hey",
)
_COMMANDS = (
    "!uptime",
    "!discord",
    "!socials",
    "!song",
    "!rank",
    "!followage",
    "!commands",
    "!lurk",
    "!sens",
    "!specs",
    "!points",
    "!giveaway",
)
_ACTIONS = (
    "dances",
    "claps",
    "grabs popcorn",
    "waves",
    "cheers",
    "takes notes",
    "hides behind the couch",
    "sends good vibes to everyone in chat",
    "is lurking",
    "brought snacks for the whole chat",
)
_LINKS = (
    "https://example.com/clip/{token}",
    "example.org/guides/{token}",
    "www.example.net/patch-notes",
    "https://example.com/watch?v={token}",
)
_LINK_LEADS = ("clip:", "clip it", "look", "", "guide here", "patch notes")
_REPLIES = (
    "true",
    "lol",
    "exactly",
    "same",
    "no way",
    "agreed",
    "thanks!",
    "welcome!",
    "hi!",
    "you're right",
    "that's what I said",
    "it's on the discord",
    "check the commands",
    "he said it earlier",
    "trust me it gets better",
)
_PASTAS = (
    "I have watched every single stream for three years and I have never seen a play that "
    "clean, my neighbour just knocked on the wall to ask what the noise was {e}",
    "{e} {e} {e} THIS IS THE MOMENT WE HAVE BEEN WAITING FOR {e} {e} {e}",
    "chat if you see this message you are legally required to type {e} in chat or your "
    "next game will lag for a week",
    "me: I will go to bed early tonight. also me at 3am watching this stream: {e}",
    "they said it could not be done. they said the map was too hard. they said no one "
    "would ever clear it on stream. and then this legend walked in {e} {e}",
    "{e} the streamer when the chat is nice {e} the streamer when the chat is mean {e}",
    "POV: you told your friends this was a chill stream {e} {e}",
)
#: Line kinds and their weights in an ordinary minute (emote-only lines, with highlights, are
#: about a fifth of all messages: ``realism.md`` row 21).
_KINDS = (
    ("emotes", 0.2),
    ("reaction", 0.26),
    ("question", 0.08),
    ("mention", 0.09),
    ("comment", 0.10),
    ("long", 0.055),
    ("greeting", 0.05),
    ("command", 0.04),
    ("action", 0.02),
    ("link", 0.015),
    ("foreign", 0.03),
    ("pasta", 0.004),
)
#: How much more of each kind chat says during a highlight.
_HYPE = {"emotes": 4.0, "reaction": 3.0, "pasta": 5.0}
#: Chance of emotes decorating a line of each kind.
_DECORATED = {
    "reaction": 0.55,
    "question": 0.15,
    "mention": 0.3,
    "comment": 0.35,
    "long": 0.3,
    "greeting": 0.4,
    "foreign": 0.45,
}
#: Lines a copypasta lives for once started, and the share of lines it takes meanwhile.
PASTA_LIFE = (10, 40)
PASTA_SHARE = 0.2


def _cumulative(weights: Sequence[float]) -> list[float]:
    return list(accumulate(weights))


def _pick(rng: random.Random, cumulative: Sequence[float]) -> int:
    """An index drawn with the weights whose running sums are ``cumulative``."""
    return min(bisect.bisect(cumulative, rng.random() * cumulative[-1]), len(cumulative) - 1)


class ChannelVoice:
    """One channel's chat: who speaks and what they say (state: copypasta, bursts).

    The voice's traits (chatters' activity, favourite emotes, the rate's first noise) are
    drawn from ``seed`` and ``channel_id``; everything else from the ``rng`` each call is
    given.
    """

    def __init__(
        self, seed: int, channel_id: int, names: Sequence[str], language: str = "en"
    ) -> None:
        """``names`` are the chatters :meth:`speaker` picks from (indexes into it) and
        ``@mentions`` name; one is enough. In a channel whose ``language`` is another than
        English, part of chat is in that language."""
        if not names:
            raise ValueError("a channel's voice needs at least one chatter name")
        traits = random.Random(f"{seed}:{channel_id}:chatter")
        self.names = list(names)
        self._activity = _cumulative(
            [math.exp(ACTIVITY_SIGMA * min(ACTIVITY_CAP, traits.gauss())) for _ in self.names]
        )
        weights = [1 / (rank + 1) ** EMOTE_ZIPF for rank in range(len(EMOTES))]
        for favourite in traits.sample(range(FAVOURITE_POOL), FAVOURITES):
            weights[favourite] *= FAVOURITE_BOOST
        self._emotes = _cumulative(weights)
        self._foreign = LOCAL_LINES.get(language, _FOREIGN)
        kinds = dict(_KINDS)
        if language in LOCAL_LINES:
            kinds = {kind: weight * (1 - LOCAL_SHARE) for kind, weight in kinds.items()}
            kinds["foreign"] += LOCAL_SHARE * sum(weight for _, weight in _KINDS)
        self._kinds = list(kinds)
        self._calm = _cumulative(list(kinds.values()))
        self._hyped = _cumulative([kinds[kind] * _HYPE.get(kind, 1.0) for kind in kinds])
        self._runs = _cumulative([share for _, share in _EMOTE_RUNS])
        self._recent: deque[int] = deque(maxlen=RECENT)
        self._pasta = ""
        self._pasta_left = 0
        self._noise = traits.gauss(0.0, NOISE_SIGMA)
        self._excess = 0.0
        for _ in range(WARM_UP):  # highlights under way when the voice is first heard
            self._highlight(traits)

    # --- who and how much -----------------------------------------------------------------

    def speaker(self, rng: random.Random) -> int:
        """The index into ``names`` of who sends the next message (the keen ones most)."""
        return _pick(rng, self._activity)

    def intensity(
        self, rng: random.Random, highlight: float | None = None, minutes: int = 1
    ) -> float:
        """The multiplier of :func:`chat_rate` for the next simulated minute: persistent
        log-normal noise, and now and then a highlight that multiplies chat about five-fold
        and fades over a few minutes. Its long-run mean is 1. ``highlight`` is the excess the
        stream's own highlights of the ``minutes`` since the last call add now
        (``highlights.excess``: the simulator knows the session); without it the voice draws
        its highlights itself, one chance a call."""
        keep = NOISE_MEMORY
        self._noise = keep * self._noise + math.sqrt(1 - keep * keep) * rng.gauss(0, NOISE_SIGMA)
        if highlight is None:
            self._highlight(rng)
        else:
            self._excess = self._excess * HIGHLIGHT_DECAY ** max(1, minutes) + highlight
        base = math.exp(self._noise - NOISE_SIGMA**2 / 2)
        return base * (1 + self._excess) / (1 + MEAN_EXCESS)

    def _highlight(self, rng: random.Random) -> None:
        """A minute of the voice's own highlights: the excess fades, now and then a new one."""
        self._excess = self._excess * HIGHLIGHT_DECAY + highlights.drawn(rng)

    @property
    def hyped(self) -> bool:
        """True during a highlight (chat goes emote-heavy and copypasta starts)."""
        return self._excess > 1.0

    # --- what -------------------------------------------------------------------------------

    def line(self, rng: random.Random, speaker: int) -> str:
        """What ``speaker`` (an index into ``names``) says next."""
        if self._pasta_left > 0:
            self._pasta_left -= 1
            if rng.random() < PASTA_SHARE:
                return self._remember(speaker, self._pasta)
        kind = self._kinds[_pick(rng, self._hyped if self.hyped else self._calm)]
        text = self._body(rng, kind, speaker)
        if rng.random() < _DECORATED.get(kind, 0.0):
            emotes = self._emote_run(rng)
            text = f"{emotes} {text}" if rng.random() < 0.15 else f"{text} {emotes}"
        return self._remember(speaker, text)

    def _remember(self, speaker: int, text: str) -> str:
        self._recent.append(speaker)
        return text

    def _body(self, rng: random.Random, kind: str, speaker: int) -> str:
        if kind == "emotes":
            return self._emote_run(rng)
        if kind == "reaction":
            return rng.choice(_REACTIONS)
        if kind == "question":
            return rng.choice(_QUESTIONS)
        if kind == "comment":
            return rng.choice(_COMMENTS)
        if kind == "long":
            count = rng.randint(2, 5)
            return ". ".join(rng.choice(_COMMENTS) for _ in range(count))
        if kind == "greeting":
            return rng.choice(_GREETINGS)
        if kind == "command":
            return rng.choice(_COMMANDS)
        if kind == "action":
            return f"/me {rng.choice(_ACTIONS)}"
        if kind == "link":
            link = rng.choice(_LINKS).format(token=f"{rng.getrandbits(40):x}")
            return f"{rng.choice(_LINK_LEADS)} {link}".strip()
        if kind == "foreign":
            return rng.choice(self._foreign)
        if kind == "mention":
            return self._mention(rng, speaker)
        return self._start_pasta(rng)

    def _mention(self, rng: random.Random, speaker: int) -> str:
        """A reply to someone who spoke lately (or anyone, in a quiet chat)."""
        others = [index for index in self._recent if index != speaker]
        if others:
            other = rng.choice(others)
        elif len(self.names) > 1:
            other = rng.randrange(len(self.names) - 1)
            other += other >= speaker  # anyone but the speaker
        else:
            return rng.choice(_REACTIONS)
        name = self.names[other]
        said = rng.choice(_REPLIES + _QUESTIONS) if rng.random() < 0.8 else rng.choice(_COMMENTS)
        return f"@{name} {said}"

    def _start_pasta(self, rng: random.Random) -> str:
        """A copypasta, which others repeat for a while."""
        self._pasta = rng.choice(_PASTAS).format(e=EMOTES[_pick(rng, self._emotes)])
        self._pasta_left = rng.randint(*PASTA_LIFE)
        return self._pasta

    def _emote_run(self, rng: random.Random) -> str:
        """One to three emotes, or a spam run of one emote."""
        count = _EMOTE_RUNS[_pick(rng, self._runs)][0]
        if count == 0:
            return " ".join([EMOTES[_pick(rng, self._emotes)]] * rng.randint(4, 8))
        return " ".join(EMOTES[_pick(rng, self._emotes)] for _ in range(count))
