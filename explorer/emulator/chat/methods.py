"""How a room method is bound: its wire row, its handler, its reply and argument checks.

Each rule module (``talk``, ``history``, ``moderation``, ``polls``, ``giveaways``) exports
``methods``, a list of :class:`RoomMethod` binding a row of ``explorer.wire.chatmethods`` to
its handler, the way resource modules export ``routes``;
:mod:`~explorer.emulator.chat.dispatch` collects them. A handler gets the room, the calling
member and the argument list, and returns its reply data (or :data:`NO_DATA`) or raises
:class:`~explorer.wire.codes.Refusal`. Wrong argument counts or types answer 4000.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

from explorer.emulator.chat.messages import MAX_LENGTH
from explorer.wire.chatmethods import ChatMethod
from explorer.wire.codes import ChatErrorCode, Refusal

if TYPE_CHECKING:
    from explorer.emulator.chat.members import Member
    from explorer.emulator.chat.rooms import Room


class _NoData:
    """The reply of a method that answers without a ``data`` field."""

    def __repr__(self) -> str:
        return "NO_DATA"


NO_DATA: Final = _NoData()

Handler = Callable[["Room", "Member", list[Any]], Any]


@dataclass(frozen=True, slots=True)
class RoomMethod:
    """A room method: the wire row clients call and the ``handler`` that runs it."""

    method: ChatMethod
    handler: Handler


def arity(args: list[Any], method: ChatMethod) -> None:
    """4000 unless ``args`` holds exactly one value per argument of ``method``."""
    names = method.arguments
    if len(args) != len(names):
        wanted = f"{len(names)} argument{'s' if len(names) != 1 else ''}"
        listed = f" ({', '.join(names)})" if names else ""
        raise Refusal(ChatErrorCode.BAD_REQUEST, f"{method.name} takes {wanted}{listed}.")


def text(value: Any, what: str, limit: int = MAX_LENGTH) -> str:
    """``value`` when it is a non-empty string of at most ``limit`` characters, else 4000."""
    if type(value) is not str or not value.strip():
        raise Refusal(ChatErrorCode.BAD_REQUEST, f"The {what} must be a non-empty string.")
    if len(value) > limit:
        raise Refusal(ChatErrorCode.BAD_REQUEST, f"The {what} is longer than {limit} characters.")
    return value


def count(value: Any, what: str) -> int:
    """``value`` when it is a non-negative integer, else 4000."""
    if type(value) is not int or value < 0:
        raise Refusal(ChatErrorCode.BAD_REQUEST, f"The {what} must be a non-negative integer.")
    return value
