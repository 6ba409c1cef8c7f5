"""The deterministic seeded world: users, channels, types and the demo accounts.

Everything here is a pure function of ``seed`` and ``channels`` (no clock, no OS randomness),
so the same seed gives byte-identical API responses. Popularity is heavy-tailed (Pareto), as on
a real platform: a handful of channels hold most viewers, most channels have almost none.
"""

from __future__ import annotations

import random
from bisect import bisect
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from itertools import accumulate, islice
from typing import TYPE_CHECKING, Any, TypeVar

from explorer.emulator.shapes import CHANNEL_FIELDS
from explorer.emulator.store import Store, dumps

if TYPE_CHECKING:
    from explorer.emulator.sessions import Opening

#: The instant the seeded world describes; creation dates fall before it.
WORLD_NOW = datetime(2020, 7, 22, tzinfo=UTC)
WORLD_START = datetime(2016, 1, 5, tzinfo=UTC)
#: Channels in a world unless asked otherwise (``explorer serve --channels``): enough that the
#: busiest channel has a few thousand viewers (chat several messages a second at measured
#: rates), few enough to start in a few seconds.
DEFAULT_CHANNELS = 50_000
FIRST_CHANNEL_ID = 100_000
DEMO_PASSWORD = "explorer"
T = TypeVar("T")


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


def _pick(rng: random.Random, options: Sequence[T]) -> T:
    return options[int(rng.random() * len(options))]


def _between(rng: random.Random, low: int, high: int) -> int:
    return low + int(rng.random() * (high - low + 1))


def _username(rng: random.Random, taken: set[str]) -> str:
    while True:
        name = "".join([_pick(rng, _SYLLABLES) for _ in range(_between(rng, 2, 3))])
        if rng.random() < 0.5:
            name += str(_between(rng, 1, 999))
        if name not in taken:
            taken.add(name)
            return name


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


def _weighted(rng: random.Random, options: Sequence[T], cumulative: Sequence[float]) -> T:
    return options[bisect(cumulative, rng.random() * cumulative[-1])]


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


#: Column order of the rows :func:`generate` yields.
USER_COLUMNS = (
    "id",
    "username",
    "email",
    "password_hash",
    "level",
    "experience",
    "sparks",
    "avatarUrl",
    "bio",
    "social",
    "primaryTeam",
    "verified",
    "groups",
    "preferences",
    "createdAt",
    "updatedAt",
)
#: The channel columns: the declared fields (``shapes.py``), then the owner's stream key.
CHANNEL_COLUMNS = (*CHANNEL_FIELDS, "streamKey")
_LANGUAGE_NAMES = tuple(name for name, _ in LANGUAGES)
_LANGUAGE_CUMULATIVE = tuple(accumulate(weight for _, weight in LANGUAGES))
_AUDIENCES = ("family", "teen", "18+")
_BIOS = (None, "Streamer and gamer.", "Just here for the chat.")
_AUDIENCE_CUMULATIVE = tuple(accumulate((3, 6, 1)))
_NO_SOCIAL = dumps({})
_PLAIN_GROUPS = dumps(["User"])
_PREFERENCES = dumps({"chat:sounds:play": True, "channel:notifications": True})


@dataclass(frozen=True, slots=True)
class World:
    """The seeded world: its types and roles, and its users and channels as a stream of rows
    (a million channels would not fit in memory as dicts)."""

    types: list[dict[str, Any]]
    roles: list[dict[str, Any]]
    rows: Iterator[tuple[tuple[Any, ...], tuple[Any, ...]]]


def generate(seed: int, channels: int, start: Opening, demo_hash: str | None = None) -> World:
    """The world for ``seed``: types, roles, and (user, channel) row pairs in id order of the
    users, columns as :data:`USER_COLUMNS` and :data:`CHANNEL_COLUMNS`; ``start`` is what the
    channels' sessions say at the world's instant (``sessions.opening``).

    The demo accounts come first, with ``demo_hash`` as their password hash; :func:`seed_store`
    computes it, the only step that costs real time (a slow KDF).
    """
    if channels < len(DEMO_ACCOUNTS):
        raise ValueError(f"a world needs at least {len(DEMO_ACCOUNTS)} channels")
    rng = random.Random(seed)
    types = _types(rng)
    type_ids = [row["id"] for row in types]
    type_cumulative = list(accumulate(1.0 / (i + 1) ** 0.9 for i in range(len(types))))
    # Each user's channel id follows their user id, so both tables load in key order (a
    # shuffled id put every insert at a random place in a million-row table: 40 % slower).
    channel_ids = range(FIRST_CHANNEL_ID, FIRST_CHANNEL_ID + channels)
    roles = [{"channelId": channel_ids[0], "userId": 2, "roles": dumps(["Mod"])}]
    rows = _rows(rng, channel_ids, type_ids, type_cumulative, demo_hash, start)
    return World(types, roles, rows)


