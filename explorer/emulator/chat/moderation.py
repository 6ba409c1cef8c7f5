"""Moderation: timeouts, purges, deleted and cleared messages.

=================  ===========================  ===============================================
method             needs                        refusals
=================  ===========================  ===============================================
timeout            ``timeout``                  4005 unknown user, 4002 target ranks as high
purge              ``change_ban`` (chat:purge)  4005 unknown user, 4002 target ranks as high
deleteMessage      own message, or              4005 no such message, 4002 someone else's
                   ``remove_message``
clearMessages      ``clear_messages``
=================  ===========================  ===============================================

``timeout`` takes ``"30s"``, ``"5m"``, ``"1m15s"``, ``"1h"``, ``"2d"``, a number of seconds,
or ``"clear"``; ``UserTimeout.duration`` is milliseconds. Timing out a user also purges their
messages (``PurgeMessage`` with ``cause``), as the platform did. A timed-out member may not
speak (:func:`require_voice`, 4007) until ``chat_timeouts`` says the time is up.
"""

from __future__ import annotations

import math
import re
from typing import Any

from explorer.emulator.chat.members import Member, require
from explorer.emulator.chat.methods import NO_DATA, RoomMethod, arity, text
from explorer.emulator.chat.roles import roles_of
from explorer.emulator.chat.rooms import Room
from explorer.emulator.db import chat_history, chat_timeouts, users
from explorer.wire import chatmethods as chat_methods
from explorer.wire.codes import ChatErrorCode, Refusal
from explorer.wire.numbers import identifier

MAX_TIMEOUT_SECONDS = 7 * 86400.0
#: Moderation rank: a member may time out or purge only members of a lower rank.
_RANKS = {"Owner": 3, "Staff": 3, "Founder": 3, "GlobalMod": 2, "Mod": 2}
_DURATION = re.compile(r"(?:([0-9]+)d)?(?:([0-9]+)h)?(?:([0-9]+)m)?(?:([0-9]+)s)?")
_UNITS = (("d", 86400), ("h", 3600), ("m", 60), ("s", 1))


def parse_duration(value: Any) -> float | None:
    """Seconds of a ``timeout`` duration, or None for ``"clear"``; 4000 when malformed."""
    if type(value) in (int, float):
        seconds = float(value)
    elif isinstance(value, str) and value.strip().lower() == "clear":
        return None
    elif isinstance(value, str) and identifier(value.strip()) is not None:
        seconds = float(value.strip())
    else:
        match = _DURATION.fullmatch(value.strip().lower()) if isinstance(value, str) else None
        if match is None or not any(match.groups()):
            raise Refusal(
                ChatErrorCode.BAD_REQUEST,
                'A duration is a number of seconds or text like "30s", "5m", "1m15s", "1h".',
            )
        seconds = float(
            sum(int(n) * unit for n, (_, unit) in zip(match.groups(), _UNITS, strict=True) if n)
        )
    if not (math.isfinite(seconds) and 1 <= seconds <= MAX_TIMEOUT_SECONDS):
        raise Refusal(ChatErrorCode.BAD_REQUEST, "A timeout lasts from 1 second to 7 days.")
    return seconds


def format_duration(seconds: float) -> str:
    """``seconds`` written the way durations are typed: ``"1m15s"``, ``"2h"``."""
    rest = round(seconds)
    parts = []
    for suffix, unit in _UNITS:
        found, rest = divmod(rest, unit)
        if found:
            parts.append(f"{found}{suffix}")
    return "".join(parts) or "0s"


def _rank(roles: list[str]) -> int:
    return max((_RANKS.get(role, 0) for role in roles), default=0)


def require_voice(room: Room, member: Member, action: str) -> int:
    """Like ``require(member, "chat", action)``, and refused (4007) while timed out."""
    user_id = require(member, "chat", action)
    until = chat_timeouts.until(room.rooms.store, room.channel_id, user_id)
    left = 0.0 if until is None else until - room.rooms.clock()
    if left > 0:
        seconds = math.ceil(left)
        unit = "second" if seconds == 1 else "seconds"
        raise Refusal(ChatErrorCode.TIMED_OUT, f"You are timed out for {seconds} more {unit}.")
    return user_id


