"""Delivering live events to web hooks (registered through ``/hooks``, see
:mod:`~explorer.emulator.resources.hooks`).

A dispatcher task follows the live-events outbox and POSTs each event a hook names to the
hook's URL, as the historical platform did (mixer/developer-docs, reference/webhooks): the body
``{"event", "id", "payload", "sentAt"}``, headers ``Poker-Nth-Retry`` (attempts before this
one), ``Poker-Hook-Id`` and, when the hook has a secret, ``Poker-Signature: sha384=<HMAC-SHA384
of the body, hex, upper case>``; ``sentAt`` is world time, the clock of the hook's own
``createdAt`` and ``expiresAt`` and of the events' records. A delivery that gets no 2xx is
tried again after each of :data:`RETRY_DELAYS`; a hook whose deliveries failed
:data:`MAX_FAILURES` times in a row is deactivated (``deactivationReason: "failing"``).
Redirects are not followed, and the URL is checked against the operator's allow-list again
before every delivery (:func:`allowed`, which parses it with the client that delivers, so no
two parsers disagree on its host), so nothing reaches an address the operator did not allow.
Nor does a hook reach the platform itself, under whatever address reaches it (the control
namespace answers loopback, and deliveries come from loopback): every delivery carries
:data:`HOOK_HEADER`, and :class:`RefuseDeliveries`, outermost in the platform's app, answers
any request carrying it 403 before anything runs.

What one user's hooks cost is bounded: the hooks of each event are found through an index
(``hook_events``, one row per hook and event name), so an event costs the hooks that name it
and nothing per other hook; a user's clients hold at most ``MAX_HOOKS`` active hooks
(:mod:`~explorer.emulator.resources.hooks`), and a user's hooks start at most
:data:`MAX_RATE` deliveries a second with at most :data:`MAX_IN_FLIGHT` in flight (one more
event for them is skipped and logged, not queued). A hook ends
with its OAuth client: deleting the client deactivates its hooks, and nothing is delivered
for a hook whose client is gone.

One dispatcher per platform: every process may run one (started by the first ``/hooks``
request it serves), and they share the outbox cursor (``meta`` key ``hooks_seen``), each batch
claimed by a compare-and-set in one transaction, so each event is delivered by one process.
The delivering client, httpx, loads with the first hook (its URL's check or the dispatcher),
not with the platform: most platforms never see one.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import hashlib
import hmac
import ipaddress
import logging
import uuid
from typing import TYPE_CHECKING, Any

import orjson
from starlette.types import ASGIApp, Receive, Scope, Send

from explorer.emulator.addresses import networks
from explorer.emulator.context import Services
from explorer.emulator.db import hook_deliveries, live_events
from explorer.emulator.responses import ApiError, bad_request

if TYPE_CHECKING:
    import httpx

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
#: Deliveries in flight for the hooks of one user (their clients' owner) at most.
MAX_IN_FLIGHT = 64
#: Deliveries started for the hooks of one user per second at most.
MAX_RATE = 100
#: The header naming the hook on every delivery; the platform refuses requests carrying it.
HOOK_HEADER = "Poker-Hook-Id"
_TASK = "hook-dispatcher"
_CURSOR = "hooks_seen"


def allowed(url: Any, allow: tuple[str, ...]) -> str:
    """``url`` as the delivering client reads it, when it is http(s) to an address in
    ``allow`` (else a 400): the host must be an address literal or ``localhost`` (no name is
    resolved); an IPv4 address written as IPv6 counts as itself; the unspecified and multicast
    addresses are never allowed (``0.0.0.0`` reaches this host)."""
    if not isinstance(url, str) or not url or len(url) > MAX_URL:
        raise bad_request("url must be an http or https address.", "url")
    import httpx

    try:
        parsed = httpx.URL(url)
        port = parsed.port
    except (httpx.InvalidURL, ValueError, TypeError):
        raise bad_request("url is not a valid http or https address.", "url") from None
    host = parsed.host
    if parsed.scheme not in ("http", "https") or not host:
        raise bad_request("url must be an http or https address.", "url")
    if port is not None and not 0 < port < 65536:
        raise bad_request("url has no valid port.", "url")
    try:
        address = ipaddress.ip_address("127.0.0.1" if host == "localhost" else host)
    except ValueError:
        raise bad_request(
            "url must name its host by address (no name is resolved).", "url", "host"
        ) from None
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        address = address.ipv4_mapped
    if (
        address.is_unspecified
        or address.is_multicast
        or not any(address in network for network in networks(allow))
    ):
        raise bad_request(f"Hooks may not be delivered to {host}.", "url", "forbidden")
    return str(parsed)


class RefuseDeliveries:
    """ASGI middleware: a request carrying :data:`HOOK_HEADER` is one of the platform's own
    deliveries reaching the platform, whatever address its URL used: 403, nothing runs."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        marker = HOOK_HEADER.lower().encode()
        if scope["type"] == "http" and any(key == marker for key, _ in scope["headers"]):
            refused = ApiError(403, "Hooks are not delivered to the platform itself.")
            await refused.response()(scope, receive, send)
            return
        await self.app(scope, receive, send)


