"""A platform of several processes on this machine, for fault drills, benchmarks and demos.

:class:`RedisServer` runs a throwaway ``redis-server`` on a free loopback port, without
persistence (``--save '' --appendonly no``). :class:`Fleet` runs a platform on one database
(a SQLite file or a ``postgresql://`` URL) and that Redis: one REST process (``explorer serve
--broker URL --chat-nodes 0``), more that join it if asked (``explorer serve rest``), and
chat-node processes (``explorer serve chat-node --broker URL``), all on 127.0.0.1 or each on
a loopback address of its own (``spread``), as on separate hosts. Every process is a
:class:`~explorer.core.processes.Child` of this one (the one supervisor of ``explorer``'s
child processes): started with :func:`spawn`, awaited with :func:`wait_for` (its
``REST``/``CHAT`` lines) and ended by its own PID: gently (SIGINT: it closes its connections
and unregisters) or with ``kill -9``, which is what the drills do to nodes and REST
processes.

``python -m explorer.emulator.fleet --nodes 3`` runs such a platform until Ctrl-C (or SIGTERM)
and prints its ``REST`` and ``CHAT`` lines.
"""

from __future__ import annotations

import argparse
import contextlib
import itertools
import shutil
import signal
import socket
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from types import TracebackType
from urllib.parse import urlsplit

import httpx

import explorer.core.processes as processes
from explorer.core.processes import Child

__all__ = ["FLEET_CHANNELS", "Fleet", "RedisServer", "free_port", "spawn", "wait_for"]

#: redis-server flags: keep nothing on disk (a restarted drill Redis starts empty).
NO_PERSISTENCE = ("--save", "", "--appendonly", "no")
#: What redis-server prints once it accepts connections.
REDIS_READY = "Ready to accept connections"
#: Channels in a fleet's new world unless told otherwise.
FLEET_CHANNELS = 300
#: Seconds the REST process gets to list new nodes (it reads the registry every heartbeat).
LIST_TIMEOUT = 10.0


def free_port(host: str = "127.0.0.1") -> int:
    """A TCP port free on ``host`` right now."""
    with socket.socket() as sock:
        sock.bind((host, 0))
        port: int = sock.getsockname()[1]
        return port


def spawn(args: Sequence[str], log: Path) -> Child:
    """Start ``explorer serve ARGS``, its output going to ``log``."""
    return processes.serve(args, log).start()


def wait_for(child: Child, lines: int) -> Child:
    """Wait for ``child``'s first ``lines`` ``REST``/``CHAT`` lines; :class:`ChildFailed`
    (a RuntimeError, with the end of its log) when it exits or stays silent too long."""
    return child.wait_ready(lines, processes.READY_TIMEOUT)


class RedisServer:
    """A ``redis-server`` on a free loopback port, without persistence; its output goes to
    ``log`` (default: a file in the temporary folder, named after the port)."""

    def __init__(self, port: int | None = None, log: Path | None = None) -> None:
        binary = shutil.which("redis-server")
        if binary is None:
            raise FileNotFoundError("redis-server is not installed (Debian: apt install redis)")
        self.binary = binary
        self.port = port or free_port()
        self.log = log or Path(tempfile.gettempdir()) / f"explorer-redis-{self.port}.log"
        self.child: Child | None = None

    @property
    def url(self) -> str:
        """Its address for ``--broker``."""
        return f"redis://127.0.0.1:{self.port}/0"

    def running(self) -> bool:
        """Whether it was started and has not exited."""
        return self.child is not None and self.child.running()

    def start(self) -> RedisServer:
        """Start it (again, on the same port) and wait until it accepts connections."""
        command = [self.binary, "--port", str(self.port), "--bind", "127.0.0.1", *NO_PERSISTENCE]
        self.child = Child(
            command, self.log, ready=lambda line: REDIS_READY in line, stop_signal=signal.SIGTERM
        )
        self.child.start().wait_ready()
        return self

    def kill(self) -> None:
        """``kill -9`` it (its data is gone: nothing is persisted)."""
        if self.child is not None:
            self.child.kill()

    def stop(self) -> None:
        """Stop it (SIGTERM), killing it if it lingers."""
        if self.child is not None:
            self.child.stop()


