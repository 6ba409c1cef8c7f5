"""Simulated live activity: the world's streams go live and offline, audiences rise and fall,
bots chat, moderate and vote in the live channels.

Decisions and execution are kept apart. :class:`Streams` (``streams.py``) applies the world's
session schedule to the store as the world clock passes. :class:`Script` is pure and seeded:
given the live channels (busiest first) it plans each one's chat rate and bots, then yields
one :class:`Action` after another (who says what where, polls, moderation, whispers,
giveaways, bots coming and going), each with the delay before it. :class:`Simulator` ticks
the streams every :data:`TICK` seconds (faster at a high speed), tells the script which
channels are live (bots of a channel that went offline leave its room; an offline channel's
chat is quiet) and performs the actions on the event loop through the same room methods
(:mod:`~explorer.emulator.chat.dispatch`) real connections call, so clients see exactly what
they would see from people. The same seed gives the same sequence of choices; only wall-clock
timing varies.

Chat follows :mod:`~explorer.emulator.chatter`: a channel's rate is ``chatter.chat_rate`` of
its current audience (per world minute, times its voice's intensity), what is said is its
voice's, and moderation is chatter's. At ``--speed N`` a world minute lasts ``1/N`` of a real
one, so chat would be ``N`` times denser: when all live channels together would chat more
than ``Config.sim_rate`` messages a second (or one channel more than
``Config.sim_channel_rate``, or more than ``Config.sim_channels`` channels are live), chat is
*thinned*: every channel keeps the same share of its messages, which the platform reports as
``X-Explorer-Chat-Kept`` (sessions and audiences are never thinned). Bots vote in every poll
of their channel, whoever started it, spread over its duration (some change their mind).

The seeded chat history of the busiest channels is ``backfill.py``'s.
"""

from __future__ import annotations

import asyncio
import bisect
import heapq
import math
import random
from collections import deque
from collections.abc import Callable, Coroutine, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import orjson

from explorer.emulator import chatter
from explorer.emulator.brokers.broker import Delivery
from explorer.emulator.chat import dispatch, presence
from explorer.emulator.chat.cluster import ChatCluster
from explorer.emulator.chat.members import Member, member_of, refresh
from explorer.emulator.chat.moderation import parse_duration
from explorer.emulator.chat.rooms import Room
from explorer.emulator.config import Config
from explorer.emulator.context import Services
from explorer.emulator.db import channels
from explorer.emulator.db import users as db_users
from explorer.emulator.db.engine import Store
from explorer.emulator.resources import recordings
from explorer.emulator.streams import Streams, schedule_of
from explorer.emulator.world import DEMO_ACCOUNTS
from explorer.wire.codes import Refusal

#: Wall seconds between two applications of the world's sessions (and chat re-plans) at
#: most; at a high speed ticks come faster, so that one spans at most ``WORLD_TICK`` world
#: seconds (a short session is still seen live), but never faster than ``MIN_TICK``.
TICK = 1.0
WORLD_TICK = 300.0
MIN_TICK = 0.05
#: The most of the event loop's time ticks may take (see ``Simulator._tick``).
TICK_SHARE = 0.3
MAX_BOTS = 30
#: How far the executor may fall behind its schedule before it skips ahead, in seconds.
MAX_LAG = 2.0
#: Seconds after a message that chatter's moderation of it (a delete or a timeout) comes.
MODERATION_DELAY = 0.5
#: Speakers drawn for a message before one who is not timed out is given up on: the chat's
#: rate holds while its keenest chatters sit out timeouts and bans, as a big chat's would.
SPEAKER_DRAWS = 16
#: User names read per query when the script's cast is looked up.
_LOOKUP_CHUNK = 500

