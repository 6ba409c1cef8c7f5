"""Delivering live events to web hooks (registered through ``/hooks``, see
:mod:`~explorer.emulator.resources.hooks`).

A dispatcher task follows the live-events outbox and POSTs each event a hook names to the
hook's URL, as the historical platform did (mixer/developer-docs, reference/webhooks): the
body ``{"event", "id", "payload", "sentAt"}``, headers ``Poker-Nth-Retry`` (attempts before
this one), ``Poker-Hook-Id`` and, when the hook has a secret, ``Poker-Signature:
sha384=<HMAC-SHA384 of the body, hex, upper case>``. A delivery that gets no 2xx is tried
again after each of :data:`RETRY_DELAYS`; a hook whose deliveries failed :data:`MAX_FAILURES`
times in a row is deactivated (``deactivationReason: "failing"``). Redirects are not
followed, and the URL is checked against the operator's allow-list again before every
delivery (:func:`allowed`), so nothing reaches an address the operator did not allow.

One dispatcher per platform: every process may run one (started by the first ``/hooks``
request it serves), and they share the outbox cursor (``meta`` key ``hooks_seen``), each batch
claimed by a compare-and-set in one transaction, so each event is delivered by one process.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import hmac
import ipaddress
import logging
import uuid
from datetime import UTC, datetime
from typing import Any
from urllib.parse import urlsplit

import httpx
import orjson

from explorer.emulator.addresses import networks
from explorer.emulator.context import Services
from explorer.emulator.responses import bad_request
from explorer.emulator.world import iso

log = logging.getLogger("explorer.emulator.webhooks")

#: Seconds between reads of the outbox.
POLL = 0.1
#: Seconds to wait before each retry of a failed delivery.
RETRY_DELAYS = (0.5, 2.0, 5.0)
#: Failed deliveries in a row after which a hook is deactivated.
MAX_FAILURES = 1000
#: Seconds one delivery may take.
TIMEOUT = 5.0
#: Longest URL a hook may have.
MAX_URL = 2048
_TASK = "hook-dispatcher"
_CURSOR = "hooks_seen"


def allowed(url: Any, allow: tuple[str, ...]) -> str:
    """``url`` when it is http(s) to an address in ``allow`` (else a 400): the host must be an
    address literal or ``localhost``; no name is resolved."""
    if not isinstance(url, str) or not url or len(url) > MAX_URL:
        raise bad_request("url must be an http or https address.", "url")
    parts = urlsplit(url)
    host = parts.hostname or ""
    if parts.scheme not in ("http", "https") or not host:
        raise bad_request("url must be an http or https address.", "url")
    try:
        address = ipaddress.ip_address("127.0.0.1" if host == "localhost" else host)
    except ValueError:
        raise bad_request(
            "url must name its host by address (no name is resolved).", "url", "host"
        ) from None
    if not any(address in network for network in networks(allow)):
        raise bad_request(f"Hooks may not be delivered to {host}.", "url", "forbidden")
    return url


def signature(secret: str, body: bytes) -> str:
    """The ``Poker-Signature`` of ``body``: ``sha384=`` and the HMAC's hex, upper case."""
    digest = hmac.new(secret.encode(), body, hashlib.sha384).hexdigest().upper()
    return f"sha384={digest}"


def ensure_dispatcher(services: Services) -> None:
    """Start this process's dispatcher if it is not running; the platform's first one
    starts the shared cursor at the newest event (what happened before any hook existed is
    not delivered)."""
    with services.store.transaction() as conn:
        conn.execute(
            "INSERT OR IGNORE INTO meta (key, value) "
            "SELECT ?, COALESCE(MAX(seq), 0) FROM live_events",
            (_CURSOR,),
        )
    task = services.caches.get(_TASK)
    if task is None or task.done():
        services.caches[_TASK] = asyncio.get_running_loop().create_task(_dispatch(services))


