"""The host names the platform answers to: a request whose ``Host`` names another is refused.

A page of any site can have its own name resolve to ``127.0.0.1`` (DNS rebinding) and then
read the platform as its "own" origin: the control namespace and its mail box of confirmation
codes (loopback only, and the page's requests come from loopback), and the cross-site check
(the page's ``Origin`` equals the ``Host`` it sent). Such a request still names the page's
host, so the platform answers only requests that name:

* a loopback name (``localhost``, a name under ``.localhost``) or any IP address literal (a
  rebound page is reached by a name; someone who typed an address is no such page);
* a name the operator serves it under (``Config.allowed_hosts``, ``explorer serve
  --allowed-hosts``; ``*`` for any);
* anything, when the connection comes from a trusted proxy (``Config.forwarded_allow_ips``,
  as :mod:`~explorer.emulator.addresses` trusts them): the proxy forwards its own public name.

A request without ``Host`` (HTTP/1.0 programs) is no browser's and is served. Another name is
``421`` and a malformed ``Host`` ``400``, each with the platform's JSON error body; a
websocket upgrade naming another host is refused before its handshake. The port is not
compared: a rebound page uses the platform's own port.
"""

from __future__ import annotations

import ipaddress
import re
from functools import lru_cache

from starlette.types import ASGIApp, Receive, Scope, Send

from explorer.emulator import addresses
from explorer.emulator.config import Config

_STATUS = {400: b"Bad Request", 421: b"Misdirected Request"}
#: A host name (or IPv4 address) as a Host header spells it, lower-cased.
_NAME = re.compile(r"[a-z0-9_-]+(?:\.[a-z0-9_-]+)*")


@lru_cache(maxsize=1024)
def verdict(host: str, allowed: tuple[str, ...]) -> int:
    """0 when a request naming ``host`` (a ``Host`` header's value) is served given the names
    ``allowed``, else the status refusing it (421 another name, 400 a malformed value)."""
    if host.startswith("["):
        literal, bracket, port = host[1:].partition("]")
        if not bracket or (port and not _port(port[1:] if port[0] == ":" else "x")):
            return 400
        try:
            ipaddress.IPv6Address(literal)
        except ValueError:
            return 400
        return 0
    name, _, port = host.partition(":")
    name = name.lower().rstrip(".")
    if _NAME.fullmatch(name) is None or (port and not _port(port)):
        return 400
    try:
        ipaddress.IPv4Address(name)
    except ValueError:
        pass
    else:
        return 0
    if name == "localhost" or name.endswith(".localhost"):
        return 0
    return 0 if "*" in allowed or name in allowed else 421


def _port(text: str) -> bool:
    return text.isascii() and text.isdigit() and len(text) <= 5


class Hosts:
    """The ASGI layer refusing requests (and websocket upgrades) that name a host the
    platform does not serve; outermost, so nothing else runs for them."""

    def __init__(self, app: ASGIApp, config: Config) -> None:
        self.app = app
        self.config = config
        self.allowed = tuple(name.lower().rstrip(".") for name in config.allowed_hosts)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] in ("http", "websocket"):
            status = self._refusal(scope)
            if status:
                await _refuse(scope, send, status)
                return
        await self.app(scope, receive, send)

    def _refusal(self, scope: Scope) -> int:
        host = next((value for name, value in scope["headers"] if name == b"host"), None)
        if host is None:
            return 0
        status = verdict(host.decode("latin-1"), self.allowed)
        if status == 421 and self.config.forwarded_allow_ips:
            peer = scope.get("client")
            proxies = addresses.networks(self.config.forwarded_allow_ips)
            if peer and addresses.trusted(peer[0], proxies):
                return 0
        return status


async def _refuse(scope: Scope, send: Send, status: int) -> None:
    """Answer ``status`` with the JSON error body (a websocket: before its handshake)."""
    message = (
        b"This platform does not serve that host name (see explorer serve --allowed-hosts)."
        if status == 421
        else b"The Host header is malformed."
    )
    body = b'{"statusCode":%d,"error":"%s","message":"%s"}' % (status, _STATUS[status], message)
    headers = [(b"content-type", b"application/json"), (b"content-length", b"%d" % len(body))]
    kind = "http.response"
    if scope["type"] == "websocket":
        if "websocket.http.response" not in scope.get("extensions", {}):
            await send({"type": "websocket.close", "code": 1008})  # the server answers 403
            return
        kind = "websocket.http.response"
    await send({"type": f"{kind}.start", "status": status, "headers": headers})
    await send({"type": f"{kind}.body", "body": body})
