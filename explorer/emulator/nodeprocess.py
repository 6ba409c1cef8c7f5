"""One chat node in a process of its own: ``explorer serve chat-node --broker URL --db DB``.

A multi-process platform is one REST process (``explorer serve --broker URL --db DB``) and
several chat-node processes on the same database (a SQLite file or a ``postgresql://`` URL)
and Redis: the node serves websockets,
keeps room state in the shared database and fans out through Redis (see
:mod:`~explorer.emulator.brokers.redis`), and registers its address there so that the REST
process lists it in ``GET /chats/{id}``. The database must already hold a world: start the REST
process first (it seeds a new database). The node runs until SIGTERM or SIGINT, then closes its
connections (1001), which releases its presence, and unregisters.
"""

from __future__ import annotations

import asyncio
import signal
from collections.abc import Callable
from pathlib import Path

from explorer.emulator.chat.cluster import ChatCluster, open_broker
from explorer.emulator.config import Config
from explorer.emulator.db.engine import Store, engine_of
from explorer.emulator.server import open_services


def seeded(db: str) -> bool:
    """Whether ``db`` (a file, not created here if missing, or a URL) already holds a world."""
    if db == ":memory:" or (engine_of(db) == "sqlite" and not Path(db).is_file()):
        return False
    store = Store(db)
    try:
        return store.meta("seed") is not None
    finally:
        store.close()


async def run_chat_node(
    db: str,
    broker: str,
    host: str,
    port: int,
    config: Config,
    ready: Callable[[list[str]], None],
) -> None:
    """Serve one chat node on ``host:port`` (0: a free port) until SIGTERM or SIGINT; call
    ``ready`` with its address once it is listening and registered."""
    if not seeded(db):
        raise FileNotFoundError(
            f"a chat node joins a platform's database, and {db} holds no world yet: "
            "start `explorer serve --broker URL --db DB` first"
        )
    services = open_services(db, config, joins=True)
    cluster = ChatCluster(services, host, 1, open_broker(broker, services.store), port)
    stopping = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(signum, stopping.set)
    try:
        await cluster.start()
        ready(cluster.local_endpoints())
        await stopping.wait()
    finally:
        await cluster.close()
        services.store.close()
