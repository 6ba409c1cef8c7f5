"""The deterministic seeded world: users, channels, types and the demo accounts.

Everything here is a pure function of ``seed`` and ``channels`` (no clock, no OS randomness),
so the same seed gives byte-identical API responses. Popularity is heavy-tailed (Pareto), as on
a real platform: a handful of channels hold most viewers, most channels have almost none.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from explorer.emulator.store import Store, dumps

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
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"


def _username(rng: random.Random, taken: set[str]) -> str:
    while True:
        name = "".join(rng.choice(_SYLLABLES) for _ in range(rng.randint(2, 3)))
        if rng.random() < 0.5:
            name += str(rng.randint(1, 999))
        if name not in taken:
            taken.add(name)
            return name


def _moment(rng: random.Random, start: datetime, end: datetime) -> datetime:
    span = (end - start).total_seconds()
    return start + timedelta(seconds=int(rng.random() * span), milliseconds=rng.randint(0, 999))


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
                "availableAt": iso(_moment(rng, datetime(2000, 1, 1, tzinfo=UTC), WORLD_START)),
            }
        )
    return rows


def _pick_weighted(rng: random.Random, pairs: tuple[tuple[str, int], ...]) -> str:
    return rng.choices([p[0] for p in pairs], weights=[p[1] for p in pairs])[0]


def generate(seed: int, channels: int) -> dict[str, list[dict[str, Any]]]:
    """Build the world's rows (types, users, channels, channel_roles) from ``seed``.

    The first users are the demo accounts; their password hashes are filled in by
    :func:`seed_store`, which is the only step that costs real time (a slow KDF).
    """
    if channels < len(DEMO_ACCOUNTS):
        raise ValueError(f"a world needs at least {len(DEMO_ACCOUNTS)} channels")
    rng = random.Random(seed)
    types = _types(rng)
    type_weights = [1.0 / (i + 1) ** 0.9 for i in range(len(types))]
    taken = {d.username for d in DEMO_ACCOUNTS}
    channel_ids = list(range(FIRST_CHANNEL_ID, FIRST_CHANNEL_ID + channels))
    rng.shuffle(channel_ids)
    users: list[dict[str, Any]] = []
    rows: list[dict[str, Any]] = []
    for index in range(channels):
        user_id = index + 1
        demo = DEMO_ACCOUNTS[index] if index < len(DEMO_ACCOUNTS) else None
        username = demo.username if demo else _username(rng, taken)
        created = _moment(rng, WORLD_START, WORLD_NOW - timedelta(days=30))
        updated = _moment(rng, created, WORLD_NOW)
        popularity = rng.paretovariate(1.05)
        viewers_total = int(25 * popularity * rng.uniform(0.5, 1.5)) - 20
        viewers_total = max(viewers_total, 0)
        if demo and demo.username == "streamer":
            viewers_total = max(viewers_total, 250_000)
        online = rng.random() < min(0.05 + 0.02 * popularity, 0.9) or username == "streamer"
        viewers_current = int(viewers_total * rng.uniform(0.0005, 0.004)) + rng.randint(0, 3)
        level = min(int(popularity * 3) + rng.randint(1, 20), 150)
        users.append(
            {
                "id": user_id,
                "username": username,
                "email": f"{username}@example.invalid",
                "password_hash": None,
                "level": level,
                "experience": level * level * 40 + rng.randint(0, 500),
                "sparks": rng.randint(0, 200_000),
                "avatarUrl": f"/api/v1/users/{user_id}/avatar",
                "bio": rng.choice((None, "Streamer and gamer.", "Just here for the chat.")),
                "social": dumps(
                    {"twitter": f"https://twitter.com/{username}"} if rng.random() < 0.3 else {}
                ),
                "primaryTeam": None,
                "verified": 1,
                "groups": dumps(list(demo.groups) if demo else ["User"]),
                "preferences": dumps({"chat:sounds:play": True, "channel:notifications": True}),
                "createdAt": iso(created),
                "updatedAt": iso(updated),
            }
        )
        title = " ".join(rng.choice(bits) for bits in _TITLE_BITS).strip()
        channel_id = channel_ids[index]
        rows.append(
            {
                "id": channel_id,
                "userId": user_id,
                "token": username,
                "name": title,
                "online": int(online),
                "featured": int(popularity > 40 and rng.random() < 0.3),
                "partnered": int(popularity > 15 or username == "streamer"),
                "suspended": 0,
                "interactive": int(rng.random() < 0.05),
                "hasVod": int(rng.random() < 0.4),
                "vodsEnabled": 1,
                "hasTranscodes": int(popularity > 8),
                "featureLevel": 0,
                "ftl": int(rng.random() < 0.3),
                "audience": rng.choices(("family", "teen", "18+"), weights=(3, 6, 1))[0],
                "viewersTotal": viewers_total,
                "viewersCurrent": viewers_current if online else 0,
                "numFollowers": int(viewers_total * rng.uniform(0.01, 0.12)),
                "description": f"<p>Welcome to {username}'s channel!</p>"
                if rng.random() < 0.7
                else None,
                "typeId": rng.choices(types, weights=type_weights)[0]["id"]
                if rng.random() < 0.92
                else None,
                "languageId": _pick_weighted(rng, LANGUAGES) if rng.random() < 0.95 else None,
                "interactiveGameId": None,
                "transcodingProfileId": 1,
                "coverId": None,
                "thumbnailId": None,
                "badgeId": None,
                "hosteeId": None,
                "bannerUrl": None,
                "costreamId": None,
                "createdAt": iso(created),
                "updatedAt": iso(updated),
                "deletedAt": None,
                "streamKey": f"{channel_id}-{rng.getrandbits(128):032x}",
            }
        )
    streamer_channel = rows[0]["id"]
    roles = [{"channelId": streamer_channel, "userId": 2, "roles": dumps(["Mod"])}]
    return {"types": types, "users": users, "channels": rows, "channel_roles": roles}


def seed_store(store: Store, seed: int, channels: int, hash_password: Any) -> bool:
    """Fill an empty store with the world for ``seed``; a store already seeded is left alone.

    Returns True when it seeded. ``hash_password`` turns the demo password into a stored hash
    (the KDF lives with the login code).
    """
    if store.meta("seed") is not None:
        return False
    world = generate(seed, channels)
    demo_hash = hash_password(DEMO_PASSWORD)
    for user in world["users"][: len(DEMO_ACCOUNTS)]:
        user["password_hash"] = demo_hash
    with store.transaction() as conn:
        for table in ("types", "users", "channels", "channel_roles"):
            store.insert_many(table, world[table])
        conn.execute(
            "INSERT INTO meta (key, value) VALUES ('seed', ?), ('channels', ?)",
            (str(seed), str(channels)),
        )
    store.conn.execute("ANALYZE")
    return True
