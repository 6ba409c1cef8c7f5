"""Real platforms' chat logs, as the tools people use write them, read into the platform's
event packets: one reader per format, a record (a line, or an item of a JSON document) at a
time. ``explorer.recording.chatimport`` streams the files and writes the capture.

Each reader turns a record into :class:`Event` s (a time and a packet of the platform's shape,
``{"type": "event", "event": ..., "data": ..., "source": <the record as it was>}``), so the
event log's one flattening (``eventrows.flatten``) gives the row, and a replay of the import
gives the same rows again; or into the name of what it skipped (a kind of record with no
event in the platform's table, such as IRC's ``ROOMSTATE``); or it raises :class:`Malformed`.

What a format does not say stays missing: a YouTube author's id is text, so ``user_id`` (an
integer column) is empty there and the id stays in the packet's ``source``; a chat-downloader
item names no channel, so ``channel`` is empty unless the caller gives one. Roles are the
source's own badge names (``moderator``, ``subscriber``, ``owner``), comma-joined.

- ``chat-downloader`` (xenova/chat-downloader, ``--output chat.json``): a JSON array of items
  with ``timestamp`` (microseconds), ``message``, ``message_id``, ``author`` (an object, or a
  name in the older chat_replay_downloader files) and ``message_type``.
- ``twitchdownloader`` (lay295/TwitchDownloader chat JSON, also gzipped): an object whose
  ``comments`` each have ``created_at``, ``commenter``, ``message.fragments`` and
  ``message.user_badges``; ``streamer.id`` is the channel.
- ``irc`` (gempir/justlog and Chatterino/rustlog raw day files, ``?raw`` output): Twitch IRC
  lines with tags; ``PRIVMSG`` is a ChatMessage (``/me`` as ``me``), ``CLEARCHAT`` a
  UserTimeout of its target (``ban-duration``) or ClearMessages, ``CLEARMSG`` a
  DeleteMessage, ``USERNOTICE`` (subs, raids) its own event name.
- ``yt-dlp`` (``--write-subs --sub-langs live_chat``, ``*.live_chat.json``): JSON Lines of
  YouTube's ``replayChatItemAction`` s; text and paid messages are ChatMessages, timed by
  their ``timestampUsec``.

Pure: no I/O.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from explorer.wire.numbers import identifier

#: The foreign formats, by the name ``format=`` takes; ``justlog`` and ``rustlog`` are ``irc``.
FOREIGN_FORMATS = ("chat-downloader", "twitchdownloader", "irc", "yt-dlp")


class Malformed(ValueError):
    """A record that is not of its format's shape (or has no time): counted, not imported."""


@dataclass(frozen=True, slots=True)
class Event:
    """One event read from a record: when it happened (epoch seconds) and its packet."""

    at: float
    packet: dict[str, Any]


Result = Event | str


def _packet(event: str, data: dict[str, Any], source: Any) -> dict[str, Any]:
    return {"type": "event", "event": event, "data": data, "source": source}


def _components(text: str, spans: list[tuple[int, int]]) -> list[dict[str, str]]:
    """``text`` cut into text and emoticon components at ``spans`` (first and last character
    of each emoticon, as Twitch's ``emotes`` tag gives them); spans out of the text or
    overlapping an earlier one are left as text."""
    parts: list[dict[str, str]] = []
    at = 0
    for first, last in sorted(spans):
        if first < at or last < first or last >= len(text):
            continue
        if first > at:
            parts.append({"type": "text", "text": text[at:first]})
        parts.append({"type": "emoticon", "text": text[first : last + 1]})
        at = last + 1
    if at < len(text) or not parts:
        parts.append({"type": "text", "text": text[at:]})
    return parts


def _message(
    channel: int | None,
    message_id: Any,
    name: Any,
    user_id: int | None,
    roles: list[str] | None,
    parts: list[dict[str, str]],
    me: bool = False,
) -> dict[str, Any]:
    """ChatMessage data of the platform's shape."""
    return {
        "channel": channel,
        "id": message_id if isinstance(message_id, str) else None,
        "user_name": name if isinstance(name, str) else None,
        "user_id": user_id,
        "user_roles": roles,
        "message": {"message": parts, "meta": {"me": True} if me else {}},
    }


def numeric_id(value: Any) -> int | None:
    """A numeric id given as text or a number (Twitch's), else None (YouTube's are text)."""
    if type(value) is int and value >= 0:
        return value
    return identifier(value)


# chat-downloader.