_POLLS = (
    ("Which map next?", ("Dust", "Mirage", "Inferno", "Nuke")),
    ("Should we try a speedrun?", ("Yes", "No")),
    ("Snack break now?", ("Yes", "After this round", "No")),
    ("Rate the last match", ("1", "2", "3", "4", "5")),
    ("Hard mode or normal?", ("Hard", "Normal")),
    ("Best weapon?", ("Sword", "Bow", "Staff")),
)
#: Probability of each kind of action per simulated event besides a message (moderation of
#: messages is chatter's, per message).
_ODDS = (
    ("poll", 0.002),
    ("giveaway", 0.0005),
    ("whisper", 0.01),
    ("churn", 0.02),
)


# --- the script: seeded decisions -----------------------------------------------------------


@dataclass(slots=True)
class ChannelPlan:
    """One live channel as the simulator runs it."""

    id: int
    owner_id: int
    viewers: int
    #: Messages per wall second now (after thinning).
    rate: float
    #: Who may speak (user ids); the voice's names are theirs, in this order.
    cast: list[int]
    voice: chatter.ChannelVoice
    #: Positions in ``cast`` of those present now (bots); the others wait in reserve.
    present: set[int]
    #: Draws the voice's intensity minute after minute: keyed by the channel, so that its
    #: bursts do not hang on which channels were planned before it (the busiest channel,
    #: always planned first, took the script's first draws: with the default seed, a fresh
    #: platform began with its busiest chat in a highlight).
    pace: random.Random
    #: The voice's intensity for the current world minute, and that minute.
    intensity: float = 1.0
    minute: int = -1
    #: Virtual time until which the script's own poll runs.
    poll_until: float = 0.0
    #: Positions in ``cast`` the script's own timeouts silence, and until when (virtual time).
    silenced: dict[int, float] = field(default_factory=dict)

    @property
    def bots(self) -> list[int]:
        """The bots present in the room."""
        return [self.cast[position] for position in sorted(self.present)]


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


def _natural(viewers: int, intensity: float) -> float:
    """Messages per world second of a channel of ``viewers`` at ``intensity``."""
    return chatter.chat_rate(viewers) * intensity / 60


