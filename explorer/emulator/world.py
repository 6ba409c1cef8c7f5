"""The deterministic seeded world: users, channels, types and the demo accounts.

Everything here is a pure function of ``seed`` and ``channels`` (no clock, no OS randomness),
so the same seed gives byte-identical API responses. Popularity is heavy-tailed (Pareto), as on
a real platform: a handful of channels hold most viewers, most channels have almost none.
"""

from __future__ import annotations

import gc
import operator
import random
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from itertools import accumulate, product
from typing import Any

import numpy as np
import numpy.typing as npt

from explorer.emulator.db import seeding
from explorer.emulator.db.engine import Store, dumps
from explorer.emulator.draws import Doubles, Draws, Words, doubles, hex128
from explorer.emulator.opening import Opening
from explorer.emulator.shapes import CHANNEL_FIELDS

#: The instant the seeded world describes; creation dates fall before it.
WORLD_NOW = datetime(2020, 7, 22, tzinfo=UTC)
WORLD_START = datetime(2016, 1, 5, tzinfo=UTC)
FIRST_CHANNEL_ID = 100_000
DEMO_PASSWORD = "explorer"


@dataclass(frozen=True, slots=True)
class DemoAccount:
    """A documented account that exists in every seeded world."""

    username: str
    groups: tuple[str, ...]
    about: str


DEMO_ACCOUNTS: tuple[DemoAccount, ...] = (
    DemoAccount("streamer", ("User", "Partner"), "owns channel `streamer` (online, partnered)"),
    DemoAccount("moderator", ("User",), "Mod in the `streamer` channel"),
    DemoAccount("viewer", ("User",), "a plain signed-in viewer"),
    DemoAccount("viewer2", ("User",), "a second viewer, for whispers and votes"),
    DemoAccount("staff", ("User", "Staff"), "platform staff (announcements)"),
)
#: Their usernames, in the same order.
DEMO_NAMES: tuple[str, ...] = tuple(account.username for account in DEMO_ACCOUNTS)

LANGUAGES: tuple[tuple[str, int], ...] = (
    ("en", 46),
    ("es", 10),
    ("de", 8),
    ("fr", 7),
    ("pt", 6),
    ("ru", 5),
    ("ja", 3),
    ("ko", 2),
    ("it", 3),
    ("pl", 2),
    ("nl", 2),
    ("sv", 1),
    ("tr", 2),
    ("zh", 2),
    ("ar", 1),
)

TYPE_NAMES: tuple[str, ...] = (
    "Block Craft",
    "Battle Royale Island",
    "Star Raiders",
    "Kart Legends",
    "Dungeon Delve",
    "Galactic Tactics",
    "Farm Life",
    "Street Racer X",
    "Puzzle Tower",
    "Ranked Arena",
    "Pixel Quest",
    "Shadow Ops",
    "Card Masters",
    "Sky Islands",
    "Mech Arena",
    "Rhythm Rush",
    "Zombie Night",
    "Ocean Drift",
    "Castle Siege",
    "Speedrun Classics",
    "Retro Platformer",
    "Chess",
    "Space Colony",
    "Open World Saga",
    "Soccer Pro",
    "Hoops Street",
    "Fishing Days",
    "Horror House",
    "City Builder",
    "Survival Forest",
    "Art",
    "Music",
    "Programming",
    "Web Show",
    "Creative",
    "Talk Show",
)

_SYLLABLES = (
    "ka",
    "ro",
    "mi",
    "zen",
    "tor",
    "lu",
    "vex",
    "na",
    "shi",
    "dax",
    "el",
    "qu",
    "ar",
    "by",
    "nix",
    "po",
    "rai",
    "sol",
    "te",
    "umi",
    "val",
    "wyn",
    "xo",
    "yu",
    "zed",
    "fox",
    "gale",
)
_TITLE_BITS = (
    ("Chill", "Ranked", "Late night", "Sunday", "Hardcore", "Casual", "Speedrunning", "First"),
    ("grind", "stream", "session", "games", "playthrough", "adventure", "hangout", "challenge"),
    ("with friends", "| road to top 500", "- come say hi", "!", "| day 12", "(no commentary)", ""),
)


def iso(moment: datetime) -> str:
    """ISO-8601 UTC with milliseconds, the platform's timestamp format."""
    return moment.replace(tzinfo=None).isoformat(timespec="milliseconds") + "Z"