def _target(room: Room, name: str, member: Member, action: str) -> tuple[int, str]:
    """The user named ``name`` whom ``member`` outranks, for timeout and purge."""
    found = users.by_name(room.rooms.store, name)
    if found is None:
        raise Refusal(ChatErrorCode.NOT_FOUND, f"No user named {name}.")
    target_roles = roles_of(room.rooms.store, room.channel_id, found[0])
    if _rank(target_roles) >= _rank(member.roles):
        raise Refusal(ChatErrorCode.ACCESS_DENIED, f"You cannot {action} {found[1]}.")
    return found


def delete_message(room: Room, member: Member, args: list[Any]) -> Any:
    """``deleteMessage [id]``: own messages, or anyone's with ``remove_message``."""
    arity(args, chat_methods.DELETE_MESSAGE)
    message_id = text(args[0], "message id", 64)
    user_id = require(member, "connect", "delete messages")
    store = room.rooms.store
    author = chat_history.author_of(store, room.channel_id, message_id)
    if author is None:
        raise Refusal(ChatErrorCode.NOT_FOUND, "No such message.")
    if author != user_id and "remove_message" not in member.permissions:
        raise Refusal(ChatErrorCode.ACCESS_DENIED, "You may delete only your own messages.")
    chat_history.hide(store, room.channel_id, message_id=message_id)
    data = {
        "originatingChannel": room.channel_id,
        "id": message_id,
        "moderator": member.moderator(),
    }
    room.publish("DeleteMessage", data)
    return "Message deleted."


def _purge(room: Room, user_id: int, member: Member, cause: dict[str, str] | None) -> None:
    chat_history.hide(room.rooms.store, room.channel_id, user_id=user_id)
    data: dict[str, Any] = {
        "originatingChannel": room.channel_id,
        "user_id": user_id,
        "moderator": member.moderator(),
    }
    if cause is not None:
        data["cause"] = cause
    room.publish("PurgeMessage", data)


def purge(room: Room, member: Member, args: list[Any]) -> Any:
    """``purge [user name]``: remove a user's messages without timing them out."""
    arity(args, chat_methods.PURGE)
    name = text(args[0], "user name", 64)
    require(member, "change_ban", "purge messages")
    user_id, _ = _target(room, name, member, "purge")
    _purge(room, user_id, member, None)
    return NO_DATA


def timeout(room: Room, member: Member, args: list[Any]) -> Any:
    """``timeout [user name, duration]``: silence a user for a while (``"clear"`` lifts)."""
    arity(args, chat_methods.TIMEOUT)
    name = text(args[0], "user name", 64)
    seconds = parse_duration(args[1])
    require(member, "timeout", "time out users")
    user_id, username = _target(room, name, member, "time out")
    store, now = room.rooms.store, room.rooms.clock()
    ends = None if seconds is None else now + seconds
    chat_timeouts.set_until(store, room.channel_id, user_id, now, ends)
    if seconds is None:
        return f"{username} is no longer timed out."
    spelled = format_duration(seconds)
    roles = roles_of(store, room.channel_id, user_id)
    data = {
        "user": {"user_name": username, "user_id": user_id, "user_roles": roles},
        "duration": int(seconds * 1000),
    }
    room.publish("UserTimeout", data, users=frozenset((user_id,)))
    _purge(room, user_id, member, {"type": "timeout", "durationString": spelled})
    return f"{username} has been timed out for {spelled}."


def clear_messages(room: Room, member: Member, args: list[Any]) -> Any:
    """``clearMessages []``: remove every message of the channel (``clear_messages``)."""
    arity(args, chat_methods.CLEAR_MESSAGES)
    require(member, "clear_messages", "clear the chat")
    chat_history.hide(room.rooms.store, room.channel_id)
    room.publish(
        "ClearMessages", {"originatingChannel": room.channel_id, "clearer": member.moderator()}
    )
    return "Messages cleared."


methods = [
    RoomMethod(chat_methods.TIMEOUT, timeout),
    RoomMethod(chat_methods.PURGE, purge),
    RoomMethod(chat_methods.DELETE_MESSAGE, delete_message),
    RoomMethod(chat_methods.CLEAR_MESSAGES, clear_messages),
]
