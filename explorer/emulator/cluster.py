"""The chat side of one platform: its nodes, their broker and rooms, seen by REST as a ChatHub.

``GET /chats/{id}`` lists :meth:`ChatCluster.endpoints` (live nodes only), role changes made
through REST reach rooms through :meth:`ChatCluster.user_updated`, the chats sub-resources read
presence from :meth:`ChatCluster.present_users`, and the control namespace stops and restarts
single nodes for fault drills. All nodes run on the platform's event loop.
"""

from __future__ import annotations

from typing import Any

from explorer.emulator.broker import Broker, InProcessBroker
from explorer.emulator.chatnode import ChatNode
from explorer.emulator.context import Services
from explorer.emulator.rooms import Rooms


class ChatCluster:
    """``count`` chat nodes on ``host`` sharing rooms through one broker."""

    def __init__(
        self,
        services: Services,
        host: str,
        count: int,
        broker: Broker | None = None,
    ) -> None:
        self.broker = broker if broker is not None else InProcessBroker()
        self.rooms = Rooms(services.store, self.broker, services.config, services.clock)
        self.nodes = [
            ChatNode(index, self.rooms, self.broker, services.config, host)
            for index in range(count)
        ]

    async def start(self) -> None:
        """Start every node."""
        for node in self.nodes:
            await node.start()

    async def close(self) -> None:
        """Stop every node and the rooms' background work."""
        for node in self.nodes:
            await node.stop()
        await self.rooms.close()

    # --- ChatHub ----------------------------------------------------------------------

    def endpoints(self) -> list[str]:
        """The addresses of the running nodes."""
        return [node.url for node in self.nodes if node.running]

    async def user_updated(self, channel_id: int, user_id: int) -> None:
        """Apply a role change to connected sessions at once and send ``UserUpdate``."""
        room = self.rooms.get(channel_id)
        if room is not None:
            room.user_updated(user_id)

    def present_users(self, channel_id: int) -> list[int]:
        """Ids of the signed-in users in ``channel_id``'s chat, in the order they joined."""
        return list(self.broker.state(channel_id).presence)

    def node_status(self) -> list[dict[str, Any]]:
        """Each node's index, address, state, server id and open connections."""
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

    async def start_node(self, index: int) -> None:
        """Start node ``index`` again on its address."""
        await self.nodes[index].start()
