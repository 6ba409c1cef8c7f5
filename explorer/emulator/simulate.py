"""Simulated live activity: bots chat, moderate and vote; viewer counts drift; seeded history.

Decisions and execution are kept apart. :class:`Script` is pure and seeded: from the world's
online channels it plans each channel's chat rate and bots, then yields one :class:`Action`
after another (who says what where, polls, timeouts, deletes, whispers, giveaways, bots coming
and going), each with the delay before it. :class:`Simulator` performs them on the event loop
through the same room methods (:mod:`~explorer.emulator.chat.dispatch`) real connections call, so
clients see exactly what they would see from people. The same seed gives the same sequence of
choices; only wall-clock timing varies.

Rates are heavy-tailed like the viewers: a channel's rate grows with ``viewersCurrent``, capped
at ``Config.sim_channel_rate`` messages per second, and all channels together use at most
``Config.sim_rate`` (so the busiest channels chat several times a second while most say
something every few minutes). Bots vote in every poll of their channel, whoever started it,
spread over its duration (some change their mind). ``viewersCurrent`` of online channels
drifts every few seconds, written in one batch.

:func:`seed_history` gives the most popular channels a deterministic chat history when the
world is seeded, so history can be sampled without running the simulator.
"""

from __future__ import annotations

import asyncio
import bisect
import math
import random
import uuid
from collections import deque
from collections.abc import Coroutine, Sequence
from dataclasses import dataclass, field
from typing import Any

import orjson

from explorer.emulator.brokers.broker import Delivery
from explorer.emulator.chat import dispatch, history, presence
from explorer.emulator.chat.cluster import ChatCluster
from explorer.emulator.chat.members import Member, member_of, refresh
from explorer.emulator.chat.messages import compose, message_data
from explorer.emulator.chat.roles import roles_of
from explorer.emulator.chat.rooms import Room
from explorer.emulator.context import Config, Services
from explorer.emulator.store import Store
from explorer.emulator.world import DEMO_ACCOUNTS
from explorer.wire.codes import Refusal

#: Channels given a seeded history (the most popular 4%, at most this many), messages each.
HISTORY_CHANNELS = 200
HISTORY_SHARE = 25
HISTORY_MESSAGES = (20, 80)
DRIFT_INTERVAL = 5.0
MAX_BOTS = 30
#: A channel's chat rate grows as viewersCurrent to this power (then capped and scaled).
RATE_EXPONENT = 1.5
#: How far the executor may fall behind its schedule before it skips ahead, in seconds.
MAX_LAG = 2.0
#: User names read per query when the script's cast is looked up.
_LOOKUP_CHUNK = 500

_GREETINGS = ("hi", "hello", "hey everyone", "yo", "good evening chat", "hiya", "o/")
_REACTIONS = (
    "gg",
    "lol",
    "nice!",
    "what a play",
    "no way",
    "that was close",
    "pog",
    "let's go",
    "haha",
    "wow",
    "clean",
    "unlucky",
    "rip",
    "insane",
    "so good",
    "this is hype",
)
_QUESTIONS = (
    "what rank is this?",
    "how long have you been streaming?",
    "what's the song?",
    "is this the new patch?",
    "first time here, love the stream",
    "when is the next stream?",
    "what settings do you use?",
)
_ACTIONS = ("dances", "claps", "grabs popcorn", "waves", "cheers", "takes notes")
_EMOTICONS = (":)", ":D", "<3", ";)", ":P", ":O", "B)", "XD", ":(")
_POLLS = (
    ("Which map next?", ("Dust", "Mirage", "Inferno", "Nuke")),
    ("Should we try a speedrun?", ("Yes", "No")),
    ("Snack break now?", ("Yes", "After this round", "No")),
    ("Rate the last match", ("1", "2", "3", "4", "5")),
    ("Hard mode or normal?", ("Hard", "Normal")),
    ("Best weapon?", ("Sword", "Bow", "Staff")),
)
#: Probability of each kind of action per simulated event (the rest are plain messages).
_ODDS = (
    ("poll", 0.002),
    ("timeout", 0.001),
    ("delete", 0.003),
    ("giveaway", 0.0005),
    ("whisper", 0.01),
    ("churn", 0.02),
)


