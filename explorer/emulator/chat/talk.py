"""Members talking: ``msg`` to the whole room and ``whisper`` to one member.

=================  ===========================  ===============================================
method             needs                        refusals
=================  ===========================  ===============================================
msg, whisper       ``chat``, not timed out      4003 anonymous, 4002 banned/muted, 4007 timed
                                                out, 4005 whisper target unknown or absent
=================  ===========================  ===============================================

A message is stored in history before anyone sees it; a whisper reaches only its sender and
target and is never stored. Both reply with the message data. Words are parsed against the
channel's own emoticon pack too, and a ``msg`` CatBot filters (:mod:`.catbot`) reaches only the
room's moderators, censored, and is not stored; its sender's reply is the censored data, so a
client learns its message was withheld.
"""

from __future__ import annotations

from typing import Any

from explorer.emulator.chat import catbot, history, settings
from explorer.emulator.chat.members import Member
from explorer.emulator.chat.messages import (
    compose,
    message_data,
    message_delivery,
    new_message_id,
    shown_to,
)
from explorer.emulator.chat.methods import RoomMethod, arity, text
from explorer.emulator.chat.moderation import require_voice
from explorer.emulator.chat.presence import is_present
from explorer.emulator.chat.rooms import Room
from explorer.emulator.db import users
from explorer.wire import chatmethods as chat_methods
from explorer.wire.codes import ChatErrorCode, Refusal


def msg(room: Room, member: Member, args: list[Any]) -> Any:
    """``msg [text]``: a ChatMessage to everyone; replies with the message data."""
    arity(args, chat_methods.MSG)
    typed = text(args[0], "message")
    require_voice(room, member, "send messages")
    channel = settings.of(room)
    store = room.rooms.store
    components, meta = compose(typed, lambda name: users.by_name(store, name), channel.emoticons)
    if channel.catbot.blocks(typed, member.roles):
        meta["censored"] = True
        data = message_data(
            room.channel_id,
            new_message_id(),
            member.identity(),
            catbot.censored(components),
            meta,
        )
        room.deliver(message_delivery(data, users=catbot.moderators(room)))
        return shown_to(member.emotes, data)
    data = message_data(room.channel_id, new_message_id(), member.identity(), components, meta)
    history.post(room, data)
    return shown_to(member.emotes, data)


def whisper(room: Room, member: Member, args: list[Any]) -> Any:
    """``whisper [user name, text]``: a ChatMessage only the sender and target receive."""
    arity(args, chat_methods.WHISPER)
    name = text(args[0], "user name", 64)
    typed = text(args[1], "message")
    user_id = require_voice(room, member, "whisper")
    store = room.rooms.store
    target = users.by_name(store, name)
    if target is None:
        raise Refusal(ChatErrorCode.NOT_FOUND, f"No user named {name}.")
    if not is_present(room, target[0]):
        raise Refusal(ChatErrorCode.NOT_FOUND, f"{target[1]} is not in this chat.")
    pack = settings.of(room).emoticons
    components, meta = compose(typed, lambda found: users.by_name(store, found), pack)
    meta["whisper"] = True
    data = message_data(
        room.channel_id, new_message_id(), member.identity(), components, meta, target[1]
    )
    room.deliver(message_delivery(data, users=frozenset((user_id, target[0]))))
    return shown_to(member.emotes, data)


methods = [RoomMethod(chat_methods.MSG, msg), RoomMethod(chat_methods.WHISPER, whisper)]