def chat_downloader(item: Any, channel: int | None) -> Iterator[Result]:
    """The event of one chat-downloader item."""
    if not isinstance(item, dict):
        raise Malformed("an item is not an object")
    stamp = item.get("timestamp")
    if type(stamp) is not int:
        raise Malformed("no timestamp")
    kind = item.get("message_type", "text_message")
    if kind != "text_message":
        yield str(kind)
        return
    text = item.get("message")
    if not isinstance(text, str):
        raise Malformed("a text message without text")
    author = item.get("author")
    if isinstance(author, dict):
        name, user_id = author.get("display_name", author.get("name")), numeric_id(author.get("id"))
        badges = author.get("badges")
        roles = (
            [str(b.get("name", b.get("title"))) for b in badges if isinstance(b, dict)]
            if isinstance(badges, list)
            else None
        )
    else:
        name, user_id, roles = author, None, None
    spans = [
        (int(first), int(last))
        for emote in item.get("emotes") or ()
        if isinstance(emote, dict)
        for location in emote.get("locations") or ()
        if isinstance(location, str) and (m := _SPAN.fullmatch(location))
        for first, last in [m.groups()]
    ]
    data = _message(channel, item.get("message_id"), name, user_id, roles, _components(text, spans))
    yield Event(stamp / 1e6, _packet("ChatMessage", data, item))


_SPAN = re.compile(r"([0-9]{1,6})-([0-9]{1,6})")


# TwitchDownloader.


def twitchdownloader(comment: Any, channel: int | None) -> Iterator[Result]:
    """The event of one TwitchDownloader comment (``channel``: the file's streamer id)."""
    if not isinstance(comment, dict) or not isinstance(comment.get("message"), dict):
        raise Malformed("a comment without a message object")
    created = comment.get("created_at")
    try:
        at = datetime.fromisoformat(created).timestamp()  # type: ignore[arg-type]
    except (TypeError, ValueError):
        raise Malformed("no created_at time") from None
    message = comment["message"]
    commenter = comment.get("commenter") or {}
    fragments = message.get("fragments")
    if isinstance(fragments, list) and fragments:
        parts = [
            {"type": "emoticon" if f.get("emoticon") else "text", "text": str(f.get("text", ""))}
            for f in fragments
            if isinstance(f, dict)
        ]
    elif isinstance(message.get("body"), str):
        parts = [{"type": "text", "text": message["body"]}]
    else:
        raise Malformed("a message without body or fragments")
    badges = message.get("user_badges")
    roles = (
        [str(b.get("_id")) for b in badges if isinstance(b, dict)]
        if isinstance(badges, list)
        else None
    )
    room = numeric_id(comment.get("channel_id"))
    data = _message(
        room if room is not None else channel,
        comment.get("_id"),
        commenter.get("display_name"),
        numeric_id(commenter.get("_id")),
        roles,
        parts,
        message.get("is_action") is True,
    )
    yield Event(at, _packet("ChatMessage", data, comment))


# Twitch IRC (justlog, rustlog).

_TAG_ESCAPES = {"s": " ", ":": ";", "\\": "\\", "r": "\r", "n": "\n"}
_ESCAPE = re.compile(r"\\(.?)")
#: An IRC command: capital letters, or a three-digit reply.
_COMMAND = re.compile(r"[A-Z]+|[0-9]{3}")


def _unescape(value: str) -> str:
    return _ESCAPE.sub(lambda m: _TAG_ESCAPES.get(m.group(1), m.group(1)), value)


def irc_parts(line: str) -> tuple[dict[str, str], str, str, list[str]]:
    """An IRC line's tags, prefix, command and parameters (the trailing one last)."""
    tags: dict[str, str] = {}
    rest = line.rstrip("\r\n")
    if rest.startswith("@"):
        raw, _, rest = rest[1:].partition(" ")
        for tag in raw.split(";"):
            key, _, value = tag.partition("=")
            tags[key] = _unescape(value) if "\\" in value else value
    prefix = ""
    if rest.startswith(":"):
        prefix, _, rest = rest[1:].partition(" ")
    head, colon, trailing = rest.partition(" :")
    words = head.split()
    if not words or not _COMMAND.fullmatch(words[0]):
        raise Malformed("no IRC command")
    params = words[1:] + ([trailing] if colon else [])
    return tags, prefix, words[0], params


def _badges(tags: dict[str, str]) -> list[str] | None:
    if "badges" not in tags:
        return None
    return [badge.partition("/")[0] for badge in tags["badges"].split(",") if badge]


def _emote_spans(tags: dict[str, str]) -> list[tuple[int, int]]:
    spans = []
    for emote in filter(None, tags.get("emotes", "").split("/")):
        for place in emote.partition(":")[2].split(","):
            if m := _SPAN.fullmatch(place):
                spans.append((int(m.group(1)), int(m.group(2))))
    return spans