def signature(secret: str, body: bytes) -> str:
    """The ``Poker-Signature`` of ``body``: ``sha384=`` and the HMAC's hex, upper case."""
    digest = hmac.new(secret.encode(), body, hashlib.sha384).hexdigest().upper()
    return f"sha384={digest}"


def ensure_dispatcher(services: Services) -> None:
    """Start this process's dispatcher if it is not running; the platform's first one
    starts the shared cursor at the newest event (what happened before any hook existed is
    not delivered)."""
    live_events.start_cursor(services.store, _CURSOR)
    task = services.caches.get(_TASK)
    if task is None or task.done():
        services.caches[_TASK] = asyncio.get_running_loop().create_task(_dispatch(services))


def _claim(services: Services) -> list[tuple[str, str]]:
    """The events after the shared cursor, claimed for this process (empty when another
    process moved the cursor first, or there is nothing new)."""
    return live_events.claim(services.store, _CURSOR)


#: What a delivery needs of a hook: ``(id, url, secret, failures)``.
Hook = tuple[str, str, str | None, int]


def _hooks_for(services: Services, topics: list[str]) -> dict[str, list[tuple[int, Hook]]]:
    """``(owner, hook)`` of the active, unexpired hooks of existing clients naming each of
    ``topics`` (through the index: hooks naming none cost nothing)."""
    now = services.world.iso()
    rows = hook_deliveries.subscribed(services.store, sorted(set(topics)), now)
    found: dict[str, list[tuple[int, Hook]]] = {}
    for topic, owner, *hook in rows:
        found.setdefault(topic, []).append((owner, (hook[0], hook[1], hook[2], hook[3])))
    return found


async def _dispatch(services: Services) -> None:
    import httpx

    pending: set[asyncio.Task[None]] = set()
    in_flight: dict[int, int] = {}

    def settled(owner: int, _: asyncio.Task[None]) -> None:
        in_flight[owner] -= 1
        if not in_flight[owner]:
            del in_flight[owner]

    async with httpx.AsyncClient(timeout=TIMEOUT, follow_redirects=False, trust_env=False) as http:
        try:
            while True:
                await asyncio.sleep(POLL)
                try:
                    events = _claim(services)
                    hooks = _hooks_for(services, [topic for topic, _ in events]) if events else {}
                except Exception:  # a locked database: the next poll tries again
                    log.exception("reading the live-events outbox for hooks")
                    continue
                started: dict[int, int] = {}
                for topic, payload in events:
                    for owner, hook in hooks.get(topic, ()):
                        if (
                            in_flight.get(owner, 0) >= MAX_IN_FLIGHT
                            or started.get(owner, 0) >= MAX_RATE * POLL
                        ):
                            log.info("hook %s: skipped, its owner's deliveries are busy", hook[0])
                            continue
                        started[owner] = started.get(owner, 0) + 1
                        in_flight[owner] = in_flight.get(owner, 0) + 1
                        task = asyncio.ensure_future(_deliver(services, http, hook, topic, payload))
                        pending.add(task)
                        task.add_done_callback(pending.discard)
                        task.add_done_callback(functools.partial(settled, owner))
        finally:
            for task in list(pending):
                task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await asyncio.gather(*pending, return_exceptions=True)


async def _deliver(
    services: Services,
    http: httpx.AsyncClient,
    hook: Hook,
    topic: str,
    payload: str,
) -> None:
    """POST one event to one hook, retrying; count the outcome on the hook."""
    import httpx

    hook_id, url, secret, failures = hook
    sent_at = services.world.iso()
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
    headers = {"Content-Type": "application/json; charset=utf-8", HOOK_HEADER: hook_id}
    if secret:
        headers["Poker-Signature"] = signature(secret, body)
    for attempt, delay in enumerate((0.0, *RETRY_DELAYS)):
        await asyncio.sleep(delay)
        try:
            target = allowed(url, services.config.hook_allow)
            response = await http.post(
                target, content=body, headers={**headers, "Poker-Nth-Retry": str(attempt)}
            )
        except httpx.HTTPError as exc:
            log.info("hook %s: delivery failed: %s", hook_id, exc)
            continue
        except Exception as exc:  # the URL is no longer allowed
            log.info("hook %s: not delivered: %s", hook_id, exc)
            break
        if response.is_success:
            if failures:
                hook_deliveries.delivered(services.store, hook_id)
            return
    hook_deliveries.failed(services.store, hook_id, MAX_FAILURES)