# Draws below use ``int(random() * n)`` rather than ``randint``/``choice``: one call instead
# of four layers of Python per draw, which is most of the time a million channels take.


def _between(rng: random.Random, low: int, high: int) -> int:
    return low + int(rng.random() * (high - low + 1))


def _moment_ms(rng: random.Random, start_ms: int, end_ms: int) -> int:
    """A moment between two others (epoch milliseconds), whole seconds plus a millisecond
    draw; integers rather than datetimes, which cost microseconds a row at a million rows."""
    return (
        start_ms + int(rng.random() * ((end_ms - start_ms) / 1000)) * 1000 + _between(rng, 0, 999)
    )


_DAY_MS = 86_400_000
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_START_MS = int((WORLD_START - _EPOCH).total_seconds() * 1000)
_NOW_MS = int((WORLD_NOW - _EPOCH).total_seconds() * 1000)
_CREATED_BY_MS = _NOW_MS - 30 * _DAY_MS
_TYPES_FROM_MS = int((datetime(2000, 1, 1, tzinfo=UTC) - _EPOCH).total_seconds() * 1000)


def _iso_ms(ms: int, dates: dict[int, str]) -> str:
    """:func:`iso` of epoch milliseconds ``ms``; ``dates`` caches each day's date text."""
    day, rest = divmod(ms, _DAY_MS)
    date = dates.get(day)
    if date is None:
        date = dates[day] = (_EPOCH + timedelta(days=day)).strftime("%Y-%m-%d")
    seconds, milli = divmod(rest, 1000)
    minutes, second = divmod(seconds, 60)
    return f"{date}T{minutes // 60:02d}:{minutes % 60:02d}:{second:02d}.{milli:03d}Z"


def _types(rng: random.Random) -> list[dict[str, Any]]:
    rows = []
    for index, name in enumerate(TYPE_NAMES, start=1):
        slug = name.lower().replace(" ", "-")
        rows.append(
            {
                "id": index,
                "name": name,
                "parent": "Games" if index <= 30 else "Web Show",
                "description": f"{name} streams.",
                "source": "player.me" if index % 3 else "giantbomb",
                "coverUrl": f"/api/v1/static/types/{slug}/cover.jpg",
                "backgroundUrl": f"/api/v1/static/types/{slug}/background.jpg",
                "availableAt": _iso_ms(_moment_ms(rng, _TYPES_FROM_MS, _START_MS), {}),
            }
        )
    return rows


_NO_SOCIAL = dumps({})
_PLAIN_GROUPS = dumps(["User"])
_PREFERENCES = dumps({"chat:sounds:play": True, "channel:notifications": True})
#: Columns every seeded row holds the same value in (but the demo accounts' password and
#: groups, set after): written into the INSERT once, not bound per row (a third of its cost).
USER_SAME: dict[str, Any] = {
    "password_hash": None,
    "primaryTeam": None,
    "verified": 1,
    "groups": _PLAIN_GROUPS,
    "preferences": _PREFERENCES,
}
CHANNEL_SAME: dict[str, Any] = {
    "suspended": 0,
    "vodsEnabled": 1,
    "featureLevel": 0,
    "interactiveGameId": None,
    "transcodingProfileId": 1,
    **dict.fromkeys(
        ("coverId", "thumbnailId", "badgeId", "hosteeId", "bannerUrl", "costreamId", "deletedAt")
    ),
}
#: Column order of the rows :func:`generate` yields: the rest.
USER_COLUMNS = (
    "id",
    "username",
    "email",
    "level",
    "experience",
    "sparks",
    "avatarUrl",
    "bio",
    "social",
    "createdAt",
    "updatedAt",
)
#: The channel columns: the declared fields (``shapes.py``), then the owner's stream key.
CHANNEL_COLUMNS = tuple(name for name in (*CHANNEL_FIELDS, "streamKey") if name not in CHANNEL_SAME)
_LANGUAGE_NAMES = tuple(name for name, _ in LANGUAGES)
_AUDIENCES = ("family", "teen", "18+")
_BIOS = (None, "Streamer and gamer.", "Just here for the chat.")
_AUDIENCE_CUMULATIVE = tuple(accumulate((3, 6, 1)))