_ACTION = "\x01ACTION "


def irc(line: str, channel: int | None) -> Iterator[Result]:
    """The event of one raw Twitch IRC line."""
    tags, prefix, command, params = irc_parts(line)
    if command not in ("PRIVMSG", "CLEARCHAT", "CLEARMSG", "USERNOTICE"):
        yield command
        return
    sent = identifier(tags.get("tmi-sent-ts"))
    if sent is None:
        raise Malformed(f"a {command} without tmi-sent-ts")
    room = numeric_id(tags.get("room-id"))
    room = room if room is not None else channel
    text = params[1] if len(params) > 1 else ""
    if command == "PRIVMSG":
        me = text.startswith(_ACTION)
        if me:
            text = text[len(_ACTION) :].removesuffix("\x01")
        login = prefix.partition("!")[0] or None
        data = _message(
            room,
            tags.get("id"),
            tags.get("display-name") or login,
            numeric_id(tags.get("user-id")),
            _badges(tags),
            _components(text, _emote_spans(tags)),
            me,
        )
        yield Event(sent / 1000, _packet("ChatMessage", data, line))
    elif command == "CLEARCHAT" and "target-user-id" in tags:
        seconds = identifier(tags.get("ban-duration"))
        user = {"user_name": text or None, "user_id": numeric_id(tags["target-user-id"])}
        data = {
            "channel": room,
            "user": user,
            "duration": None if seconds is None else seconds * 1000,
        }
        yield Event(sent / 1000, _packet("UserTimeout", data, line))
    elif command == "CLEARCHAT":
        yield Event(sent / 1000, _packet("ClearMessages", {"channel": room}, line))
    elif command == "CLEARMSG":
        data = {"channel": room, "id": tags.get("target-msg-id")}
        yield Event(sent / 1000, _packet("DeleteMessage", data, line))
    else:
        yield Event(sent / 1000, _packet("USERNOTICE", {"channel": room}, line))


# yt-dlp's live_chat.json.

_MESSAGES = ("liveChatTextMessageRenderer", "liveChatPaidMessageRenderer")


def _runs(message: Any) -> list[dict[str, str]]:
    parts = []
    for run in (message or {}).get("runs") or ():
        if "text" in run:
            parts.append({"type": "text", "text": str(run["text"])})
        elif isinstance(run.get("emoji"), dict):
            emoji = run["emoji"]
            shortcuts = emoji.get("shortcuts") or [emoji.get("emojiId", "")]
            custom = emoji.get("isCustomEmoji") is True
            parts.append(
                {
                    "type": "emoticon",
                    "text": str(shortcuts[0] if custom else emoji.get("emojiId", shortcuts[0])),
                }
            )
    return parts


def _youtube_roles(renderer: Mapping[str, Any]) -> list[str] | None:
    badges = renderer.get("authorBadges")
    if not isinstance(badges, list):
        return []
    roles = []
    for badge in badges:
        inner = badge.get("liveChatAuthorBadgeRenderer", {}) if isinstance(badge, dict) else {}
        icon = (inner.get("icon") or {}).get("iconType")
        roles.append(str(icon).lower() if icon else "member")
    return roles


def yt_dlp(line: Any, channel: int | None) -> Iterator[Result]:
    """The events of one line of yt-dlp's ``live_chat.json``."""
    actions = (
        (line.get("replayChatItemAction") or {}).get("actions") if isinstance(line, dict) else None
    )
    if not isinstance(actions, list):
        raise Malformed("a line without replayChatItemAction.actions")
    for action in actions:
        if not isinstance(action, dict):
            raise Malformed("an action is not an object")
        item = (action.get("addChatItemAction") or {}).get("item")
        if not isinstance(item, dict):
            yield next((key for key in action if key.endswith("Action")), "action")
            continue
        kind = next(iter(item), "item")
        renderer = item.get(kind)
        if kind not in _MESSAGES or not isinstance(renderer, dict):
            yield kind
            continue
        stamp = identifier(renderer.get("timestampUsec"))
        if stamp is None:
            raise Malformed("a message without timestampUsec")
        parts = _runs(renderer.get("message")) or [{"type": "text", "text": ""}]
        data = _message(
            channel,
            renderer.get("id"),
            (renderer.get("authorName") or {}).get("simpleText"),
            None,
            _youtube_roles(renderer),
            parts,
        )
        yield Event(stamp / 1e6, _packet("ChatMessage", data, line))
