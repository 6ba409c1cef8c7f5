"""Client addresses: the peer of a connection, or what a trusted proxy says it forwarded.

Per-address rate limits (failed logins, anonymous chat) and the loopback-only control
namespace need the address of the client, not of a proxy in front of it. Forwarding headers
(``X-Forwarded-For``, then ``X-Real-IP``) are read only when the connection's peer is one of the
proxies named in ``Config.forwarded_allow_ips`` (``explorer serve --forwarded-allow-ips``,
default none): from anyone else they are ignored, so a client cannot pick the address it is
counted under. ``X-Forwarded-For`` is read from the right: the first address that is not a
trusted proxy is the client. HTTP (uvicorn runs with ``proxy_headers`` off) and the chat nodes
resolve addresses here alike.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Callable
from functools import lru_cache
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from starlette.requests import Request

    from explorer.emulator.config import Config

Network = ipaddress.IPv4Network | ipaddress.IPv6Network
#: A request-header lookup by lower-case name.
HeaderLookup = Callable[[str], str | None]

#: Header names read from a trusted proxy, in order of preference.
FORWARDED_FOR = "x-forwarded-for"
REAL_IP = "x-real-ip"


@lru_cache(maxsize=16)
def networks(allowed: tuple[str, ...]) -> tuple[Network, ...]:
    """The networks named by ``allowed`` (addresses or CIDR blocks; ``*`` is everything)."""
    found: list[Network] = []
    for item in allowed:
        if item == "*":
            found += [ipaddress.ip_network("0.0.0.0/0"), ipaddress.ip_network("::/0")]
        else:
            found.append(ipaddress.ip_network(item.strip(), strict=False))
    return tuple(found)


def _ip(text: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    try:
        address = ipaddress.ip_address(text.strip().strip("[]"))
    except ValueError:
        return None
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        return address.ipv4_mapped
    return address


def trusted(text: str, proxies: tuple[Network, ...]) -> bool:
    """Whether the address ``text`` is in one of the networks ``proxies`` (:func:`networks`)."""
    address = _ip(text)
    return address is not None and any(address in network for network in proxies)


def client(peer: str | None, header: HeaderLookup, allowed: tuple[str, ...]) -> str:
    """The client's address given the connection's ``peer``, a lookup of request headers and
    the trusted proxies ``allowed`` (``Config.forwarded_allow_ips``)."""
    if peer is None:
        return "unknown"
    proxies = networks(allowed)
    if not proxies or not trusted(peer, proxies):
        return peer
    hops = [hop.strip() for hop in (header(FORWARDED_FOR) or "").split(",") if hop.strip()]
    for hop in reversed(hops):
        if _ip(hop) is None:
            return peer  # a garbled chain names no one: count the proxy itself
        if not trusted(hop, proxies):
            return str(_ip(hop))
    if hops:
        return str(_ip(hops[0]))
    real = _ip(header(REAL_IP) or "")
    return str(real) if real is not None else peer


def is_loopback(address: str) -> bool:
    """True for 127.0.0.0/8, ``::1`` (also IPv4-mapped) and ``localhost``."""
    if address == "localhost":
        return True
    ip = _ip(address)
    return ip is not None and ip.is_loopback


def of_request(request: Request, config: Config) -> str:
    """The client address of an HTTP request."""
    peer = request.client.host if request.client else None
    return client(peer, request.headers.get, config.forwarded_allow_ips)