@dataclass(frozen=True, slots=True)
class World:
    """The seeded world: its types and roles, and its users and channels as a stream of
    chunks of rows, users beside their channels (a million channels would not fit in memory
    as dicts)."""

    types: list[dict[str, Any]]
    roles: list[dict[str, Any]]
    chunks: Iterator[tuple[list[tuple[Any, ...]], list[tuple[Any, ...]]]]
    #: The demo accounts' (password hash, groups, user id), unlike the others'.
    accounts: list[tuple[str | None, str, int]]


def generate(seed: int, channels: int, start: Opening, demo_hash: str | None = None) -> World:
    """The world for ``seed``: types, roles, and chunks of (user rows, channel rows) in id
    order of the users, columns as :data:`USER_COLUMNS` and :data:`CHANNEL_COLUMNS` (the others
    as :data:`USER_SAME` and :data:`CHANNEL_SAME`); ``start`` is what the channels' sessions
    say at the world's instant (``categories.opening``).

    The demo accounts come first, with ``demo_hash`` as their password hash; :func:`seed_store`
    computes it, the only step that costs real time (a slow KDF).
    """
    if channels < len(DEMO_ACCOUNTS):
        raise ValueError(f"a world needs at least {len(DEMO_ACCOUNTS)} channels")
    if start.category is None:
        raise ValueError("the opening has no categories: seed from categories.opening")
    rng = random.Random(seed)
    types = _types(rng) + list(start.types)
    # Each user's channel id follows their user id, so both tables load in key order (a
    # shuffled id put every insert at a random place in a million-row table: 40 % slower).
    roles = [{"channelId": FIRST_CHANNEL_ID, "userId": 2, "roles": dumps(["Mod"])}]
    chunks = _chunks(Draws(rng), channels, start)
    accounts = [
        (demo_hash, dumps(list(demo.groups)), user_id)
        for user_id, demo in enumerate(DEMO_ACCOUNTS, start=1)
    ]
    return World(types, roles, chunks, accounts)


#: Rows per chunk: big enough to amortize, small enough to stream.
_CHUNK = 20_000
#: Pairs of words a row's draws take at most, but for retried usernames (6 more each).
_ROW_PAIRS = 40
#: Every title, in the order of its three draws (:data:`_TITLE_BITS`).
_TITLES = tuple(" ".join(parts).strip() for parts in product(*_TITLE_BITS))


#: Every username base a draw can give (2 or 3 syllables), numbered by its draws: ``a * 27 + b``
#: for two, ``729 + (a * 27 + b) * 27 + c`` for three. No two spell the same name, and none
#: is a demo account's, so a username is known by its number (:func:`_username_keys`).
_BASES = np.array(
    [a + b for a, b in product(_SYLLABLES, repeat=2)]
    + [a + b + c for a, b, c in product(_SYLLABLES, repeat=3)],
    dtype=object,
)
#: A username's number suffix by its draw (1-999), none for 0.
_SUFFIXES = np.array(["", *map(str, range(1, 1000))], dtype=object)


def _username_keys(values: Doubles) -> tuple[npt.NDArray[np.int32], npt.NDArray[np.int32]]:
    """For every position of the draws ``values`` a username attempt could start at: the
    username it draws, as a key (its base's number times 1,000 plus its suffix, 0 for none),
    and the position after its draws.

    An attempt draws a flag (3 syllables if at least 0.5, else 2), the syllables, then a flag
    (a number if below 0.5) and the number. Working this out for every position at once in
    numpy costs less than drawing the attempts one by one in Python (the layout's loop); the
    choices are blended arithmetically (``a + flag * (b - a)``), several times quicker than
    ``np.where`` here."""
    size = len(_SYLLABLES)
    count = max(len(values) - 5, 0)
    low = values < 0.5
    syllable = (values * size).astype(np.int32)
    number = (values * 999).astype(np.int32)
    number += 1
    three = ~low[:count]
    key = syllable[1 : count + 1] * size
    key += syllable[2 : count + 2]
    third = key * (size - 1)
    third += syllable[3 : count + 3]
    third += size * size
    third *= three
    key += third
    key *= 1000
    numbered = low[3 : count + 3] ^ (three & (low[4 : count + 4] ^ low[3 : count + 3]))
    suffix = number[5 : count + 5] - number[4 : count + 4]
    suffix *= three
    suffix += number[4 : count + 4]
    suffix *= numbered
    key += suffix
    after = np.arange(4, count + 4, dtype=np.int32)
    after += three
    after += numbered
    return key, after