class Fleet:
    """A platform of ``rest`` REST processes and ``nodes`` chat-node processes on ``db`` and a
    fresh :class:`RedisServer`. The first REST process seeds the world; the others join it
    (``explorer serve rest``). With ``spread`` each process listens on a loopback address of
    its own (REST processes on 127.0.0.1, 127.0.0.2, ..., nodes on 127.0.1.1, ...), as on
    separate hosts. ``rate_limits`` turns the platform's limits on (counted in the Redis).
    ``rest_args`` and ``node_args`` are more ``explorer serve`` flags. Use ``with
    Fleet(...) as fleet:``; it stops everything it started."""

    def __init__(
        self,
        db: Path | str,
        *,
        nodes: int = 3,
        rest: int = 1,
        channels: int = FLEET_CHANNELS,
        spread: bool = False,
        rate_limits: bool = False,
        rest_args: Sequence[str] = (),
        node_args: Sequence[str] = (),
    ) -> None:
        self.db = db
        self.node_count = nodes
        self.rest_count = rest
        self.channels = channels
        self.spread = spread
        self.rate_limits = rate_limits
        self.rest_args = list(rest_args)
        self.node_args = list(node_args)
        self._logs = Path(tempfile.mkdtemp(prefix="explorer-fleet-"))
        self.redis = RedisServer(log=self._logs / "redis.log")
        self.rest: Child | None = None
        #: The REST processes that joined the first (``explorer serve rest``).
        self.joined: list[Child] = []
        self.nodes: list[Child] = []
        self._numbers = itertools.count()

    @property
    def base_url(self) -> str:
        """The REST base address (of the first REST process)."""
        assert self.rest is not None
        return self.rest.address

    @property
    def rests(self) -> list[Child]:
        """Every REST process, the first one first."""
        assert self.rest is not None
        return [self.rest, *self.joined]

    def start(self) -> Fleet:
        """Start Redis, the first REST process (which seeds a new database), the others, then
        the nodes."""
        self.redis.start()
        self.rest = wait_for(spawn(self._rest_command("0"), self._logs / "rest.log"), 1)
        self.joined = [
            self._join(self._host(2 + index), "0") for index in range(self.rest_count - 1)
        ]
        self.add_nodes(self.node_count)
        return self

    def _host(self, number: int, network: int = 0) -> str:
        """The loopback address of the ``number``-th process of its kind (1-based)."""
        return f"127.0.{network}.{number}" if self.spread else "127.0.0.1"

    def _rest_command(self, port: str, host: str = "127.0.0.1") -> list[str]:
        limits = () if self.rate_limits else ("--no-rate-limits",)
        return [
            *("--host", host, "--port", port, "--db", str(self.db), "--broker", self.redis.url),
            *("--chat-nodes", "0", "--channels", str(self.channels)),
            *("--no-simulate", *limits, *self.rest_args),
        ]

    def _join(self, host: str, port: str) -> Child:
        """One more REST process (``explorer serve rest``) on ``host`` and ``port``."""
        log = self._logs / f"rest-{host}.log"
        return wait_for(spawn(["rest", *self._rest_command(port, host)], log), 1)

    def restart_rest(self) -> None:
        """Stop the first REST process (gently) and start it again on the same port and
        database: its clients keep their base address."""
        assert self.rest is not None
        port = urlsplit(self.rest.address).port
        self.rest.stop()
        self.rest = wait_for(spawn(self._rest_command(str(port)), self._logs / "rest.log"), 1)

    def add_nodes(self, count: int) -> list[Child]:
        """Start ``count`` more chat-node processes at once; each is registered, and listed by
        the REST process's ``GET /chats/endpoints``, when this returns."""
        args = ["chat-node", "--db", str(self.db), "--broker", self.redis.url, "--port", "0"]
        started = []
        for _ in range(count):
            number = next(self._numbers)
            host = ["--host", self._host(1 + number, network=1)]
            log = self._logs / f"node{number}.log"
            started.append(spawn([*args, *host, *self.node_args], log))
        for child in started:
            self.nodes.append(wait_for(child, 1))
        self._await_listed({child.address for child in started})
        return started

    def _await_listed(self, addresses: set[str]) -> None:
        """Wait until the REST process lists every one of ``addresses``: it learns of new
        nodes at its next heartbeat, and a client given the details before would not know
        them (RuntimeError after :data:`LIST_TIMEOUT` seconds)."""
        deadline = time.monotonic() + LIST_TIMEOUT
        while True:
            response = httpx.get(f"{self.base_url}/chats/endpoints", timeout=LIST_TIMEOUT)
            if addresses <= set(response.json()["endpoints"]):
                return
            if time.monotonic() > deadline:
                raise RuntimeError(f"the REST process never listed {sorted(addresses)}")
            time.sleep(0.05)

    def heal(self) -> None:
        """Replace the nodes that exited (killed by a drill) with new ones, start the joined
        REST processes that exited again on their addresses, and Redis if it is down."""
        if not self.redis.running():
            self.redis.start()
        for index, child in enumerate(self.joined):
            if not child.running():
                address = urlsplit(child.address)
                self.joined[index] = self._join(str(address.hostname), str(address.port))
        gone = [child for child in self.nodes if not child.running()]
        if gone:
            self.nodes = [child for child in self.nodes if child not in gone]
            self.add_nodes(len(gone))

    def close(self) -> None:
        """Stop the nodes, the REST processes and Redis (each by its PID)."""
        for child in (*self.nodes, *self.joined):
            child.stop()
        if self.rest is not None:
            self.rest.stop()
        self.redis.stop()
        shutil.rmtree(self._logs, ignore_errors=True)

    def __enter__(self) -> Fleet:
        try:
            return self.start()
        except BaseException:
            self.close()
            raise

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()


def main(argv: Sequence[str] | None = None) -> int:
    """Run a platform of several processes until Ctrl-C or SIGTERM."""
    parser = argparse.ArgumentParser(prog="python -m explorer.emulator.fleet", description=__doc__)
    parser.add_argument("--nodes", type=int, default=3, help="chat-node processes (default 3)")
    parser.add_argument(
        "--db", default=None, help="SQLite file or postgresql:// URL (default: a temporary file)"
    )
    parser.add_argument("--channels", type=int, default=5000, help="channels in a new world")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as scratch:
        db = args.db or str(Path(scratch) / "platform.db")
        with Fleet(db, nodes=args.nodes, channels=args.channels) as fleet:
            print(f"REDIS {fleet.redis.url}")
            print(f"REST {fleet.base_url}")
            for node in fleet.nodes:
                print(f"CHAT {node.address}  (pid {node.pid})", flush=True)
            with contextlib.suppress(KeyboardInterrupt), processes.terminating():
                signal.pause()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
