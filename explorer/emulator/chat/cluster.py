"""The chat side of one platform process: its nodes, their broker and rooms, seen by REST as a
ChatHub.

``GET /chats/{id}`` lists :meth:`ChatCluster.endpoints` (every live node of the platform: this
process's running nodes, and with a Redis broker those other processes registered), role
changes made through REST reach rooms through :meth:`ChatCluster.user_updated`, the chats
sub-resources read presence from :meth:`ChatCluster.present_users`, and the control namespace
stops and restarts this process's nodes for fault drills. A cluster may have no node of its
own (the REST process of a platform whose nodes run in ``explorer serve chat-node``
processes). All nodes run on the process's event loop.
"""

from __future__ import annotations

from functools import partial
from typing import Any

from explorer.emulator.brokers.broker import Broker, Delivery
from explorer.emulator.brokers.inprocess import InProcessBroker
from explorer.emulator.chat import dispatch, polls, presence, settings
from explorer.emulator.chat.authkeys import REVOKED
from explorer.emulator.chat.history import StoredBacklog
from explorer.emulator.chat.limits import Limits
from explorer.emulator.chat.members import member_of
from explorer.emulator.chat.node import ChatNode
from explorer.emulator.chat.rooms import Rooms
from explorer.emulator.context import Services
from explorer.emulator.db import chat_presence
from explorer.emulator.db.engine import Store
from explorer.wire.codes import ChatErrorCode, Refusal


def open_broker(url: str | None, store: Store) -> Broker:
    """The broker for ``url``: None for in process, ``redis://...`` (or ``rediss://``,
    ``unix://``) for Redis; ``store`` is the platform's database, shared by its processes,
    whose chat history the Redis broker reads what it missed from."""
    if url is None:
        return InProcessBroker()
    if url.startswith(("redis://", "rediss://", "unix://")):
        from explorer.emulator.brokers.redis import RedisBroker  # redis is an optional extra

        return RedisBroker(url, StoredBacklog(store))
    raise ValueError(f"unknown broker {url!r}: use redis://host:port/db")


class ChatCluster:
    """``count`` chat nodes on ``host`` sharing rooms through one broker; ``port`` (0: free
    ports) is the first node's port, the others follow it."""

    def __init__(
        self,
        services: Services,
        host: str,
        count: int,
        broker: Broker | None = None,
        port: int = 0,
    ) -> None:
        self.broker = broker if broker is not None else InProcessBroker()
        self.rooms = Rooms(services.store, self.broker, services.config, services.clock)
        # What a dead process held in room state is released by the module owning it.
        self.broker.watch(partial(presence.release, self.rooms))
        self.broker.watch(partial(polls.adopt, self.rooms))
        self.limits = Limits(services.config, self.broker, services.clock)
        self.nodes = [
            ChatNode(
                index,
                self.rooms,
                self.broker,
                self.limits,
                services.config,
                host,
                port and port + index,
            )
            for index in range(count)
        ]

    async def start(self) -> None:
        """Start the broker, then every node, then tell the broker where they listen."""
        self.broker.advertise(self.local_endpoints)
        await self.broker.start()
        for node in self.nodes:
            await node.start()
        await self.broker.refresh()

    async def close(self) -> None:
        """Stop every node, the rooms' background work, then the broker."""
        for node in self.nodes:
            await node.stop()
        await self.rooms.close()
        await self.broker.close()

    def local_endpoints(self) -> list[str]:
        """The addresses of this process's running nodes."""
        return [node.url for node in self.nodes if node.running]

    # --- ChatHub ----------------------------------------------------------------------

    def endpoints(self) -> list[str]:
        """The addresses of every live node of the platform."""
        return self.broker.endpoints(self.local_endpoints())

    async def user_updated(self, channel_id: int, user_id: int) -> None:
        """Apply a role change to connected sessions at once and send ``UserUpdate``."""
        room = self.rooms.get(channel_id)
        if room is not None:
            presence.user_updated(room, user_id)

    def settings_changed(self, channel_id: int) -> None:
        """Forget the room's emoticon pack and filter here, and on every other process."""
        room = self.rooms.get(channel_id)
        if room is not None:
            settings.forget(room)
        self.broker.publish(channel_id, Delivery(settings.SETTINGS_CHANGED, b"", users=frozenset()))

    def revoke(self, keys: list[tuple[int, int, str]]) -> None:
        """Close the connections signed in with these authkeys, on every node and process."""
        for channel_id, user_id, key in keys:
            revoked = Delivery(REVOKED, key.encode(), users=frozenset((user_id,)))
            self.broker.publish(channel_id, revoked)

    def present_users(self, channel_id: int) -> list[int]:
        """Ids of the signed-in users in ``channel_id``'s chat, in the order they joined."""
        return chat_presence.present(self.rooms.store, channel_id)

    def call(self, channel_id: int, user_id: int, method: str, args: list[Any]) -> Any:
        """Run ``method`` as ``user_id`` in the channel's room: the user is present for the
        call only (the join and leave events are sent as for a connection)."""
        room = self.rooms.get(channel_id)
        if room is None:
            raise Refusal(ChatErrorCode.NOT_FOUND, "No chat: the channel is gone or suspended.")
        member = member_of(self.rooms.store, channel_id, user_id, None)
        presence.join(room, member, f"control:{user_id}")
        try:
            return dispatch.call(room, member, method, args)
        finally:
            presence.leave(room, member)

    def drop_as_slow(self, user_id: int | None) -> int:
        """Drop ``user_id``'s connections on every node of this process as too slow."""
        return sum(node.drop_as_slow(user_id) for node in self.nodes if node.running)

    def node_status(self) -> list[dict[str, Any]]:
        """Each of this process's nodes: index, address, state, server id, connections."""
        return [
            {
                "index": node.index,
                "endpoint": node.url,
                "running": node.running,
                "server": node.server_id if node.running else None,
                "connections": node.connections,
            }
            for node in self.nodes
        ]

    async def stop_node(self, index: int) -> None:
        """Stop node ``index`` (its clients are disconnected with 1001)."""
        await self.nodes[index].stop()
        await self.broker.refresh()

    async def start_node(self, index: int) -> None:
        """Start node ``index`` again on its address."""
        await self.nodes[index].start()
        await self.broker.refresh()
