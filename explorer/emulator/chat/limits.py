"""Chat allowances per identity: one user is one user, however many sockets and nodes.

A signed-in user's methods are counted in one token bucket over all their connections, on
every node and process (``Config.chat_rate`` per second, bursts of ``chat_burst``; through
:meth:`~explorer.emulator.brokers.broker.Broker.take`, in Redis when the platform spans
processes, in process otherwise or while Redis is away). Anonymous connections are counted per
client address (:mod:`~explorer.emulator.addresses`), :data:`ADDRESS_SHARE` times a user's
allowance. A method over the allowance answers ``4004`` and slows that connection alone, as the
per-connection bucket of :mod:`~explorer.emulator.chat.node` does.

Connections are capped too: a user holds at most ``chat_user_connections`` signed-in
connections over every node and process (counted in ``chat_presence``), an address at most
``chat_address_connections`` connections per process; one more is closed with
:data:`TOO_MANY_CONNECTIONS`. With ``Config.rate_limits`` off none of this applies.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from explorer.emulator.brokers.broker import Broker
from explorer.emulator.config import Config
from explorer.emulator.db import chat_presence
from explorer.emulator.db.engine import Store

#: Close code and reason for a connection over a user's or an address's cap.
TOO_MANY_CONNECTIONS = (4008, "Too many chat connections for this user or address.")
#: How many users' allowance the anonymous connections of one address share.
ADDRESS_SHARE = 10


@dataclass(slots=True)
class _Bucket:
    tokens: float
    at: float


class Limits:
    """The allowances of one process's chat nodes (shared by all of them)."""

    def __init__(self, config: Config, broker: Broker, clock: Callable[[], float]) -> None:
        self.config = config
        self.broker = broker
        self.clock = clock
        self._buckets: dict[str, _Bucket] = {}
        self._addresses: dict[str, int] = {}

    @staticmethod
    def identity(user_id: int | None, address: str) -> str:
        """Whom a connection's methods are charged to: its user, else its address."""
        return f"user:{user_id}" if user_id is not None else f"addr:{address}"

    def _allowance(self, identity: str) -> tuple[float, float]:
        rate, burst = self.config.chat_rate, float(self.config.chat_burst)
        if identity.startswith("addr:"):
            return rate * ADDRESS_SHARE, burst * ADDRESS_SHARE
        return rate, burst

    async def allow(self, identity: str) -> bool:
        """Take one method from ``identity``'s allowance; False when it has none left."""
        if not self.config.rate_limits:
            return True
        rate, burst = self._allowance(identity)
        now = self.clock()
        shared = await self.broker.take(f"chat:{identity}", rate, burst, now)
        if shared is not None:
            return shared
        bucket = self._buckets.get(identity)
        if bucket is None:
            bucket = self._buckets[identity] = _Bucket(burst, now)
            self._forget_full(now)
        bucket.tokens = min(burst, bucket.tokens + max(0.0, now - bucket.at) * rate)
        bucket.at = max(now, bucket.at)
        if bucket.tokens < 1:
            return False
        bucket.tokens -= 1
        return True

    def _forget_full(self, now: float) -> None:
        """Drop buckets that have refilled (they hold nothing a new one would not), so the
        table stays as small as the set of recently active identities."""
        if len(self._buckets) % 1024:
            return
        for identity, bucket in list(self._buckets.items()):
            rate, burst = self._allowance(identity)
            if bucket.tokens + (now - bucket.at) * rate >= burst:
                del self._buckets[identity]

    def open(self, address: str) -> bool:
        """Count a new connection from ``address``; False (not counted) over the cap."""
        held = self._addresses.get(address, 0)
        if self.config.rate_limits and held >= self.config.chat_address_connections:
            return False
        self._addresses[address] = held + 1
        return True

    def close(self, address: str) -> None:
        """Count a connection from ``address`` out."""
        held = self._addresses.get(address, 0) - 1
        if held > 0:
            self._addresses[address] = held
        else:
            self._addresses.pop(address, None)

    def user_full(self, store: Store, user_id: int) -> bool:
        """True when ``user_id`` already holds the most signed-in connections allowed."""
        if not self.config.rate_limits:
            return False
        return chat_presence.user_connections(store, user_id) >= self.config.chat_user_connections
