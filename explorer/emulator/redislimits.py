"""Rate-limit windows in Redis, shared by every REST process of a platform.

Each (bucket, identity) window is a hash ``{prefix}:limit:{bucket}:{identity}`` (``used``,
``resets``) and a sorted set beside it (``...:held``) of the places held by requests in
flight, each scored by when it expires. One Lua script (:data:`SCRIPT`, run with ``EVALSHA``)
admits a request atomically: it checks every window the request counts in and, if all allow
one more, charges ahead those a success counts in and holds a place in the others; the same
script settles (gives back, charges) and reads a window. A successful answer needs no second
call (:class:`~explorer.emulator.limits.Admission`), so a request costs one round trip.
It follows :class:`~explorer.wire.ratelimit.Window`'s rules: a window opens at the first
request checked and lasts its bucket's interval, held places count against the limit and are
taken off ``X-RateLimit-Remaining``. A held place expires :data:`HOLD_TTL` seconds after it was
taken, so a process killed mid-request leaks nothing for longer (a charge made ahead stays: the
request was received). Times are the platform's clock
(``Services.clock``, passed in), not Redis's; key expiry only frees memory.

The calls are synchronous: a round trip on loopback costs less CPU through redis-py's blocking
client than through its asyncio one (measured about 1.5x; ``docs/platform.md``), and the
callers (the guard and the page cache) count before and after each request without awaiting.
Each call waits at most :data:`TIMEOUT` seconds.

When Redis does not answer, this process counts alone (a :class:`LocalLimits`) and says so in
the log, once per outage, and tries Redis again :data:`RETRY_AFTER` seconds later: the platform
keeps serving, and meanwhile a limit is one per process (see ``SECURITY.md``). A request is
settled where it was admitted.
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any

from redis import Redis
from redis.backoff import NoBackoff
from redis.exceptions import ConnectionError as BrokenConnection
from redis.exceptions import RedisError
from redis.retry import Retry

from explorer.emulator.limits import (
    Admission,
    Key,
    Limits,
    LocalLimits,
    Refusal,
    Standing,
)
from explorer.wire.ratelimit import Bucket

log = logging.getLogger("explorer.emulator.redislimits")

#: Seconds a held place lasts without being settled (longer than any request is served).
HOLD_TTL = 60.0
#: Seconds one call to Redis may take before this process counts alone.
TIMEOUT = 0.25
#: Seconds of counting alone after Redis failed, before trying it again.
RETRY_AFTER = 2.0
#: What a call to an unreachable Redis raises.
UNREACHABLE = (RedisError, OSError, TimeoutError)

#: ``ARGV[1]``, words separated by spaces (one argument: redis-py packs each argument in Python,
#: which cost more than the script): mode (``admit`` or ``settle``), now, hold name, hold TTL,
#: the index of the window to report (0: none), then per window its count, interval and what
#: to do: at admission ``c`` (charge ahead) or ``h`` (hold a place); when settling ``-``
#: (nothing), ``c`` (charge), ``h`` (give the held place back), ``hc`` (give it back and
#: charge), or the reset of the window a charge was made in (give it back if still that one).
#: ``KEYS``: per window its hash and its held places. An admission returns every window's
#: standing. Numbers go back as strings: Redis would truncate a Lua number to an integer.
SCRIPT = """
local a = {}
for word in string.gmatch(ARGV[1], '%S+') do a[#a + 1] = word end
local mode, now, hold = a[1], tonumber(a[2]), a[3]
local ttl, report = tonumber(a[4]), tonumber(a[5])
local n = #KEYS / 2
local used, resets, pending, limit = {}, {}, {}, {}
for i = 1, n do
  local window, held = KEYS[2 * i - 1], KEYS[2 * i]
  limit[i] = tonumber(a[3 + 3 * i])
  local state = redis.call('HMGET', window, 'used', 'resets')
  used[i], resets[i] = tonumber(state[1]) or 0, tonumber(state[2]) or 0
  if now >= resets[i] then
    used[i], resets[i] = 0, now + tonumber(a[4 + 3 * i])
    redis.call('HSET', window, 'used', 0, 'resets', string.format('%.17g', resets[i]))
    redis.call('EXPIRE', window, math.ceil(resets[i] - now + ttl))
  end
  redis.call('ZREMRANGEBYSCORE', held, '-inf', now)
  pending[i] = redis.call('ZCARD', held)
end
local function standing(i)
  local left = math.max(limit[i] - used[i] - pending[i], 0)
  return {i, limit[i], left, string.format('%.17g', resets[i])}
end
local function charge(i, by)
  used[i] = used[i] + by
  redis.call('HINCRBY', KEYS[2 * i - 1], 'used', by)
end
if mode == 'admit' then
  for i = 1, n do
    if used[i] + pending[i] >= limit[i] then return standing(i) end
  end
  local all = {0}
  for i = 1, n do
    if a[5 + 3 * i] == 'c' then
      charge(i, 1)
    else
      redis.call('ZADD', KEYS[2 * i], now + ttl, hold)
      redis.call('EXPIRE', KEYS[2 * i], math.ceil(ttl))
      pending[i] = pending[i] + 1
    end
    all[#all + 1] = standing(i)
  end
  return all
end
for i = 1, n do
  local todo = a[5 + 3 * i]
  if todo == 'h' or todo == 'hc' then
    pending[i] = pending[i] - redis.call('ZREM', KEYS[2 * i], hold)
  end
  if todo == 'c' or todo == 'hc' then
    charge(i, 1)
  elseif tonumber(todo) == resets[i] and used[i] > 0 then
    charge(i, -1)
  end
end
if report > 0 then return standing(report) end
return {0}
"""


def hold_name() -> str:
    """A name for the places one request holds, unique among every process's (random: a
    forked process draws its own)."""
    return os.urandom(8).hex()


class RedisLimits(Limits):
    """The windows of every REST process of a platform, in the Redis at ``url``."""

    def __init__(
        self,
        url: str,
        buckets: dict[str, Bucket],
        *,
        prefix: str = "explorer",
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        super().__init__(buckets)
        self.url = url
        self._prefix = f"{prefix}:limit:"
        # One retry, at once on a new connection, for a broken one only: after a Redis restart
        # the pool still holds connections that look sound (as in the chat broker).
        self._redis = Redis.from_url(
            url,
            socket_connect_timeout=TIMEOUT,
            socket_timeout=TIMEOUT,
            retry=Retry(NoBackoff(), 1, supported_errors=(BrokenConnection,)),
        )
        self._script = self._redis.register_script(SCRIPT)
        #: Where this process counts while Redis does not answer.
        self.alone = LocalLimits(buckets)
        self._clock = clock
        self._retry_at = 0.0
        self._failing = False

    def admit(self, keys: Sequence[Key], now: float, ahead: Sequence[bool]) -> Admission | Refusal:
        if not self._away():
            hold = hold_name()
            found = self._call(keys, now, "admit", hold, 0, ["c" if c else "h" for c in ahead])
            if found is not None:
                if found[0] != 0:
                    return Refusal(*_standing(found))
                standings = tuple(_standing(each)[1] for each in found[1:])
                return Admission(tuple(ahead), standings, hold)
        admitted = self.alone.admit(keys, now, ahead)
        if isinstance(admitted, Refusal):
            return admitted
        return replace(admitted, alone=True)

    def settle(
        self,
        keys: Sequence[Key],
        now: float,
        counted: Sequence[bool],
        admission: Admission | None,
        report: int | None,
    ) -> Standing | None:
        if admission is not None and admission.alone:
            return self.alone.settle(keys, now, counted, admission, report)
        if not self._away():
            shown = 0 if report is None else report + 1
            found = self._call(
                keys,
                now,
                "settle",
                admission.hold if admission else "-",
                shown,
                _corrections(counted, admission),
            )
            if found is not None:
                return _standing(found)[1] if report is not None else None
        # Redis is away: a place held there expires, a charge made ahead stays; count here
        # what the answer counts beyond those charges.
        if admission is not None:
            counted = [c and not made for c, made in zip(counted, admission.ahead, strict=True)]
        return self.alone.settle(keys, now, counted, None, report)

    def close(self) -> None:
        self._redis.close()

    def _away(self) -> bool:
        """Whether this process counts alone for now (Redis failed less than
        :data:`RETRY_AFTER` seconds ago)."""
        return self._failing and self._clock() < self._retry_at

    def _call(
        self,
        keys: Sequence[Key],
        now: float,
        mode: str,
        hold: str,
        report: int,
        todo: Sequence[str],
    ) -> list[Any] | None:
        """Run the script over ``keys``, doing ``todo`` to each window (:data:`SCRIPT`); None
        (and counting alone for a while) when Redis does not answer."""
        names: list[str] = []
        words = [mode, repr(now), hold, repr(HOLD_TTL), str(report)]
        for (bucket_name, identity), what in zip(keys, todo, strict=True):
            bucket = self.buckets[bucket_name]
            window = f"{self._prefix}{bucket_name}:{identity}"
            names += (window, window + ":held")
            words += (str(bucket.count), repr(float(bucket.interval)), what)
        try:
            found: list[Any] = self._script(keys=names, args=[" ".join(words)])
        except UNREACHABLE as exc:
            self._retry_at = self._clock() + RETRY_AFTER
            if not self._failing:
                self._failing = True
                log.warning(
                    "Redis at %s is unreachable while counting rate limits (%s); this process "
                    "counts alone, trying Redis again every %g s",
                    self.url,
                    str(exc) or type(exc).__name__,
                    RETRY_AFTER,
                )
            return None
        if self._failing:
            self._failing = False
            log.info("Redis at %s answers again: rate limits are shared again", self.url)
        return found


def _corrections(counted: Sequence[bool], admission: Admission | None) -> list[str]:
    """What settling an answer counting in ``counted`` does to each window (:data:`SCRIPT`'s
    words) after ``admission``."""
    if admission is None:
        return ["c" if charge else "-" for charge in counted]
    todo = []
    for charge, made, standing in zip(counted, admission.ahead, admission.standings, strict=True):
        if not made:
            todo.append("hc" if charge else "h")
        else:
            todo.append("-" if charge else repr(standing.resets_at))
    return todo


def _standing(found: list[Any]) -> tuple[int, Standing]:
    """The index (0-based) and standing a script's report returned."""
    index, limit, remaining, resets = found
    return int(index) - 1, Standing(int(limit), int(remaining), float(resets))
