"""Giveaways: ``giveaway:start`` picks a present, recently active chatter and announces them.

=================  ===========================  ===============================================
method             needs                        refusals
=================  ===========================  ===============================================
giveaway:start     ``giveaway_start``           4005 nobody present chatted in 10 minutes
=================  ===========================  ===============================================

The announcement is a chat message from the channel's owner, stored in history like any other.
"""

from __future__ import annotations

from typing import Any

from explorer.emulator.chat import history
from explorer.emulator.chat.members import Member, member_of, require
from explorer.emulator.chat.messages import (
    message_data,
    new_message_id,
    tag_component,
    text_component,
)
from explorer.emulator.chat.methods import RoomMethod, arity
from explorer.emulator.chat.rooms import Room
from explorer.emulator.db import chat_history, chat_presence
from explorer.wire import chatmethods as chat_methods
from explorer.wire.codes import ChatErrorCode, Refusal

#: How far back ``giveaway:start`` looks for active chatters, in seconds.
GIVEAWAY_WINDOW = 600.0
#: The reply's text, as the developer docs' ``giveaway:start`` example shows it.
GIVEAWAY_REPLY = "Starting a giveaway"


def start_giveaway(room: Room, member: Member, args: list[Any]) -> Any:
    """``giveaway:start []``: pick a present, recently active chatter; announce in chat."""
    arity(args, chat_methods.GIVEAWAY_START)
    require(member, "giveaway_start", "start a giveaway")
    rooms = room.rooms
    here = set(chat_presence.present(rooms.store, room.channel_id))
    since = rooms.clock() - GIVEAWAY_WINDOW
    candidates = [
        chatter
        for chatter in chat_history.recent_chatters(
            rooms.store, room.channel_id, since, room.owner_id
        )
        if chatter[0] in here
    ]
    if not candidates:
        raise Refusal(
            ChatErrorCode.NOT_FOUND,
            "Nobody here has chatted recently; there is no one to pick.",
        )
    winner_id, winner = rooms.rng.choice(candidates)
    host = member_of(rooms.store, room.channel_id, room.owner_id, None)
    components = [
        text_component("The giveaway winner is "),
        tag_component(winner_id, winner),
        text_component("! Congratulations!"),
    ]
    history.post(
        room, message_data(room.channel_id, new_message_id(), host.identity(), components, {})
    )
    return GIVEAWAY_REPLY


methods = [RoomMethod(chat_methods.GIVEAWAY_START, start_giveaway)]
