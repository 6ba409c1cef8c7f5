"""Chat message data: a typed line of text turned into the components every client renders.

``msg``, ``whisper``, the giveaway announcement, the simulator's bots and the seeded history
all build their ``ChatMessage`` data here, so every message has one shape (platform.md, "Chat
message data"; reference.md adds ``user_level`` and ``user_avatar``). Parsing splits the text
on whitespace and recognises, word by word:

* an emoticon of the built-in pack (``:)``, ``<3``, named ones such as ``PogFace``; the whole
  word, case-sensitive; see :mod:`~explorer.emulator.chat.emoticons`), or of the channel's own
  pack (``:code``, ``source: "external"``; the components are given, see
  :mod:`~explorer.emulator.chat.settings`);
* a link: ``http://`` or ``https://`` (``text`` drops the scheme), or a bare domain such as
  ``mixer.com/mixer`` or ``www.example.org`` (``url`` gains ``http://``, as the developer docs'
  ChatMessage example shows);
* ``@name`` of a known user (a ``tag`` with that user's id; trailing punctuation stays text);
* everything else is text, adjacent text merged into one component.

A message that starts with a non-text component begins with an empty text component, as
recorded traffic of the historical platform does (clients read ``message[0].data``). A leading
``/me `` sets ``meta.me``. Pure apart from the user lookup it is given.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Callable, Mapping
from typing import Any

from explorer.emulator.brokers.broker import Delivery
from explorer.emulator.chat.emoticons import EMOTICONS, PACK, image
from explorer.wire.packets import encode_event

#: Longest message text accepted, in characters.
MAX_LENGTH = 360

_TOKENS = re.compile(r"\s+|\S+")
_LINK = re.compile(r"(?:https?://|www\.)\w", re.IGNORECASE)
#: A bare domain (known top-level domains only, so "node.js" or "e.g." stay text).
_DOMAIN = re.compile(
    r"(?:[a-z0-9-]+\.)+(?:com|net|org|tv|gg|io|co|me|ly|uk|de|fr|be|info|dev|app)(?:/\S*)?",
    re.IGNORECASE,
)
_TRAILING = re.compile(r"[.,!?;:)\]'\"]+\Z")
_TAG = re.compile(r"@([A-Za-z0-9_]{1,32})(.*)", re.DOTALL)

#: Finds a user by name: ``(id, canonical username)`` or None.
UserLookup = Callable[[str], tuple[int, str] | None]
Component = dict[str, Any]


def text_component(text: str) -> Component:
    """A plain text component."""
    return {"type": "text", "data": text, "text": text}


def tag_component(user_id: int, username: str, typed: str | None = None) -> Component:
    """A tag component for ``@username``."""
    return {"type": "tag", "text": f"@{typed or username}", "username": username, "id": user_id}


def _special(
    word: str, lookup: UserLookup, pack: Mapping[str, Component]
) -> tuple[Component, str] | None:
    """The non-text component a word starts with, and the text left after it."""
    external = pack.get(word)
    if external is not None:
        return external, ""
    emoticon = EMOTICONS.get(word)
    if emoticon is not None:
        component = {
            "type": "emoticon",
            "source": "builtin",
            "pack": PACK,
            "coords": emoticon.coords,
            "text": word,
        }
        return component, ""
    trailing = _TRAILING.search(word)
    rest = trailing.group() if trailing else ""
    link = word[: len(word) - len(rest)]
    if _LINK.match(word) or _DOMAIN.fullmatch(link):
        url = link if "://" in link else f"http://{link}"
        return {"type": "link", "url": url, "text": url.split("://", 1)[1]}, rest
    tag = _TAG.fullmatch(word)
    if tag is not None:
        found = lookup(tag.group(1))
        if found is not None:
            return tag_component(found[0], found[1], tag.group(1)), tag.group(2)
    return None


def compose(
    text: str, lookup: UserLookup, pack: Mapping[str, Component] | None = None
) -> tuple[list[Component], dict[str, Any]]:
    """The components and ``meta`` of a message typed as ``text`` (see the module docstring);
    ``pack`` holds the channel's own emoticon components by what is typed (``:code``)."""
    channel_pack = pack or {}
    meta: dict[str, Any] = {}
    if text.startswith("/me "):
        meta["me"] = True
        text = text[4:]
    components: list[Component] = []
    pending: list[str] = []
    for word in _TOKENS.findall(text):
        found = None if word[0].isspace() else _special(word, lookup, channel_pack)
        if found is None:
            pending.append(word)
            continue
        if pending:
            components.append(text_component("".join(pending)))
            pending = []
        components.append(found[0])
        if found[1]:
            pending.append(found[1])
    if pending:
        components.append(text_component("".join(pending)))
    if components and components[0]["type"] != "text":
        components.insert(0, text_component(""))
    return components, meta


def new_message_id() -> str:
    """A fresh UUID-shaped message id."""
    return str(uuid.uuid4())


def message_data(
    channel_id: int,
    message_id: str,
    identity: dict[str, Any],
    components: list[Component],
    meta: dict[str, Any],
    target: str | None = None,
) -> dict[str, Any]:
    """The ``ChatMessage`` data (also the ``msg``/``whisper`` reply and a ``history`` item).

    ``identity`` carries ``user_name``, ``user_id``, ``user_roles``, ``user_level`` and
    ``user_avatar`` of the sender.
    """
    data = {
        "channel": channel_id,
        "id": message_id,
        **identity,
        "message": {"message": components, "meta": meta},
    }
    if target is not None:
        data["target"] = target
    return data


def _builtin(component: Component) -> bool:
    return component["type"] == "emoticon" and component.get("source") == "builtin"


def has_emoticons(data: dict[str, Any]) -> bool:
    """True when the message shows at least one emoticon of the built-in pack."""
    return any(_builtin(c) for c in data["message"]["message"])


def with_emoticons(data: dict[str, Any]) -> dict[str, Any]:
    """``data`` with ``meta.emoticons`` mapping each built-in emoticon's text to its base64
    PNG (the form a connection that called ``attachEmotes`` receives; a channel pack's
    emoticons have no image here, their ``pack`` says where the pack is)."""
    images = {c["text"]: image(c["text"]) for c in data["message"]["message"] if _builtin(c)}
    if not images:
        return data
    message = data["message"]
    return {**data, "message": {**message, "meta": {**message["meta"], "emoticons": images}}}


def message_delivery(data: dict[str, Any], **fields: Any) -> Delivery:
    """The ``ChatMessage`` delivery of message ``data``, with its emoticon-image variant when
    it has emoticons; ``fields`` are further :class:`Delivery` fields."""
    extra = encode_event("ChatMessage", with_emoticons(data)) if has_emoticons(data) else None
    return Delivery(
        "ChatMessage", encode_event("ChatMessage", data), emotes_payload=extra, **fields
    )


def shown_to(emotes: bool, data: dict[str, Any]) -> dict[str, Any]:
    """Message ``data`` as a member receives it: with emoticon images if they attached them."""
    return with_emoticons(data) if emotes else data