class Script:
    """The seeded sequence of simulated actions for one world (pure: no clock, no I/O)."""

    def __init__(self, seed: int, pool: Sequence[int], config: Config, speed: float) -> None:
        """``pool`` holds the ids bots are drawn from; ``speed`` is world seconds per wall
        second. :attr:`names` must map :meth:`cast`'s ids to names before :meth:`next`."""
        self.seed = seed
        self.rng = random.Random(f"{seed}:simulate")
        self.names: dict[int, str] = {}
        self.pool = pool
        self.config = config
        self.speed = speed
        self.plans: dict[int, ChannelPlan] = {}
        self.channels: list[ChannelPlan] = []
        self.total_rate = 0.0
        #: The share of the live channels' natural chat the rates keep (1.0: not thinned).
        self.kept = 1.0
        self._cumulative: list[float] = []
        #: Actions due at the instant of the last one given (a joining speaker's message).
        self._pending: deque[Action] = deque()
        #: The next drawn action, when it is due (script time) and its follow-ups.
        self._next: tuple[float, list[Action]] | None = None
        #: Moderation due later: (when, order drawn, action), soonest first.
        self._later: list[tuple[float, int, Action]] = []
        self._drawn = 0
        #: Script time of the drawn actions, and of the last action given.
        self.now = 0.0
        self._given = 0.0

    def cast(self) -> set[int]:
        """Every user id the script may name: each channel's bots and reserve."""
        return {user for plan in self.channels for user in plan.cast}

    def set_live(
        self,
        live: Sequence[tuple[int, int, int, str]],
        minute: int,
        names: dict[int, str],
        highlight: Callable[[int, int, int], float] | None = None,
    ) -> tuple[list[ChannelPlan], list[ChannelPlan]]:
        """Run chat in ``live`` ``(channel, owner, viewers, language)``, busiest first, at
        most ``Config.sim_channels`` of them (the others count as thinned away); ``minute``
        is the world's current minute; ``highlight`` gives a channel's stream highlights
        (``Streams.highlight``; without it, voices draw their own). Returns the plans that
        started and those that stopped; ``names`` must hold the names of :meth:`missing`'s
        users."""
        kept_ids = list(live[: self.config.sim_channels])
        wanted = {channel for channel, _, _, _ in kept_ids}
        stopped = [plan for channel, plan in self.plans.items() if channel not in wanted]
        for gone in stopped:
            del self.plans[gone.id]
        started: list[ChannelPlan] = []
        for channel, owner, viewers, language in kept_ids:
            known = self.plans.get(channel)
            if known is None:
                known = self._plan(channel, owner, viewers, language, names)
                if known is None:
                    continue
                self.plans[channel] = known
                started.append(known)
            plan = known
            plan.viewers = viewers
            if plan.minute != minute:
                burst = highlight(channel, plan.minute, minute) if highlight else None
                voiced = plan.voice.intensity(plan.pace, burst, minute - plan.minute)
                plan.minute, plan.intensity = minute, voiced
        self.channels = sorted(self.plans.values(), key=lambda plan: (-plan.viewers, plan.id))
        unrun = sum(_natural(viewers, 1.0) for _, _, viewers, _ in live[self.config.sim_channels :])
        self._rate(unrun)
        return started, stopped

    def missing(self, live: Sequence[tuple[int, int, int, str]]) -> list[int]:
        """The user ids new plans for ``live`` would cast (their names must be looked up):
        draws nothing, so calling it changes no later choice."""
        wanted = [item for item in live[: self.config.sim_channels] if item[0] not in self.plans]
        return [user for channel, _, _, _ in wanted for user in self._cast_of(channel)]

    def _cast_of(self, channel: int) -> list[int]:
        rng = random.Random(f"{self.seed}:{channel}:cast")
        return rng.sample(self.pool, min(len(self.pool), 2 * MAX_BOTS + 1))

    def _plan(
        self, channel: int, owner: int, viewers: int, language: str, names: dict[int, str]
    ) -> ChannelPlan | None:
        cast = [user for user in self._cast_of(channel) if user != owner and user in names]
        if not cast:
            return None
        self.names.update((user, names[user]) for user in cast)
        size = min(len(cast), max(2, min(MAX_BOTS, round(2 + math.sqrt(viewers)))))
        voice = chatter.ChannelVoice(self.seed, channel, [names[user] for user in cast], language)
        pace = random.Random(f"{self.seed}:{channel}:pace")
        return ChannelPlan(channel, owner, viewers, 0.0, cast, voice, set(range(size)), pace)

    def _rate(self, unrun: float) -> None:
        """Each plan's rate: its natural chat at the world's speed, all thinned alike to
        stay within the budgets; :attr:`kept` is the share of all live chat kept (``unrun``:
        the natural chat of live channels beyond ``Config.sim_channels``, per world second)."""
        natural = [_natural(plan.viewers, plan.intensity) * self.speed for plan in self.channels]
        wanted = sum(natural)
        cap, budget = self.config.sim_channel_rate, self.config.sim_rate
        share = min(1.0, budget / wanted if wanted else 1.0, cap / max(natural, default=1.0))
        for plan, rate in zip(self.channels, natural, strict=True):
            plan.rate = rate * share
        self.total_rate = wanted * share
        everything = wanted + unrun * self.speed
        self.kept = min(1.0, self.total_rate / everything) if everything else 1.0
        self._cumulative = []
        running = 0.0
        for plan in self.channels:
            running += plan.rate
            self._cumulative.append(running)

    def next(self) -> Action | None:
        """The next action and the delay before it (None when no channel chats and nothing is
        due). Moderation comes MODERATION_DELAY after its message without holding back the
        messages drawn meanwhile (waiting it out capped chat at a few hundred a second)."""
        if self._pending:
            return self._pending.popleft()
        if self._next is None and self.channels and self.total_rate > 0:
            action = self._draw()
            self._next = (self.now, [action, *self._pending])
            self._pending.clear()
        if self._next is not None and (not self._later or self._next[0] <= self._later[0][0]):
            at, (action, *follow) = self._next
            self._next = None
            self._pending.extend(follow)
        elif self._later:
            at, _, action = heapq.heappop(self._later)
        else:
            return None
        delay, self._given = at - self._given, at
        return replace(action, delay=delay)

    def _moderate(self, plan: ChannelPlan, kind: str, args: tuple[Any, ...]) -> None:
        """The owner's ``kind`` (delete or timeout), MODERATION_DELAY after the message drawn."""
        action = Action(MODERATION_DELAY, plan.id, kind, plan.owner_id, args)
        self._drawn += 1
        heapq.heappush(self._later, (self.now + MODERATION_DELAY, self._drawn, action))

    def _draw(self) -> Action:
        """Draw the next action (its follow-ups into ``_pending``, moderation for later)."""
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
        return self._message(delay, plan)

    def _message(self, delay: float, plan: ChannelPlan) -> Action:
        """A line from the channel's voice, maybe followed by chatter's moderation of it; a
        speaker from the reserve first joins (another bot leaving)."""
        rng = self.rng
        speaker = plan.voice.speaker(rng)
        for _ in range(SPEAKER_DRAWS):  # a timed-out or banned bot cannot speak: someone else
            if plan.silenced.get(speaker, 0.0) <= self.now:
                break
            speaker = plan.voice.speaker(rng)
        actor = plan.cast[speaker]
        action = Action(delay, plan.id, "msg", actor, (plan.voice.line(rng, speaker),))
        if speaker not in plan.present:
            leaving = rng.choice(sorted(plan.present))
            plan.present.discard(leaving)
            plan.present.add(speaker)
            left = plan.cast[leaving]
            self._pending.append(Action(0.0, plan.id, "msg", actor, action.args))
            action = Action(delay, plan.id, "churn", left, (left, actor))
        verdict = chatter.moderation(rng)
        if verdict == "delete":
            self._moderate(plan, "delete", (0,))
        elif verdict == "timeout":
            duration = chatter.timeout_duration(rng)
            plan.silenced[speaker] = self.now + MODERATION_DELAY + (parse_duration(duration) or 0)
            self._moderate(plan, "timeout", (self.names[actor], duration))
        return action

    def _special(self, delay: float, plan: ChannelPlan, kind: str) -> Action:
        rng = self.rng
        owner = plan.owner_id
        if kind == "poll" and plan.poll_until <= self.now:
            question, answers = rng.choice(_POLLS)
            seconds = rng.randrange(20, 91)
            plan.poll_until = self.now + seconds + 1
            return Action(delay, plan.id, "poll", owner, (question, list(answers), seconds))
        if kind == "giveaway":
            return Action(delay, plan.id, "giveaway", owner)
        present = sorted(plan.present)
        if kind == "whisper" and len(present) > 1:
            sender, recipient = rng.sample(present, 2)
            whisper = (self.names[plan.cast[recipient]], plan.voice.line(rng, sender))
            return Action(delay, plan.id, "whisper", plan.cast[sender], whisper)
        waiting = [at for at in range(len(plan.cast)) if at not in plan.present]
        if kind == "churn" and waiting:
            leaving, joining = rng.choice(present), rng.choice(waiting)
            plan.present.discard(leaving)
            plan.present.add(joining)
            left, joined = plan.cast[leaving], plan.cast[joining]
            return Action(delay, plan.id, "churn", left, (left, joined))
        return self._message(delay, plan)

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