def _claim(services: Services) -> list[tuple[str, str]]:
    """The events after the shared cursor, claimed for this process (empty when another
    process moved the cursor first, or there is nothing new)."""
    store = services.store
    with store.transaction() as conn:
        row = conn.execute("SELECT value FROM meta WHERE key = ?", (_CURSOR,)).fetchone()
        seen = int(row[0])
        rows = conn.execute(
            "SELECT seq, topic, payload FROM live_events WHERE seq > ? ORDER BY seq LIMIT 1000",
            (seen,),
        ).fetchall()
        if rows:
            conn.execute("UPDATE meta SET value = ? WHERE key = ?", (str(rows[-1][0]), _CURSOR))
    return [(topic, payload) for _, topic, payload in rows]


def _hooks_for(services: Services, topic: str) -> list[tuple[Any, ...]]:
    """``(id, url, secret)`` of the active, unexpired hooks that name ``topic``."""
    now = iso(datetime.fromtimestamp(services.clock(), UTC))
    return services.store.all(
        "SELECT id, url, secret FROM hooks WHERE isActive = 1 AND expiresAt > ? "
        "AND EXISTS (SELECT 1 FROM json_each(hooks.events) WHERE value = ?)",
        (now, topic),
    )


async def _dispatch(services: Services) -> None:
    pending: set[asyncio.Task[None]] = set()
    async with httpx.AsyncClient(timeout=TIMEOUT, follow_redirects=False, trust_env=False) as http:
        try:
            while True:
                await asyncio.sleep(POLL)
                try:
                    events = _claim(services)
                except Exception:  # a locked database: the next poll tries again
                    log.exception("reading the live-events outbox for hooks")
                    continue
                for topic, payload in events:
                    for hook in _hooks_for(services, topic):
                        task = asyncio.ensure_future(_deliver(services, http, hook, topic, payload))
                        pending.add(task)
                        task.add_done_callback(pending.discard)
        finally:
            for task in list(pending):
                task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await asyncio.gather(*pending, return_exceptions=True)


async def _deliver(
    services: Services,
    http: httpx.AsyncClient,
    hook: tuple[str, str, str | None],
    topic: str,
    payload: str,
) -> None:
    """POST one event to one hook, retrying; count the outcome on the hook."""
    hook_id, url, secret = hook
    sent_at = iso(datetime.fromtimestamp(services.clock(), UTC))
    body = b"".join(
        (
            b'{"event":',
            orjson.dumps(topic),
            b',"id":',
            orjson.dumps(str(uuid.uuid4())),
            b',"payload":',
            payload.encode(),
            b',"sentAt":',
            orjson.dumps(sent_at),
            b"}",
        )
    )
    headers = {"Content-Type": "application/json; charset=utf-8", "Poker-Hook-Id": hook_id}
    if secret:
        headers["Poker-Signature"] = signature(secret, body)
    for attempt, delay in enumerate((0.0, *RETRY_DELAYS)):
        await asyncio.sleep(delay)
        try:
            allowed(url, services.config.hook_allow)
            response = await http.post(
                url, content=body, headers={**headers, "Poker-Nth-Retry": str(attempt)}
            )
        except httpx.HTTPError as exc:
            log.info("hook %s: delivery failed: %s", hook_id, exc)
            continue
        except Exception as exc:  # the URL is no longer allowed
            log.info("hook %s: not delivered: %s", hook_id, exc)
            break
        if response.is_success:
            with services.store.transaction() as conn:
                conn.execute("UPDATE hooks SET failures = 0 WHERE id = ?", (hook_id,))
            return
    with services.store.transaction() as conn:
        conn.execute(
            "UPDATE hooks SET failures = failures + 1, isActive = CASE WHEN failures + 1 >= ? "
            "THEN 0 ELSE isActive END, deactivationReason = CASE WHEN failures + 1 >= ? "
            "THEN 'failing' ELSE deactivationReason END WHERE id = ?",
            (MAX_FAILURES, MAX_FAILURES, hook_id),
        )
