"""The seam between the REST side and the chat side of the platform.

REST handlers only need a few things from chat: which node addresses are live, and a way to
tell rooms that something changed (a user's roles). Keeping that to this small protocol lets
the chat side run in-process (the default) or in other processes behind a broker without the
REST side knowing.
"""

from __future__ import annotations

from typing import Protocol


class ChatHub(Protocol):
    """What REST handlers may ask of chat."""

    def endpoints(self) -> list[str]:
        """The websocket addresses of every live chat node."""
        ...

    async def user_updated(self, channel_id: int, user_id: int) -> None:
        """Tell the channel's room that a user's roles changed (sends ``UserUpdate``)."""
        ...