def _rows(
    rng: random.Random,
    channel_ids: Sequence[int],
    type_ids: list[int],
    type_cumulative: list[float],
    demo_hash: str | None,
    start: Opening,
) -> Iterator[tuple[tuple[Any, ...], tuple[Any, ...]]]:
    """Each user with their channel; every random draw in a fixed order, so a seed is a world.

    Counters follow the channel's habits: ``viewersTotal`` (views) grows with its audience and
    hours, ``numFollowers`` is about 120 times its average audience for an active channel (the
    median measured for established channels), and ``online``/``viewersCurrent`` are its
    session at the world's instant."""
    taken = {d.username for d in DEMO_ACCOUNTS}
    dates: dict[int, str] = {}
    random_, uniform = rng.random, rng.uniform
    for index, channel_id in enumerate(channel_ids):
        user_id = index + 1
        demo = DEMO_ACCOUNTS[index] if index < len(DEMO_ACCOUNTS) else None
        username = demo.username if demo else _username(rng, taken)
        created = _moment_ms(rng, _START_MS, _CREATED_BY_MS)
        updated = _moment_ms(rng, created, _NOW_MS)
        created_at, updated_at = _iso_ms(created, dates), _iso_ms(updated, dates)
        popularity = start.audience[index]
        active = start.active[index]
        months = (_NOW_MS - created) / (30 * _DAY_MS)
        viewers_total = int(popularity * start.hours[index] * min(months, 24) * uniform(1, 3))
        if demo and demo.username == "streamer":
            viewers_total = max(viewers_total, 250_000)
        online = index in start.live
        viewers_current = start.live.get(index, 0)
        followers = int(popularity * (120 if active else 10) * uniform(0.5, 1.5))
        level = min(int(popularity * 3) + _between(rng, 1, 20), 150)
        experience = level * level * 40 + _between(rng, 0, 500)
        sparks = _between(rng, 0, 200_000)
        bio = _pick(rng, _BIOS)
        social = dumps({"twitter": f"https://twitter.com/{username}"}) if random_() < 0.3 else None
        yield (
            (
                user_id,
                username,
                f"{username}@example.invalid",
                demo_hash if demo else None,
                level,
                experience,
                sparks,
                f"/api/v1/users/{user_id}/avatar",
                bio,
                social or _NO_SOCIAL,
                None,
                1,
                dumps(list(demo.groups)) if demo else _PLAIN_GROUPS,
                _PREFERENCES,
                created_at,
                updated_at,
            ),
            (
                channel_id,
                user_id,
                username,
                " ".join([_pick(rng, bits) for bits in _TITLE_BITS]).strip(),
                int(online),
                int(popularity > 40 and random_() < 0.3),
                int(popularity > 15 or username == "streamer"),
                0,
                int(random_() < 0.05),
                int(active),
                1,
                int(popularity > 200),
                0,
                int(random_() < 0.3),
                _weighted(rng, _AUDIENCES, _AUDIENCE_CUMULATIVE),
                viewers_total,
                viewers_current,
                followers,
                f"<p>Welcome to {username}'s channel!</p>" if random_() < 0.7 else None,
                _weighted(rng, type_ids, type_cumulative) if random_() < 0.92 else None,
                _weighted(rng, _LANGUAGE_NAMES, _LANGUAGE_CUMULATIVE) if random_() < 0.95 else None,
                None,
                1,
                None,
                None,
                None,
                None,
                None,
                None,
                created_at,
                updated_at,
                None,
                f"{channel_id}-{rng.getrandbits(128):032x}",
            ),
        )


#: Rows per ``executemany`` while seeding: big enough to amortize, small enough to stream.
_CHUNK = 20_000


def seed_store(
    store: Store,
    seed: int,
    channels: int,
    hash_password: Callable[[str], str],
    opening: Callable[[int, int], Opening],
) -> bool:
    """Fill an empty store with the world for ``seed``; a store already seeded is left alone.

    Returns True when it seeded. ``hash_password`` turns the demo password into a stored hash
    (the KDF lives with the login code); ``opening`` gives the sessions running at the world's
    instant (``sessions.opening``: the world's dynamics build on this module). Rows stream in
    chunks with the indexes and catalog triggers of users and channels set aside, then the
    indexes are built once, sorted: a million channels seed in seconds, not minutes.
    """
    if store.meta("seed") is not None:
        return False
    world = generate(seed, channels, opening(seed, channels), hash_password(DEMO_PASSWORD))
    users = _insert_sql("users", USER_COLUMNS)
    rows = _insert_sql("channels", CHANNEL_COLUMNS)
    with store.transaction() as conn:
        store.insert_many("types", world.types)
        with store.set_aside(("users", "channels")):
            while chunk := list(islice(world.rows, _CHUNK)):
                conn.executemany(users, [pair[0] for pair in chunk])
                conn.executemany(rows, [pair[1] for pair in chunk])
        store.insert_many("channel_roles", world.roles)
        conn.execute(
            "INSERT INTO meta (key, value) VALUES ('seed', ?), ('channels', ?)",
            (str(seed), str(channels)),
        )
    # Statistics from a sample of each index: exact enough for the planner, quick at any size.
    store.conn.execute("PRAGMA analysis_limit = 1000")
    store.conn.execute("ANALYZE")
    return True


def _insert_sql(table: str, columns: tuple[str, ...]) -> str:
    return f"INSERT INTO {table} ({', '.join(columns)}) VALUES ({', '.join('?' * len(columns))})"
