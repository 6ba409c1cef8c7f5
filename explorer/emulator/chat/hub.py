"""The seam between the REST side and the chat side of the platform.

REST handlers only need a few things from chat: which node addresses are live, who is present
in a channel's chat, a way to tell rooms that something changed (a user's roles, a revoked
authkey, the channel's emoticon pack or CatBot settings), and, for the control namespace,
stopping and starting single nodes, calling a chat method as a user and dropping a user's
connections as too slow. Keeping that to this small protocol lets the chat side run
in-process (the default, :class:`~explorer.emulator.chat.cluster.ChatCluster`) or in other
processes behind a broker without the REST side knowing.
"""

from __future__ import annotations

from typing import Any, Protocol


class ChatHub(Protocol):
    """What REST handlers may ask of chat."""

    def endpoints(self) -> list[str]:
        """The websocket addresses of every live chat node."""
        ...

    async def user_updated(self, channel_id: int, user_id: int) -> None:
        """Tell the channel's room that a user's roles changed (sends ``UserUpdate``)."""
        ...

    def settings_changed(self, channel_id: int) -> None:
        """Tell the channel's room, on every node and process, that its emoticon pack or
        CatBot settings changed (chat reads them again)."""
        ...

    def revoke(self, keys: list[tuple[int, int, str]]) -> None:
        """Close the connections signed in with these ``(channel, user, key)`` authkeys, on
        every node and process."""
        ...

    def present_users(self, channel_id: int) -> list[int]:
        """Ids of the signed-in users in the channel's chat, in the order they joined."""
        ...

    def node_status(self) -> list[dict[str, Any]]:
        """One entry per chat node: index, endpoint, running, server id, connections."""
        ...

    async def stop_node(self, index: int) -> None:
        """Stop one node (its clients are disconnected), for fault drills."""
        ...

    async def start_node(self, index: int) -> None:
        """Start a stopped node again on its address."""
        ...

    def call(self, channel_id: int, user_id: int, method: str, args: list[Any]) -> Any:
        """Run chat method ``method`` as ``user_id`` in the channel's room, as if sent on a
        connection (its reply data, or :class:`~explorer.wire.codes.Refusal`): scripted
        scenarios' polls and moderation."""
        ...

    def drop_as_slow(self, user_id: int | None) -> int:
        """Drop a user's connections (anonymous ones for None) as too slow, on this process's
        nodes: the slow-client drill. How many were dropped."""
        ...
