"""The room methods by wire name, collected from the modules that own their rules.

A new chat method is one row in ``explorer.wire.chatmethods`` and one handler in the
module that owns its rule, bound to the row in that module's ``methods`` (see
:mod:`~explorer.emulator.chat.methods`); a new rule module is one entry in :data:`MODULES`.
Connection-level methods (``auth``, ``ping``, ``attachEmotes``, ``optOutEvents``) belong to
:mod:`~explorer.emulator.chat.node`. Every room method needs a joined connection (anonymous
ones too); what else each needs is in the table of its module.
"""

from __future__ import annotations

from typing import Any

from explorer.emulator.chat import giveaways, history, moderation, polls, talk
from explorer.emulator.chat.members import Member
from explorer.emulator.chat.methods import Handler
from explorer.emulator.chat.rooms import Room
from explorer.wire.codes import ChatErrorCode, Refusal

#: The modules whose ``methods`` make up the room's methods.
MODULES = (talk, history, moderation, polls, giveaways)


def method_table(modules: tuple[Any, ...] = MODULES) -> dict[str, Handler]:
    """Each method's handler by wire name; a name claimed twice is an error."""
    table: dict[str, Handler] = {}
    for module in modules:
        for method in module.methods:
            name = method.method.name
            if name in table:
                raise ValueError(f"chat method {name!r} is declared twice")
            table[name] = method.handler
    return table


#: Room methods by wire name.
METHODS = method_table()


def call(room: Room, member: Member, method: str, args: list[Any]) -> Any:
    """Run room method ``method`` for ``member``: its reply data, or Refusal (4001 for a
    method nobody declared)."""
    handler = METHODS.get(method)
    if handler is None:
        raise Refusal(ChatErrorCode.UNKNOWN_METHOD, f"Unknown method {method!r}.")
    return handler(room, member, args)
