"""A platform spread over processes: fan-out through Redis pub/sub, and the registry of live
processes and their chat nodes.

One platform is one SQLite file plus one Redis: a REST process (``explorer serve --broker
redis://...``, with or without chat nodes and the simulator of its own) and any number of
chat-node processes (``explorer serve chat-node --broker redis://... --db FILE``, see
:mod:`~explorer.emulator.nodeprocess`). Each process runs a :class:`RedisBroker`. A channel's
deliveries travel on the Redis channel ``explorer:chat:{id}``. Every process listens to all of
them (one pattern subscription, made at start) and hands each to its own subscribers of that
channel, if it has any (nodes with members there, the simulator). Subscribing per channel
would spare a process the traffic of channels it does not serve, but a member's first events
could then be published before the subscription took effect; the pattern costs a dictionary
lookup per foreign message instead. A delivery reaches the subscribers of its own process at
once, without Redis, so a process keeps serving its own clients while Redis is away.

Who owns what, so that no two processes make the same decision:

* Room state is SQLite's (see :mod:`~explorer.emulator.chat.rooms`): presence, timeouts,
  polls and history, each decision one transaction, and SQLite runs write transactions one at a time
  (WAL, ``busy_timeout``, ``BEGIN IMMEDIATE``). A vote is one row per voter, so two nodes never
  count it twice; a poll's timer runs in the process that started it.
* Each process owns its registration: the key ``explorer:process:{origin}`` (its pid and its
  running chat node addresses), written every :data:`HEARTBEAT` seconds with a lifetime of
  :data:`TTL` seconds and listed in the set ``explorer:processes``. A process whose key expired
  is dead: its addresses leave ``GET /chats/{id}``, and the rooms of every survivor release
  what it held in room state (:func:`~explorer.emulator.chat.presence.release`: its
  presence, with ``UserLeave`` where it held a user's last connection;
  :func:`~explorer.emulator.chat.polls.adopt`: its polls, adopted by a new owner); the
  transaction that changes those rows does it, so exactly one survivor does.
  Survivors act only once Redis has been up for two lifetimes, so that after a Redis restart
  every live process has registered again before anyone is declared dead.
* Each process owns the order in which stored messages reach its subscribers. The transaction
  that stores a message gives it its position in history (``seq``) and names the channel's
  message before it (``prev``). A process delivers a channel's stored messages in ``seq``
  order, each once: a message whose ``prev`` it has not delivered makes it fetch the missing
  ones from the chat history (:class:`~explorer.emulator.brokers.broker.Backlog`) first (a
  message published from another process arrives after a later one, or its publisher died
  before publishing), copies it has delivered already are dropped,
  every heartbeat it fetches the messages stored since the last one that it has not seen (the
  last message of a dead publisher, messages stored while Redis was away), and ``history``
  first delivers everything up to the newest message it returns (:meth:`RedisBroker.catch_up`).
  So each client sees a channel's messages in history order, without gaps or duplicates, and
  a client that moves to another node and asks ``history`` continues exactly where it was.

Faults:

* A process dies (``kill -9``): its clients reconnect to other nodes (the toolkit does that and
  recovers what was said meanwhile from ``history``); within :data:`TTL` seconds its nodes
  leave the directory and survivors release its presence and adopt its polls. Every message it
  stored reaches every node, published or not; a message that got a reply is in history
  (stored before the reply).
* Redis restarts or is unreachable: publishing fails and is dropped (counted in
  :attr:`RedisBroker.lost`, logged once per outage); every process keeps serving its own
  clients; the pub/sub reader reconnects with backoff and subscribes again, registrations come
  back with the next heartbeat, and the messages stored meanwhile reach every node from SQLite.
  Other events published during the outage (``UserJoin``, ``PollStart``, whispers) are lost;
  those published once Redis answers again are not, though the connections the outage broke
  are still pooled: a call that fails on one is made again at once on a new connection.
* A slow client is the concern of its node (bounded send buffers, see
  :mod:`~explorer.emulator.chat.node`); the publish queue to Redis is bounded too
  (:data:`OUTBOX_LIMIT`, the oldest dropped first).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import orjson
from redis.asyncio import Redis
from redis.asyncio.retry import Retry
from redis.backoff import NoBackoff
from redis.exceptions import ConnectionError as BrokenConnection
from redis.exceptions import RedisError

from explorer.emulator.brokers.broker import Backlog, Broker, Delivery, Subscriber

log = logging.getLogger("explorer.emulator.redis")

#: Seconds between a process's heartbeats (registration, directory, release, catch-up).
HEARTBEAT = 1.0
#: Seconds a registration lives without a heartbeat: a process silent that long is dead.
TTL = 3.0
#: Deliveries waiting to be published at most; the oldest go first when Redis is away.
OUTBOX_LIMIT = 10_000
#: Publishes sent to Redis in one round trip at most.
BATCH = 256
#: Longest wait for one pub/sub read before the reader checks its connection again.
READ_WAIT = 1.0
#: Reconnect delays of the pub/sub reader: doubling from the first to the second.
RETRY_DELAYS = (0.05, 1.0)
#: Seconds to reach Redis at start, and to flush and unregister at close.
CONNECT_TIMEOUT = 5.0
CLOSE_TIMEOUT = 1.0
#: Clock difference tolerated between processes when releasing what the dead held.
CLOCK_MARGIN = 1.0
#: Longest wait for a platform-wide allowance before counting in process instead.
TAKE_TIMEOUT = 0.5
#: A token bucket in one Redis hash (``t`` tokens, ``at`` last refill), taken atomically.
TAKE_SCRIPT = """
local rate, burst, now = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
local held = redis.call('HMGET', KEYS[1], 't', 'at')
local tokens, at = tonumber(held[1]) or burst, tonumber(held[2]) or now
tokens = math.min(burst, tokens + math.max(0, now - at) * rate)
local taken = 0
if tokens >= 1 then tokens = tokens - 1; taken = 1 end
redis.call('HSET', KEYS[1], 't', tostring(tokens), 'at', tostring(math.max(now, at)))
redis.call('EXPIRE', KEYS[1], math.ceil(burst / rate) + 1)
return taken
"""
#: What a call to an unreachable Redis raises.
UNREACHABLE = (RedisError, OSError, TimeoutError)


def pack(origin: str, delivery: Delivery) -> bytes:
    """``delivery`` as one pub/sub message from process ``origin``: a JSON header, then the
    payloads, separated by NUL bytes (which JSON text never contains)."""
    users = sorted(delivery.users) if delivery.users is not None else None
    head = orjson.dumps(
        [
            origin,
            delivery.event,
            users,
            delivery.skip,
            delivery.refresh_user,
            delivery.seq,
            delivery.prev,
        ]
    )
    if delivery.emotes_payload is None:
        return b"\0".join((head, delivery.payload))
    return b"\0".join((head, delivery.payload, delivery.emotes_payload))


def unpack(message: bytes) -> tuple[str, Delivery]:
    """The origin and delivery of a message made by :func:`pack`."""
    head, _, rest = message.partition(b"\0")
    origin, event, users, skip, refresh_user, seq, prev = orjson.loads(head)
    payload, separated, emotes = rest.partition(b"\0")
    delivery = Delivery(
        event,
        payload,
        emotes if separated else None,
        None if users is None else frozenset(users),
        skip,
        refresh_user,
        seq,
        prev,
    )
    return origin, delivery


@dataclass(eq=False, slots=True)
class _Channel:
    """This process's subscribers of one channel, and the position of the last stored message
    they got (every earlier one reached them, or was stored before they subscribed)."""

    cursor: int
    subscribers: dict[Subscriber, None] = field(default_factory=dict)

    def fan(self, channel_id: int, delivery: Delivery) -> None:
        for subscriber in tuple(self.subscribers):
            subscriber.deliver(channel_id, delivery)


class RedisBroker(Broker):
    """Fan-out between the processes of one platform through Redis at ``url`` (see the module
    docstring); ``backlog`` reads the chat history of the platform's database, which its
    processes share."""

    def __init__(
        self,
        url: str,
        backlog: Backlog,
        *,
        heartbeat: float = HEARTBEAT,
        ttl: float = TTL,
        prefix: str = "explorer",
    ) -> None:
        super().__init__()
        self.url = url
        self.backlog = backlog
        self.heartbeat = heartbeat
        self.ttl = ttl
        #: Deliveries that could not be published (Redis away, or the outbox full).
        self.lost = 0
        self._topic_prefix = f"{prefix}:chat:".encode()
        self._processes = f"{prefix}:processes"
        self._process_prefix = f"{prefix}:process:"
        self._bucket_prefix = f"{prefix}:bucket:"
        # One retry inside redis-py, at once on a new connection, for a broken connection only:
        # the pool hands out connections that an earlier outage closed as if they were sound
        # (redis-py 8 skips its check of them), and the first call on each would fail (a
        # publish be lost) though Redis is back. A refusal or a timeout still shows an outage
        # at once; the loops here retry.
        self._redis = Redis.from_url(
            url,
            socket_connect_timeout=CONNECT_TIMEOUT,
            socket_timeout=CONNECT_TIMEOUT,
            retry=Retry(NoBackoff(), 1, supported_errors=(BrokenConnection,)),
        )
        self._pubsub = self._redis.pubsub(ignore_subscribe_messages=True)
        self._take = self._redis.register_script(TAKE_SCRIPT)
        self._channels: dict[int, _Channel] = {}
        self._outbox: deque[tuple[bytes, bytes]] = deque()
        self._queued = asyncio.Event()
        self._sending = False
        self._local: Callable[[], list[str]] = list
        self._directory: list[str] | None = None
        self._mark = 0
        self._reachable = True
        self._writer: asyncio.Task[None] | None = None
        self._loops: list[asyncio.Task[None]] = []

    # --- Broker -----------------------------------------------------------------------

    def subscribe(self, channel_id: int, subscriber: Subscriber) -> None:
        local = self._channels.get(channel_id)
        if local is None:
            local = self._channels[channel_id] = _Channel(self.backlog.latest())
        local.subscribers[subscriber] = None

    def unsubscribe(self, channel_id: int, subscriber: Subscriber) -> None:
        local = self._channels.get(channel_id)
        if local is not None:
            local.subscribers.pop(subscriber, None)
            if not local.subscribers:
                del self._channels[channel_id]

    def publish(self, channel_id: int, delivery: Delivery) -> None:
        """Deliver to this process's subscribers now, and queue it for the others."""
        self._accept(channel_id, delivery)
        if len(self._outbox) >= OUTBOX_LIMIT:
            self._outbox.popleft()
            self.lost += 1
        self._outbox.append((self._topic_prefix + b"%d" % channel_id, pack(self.origin, delivery)))
        self._queued.set()

    async def take(self, key: str, rate: float, burst: float, now: float) -> bool | None:
        """The bucket lives in Redis, shared by every process; None while Redis is away."""
        if not self._reachable:
            return None
        try:
            taken = await asyncio.wait_for(
                self._take(keys=[self._bucket_prefix + key], args=[rate, burst, now]),
                TAKE_TIMEOUT,
            )
        except UNREACHABLE as exc:
            self._unreachable("counting an allowance", exc)
            return None
        return bool(taken)

    def catch_up(self, channel_id: int, seq: int) -> None:
        local = self._channels.get(channel_id)
        if local is not None and seq > local.cursor:
            self._fill(channel_id, local, seq)

    def advertise(self, local: Callable[[], list[str]]) -> None:
        self._local = local

    def endpoints(self, local: list[str]) -> list[str]:
        """The addresses registered by every live process (as of the last heartbeat; this
        process's own ``local`` ones until the first)."""
        return list(self._directory) if self._directory is not None else local

    async def start(self) -> None:
        """Reach Redis (ConnectionError when it does not answer within
        :data:`CONNECT_TIMEOUT` seconds), register, and start the background loops."""
        try:
            await self._redis.ping()
            await self._pubsub.psubscribe(self._topic_prefix + b"*")
            self._mark = self.backlog.latest()
            await self._beat()
        except UNREACHABLE as exc:
            raise ConnectionError(f"cannot reach Redis at {self.url}: {exc}") from exc
        running = asyncio.get_running_loop()
        self._writer = running.create_task(self._flush())
        self._loops = [running.create_task(self._listen()), running.create_task(self._tick())]

    async def refresh(self) -> None:
        """Register now with the current node addresses."""
        try:
            await self._beat()
        except UNREACHABLE as exc:
            self._unreachable("registering", exc)

    async def close(self) -> None:
        """Stop listening, publish what is queued, unregister, disconnect."""
        for task in self._loops:
            task.cancel()
        await asyncio.gather(*self._loops, return_exceptions=True)
        with contextlib.suppress(*UNREACHABLE):
            async with asyncio.timeout(CLOSE_TIMEOUT):
                while self._outbox or self._sending:
                    await asyncio.sleep(0.01)
                await self._redis.delete(self._process_key(self.origin))
                await self._redis.srem(self._processes, self.origin)
        if self._writer is not None:
            self._writer.cancel()
            await asyncio.gather(self._writer, return_exceptions=True)
        with contextlib.suppress(*UNREACHABLE):
            await self._pubsub.aclose()
        await self._redis.aclose()

    # --- delivery ---------------------------------------------------------------------

    def _accept(self, channel_id: int, delivery: Delivery) -> None:
        """Hand ``delivery`` to this process's subscribers, stored messages in order, once."""
        local = self._channels.get(channel_id)
        if local is None:
            return
        if delivery.seq:
            if delivery.seq <= local.cursor:
                return
            if delivery.prev > local.cursor:
                self._fill(channel_id, local, delivery.seq - 1)
            local.cursor = delivery.seq
        local.fan(channel_id, delivery)

    def _fill(self, channel_id: int, local: _Channel, through: int) -> None:
        """Deliver the channel's stored messages after the cursor up to ``through``."""
        for missed in self.backlog.since(channel_id, local.cursor, through):
            local.fan(channel_id, missed)
        local.cursor = through

    def _receive(self, topic: bytes, message: bytes) -> None:
        """A pub/sub message from any process (this one's own were delivered when sent)."""
        channel_id = int(topic[len(self._topic_prefix) :])
        if channel_id in self._channels:
            origin, delivery = unpack(message)
            if origin != self.origin:
                self._accept(channel_id, delivery)

    def _reconcile(self) -> None:
        """Deliver the messages stored since the last heartbeat that did not arrive."""
        latest = self.backlog.latest_by_channel(self._mark)
        if latest:
            self._mark = max(latest.values())
        for channel_id, seq in latest.items():
            self.catch_up(channel_id, seq)

    # --- background loops -------------------------------------------------------------

    async def _listen(self) -> None:
        """Read pub/sub messages; on failure, reconnect (redis-py subscribes again)."""
        delay = RETRY_DELAYS[0]
        while True:
            try:
                message = await self._pubsub.get_message(
                    ignore_subscribe_messages=True, timeout=READ_WAIT
                )
            except UNREACHABLE as exc:
                self._unreachable("listening", exc)
                await asyncio.sleep(delay)
                delay = min(2 * delay, RETRY_DELAYS[1])
                continue
            delay = RETRY_DELAYS[0]
            if message is not None and message["type"] == "pmessage":
                self._receive(message["channel"], message["data"])

    async def _flush(self) -> None:
        """Publish queued deliveries in order, a batch per round trip."""
        while True:
            await self._queued.wait()
            self._queued.clear()
            while self._outbox:
                count = min(BATCH, len(self._outbox))
                batch = [self._outbox.popleft() for _ in range(count)]
                self._sending = True
                try:
                    async with self._redis.pipeline(transaction=False) as pipe:
                        for topic, message in batch:
                            pipe.publish(topic, message)
                        await pipe.execute()
                except UNREACHABLE as exc:
                    self.lost += count
                    self._unreachable("publishing", exc)
                finally:
                    self._sending = False

    async def _tick(self) -> None:
        """Every heartbeat: deliver what did not arrive, then register and read the registry.
        A beat whose use of the database fails (its server restarting: reading the chat
        backlog, releasing the dead's presence) still registers, and the loop goes on, or the
        process would drop out of the directory for good; the next beat reads on from the
        same mark and releases again, so nothing stored meanwhile is skipped."""
        failing = False
        while True:
            await asyncio.sleep(self.heartbeat)
            failed: Exception | None = None
            try:
                self._reconcile()
            except Exception as exc:
                failed = exc
            try:
                await self.refresh()
            except Exception as exc:
                failed = exc
            if failed is not None and not failing:
                log.warning("a heartbeat failed (%s); retrying each beat", failed)
            failing = failed is not None

    async def _beat(self) -> None:
        """Register this process, read who else is alive, and let the living release the
        dead once Redis has been up long enough for every live process to have registered."""
        before = time.time() - CLOCK_MARGIN
        mine = orjson.dumps({"pid": os.getpid(), "endpoints": self._local()})
        async with self._redis.pipeline(transaction=False) as pipe:
            pipe.set(self._process_key(self.origin), mine, px=round(self.ttl * 1000))
            pipe.sadd(self._processes, self.origin)
            pipe.smembers(self._processes)
            pipe.info("server")
            _, _, members, server = await pipe.execute()
        origins = sorted(member.decode() for member in members)
        found = await self._redis.mget([self._process_key(origin) for origin in origins])
        alive: dict[str, Any] = {}
        for origin, value in zip(origins, found, strict=True):
            if value is not None:
                alive[origin] = orjson.loads(value)
        dead = [origin for origin in origins if origin not in alive]
        if dead:
            await self._redis.srem(self._processes, *dead)
        if not self._reachable:
            self._reachable = True
            log.info("Redis at %s answers again", self.url)
        self._directory = sorted({e for entry in alive.values() for e in entry["endpoints"]})
        if server["uptime_in_seconds"] >= 2 * self.ttl:
            self._report(frozenset(alive), before)

    # --- helpers ----------------------------------------------------------------------

    def _process_key(self, origin: str) -> str:
        return self._process_prefix + origin

    def _unreachable(self, doing: str, exc: BaseException) -> None:
        """Log the first failure of an outage (the loops retry on their own)."""
        if self._reachable:
            self._reachable = False
            log.warning(
                "Redis at %s is unreachable while %s (%s); this process keeps serving its own "
                "clients and retries",
                self.url,
                doing,
                str(exc) or type(exc).__name__,
            )