def user_pool(store: Store) -> range:
    """The ids bots are drawn from: every non-demo user (ids are dense, so a range)."""
    return range(len(DEMO_ACCOUNTS) + 1, (db_users.highest_id(store) or 0) + 1)


def names_of(store: Store, users: Sequence[int]) -> dict[int, str]:
    """The names of ``users`` (only those asked for: a million-user world starts as fast)."""
    found: dict[int, str] = {}
    ordered = sorted(set(users))
    for start in range(0, len(ordered), _LOOKUP_CHUNK):
        chunk = ordered[start : start + _LOOKUP_CHUNK]
        found.update(db_users.usernames(store, chunk))
    return found


def live_channels(
    store: Store, audiences: Sequence[tuple[int, int]]
) -> list[tuple[int, int, int, str]]:
    """``(channel, owner, viewers, language)`` of the live channels ``audiences`` lists
    (busiest first), those suspended left out."""
    if not audiences:
        return []
    info: dict[int, tuple[int, str]] = {}
    ids = [channel for channel, _ in audiences]
    for start in range(0, len(ids), _LOOKUP_CHUNK):
        chunk = ids[start : start + _LOOKUP_CHUNK]
        for channel, owner, language in channels.listed_owners(store, chunk):
            info[channel] = (owner, language or "en")
    return [
        (channel, *info[channel][:1], viewers, info[channel][1])
        for channel, viewers in audiences
        if channel in info
    ]