def chat_line(rng: random.Random, mates: Sequence[str]) -> str:
    """One line a viewer might type, sometimes tagging one of ``mates``."""
    roll = rng.random()
    if roll < 0.35:
        return rng.choice(_REACTIONS)
    if roll < 0.45:
        return rng.choice(_GREETINGS)
    if roll < 0.55:
        return rng.choice(_QUESTIONS)
    if roll < 0.75:
        return f"{rng.choice(_REACTIONS)} {rng.choice(_EMOTICONS)}"
    if roll < 0.85 and mates:
        return f"@{rng.choice(mates)} {rng.choice(_REACTIONS + _QUESTIONS)}"
    if roll < 0.91:
        return f"/me {rng.choice(_ACTIONS)}"
    if roll < 0.94:
        return f"clip: https://example.org/clips/{rng.randrange(10**6)}"
    if roll < 0.97:
        return rng.choice(_EMOTICONS)
    return f"{rng.choice(_GREETINGS)} {rng.choice(_EMOTICONS)} {rng.choice(_REACTIONS)}"


# --- seeded history -----------------------------------------------------------------------


def seeded_message_id(rng: random.Random) -> str:
    """A UUID-shaped id drawn from ``rng`` (deterministic history)."""
    return str(uuid.UUID(int=rng.getrandbits(128), version=4))


