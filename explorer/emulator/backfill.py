"""The seeded chat history: the busiest channels' last half hour of chat, stored when the world
is seeded, so history can be sampled without running the simulator (chatter's voices, the
simulator's cast size)."""

from __future__ import annotations

import random
import uuid
from typing import Any

from explorer.emulator import chatter
from explorer.emulator.chat import history
from explorer.emulator.chat.messages import compose, message_data
from explorer.emulator.chat.roles import owners_roles
from explorer.emulator.db import channels, users
from explorer.emulator.db.engine import Store
from explorer.emulator.simulate import MAX_BOTS
from explorer.emulator.world import DEMO_ACCOUNTS

#: Channels given a seeded history (the busiest 4%, at most this many), and messages each
#: (the channel's chat of about this many minutes, within the bounds).
HISTORY_CHANNELS = 200
HISTORY_SHARE = 25
HISTORY_MINUTES = 30
HISTORY_MESSAGES = (20, 150)


def seeded_message_id(rng: random.Random) -> str:
    """A UUID-shaped id drawn from ``rng`` (deterministic history)."""
    return str(uuid.UUID(int=rng.getrandbits(128), version=4))


def seed_history(store: Store, seed: int, now: float) -> int:
    """Give the busiest channels (live ones first; one in ``HISTORY_SHARE``, at most
    ``HISTORY_CHANNELS``) the chat of their last ``HISTORY_MINUTES`` minutes at their rate
    (``chatter.chat_rate``), within ``HISTORY_MESSAGES``, said by chatter's voices.

    Content (ids included) is a pure function of ``seed`` and the world; ``createdAt`` spreads
    the messages over the hour before ``now`` (a wall time: stored chat is dated on the wall
    clock, see ``clock.py``). Returns the number of messages stored.
    """
    # One transaction: one connection for every read (on PostgreSQL, not a pooled one each).
    with store.transaction():
        return _seed_history(store, seed, now)


def _seed_history(store: Store, seed: int, now: float) -> int:
    """:func:`seed_history`'s work, inside its transaction."""
    rng = random.Random(f"{seed}:history")
    # Chatters are sampled by id and names looked up by index: loading every user would cost
    # seconds at a million channels.
    pool = range(len(DEMO_ACCOUNTS) + 1, (users.highest_id(store) or 0) + 1)
    total = channels.count(store)
    busiest = channels.busiest_listed(store, min(HISTORY_CHANNELS, max(1, total // HISTORY_SHARE)))
    known: dict[str, tuple[int, str] | None] = {}
    # The owners' profiles and roles in a few reads, not a round trip each per channel.
    owned = [(channel_id, owner_id) for channel_id, owner_id, _, _ in busiest]
    owners = {row[0]: row for row in users.chat_profiles(store, [owner for _, owner in owned])}
    standing = owners_roles(store, owned)

    def lookup(name: str) -> tuple[int, str] | None:
        key = name.lower()
        if key not in known:
            known[key] = users.by_name(store, name)
        return known[key]

    parsed: dict[str, tuple[list[Any], dict[str, Any]]] = {}
    rows: list[tuple[str, int, int, float, dict[str, Any]]] = []
    for channel_id, owner_id, viewers, language in busiest:
        sampled = rng.sample(pool, min(len(pool), rng.randint(3, 2 * MAX_BOTS)))
        found = {row[0]: row for row in users.chat_profiles(store, sampled)}
        chatters = [found[user_id] for user_id in sampled if user_id in found]
        people = [(row, ["User"]) for row in chatters if row[0] != owner_id]
        owner = owners.get(owner_id)
        if owner is not None:
            people.append((owner, standing[channel_id]))
            known[owner[1].lower()] = (owner[0], owner[1])
        for row, _ in people:
            known[row[1].lower()] = (row[0], row[1])
        speakers = [
            (
                row[0],
                {
                    "user_name": row[1],
                    "user_id": row[0],
                    "user_roles": roles,
                    "user_level": row[2],
                    "user_avatar": row[3],
                },
            )
            for row, roles in people
        ]
        voice = chatter.ChannelVoice(
            seed, channel_id, [row[1] for row, _ in people], language or "en"
        )
        low, high = HISTORY_MESSAGES
        count = min(high, max(low, round(chatter.chat_rate(viewers) * HISTORY_MINUTES)))
        for index in range(count):
            speaker = voice.speaker(rng)
            user_id, identity = speakers[speaker]
            text = voice.line(rng, speaker)
            if text not in parsed:
                parsed[text] = compose(text, lookup)
            components, meta = parsed[text]
            message_id = seeded_message_id(rng)
            data = message_data(channel_id, message_id, identity, components, meta)
            created = now - 3600 + 3600 * index / count
            rows.append((message_id, channel_id, user_id, created, data))
    return history.store_seeded(store, rows)