def _usernames(keys: list[int]) -> list[str]:
    """The username of each key (:func:`_username_keys`); a negative key ``-1 - i`` is demo
    account ``i``'s."""
    found = np.asarray(keys, dtype=np.int64)
    drawn = np.maximum(found, 0)
    names: list[str] = list(
        map(operator.add, _BASES[drawn // 1000].tolist(), _SUFFIXES[drawn % 1000].tolist())
    )
    for index in np.flatnonzero(found < 0).tolist():
        names[index] = DEMO_ACCOUNTS[-1 - keys[index]].username
    return names


class _Stream:
    """A chunk's draws: their words and doubles (read in bulk), the username each position
    would draw (:func:`_username_keys`), and views of those read one by one as Python numbers
    while laying rows out (converting every draw cost more than the layout reads); extended on
    demand."""

    def __init__(self, draws: Draws, carried: Words, rows: int) -> None:
        self.draws = draws
        self.blocks = [carried]
        self._extend(draws.pairs(max(rows * _ROW_PAIRS - len(carried), 0)))

    def _extend(self, block: Words) -> None:
        """Add ``block`` to the chunk's draws and re-derive their words, doubles and views."""
        self.blocks.append(block)
        self.words: Words = np.concatenate(self.blocks)
        self.doubles: Doubles = np.ascontiguousarray(doubles(self.words))
        self.values = self.doubles.data
        keys, after = _username_keys(self.doubles)
        self.keys, self.after = keys.data, after.data

    def limit(self, position: int) -> int:
        """Draw more if a whole row might not follow ``position``; the last position from
        which one surely does."""
        if position + _ROW_PAIRS > len(self.values):
            self._extend(self.draws.pairs(_ROW_PAIRS * 1000))
        return len(self.values) - _ROW_PAIRS


def _layout(
    stream: _Stream, indexes: range, taken: set[int], featured: list[bool]
) -> tuple[list[str], list[int], int]:
    """Walk the chunk's draws in order, as generating each row would: the rows' usernames
    (drawn until unused; ``taken`` holds the keys of those used), where each row's fixed draws
    begin, and where the next chunk's begin.

    A row draws its username (2 or 3 syllables, maybe a number), 14 fixed draws (dates,
    counters, bio, social, title), one more if ``featured`` (popular enough to be a
    candidate), 4 fixed, then a type and a language (each a flag and, if set, a pick) and a
    128-bit stream key. The loop is the one part of seeding that runs per row in Python.
    """
    keys, bases = [], []
    position = 0
    limit = stream.limit(position)
    values, drawn, after = stream.values, stream.keys, stream.after
    demos = len(DEMO_ACCOUNTS)
    for index in indexes:
        if position > limit:
            limit = stream.limit(position)
            values, drawn, after = stream.values, stream.keys, stream.after
        if index < demos:
            key = -1 - index
        else:
            key = drawn[position]
            position = after[position]
            while key in taken:
                if position > limit:
                    limit = stream.limit(position)
                    values, drawn, after = stream.values, stream.keys, stream.after
                key = drawn[position]
                position = after[position]
            taken.add(key)
        keys.append(key)
        bases.append(position)
        position += 18 + featured[index]
        position += 2 if values[position] < 0.92 else 1
        position += 2 if values[position] < 0.95 else 1
        position += 2
    return _usernames(keys), bases, position


def _chunks(
    draws: Draws,
    channels: int,
    start: Opening,
) -> Iterator[tuple[list[tuple[Any, ...]], list[tuple[Any, ...]]]]:
    """Each chunk of users with their channels; every random draw in a fixed order (laid out
    by :func:`_layout`, then read column by column), so a seed is a world.

    Counters follow the channel's habits: ``viewersTotal`` (views) grows with its audience and
    hours, ``numFollowers`` is about 120 times its average audience for an active channel (the
    median measured for established channels), and ``online``/``viewersCurrent`` are its
    session at the world's instant."""
    taken: set[int] = set()
    audience_all, hours_all, active_all = start.audience, start.hours, start.active
    assert start.category is not None
    categories = start.category
    featured = (audience_all > 40).tolist()
    carried = np.empty((0, 2), dtype=np.uint64)
    for low in range(0, channels, _CHUNK):
        indexes = range(low, min(low + _CHUNK, channels))
        stream = _Stream(draws, carried, len(indexes))
        names, bases, end = _layout(stream, indexes, taken, featured)
        carried = stream.words[end:]
        yield _chunk_rows(
            (stream.words, stream.doubles),
            indexes,
            names,
            np.asarray(bases, dtype=np.int64),
            (audience_all[low : indexes.stop], hours_all[low : indexes.stop]),
            active_all[low : indexes.stop],
            categories[low : indexes.stop],
            start.live,
            (start.partnered[low : indexes.stop], start.language[low : indexes.stop]),
        )


def _weighted(values: Doubles, cumulative: Sequence[float]) -> npt.NDArray[np.intp]:
    """Which option each draw picks, options weighted by their ``cumulative`` weights."""
    return np.searchsorted(np.asarray(cumulative), values * cumulative[-1], side="right")


def _iso_column(ms: npt.NDArray[np.int64]) -> list[str]:
    """:func:`iso` of each epoch millisecond in ``ms``."""
    text = np.datetime_as_string(ms.astype("datetime64[ms]"), unit="ms", timezone="UTC")
    result: list[str] = text.tolist()
    return result


def _chunk_rows(
    draws: tuple[Words, Doubles],
    indexes: range,
    names: list[str],
    base: npt.NDArray[np.int64],
    habits: tuple[Doubles, Doubles],
    active: npt.NDArray[np.bool_],
    categories: npt.NDArray[np.int64],
    live: dict[int, int],
    standing: tuple[npt.NDArray[np.bool_], npt.NDArray[np.intp]],
) -> tuple[list[tuple[Any, ...]], list[tuple[Any, ...]]]:
    """The user and channel rows of one chunk, from its draws (words and their doubles) laid
    out by :func:`_layout`, built column by column (a Python loop per row costs seconds at a
    million rows); ``standing`` is each channel's partnership and language (``status.py``)."""
    popularity, hours = habits
    size = len(indexes)
    words, value = draws
    draw = [value[base + k] for k in range(14)]
    created = _START_MS + (draw[0] * ((_CREATED_BY_MS - _START_MS) / 1000)).astype(np.int64) * 1000
    created += (draw[1] * 1000).astype(np.int64)
    updated = created + (draw[2] * ((_NOW_MS - created) / 1000)).astype(np.int64) * 1000
    updated += (draw[3] * 1000).astype(np.int64)
    months = (_NOW_MS - created) / (30 * _DAY_MS)
    views = (popularity * hours * np.minimum(months, 24) * (1 + 2 * draw[4])).astype(np.int64)
    followers = (popularity * np.where(active, 120, 10) * (0.5 + 1.0 * draw[5])).astype(np.int64)
    level = np.minimum((popularity * 3).astype(np.int64) + 1 + (draw[6] * 20).astype(np.int64), 150)
    experience = level * level * 40 + (draw[7] * 501).astype(np.int64)
    sparks = (draw[8] * 200_001).astype(np.int64)
    sizes = [len(bits) for bits in _TITLE_BITS]
    title = (draw[11] * sizes[0]).astype(np.int64) * (sizes[1] * sizes[2])
    title += (draw[12] * sizes[1]).astype(np.int64) * sizes[2]
    title += (draw[13] * sizes[2]).astype(np.int64)
    candidate = popularity > 40
    after = base + 14 + candidate
    # The type draws (a flag and a pick) keep their places in the stream, so the other columns
    # stay as they were; the category itself comes from the sessions (``categories.py``).
    typed = value[after + 4] < 0.92
    spoken = after + 5 + typed
    language_flag = value[spoken] < 0.95
    user_ids = range(indexes.start + 1, indexes.stop + 1)
    channel_ids = range(FIRST_CHANNEL_ID + indexes.start, FIRST_CHANNEL_ID + indexes.stop)
    created_at, updated_at = _iso_column(created), _iso_column(updated)
    zeros = [0] * size
    partnered = standing[0].astype(np.int64)
    online, watching = list(zeros), list(zeros)
    for index, viewers in live.items():
        if indexes.start <= index < indexes.stop:
            online[index - indexes.start], watching[index - indexes.start] = 1, viewers
    for index in range(indexes.start, min(indexes.stop, len(DEMO_ACCOUNTS))):
        if (
            DEMO_ACCOUNTS[index].username == "streamer"
        ):  # the demo channel: partnered, and well watched
            partnered[index], views[index] = 1, max(int(views[index]), 250_000)
    social = [
        dumps({"twitter": f"https://twitter.com/{name}"}) if linked else _NO_SOCIAL
        for name, linked in zip(names, (draw[10] < 0.3).tolist(), strict=True)
    ]
    users = list(
        zip(
            user_ids,
            names,
            [f"{name}@example.invalid" for name in names],
            level.tolist(),
            experience.tolist(),
            sparks.tolist(),
            [f"/api/v1/users/{user_id}/avatar" for user_id in user_ids],
            _pick(_BIOS, (draw[9] * len(_BIOS)).astype(np.int64)),
            social,
            created_at,
            updated_at,
            strict=True,
        )
    )
    welcome = (value[after + 3] < 0.7).tolist()
    channels = list(
        zip(
            channel_ids,
            user_ids,
            names,
            _pick(_TITLES, title),
            online,
            _flags(candidate & (value[base + 14] < 0.3)),
            partnered.tolist(),
            _flags(value[after] < 0.05),
            _flags(active),
            _flags(popularity > 200),
            _flags(value[after + 1] < 0.3),
            _pick(_AUDIENCES, _weighted(value[after + 2], _AUDIENCE_CUMULATIVE)),
            views.tolist(),
            watching,
            followers.tolist(),
            [
                f"<p>Welcome to {name}'s channel!</p>" if shown else None
                for name, shown in zip(names, welcome, strict=True)
            ],
            categories.tolist(),
            _pick(_LANGUAGE_NAMES, standing[1], language_flag),
            created_at,
            updated_at,
            hex128(words, spoken + 1 + language_flag, channel_ids),
            strict=True,
        )
    )
    return users, channels


def _flags(flags: npt.NDArray[np.bool_]) -> list[int]:
    """0/1 for each flag, as stored."""
    result: list[int] = flags.astype(np.int64).tolist()
    return result


def _pick(
    options: Sequence[Any],
    chosen: npt.NDArray[np.int64] | npt.NDArray[np.intp],
    present: npt.NDArray[np.bool_] | None = None,
) -> list[Any]:
    """The option each row chose; None where it has none (``present`` false)."""
    table = np.empty(len(options) + 1, dtype=object)
    table[: len(options)] = options
    table[-1] = None
    picked = chosen if present is None else np.where(present, chosen, len(options))
    result: list[Any] = table[picked].tolist()
    return result


def seed_store(
    store: Store,
    seed: int,
    channels: int,
    hash_password: Callable[[str], str],
    opening: Callable[[int, int], Opening],
    beside: Callable[[], object] | None = None,
) -> bool:
    """Fill an empty store with the world for ``seed``; a store already seeded is left alone.

    Returns True when it seeded. ``hash_password`` turns the demo password into a stored hash
    (the KDF lives with the login code); ``opening`` gives the sessions running at the world's
    instant (``categories.opening``: the world's dynamics build on this module). Rows stream in
    chunks with the indexes and catalog triggers of users and channels set aside, then the
    indexes are built once, sorted: a million channels seed in seconds, not minutes. In a
    file, the :data:`~explorer.emulator.db.engine.LATER_INDEXES` are left to
    :class:`~explorer.emulator.db.engine.LaterIndexes` (the platform builds them once it serves).
    ``beside`` runs in a thread while the indexes build (``seeding.fill``).
    """
    if store.meta("seed") is not None:
        return False
    world = generate(seed, channels, opening(seed, channels), hash_password(DEMO_PASSWORD))
    layouts = ((USER_COLUMNS, USER_SAME), (CHANNEL_COLUMNS, CHANNEL_SAME))
    with _collector_paused():
        seeding.fill(
            store,
            seed,
            channels,
            world.types,
            world.roles,
            world.chunks,
            world.accounts,
            layouts,
            beside,
        )
    seeding.analyze(store)
    return True


@contextmanager
def _collector_paused() -> Iterator[None]:
    """Hold the cyclic garbage collector while seeding: millions of row tuples, none in a
    cycle, would otherwise set off full collections that walk every one of them (a third of
    the seeding time, and more the bigger the world)."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()
