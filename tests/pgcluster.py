"""A private PostgreSQL cluster for the tests: ``initdb`` into a temporary folder, a server on a
free loopback port with its socket in that folder, stopped and removed after (never the
machine's own cluster). Each test gets a schema of its own in it (:meth:`Cluster.schema`), or a
database of its own (:meth:`Cluster.create`, a copy of a template: see :mod:`tests.databases`)."""

from __future__ import annotations

import os
import pwd
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Collection, Iterator
from contextlib import contextmanager
from pathlib import Path

#: Where Debian's postgresql package puts the server's programs (``.ci/system-packages``): the
#: newest major version installed (15 on Debian 12).
BINARIES = max(
    Path("/usr/lib/postgresql").glob("*/bin"),
    key=lambda found: int(found.parent.name) if found.parent.name.isdigit() else 0,
    default=Path("/usr/lib/postgresql/15/bin"),
)
#: The role the tests connect as (trusted: the server listens on loopback only).
ROLE = "explorer"


def missing() -> str | None:
    """Why a cluster cannot start here, or None."""
    if not (BINARIES / "initdb").exists():
        return f"PostgreSQL's server is not installed ({BINARIES}): bash .ci/system-packages"
    if os.geteuid() == 0 and not _has_user("postgres"):
        return "the server refuses to run as root, and there is no postgres user to run it as"
    try:
        import psycopg_pool  # noqa: F401
    except ModuleNotFoundError:
        return "psycopg is not installed: pip install -e '.[postgres]'"
    return None


def _has_user(name: str) -> bool:
    """Whether the system has a user called ``name``."""
    try:
        pwd.getpwnam(name)
    except KeyError:
        return False
    return True


def _free_port() -> int:
    """A TCP port nothing listens on at 127.0.0.1 now."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


class Cluster:
    """One running private cluster; :meth:`stop` ends it and removes its folder."""

    def __init__(self) -> None:
        self.folder = Path(tempfile.mkdtemp(prefix="explorer-pg-"))
        # The server refuses to run as root: there it runs as the package's postgres user.
        self._as: list[str] = []
        if os.geteuid() == 0:
            user = pwd.getpwnam("postgres")
            os.chown(self.folder, user.pw_uid, user.pw_gid)
            self._as = ["runuser", "-u", "postgres", "--"]
        self.port = _free_port()
        self._schemas = 0
        self._data = self.folder / "data"
        self._log = self.folder / "server.log"
        self._options = options = (
            f"-p {self.port} -k {self.folder} -c listen_addresses=127.0.0.1 "
            "-c fsync=off -c synchronous_commit=off -c full_page_writes=off"
        )
        try:
            self._run("initdb", "-D", self._data, "-U", ROLE, "-A", "trust", "--no-sync")
            self._run("pg_ctl", "start", "-w", "-D", self._data, "-l", self._log, "-o", options)
        except BaseException:
            shutil.rmtree(self.folder, ignore_errors=True)
            raise

    def _run(self, program: str, *args: object) -> None:
        """Run one of the server's programs (as the postgres user under root)."""
        command = [*self._as, str(BINARIES / program), *map(str, args)]
        subprocess.run(command, check=True, capture_output=True, timeout=60)

    @property
    def url(self) -> str:
        """The URL of the cluster's ``postgres`` database."""
        return self.url_of("postgres")

    def url_of(self, database: str) -> str:
        """The URL of the cluster's database ``database``."""
        return f"postgresql://{ROLE}@127.0.0.1:{self.port}/{database}"

    def create(self, database: str, template: str = "template1") -> None:
        """Create the database ``database``, a copy of ``template`` (which no session may be
        connected to: the server waits a few seconds for the last ones to end)."""
        import psycopg

        with psycopg.connect(self.url, autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{database}" TEMPLATE "{template}"')

    def drop_idle(self, databases: Collection[str]) -> set[str]:
        """Drop those of ``databases`` no session is connected to; the names dropped."""
        import psycopg

        with psycopg.connect(self.url, autocommit=True) as conn:
            busy = {
                row[0]
                for row in conn.execute(
                    "SELECT datname FROM pg_stat_activity WHERE datname = ANY(%s)",
                    (list(databases),),
                )
            }
            idle = set(databases) - busy
            for database in idle:
                conn.execute(f'DROP DATABASE "{database}"')
        return idle

    def schema(self) -> str:
        """A URL whose connections work in a new, empty schema of their own."""
        import psycopg

        self._schemas += 1
        name = f"test_{self._schemas}"
        with psycopg.connect(self.url, autocommit=True) as conn:
            conn.execute(f"CREATE SCHEMA {name}")
        return f"{self.url}?options=-csearch_path%3D{name}"

    def restart(self) -> None:
        """Restart the server (``pg_ctl restart -m fast``: open sessions are ended, as by a
        crash of their backends) on the same port and options, and wait until it accepts
        connections again."""
        self._run("pg_ctl", "restart", "-w", "-m", "fast", "-D", self._data, "-l", self._log)

    @contextmanager
    def down(self) -> Iterator[None]:
        """Stop the server (fast) for the block, then start it again as it was."""
        self._run("pg_ctl", "stop", "-w", "-m", "fast", "-D", self._data)
        try:
            yield
        finally:
            self._run(
                "pg_ctl", "start", "-w", "-D", self._data, "-l", self._log, "-o", self._options
            )

    @property
    def pid(self) -> int:
        """The server's process id (its postmaster, the parent of every backend)."""
        return int((self._data / "postmaster.pid").read_text().split()[0])

    def stop(self) -> None:
        """Stop the server (fast: open sessions are ended) and remove its folder."""
        try:
            self._run("pg_ctl", "stop", "-w", "-m", "fast", "-D", self._data)
        finally:
            shutil.rmtree(self.folder, ignore_errors=True)