def replan(
    script: Script, store: Store, streams: Streams
) -> tuple[list[ChannelPlan], list[ChannelPlan]]:
    """Give ``script`` the channels live at the streams' cursor (and their highlights); the
    plans that started and those that stopped."""
    live = live_channels(store, streams.audiences())
    names = names_of(store, script.missing(live))
    return script.set_live(live, int(streams.cursor // 60), names, streams.highlight)


def script_for(store: Store, seed: int, config: Config, speed: float = 1.0) -> Script:
    """The script of the world in ``store`` at the instant its channels are at, at ``speed``."""
    script = Script(seed, user_pool(store), config, speed)
    replan(script, store, Streams(store, schedule_of(store), seed))
    return script


# --- the simulator: performing the script -----------------------------------------------------


def tick_wait(pause: float, cost: float) -> float:
    """Seconds to wait after a tick that took ``cost``: ``pause``, or longer, so that ticks
    take at most :data:`TICK_SHARE` of the loop's time."""
    return max(pause, cost * (1 - TICK_SHARE) / TICK_SHARE)


class Simulator:
    """Plays the world's sessions on the world clock and runs a :class:`Script` against the
    platform's rooms (see the module docstring)."""

    def __init__(self, services: Services, cluster: ChatCluster) -> None:
        self.services = services
        self.rooms = cluster.rooms
        self.broker = cluster.broker
        self.seed = services.config.seed
        store = services.store
        self.streams = Streams(store, schedule_of(store), self.seed)
        self.script = Script(self.seed, user_pool(store), services.config, services.world.speed)
        #: The bots and owners in each room, by channel, then user.
        self._members: dict[int, dict[int, Member]] = {}
        self._recent: dict[int, deque[str]] = {}
        self._polls_seen: dict[int, int] = {}
        self._poll_keys: set[tuple[int, int]] = set()
        self._tasks: set[asyncio.Task[None]] = set()
        self._wake = asyncio.Event()
        self.performed = 0

    def tick(self) -> None:
        """Apply the world's sessions up to the world clock's now, then re-plan chat."""
        changes = self.streams.advance(self.services.world())
        recordings.store_sessions(self.services.store, self.seed, changes.ended)
        self.plan()

    def plan(self) -> None:
        """Tell the script which channels are live; bots of channels that stopped leave their
        rooms and those of channels that started enter theirs (the share of them the chat
        keeps: the rest enter when they first act)."""
        started, stopped = replan(self.script, self.services.store, self.streams)
        self.services.world.kept = self.script.kept
        for plan in stopped:
            self._leave_all(plan.id)
        for plan in started:
            room = self.rooms.get(plan.id)
            if room is None:
                continue
            self.broker.subscribe(plan.id, self)
            # Where chat is thinned (a high speed), so is the crowd that waits in the room:
            # the others enter when they first act, and a tick's cost stays bounded.
            bots = plan.bots
            for user_id in (plan.owner_id, *bots[: math.ceil(len(bots) * self.script.kept)]):
                self._enter(room, user_id)
        if started:
            self._wake.set()

    async def start(self) -> None:
        """Bring the bots of the channels live now into their rooms, then tick and act."""
        self.plan()
        self._spawn(self._act())
        self._spawn(self._tick())

    async def stop(self) -> None:
        """Stop acting and take the bots out of their rooms."""
        tasks = list(self._tasks)
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        for channel_id in list(self._members):
            self._leave_all(channel_id)

    def _leave_all(self, channel_id: int) -> None:
        room = self.rooms.get(channel_id)
        for member in self._members.pop(channel_id, {}).values():
            if room is not None:
                presence.leave(room, member)
        self.broker.unsubscribe(channel_id, self)
        self._recent.pop(channel_id, None)

    def _spawn(self, work: Coroutine[Any, Any, None]) -> None:
        task = asyncio.get_running_loop().create_task(work)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    def _enter(self, room: Room, user_id: int) -> Member:
        member = member_of(self.services.store, room.channel_id, user_id, None)
        self._members.setdefault(room.channel_id, {})[user_id] = member
        presence.join(room, member, f"sim:{user_id}")
        return member

    def _member(self, room: Room, user_id: int) -> Member:
        return self._members.get(room.channel_id, {}).get(user_id) or self._enter(room, user_id)

    async def _tick(self) -> None:
        """Tick every ``pause`` seconds, or less often when a tick is costly: the loop it
        shares with REST and chat spends at most :data:`TICK_SHARE` of its time ticking, so a
        listing never starves behind the simulator at a high speed (a tick then spans more
        world time)."""
        loop = asyncio.get_running_loop()
        pause = min(TICK, max(MIN_TICK, WORLD_TICK / self.services.world.speed))
        wait = pause
        while True:
            await asyncio.sleep(wait)
            began = loop.time()
            self.tick()
            wait = tick_wait(pause, loop.time() - began)

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
            member = self._members.get(channel_id, {}).get(delivery.refresh_user)
            if member is not None:
                refresh(self.services.store, member, channel_id)

    async def _vote(self, channel_id: int, poll: dict[str, Any]) -> None:
        index = self._polls_seen.get(channel_id, 0)
        self._polls_seen[channel_id] = index + 1
        plan = self.script.plans.get(channel_id)
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
            member = self._members.get(channel_id, {}).get(voter)
            if member is not None:
                self._call(room, member, "vote:choose", [choice])

    # --- what bots do -------------------------------------------------------------------

    async def _act(self) -> None:
        loop = asyncio.get_running_loop()
        due = loop.time()
        while True:
            action = self.script.next()
            if action is None:
                self._wake.clear()
                await self._wake.wait()
                due = loop.time()
                continue
            due = max(due + action.delay, loop.time() - MAX_LAG)
            # Behind its schedule (more chat asked for than the loop can post), the script
            # still yields before each action: REST and chat are served between actions,
            # never starved behind a backlog (a listing timed out at --sim-rate 4000).
            await asyncio.sleep(max(due - loop.time(), 0.0))
            self.perform(action)

    def perform(self, action: Action) -> None:
        """Carry out one scripted action through the room's own methods (none in a channel
        that is no longer live)."""
        room = self.rooms.get(action.channel)
        if room is None or action.channel not in self.script.plans:
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
            leaving = self._members.get(room.channel_id, {}).pop(args[0], None)
            if leaving is not None:
                presence.leave(room, leaving)
            self._member(room, args[1])

    def _call(self, room: Room, member: Member, method: str, args: list[Any]) -> Any:
        try:
            return dispatch.call(room, member, method, args)
        except Refusal:
            return None  # refused like anyone's would be (timed out, poll running, ...)
