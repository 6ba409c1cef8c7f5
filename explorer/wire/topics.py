"""The live events (Constellation) both halves name: every event by name, who may subscribe
to each, how a name is written and read, and the methods that subscribe.

The platform's live-events service checks subscriptions by them (``explorer.emulator.live``)
and its happenings name what they publish with :func:`checked`; the toolkit's ``api.live`` and
``api.track`` write the names they follow with :func:`name` and call :data:`SUBSCRIBE`.

Names are ``kind:{id}:event`` (``announcement:announce`` has no id), as listed by the
historical developer docs (mixer/developer-docs, pages/02.reference/02.constellation/
03.events/02.live). Most events are public; the ones about a user's own notifications and
purchases are private to that user, as the docs mark ``user:{id}:notify`` ("requires
authentication") and as subscriptions were private to the subscriber. A private event also
needs the OAuth scope of the REST route that shows the same data (:data:`SCOPES`), so a token
granted less (``chat:connect`` only) cannot read it live either.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

#: Who may subscribe: anyone, or only the signed-in user the event is about (``user:{id}``)
#: or who owns the channel (``channel:{id}``).
Access = Literal["public", "owner"]

#: Every event per kind, with who may subscribe to it.
EVENTS: dict[str, dict[str, Access]] = {
    "channel": {
        "update": "public",
        "followed": "public",
        "hosted": "public",
        "unhosted": "public",
        "subscribed": "public",
        "resubscribed": "public",
        "resubShared": "public",
        "directPurchased": "public",
        "skill": "public",
        "patronageUpdate": "public",
        "subscriptionGifted": "public",
        "broadcast": "public",
    },
    "user": {
        "update": "public",
        "followed": "public",
        "achievement": "public",
        "notify": "owner",
        "subscribed": "owner",
        "resubscribed": "owner",
        "subscriptionGifted": "owner",
        "teamAccepted": "public",
        "teamInvited": "public",
        "teamRemoved": "public",
    },
    "team": {
        "deleted": "public",
        "memberAccepted": "public",
        "memberInvited": "public",
        "memberRemoved": "public",
        "ownerChanged": "public",
    },
    "costream": {"update": "public"},
    "interactive": {"connect": "public", "disconnect": "public"},
    "progression": {"levelup": "public"},
}
#: The scope a private event needs: the one its REST counterpart needs
#: (``GET /notifications``; a user's subscriptions).
SCOPES: dict[str, str] = {
    "user:notify": "notification:view:self",
    "user:subscribed": "subscription:view:self",
    "user:resubscribed": "subscription:view:self",
    "user:subscriptionGifted": "subscription:view:self",
}
#: The methods that start and stop following events (``params.events``: their names).
SUBSCRIBE = "livesubscribe"
UNSUBSCRIBE = "liveunsubscribe"
#: Events without an id.
GLOBAL: frozenset[str] = frozenset({"announcement:announce"})
#: Ids an event may name (costreams are named by uuid, everything else by a positive number).
_MAX_ID = 2**63


@dataclass(frozen=True, slots=True)
class Topic:
    """A parsed event name."""

    name: str
    kind: str
    id: str
    access: Access
    #: The OAuth scope a subscriber needs (private events only).
    scope: str | None = None


class UnknownTopic(ValueError):
    """Raised for a name that is no live event."""


def parse(name: object) -> Topic:
    """The topic ``name`` names, or :class:`UnknownTopic`."""
    if not isinstance(name, str) or len(name) > 100:
        raise UnknownTopic(str(name)[:100])
    if name in GLOBAL:
        return Topic(name, "announcement", "", "public")
    parts = name.split(":")
    if len(parts) != 3 or parts[0] not in EVENTS or parts[2] not in EVENTS[parts[0]]:
        raise UnknownTopic(name)
    kind, ident, event = parts
    if kind != "costream" and not (
        ident.isascii() and ident.isdigit() and 0 < int(ident) < _MAX_ID
    ):
        raise UnknownTopic(name)
    if kind == "costream" and not ident:
        raise UnknownTopic(name)
    access = EVENTS[kind][event]
    return Topic(name, kind, ident, access, SCOPES.get(f"{kind}:{event}"))


def name(kind: str, ident: int | str, event: str) -> str:
    """The event name ``kind:{ident}:event`` (the platform refuses one it does not know)."""
    return f"{kind}:{ident}:{event}"


def checked(kind: str, ident: int, event: str) -> str:
    """The event name ``kind:{ident}:event`` of an event in the catalogue (the platform names
    what it publishes with this, so a misspelt event fails where it is written)."""
    assert event in EVENTS[kind], f"{kind}:{event} is no live event"
    return name(kind, ident, event)


def without_id(topic: str) -> str:
    """The event a name follows, without its id: ``channel:1:update`` -> ``channel:update``
    (a name without an id, ``announcement:announce``, as it is)."""
    kind, _, rest = topic.partition(":")
    return f"{kind}:{rest.partition(':')[2]}" if ":" in rest else topic