def seed_history(store: Store, seed: int, now: float) -> int:
    """Give the most-viewed channels (one in ``HISTORY_SHARE``, at most ``HISTORY_CHANNELS``)
    20-80 stored messages each.

    Content (ids included) is a pure function of ``seed`` and the world; ``createdAt`` spreads
    the messages over the hour before ``now``. Returns the number of messages stored.
    """
    rng = random.Random(f"{seed}:history")
    # Chatters are sampled by id and names looked up by index: loading every user would cost
    # seconds at a million channels.
    pool = range(len(DEMO_ACCOUNTS) + 1, (store.scalar("SELECT MAX(id) FROM users") or 0) + 1)
    total = store.scalar("SELECT COUNT(*) FROM channels")
    channels = store.all(
        "SELECT id, userId FROM channels WHERE suspended = 0 "
        "ORDER BY viewersTotal DESC, id LIMIT ?",
        (min(HISTORY_CHANNELS, max(1, total // HISTORY_SHARE)),),
    )
    known: dict[str, tuple[int, str] | None] = {}

    def lookup(name: str) -> tuple[int, str] | None:
        key = name.lower()
        if key not in known:
            row = store.one(
                "SELECT id, username FROM users WHERE username = ? COLLATE NOCASE", (name,)
            )
            known[key] = None if row is None else (row[0], row[1])
        return known[key]

    parsed: dict[str, tuple[list[Any], dict[str, Any]]] = {}
    rows: list[tuple[str, int, int, float, dict[str, Any]]] = []
    for channel_id, owner_id in channels:
        sampled = rng.sample(pool, min(len(pool), rng.randint(3, 15)))
        found = {
            row[0]: row
            for row in store.all(
                "SELECT id, username, level, avatarUrl FROM users "
                f"WHERE id IN ({', '.join('?' * len(sampled))})",
                sampled,
            )
        }
        chatters = [found[user_id] for user_id in sampled if user_id in found]
        people = [(row, ["User"]) for row in chatters if row[0] != owner_id]
        owner = store.one(
            "SELECT id, username, level, avatarUrl FROM users WHERE id = ?", (owner_id,)
        )
        if owner is not None:
            people.append((owner, roles_of(store, channel_id, owner_id)))
            known[owner[1].lower()] = (owner[0], owner[1])
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
                [other[1] for other, _ in people if other[0] != row[0]],
            )
            for row, roles in people
        ]
        count = rng.randint(*HISTORY_MESSAGES)
        for index in range(count):
            user_id, identity, mates = rng.choice(speakers)
            text = chat_line(rng, mates)
            if text not in parsed:
                parsed[text] = compose(text, lookup)
            components, meta = parsed[text]
            message_id = seeded_message_id(rng)
            data = message_data(channel_id, message_id, identity, components, meta)
            created = now - 3600 + 3600 * index / count
            rows.append((message_id, channel_id, user_id, created, data))
    return history.store_seeded(store, rows)


# --- the script: seeded decisions -----------------------------------------------------------


@dataclass(slots=True)
class ChannelPlan:
    """One online channel as the simulator runs it."""

    id: int
    owner_id: int
    viewers: int
    rate: float
    #: Bots present now (user ids), and users who may join later.
    bots: list[int] = field(default_factory=list)
    reserve: list[int] = field(default_factory=list)
    #: Virtual time until which the script's own poll runs.
    poll_until: float = 0.0


@dataclass(frozen=True, slots=True)
class Action:
    """One thing a bot or channel owner does, ``delay`` seconds after the previous action.

    ``kind`` is ``msg``, ``whisper``, ``poll``, ``timeout``, ``delete`` (``args[0]`` counts
    back through the channel's recent bot messages), ``giveaway`` or ``churn`` (a bot
    leaves, another joins: ``args`` = (leaving, joining)).
    """

    delay: float
    channel: int
    kind: str
    actor: int
    args: tuple[Any, ...] = ()


def _scale(weights: list[float], cap: float, budget: float) -> list[float]:
    """Rates ``min(cap, k * w)`` whose sum is ``budget`` (or every rate ``cap``)."""
    if not weights or cap * len(weights) <= budget:
        return [cap] * len(weights)
    low, high = 0.0, cap / min(w for w in weights)
    for _ in range(60):
        k = (low + high) / 2
        if sum(min(cap, k * w) for w in weights) > budget:
            high = k
        else:
            low = k
    return [min(cap, low * w) for w in weights]


class Script:
    """The seeded sequence of simulated actions for one world (pure: no clock, no I/O)."""

    def __init__(
        self,
        seed: int,
        channels: list[tuple[int, int, int]],
        pool: Sequence[int],
        config: Config,
    ) -> None:
        """``channels`` are the online ``(id, owner, viewersCurrent)``, busiest first; ``pool``
        the ids bots are drawn from. :attr:`names` must then map :meth:`cast`'s ids to names."""
        self.rng = random.Random(f"{seed}:simulate")
        self.names: dict[int, str] = {}
        pool_ids = pool
        rates = _scale(
            [(viewers + 1) ** RATE_EXPONENT for _, _, viewers in channels],
            config.sim_channel_rate,
            config.sim_rate,
        )
        self.channels: list[ChannelPlan] = []
        for (channel_id, owner_id, viewers), rate in zip(channels, rates, strict=True):
            drawn = self.rng.sample(pool_ids, min(len(pool_ids), 2 * MAX_BOTS + 1))
            pool = [user for user in drawn if user != owner_id]
            size = max(2, min(MAX_BOTS, round(2 + math.sqrt(viewers))))
            if pool:
                plan = ChannelPlan(channel_id, owner_id, viewers, rate, pool[:size], pool[size:])
                self.channels.append(plan)
        self.total_rate = sum(plan.rate for plan in self.channels)
        self._cumulative: list[float] = []
        running = 0.0
        for plan in self.channels:
            running += plan.rate
            self._cumulative.append(running)
        self.now = 0.0

    def cast(self) -> set[int]:
        """Every user id the script may name: each channel's bots and reserve."""
        return {user for plan in self.channels for user in (*plan.bots, *plan.reserve)}

    def next(self) -> Action:
        """The next action and the delay before it."""
        rng = self.rng
        delay = rng.expovariate(self.total_rate)
        self.now += delay
        at = bisect.bisect_left(self._cumulative, rng.random() * self.total_rate)
        plan = self.channels[min(at, len(self.channels) - 1)]
        roll = rng.random()
        for kind, odds in _ODDS:
            if roll < odds:
                return self._special(delay, plan, kind)
            roll -= odds
        speaker = rng.choice(plan.bots)
        return Action(delay, plan.id, "msg", speaker, (self._line(plan, speaker),))

    def _line(self, plan: ChannelPlan, speaker: int) -> str:
        return chat_line(self.rng, [self.names[bot] for bot in plan.bots if bot != speaker])

    def _special(self, delay: float, plan: ChannelPlan, kind: str) -> Action:
        rng = self.rng
        owner = plan.owner_id
        if kind == "poll" and plan.poll_until <= self.now:
            question, answers = rng.choice(_POLLS)
            seconds = rng.randrange(20, 91)
            plan.poll_until = self.now + seconds + 1
            return Action(delay, plan.id, "poll", owner, (question, list(answers), seconds))
        if kind == "timeout":
            target = self.names[rng.choice(plan.bots)]
            return Action(delay, plan.id, "timeout", owner, (target, f"{rng.randrange(10, 61)}s"))
        if kind == "delete":
            return Action(delay, plan.id, "delete", owner, (rng.randrange(5),))
        if kind == "giveaway":
            return Action(delay, plan.id, "giveaway", owner)
        if kind == "whisper" and len(plan.bots) > 1:
            sender, recipient = rng.sample(plan.bots, 2)
            line = rng.choice(_QUESTIONS)
            return Action(delay, plan.id, "whisper", sender, (self.names[recipient], line))
        if kind == "churn" and plan.reserve:
            leaving = plan.bots.pop(rng.randrange(len(plan.bots)))
            joining = plan.reserve.pop(rng.randrange(len(plan.reserve)))
            plan.bots.append(joining)
            plan.reserve.append(leaving)
            return Action(delay, plan.id, "churn", leaving, (leaving, joining))
        speaker = rng.choice(plan.bots)
        return Action(delay, plan.id, "msg", speaker, (self._line(plan, speaker),))

    @staticmethod
    def votes(
        seed: int, channel_id: int, index: int, voters: list[int], answers: int, seconds: float
    ) -> list[tuple[float, int, int]]:
        """The ``(offset seconds, voter, choice)`` plan of the ``index``-th poll of a channel."""
        rng = random.Random(f"{seed}:{channel_id}:poll:{index}")
        appeal = [rng.random() ** 2 + 0.05 for _ in range(answers)]
        plan = []
        for voter in voters:
            if rng.random() < 0.8:
                plan.append(
                    (rng.random() * seconds * 0.9, voter, rng.choices(range(answers), appeal)[0])
                )
                if rng.random() < 0.1:
                    plan.append((rng.random() * seconds * 0.9, voter, rng.randrange(answers)))
        plan.sort()
        return plan


def script_for(store: Store, seed: int, config: Config) -> Script:
    """The script of the world in ``store``: its busiest ``Config.sim_channels`` online
    channels, with bots drawn from the non-demo users (ids are dense, so the pool is a range
    and only the names of the users drawn are read: a million-user world starts as fast)."""
    channels = [
        (row[0], row[1], row[2])
        for row in store.all(
            "SELECT id, userId, viewersCurrent FROM channels WHERE online = 1 AND suspended = 0 "
            "ORDER BY viewersCurrent DESC, id LIMIT ?",
            (config.sim_channels,),
        )
    ]
    pool = range(len(DEMO_ACCOUNTS) + 1, (store.scalar("SELECT MAX(id) FROM users") or 0) + 1)
    script = Script(seed, channels, pool, config)
    cast = sorted(script.cast())
    for start in range(0, len(cast), _LOOKUP_CHUNK):
        chunk = cast[start : start + _LOOKUP_CHUNK]
        marks = ",".join("?" * len(chunk))
        script.names.update(
            store.all(f"SELECT id, username FROM users WHERE id IN ({marks})", tuple(chunk))
        )
    return script


# --- the simulator: performing the script -----------------------------------------------------


class Simulator:
    """Runs a :class:`Script` against the platform's rooms, plus viewer drift."""

    def __init__(self, services: Services, cluster: ChatCluster) -> None:
        self.services = services
        self.rooms = cluster.rooms
        self.broker = cluster.broker
        self.seed = services.config.seed
        self.script = script_for(services.store, self.seed, services.config)
        self._members: dict[tuple[int, int], Member] = {}
        self._recent: dict[int, deque[str]] = {}
        self._polls_seen: dict[int, int] = {}
        self._poll_keys: set[tuple[int, int]] = set()
        self._tasks: set[asyncio.Task[None]] = set()
        self.performed = 0

    async def start(self) -> None:
        """Bring every channel's bots and owner into their rooms, then start acting."""
        for plan in self.script.channels:
            room = self.rooms.get(plan.id)
            if room is None:
                continue
            self.broker.subscribe(plan.id, self)
            for user_id in (plan.owner_id, *plan.bots):
                self._enter(room, user_id)
        self._spawn(self._act())
        self._spawn(self._drift())

    async def stop(self) -> None:
        """Stop acting and take the bots out of their rooms."""
        tasks = list(self._tasks)
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        for (channel_id, _), member in list(self._members.items()):
            room = self.rooms.get(channel_id)
            if room is not None:
                presence.leave(room, member)
            self.broker.unsubscribe(channel_id, self)
        self._members.clear()

    def _spawn(self, work: Coroutine[Any, Any, None]) -> None:
        task = asyncio.get_running_loop().create_task(work)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    def _enter(self, room: Room, user_id: int) -> Member:
        member = member_of(self.services.store, room.channel_id, user_id, None)
        self._members[(room.channel_id, user_id)] = member
        presence.join(room, member, f"sim:{user_id}")
        return member

    def _member(self, room: Room, user_id: int) -> Member:
        return self._members.get((room.channel_id, user_id)) or self._enter(room, user_id)

    # --- what bots see ------------------------------------------------------------------

    def deliver(self, channel_id: int, delivery: Delivery) -> None:
        """Broker callback: plan votes for each new poll, follow role changes."""
        if delivery.event == "PollStart":
            poll = orjson.loads(delivery.payload)["data"]
            key = (channel_id, poll["endsAt"])
            if key not in self._poll_keys:
                self._poll_keys.add(key)
                self._spawn(self._vote(channel_id, poll))
        elif delivery.event == "PollEnd":
            self._poll_keys.discard((channel_id, orjson.loads(delivery.payload)["data"]["endsAt"]))
        elif delivery.refresh_user is not None:
            member = self._members.get((channel_id, delivery.refresh_user))
            if member is not None:
                refresh(self.services.store, member, channel_id)

    async def _vote(self, channel_id: int, poll: dict[str, Any]) -> None:
        index = self._polls_seen.get(channel_id, 0)
        self._polls_seen[channel_id] = index + 1
        plan = next((p for p in self.script.channels if p.id == channel_id), None)
        room = self.rooms.get(channel_id)
        if plan is None or room is None:
            return
        loop = asyncio.get_running_loop()
        start = loop.time()
        seconds = poll["duration"] / 1000
        for offset, voter, choice in Script.votes(
            self.seed, channel_id, index, list(plan.bots), len(poll["answers"]), seconds
        ):
            await asyncio.sleep(max(0.0, start + offset - loop.time()))
            member = self._members.get((channel_id, voter))
            if member is not None:
                self._call(room, member, "vote:choose", [choice])

    # --- what bots do -------------------------------------------------------------------

    async def _act(self) -> None:
        if not self.script.channels:
            return
        loop = asyncio.get_running_loop()
        due = loop.time()
        while True:
            action = self.script.next()
            due = max(due + action.delay, loop.time() - MAX_LAG)
            wait = due - loop.time()
            if wait > 0:
                await asyncio.sleep(wait)
            self.perform(action)

    def perform(self, action: Action) -> None:
        """Carry out one scripted action through the room's own methods."""
        room = self.rooms.get(action.channel)
        if room is None:
            return
        actor = self._member(room, action.actor)
        self.performed += 1
        kind, args = action.kind, action.args
        if kind == "msg":
            reply = self._call(room, actor, "msg", list(args))
            if isinstance(reply, dict):
                self._recent.setdefault(room.channel_id, deque(maxlen=5)).appendleft(reply["id"])
        elif kind in ("whisper", "timeout"):
            self._call(room, actor, kind, list(args))
        elif kind == "poll":
            self._call(room, actor, "vote:start", list(args))
        elif kind == "delete":
            recent = self._recent.get(room.channel_id)
            if recent and args[0] < len(recent):
                self._call(room, actor, "deleteMessage", [recent[args[0]]])
        elif kind == "giveaway":
            self._call(room, actor, "giveaway:start", [])
        elif kind == "churn":
            leaving = self._members.pop((room.channel_id, args[0]), None)
            if leaving is not None:
                presence.leave(room, leaving)
            self._member(room, args[1])

    def _call(self, room: Room, member: Member, method: str, args: list[Any]) -> Any:
        try:
            return dispatch.call(room, member, method, args)
        except Refusal:
            return None  # refused like anyone's would be (timed out, poll running, ...)

    # --- viewers ------------------------------------------------------------------------

    async def _drift(self) -> None:
        rng = random.Random(f"{self.seed}:viewers")
        viewers = {plan.id: plan.viewers for plan in self.script.channels}
        while True:
            await asyncio.sleep(DRIFT_INTERVAL)
            for channel_id, count in viewers.items():
                step = count * math.exp(rng.gauss(0.0, 0.05)) + rng.choice((-1, 0, 0, 1))
                viewers[channel_id] = max(0, round(step))
            with self.services.store.transaction() as conn:
                conn.executemany(
                    "UPDATE channels SET viewersCurrent = ? WHERE id = ? AND online = 1",
                    [(count, channel_id) for channel_id, count in viewers.items()],
                )
