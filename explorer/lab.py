"""``explorer lab``: the platform and JupyterLab together, the Binder experience on a laptop.

It starts ``explorer serve`` as a child process, waits for the ``REST <url>`` line it prints
once it answers, runs ``jupyter lab`` on the recipes with ``EXPLORER_BASE_URL`` set to that
URL (so every notebook, in every kernel, shares the one live platform, as on Binder), and
stops the platform when JupyterLab exits, however it exits.

Why a child process rather than the platform in a thread of this process: ``explorer lab`` is
then only a supervisor of two processes, the platform keeps its own event loop, logs and
signal handling, and none of it mixes with JupyterLab's terminal. The platform runs in its
own session, so the Ctrl-C meant for JupyterLab (which
asks before it shuts down) does not reach it; this process ignores that Ctrl-C too and, once
JupyterLab is gone, stops the platform by the PID it started: SIGINT (a clean shutdown), then
SIGKILL if it has not exited within a few seconds. SIGTERM to this process unwinds it through
the same cleanup, and on Linux the platform also gets SIGINT if this process dies without
cleaning up (``PR_SET_PDEATHSIG``), so no platform is left behind.

The platform's database is the one ``explorer serve`` uses by default (``platform.db`` in the
user data directory), so what the notebooks write survives a restart. Its output goes to
``platform.log`` beside the database. :func:`with_platform` runs any command this way; the
tests use it with a short Python command instead of JupyterLab.
"""

from __future__ import annotations

import argparse
import contextlib
import ctypes
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import IO

#: Seconds to wait for the platform's REST line (a new database is seeded first).
START_TIMEOUT = 120.0
#: Seconds the platform gets to exit after SIGINT before it is killed.
STOP_TIMEOUT = 10.0
_PR_SET_PDEATHSIG = 1


class PlatformFailed(RuntimeError):
    """The platform exited, or said nothing usable, before it answered."""


def _die_with_parent() -> None:
    """In the child, before exec: ask Linux for SIGINT when the parent dies (best effort)."""
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGINT)


class ServedPlatform:
    """``explorer serve`` running as a child process; :attr:`base_url` once it answers.

    ``arguments`` are ``explorer serve``'s flags; ``log`` the file that receives its output.
    Use as a context manager: entering waits for the REST line, leaving stops the process.
    """

    def __init__(self, arguments: Sequence[str], log: Path, timeout: float = START_TIMEOUT):
        self.arguments = list(arguments)
        self.log = log
        self.timeout = timeout
        self.base_url = ""
        self.process: subprocess.Popen[str] | None = None
        self._answered = threading.Event()
        self._reader: threading.Thread | None = None

    @property
    def pid(self) -> int | None:
        """The platform's process id (None before it started)."""
        return self.process.pid if self.process is not None else None

    def start(self) -> ServedPlatform:
        """Start the platform and wait until it prints its REST address.

        Call it from a thread that lives as long as the platform should: Linux sends the
        parent-death signal when the thread that started the child ends.
        """
        self.log.parent.mkdir(parents=True, exist_ok=True)
        command = [sys.executable, "-m", "explorer.cli", "serve", *self.arguments]
        self.process = subprocess.Popen(
            command,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            bufsize=1,
            env={**os.environ, "PYTHONUNBUFFERED": "1"},
            start_new_session=True,
            preexec_fn=_die_with_parent if sys.platform == "linux" else None,
        )
        assert self.process.stdout is not None
        self._reader = threading.Thread(
            target=self._read, args=(self.process.stdout,), name="explorer-lab-log", daemon=True
        )
        self._reader.start()
        deadline = time.monotonic() + self.timeout
        try:
            while not self._answered.wait(0.1):
                if self.process.poll() is not None or time.monotonic() > deadline:
                    raise PlatformFailed(
                        f"explorer serve {' '.join(self.arguments)} did not start "
                        f"(exit code {self.process.poll()}); see {self.log}:\n"
                        f"{self._log_tail()}"
                    )
        except BaseException:  # Ctrl-C while waiting, too: leave no platform behind
            self.stop()
            raise
        return self

    def _read(self, stream: IO[str]) -> None:
        """Copy the platform's output to the log file, noting the REST line."""
        with self.log.open("a", encoding="utf-8") as log:
            for line in stream:
                log.write(line)
                log.flush()
                if not self.base_url and line.startswith("REST "):
                    self.base_url = line.split()[1]
                    self._answered.set()

    def _log_tail(self, lines: int = 20) -> str:
        try:
            return "".join(self.log.read_text(encoding="utf-8").splitlines(True)[-lines:])
        except OSError:
            return ""

    def stop(self) -> int | None:
        """Stop the platform by its PID: SIGINT, then SIGKILL after a grace period; the exit
        code (None if it was never started)."""
        process = self.process
        if process is None:
            return None
        if process.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                process.send_signal(signal.SIGINT)
            try:
                process.wait(STOP_TIMEOUT)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        if self._reader is not None:
            self._reader.join(2)
        return process.returncode

    def __enter__(self) -> ServedPlatform:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def _terminated(signum: int, frame: object) -> None:
    raise SystemExit(128 + signum)


@contextlib.contextmanager
def _foreground_signals() -> Iterator[None]:
    """While the command runs: Ctrl-C reaches only the command (JupyterLab asks before it
    quits), and SIGTERM unwinds this process so that the cleanup below still runs."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN), signal.getsignal(signal.SIGTERM)
    signal.signal(signal.SIGTERM, _terminated)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous[0])
        signal.signal(signal.SIGTERM, previous[1])


def with_platform(
    command: Sequence[str],
    serve_arguments: Sequence[str],
    log: Path,
    *,
    announce: bool = True,
) -> int:
    """Run ``command`` with ``EXPLORER_BASE_URL`` pointing at a platform started for it with
    ``serve_arguments``; stop the platform when the command exits. The command's exit code."""
    with ServedPlatform(serve_arguments, log) as platform:
        if announce:
            print(
                f"explorer lab: platform at {platform.base_url} (pid {platform.pid}, log {log})",
                flush=True,
            )
        env = {**os.environ, "EXPLORER_BASE_URL": platform.base_url}
        # Started before this process ignores SIGINT: an ignored signal stays ignored across
        # exec, and the command must keep its own Ctrl-C.
        child = subprocess.Popen(list(command), env=env)
        try:
            with _foreground_signals():
                return child.wait()
        finally:
            if child.poll() is None:
                child.terminate()
                try:
                    child.wait(STOP_TIMEOUT)
                except subprocess.TimeoutExpired:
                    child.kill()
                    child.wait()


def default_root() -> Path:
    """The recipes folder: ``notebooks/`` under the working directory if there is one."""
    notebooks = Path("notebooks")
    return notebooks if notebooks.is_dir() else Path(".")


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register ``explorer lab`` and its flags."""
    from explorer.cli import default_db

    parser = sub.add_parser(
        "lab",
        help="start the platform, then JupyterLab on the recipes (stops the platform after)",
        usage="explorer lab [-h] [--port PORT] [--db DB] [--serve-arg ARG] [root] "
        "[-- JUPYTERLAB ARGS]",
        description=(
            "Start `explorer serve` in the background, run JupyterLab with EXPLORER_BASE_URL "
            "pointing at it, and stop the platform when JupyterLab exits. Arguments after "
            "`--` go to `jupyter lab`."
        ),
    )
    parser.add_argument(
        "root", nargs="?", default=None, help="folder to open (default: ./notebooks if present)"
    )
    parser.add_argument(
        "--port", type=int, default=0, help="the platform's REST port (default 0: a free one)"
    )
    parser.add_argument("--db", default=None, help=f"the platform's SQLite file ({default_db()})")
    parser.add_argument(
        "--serve-arg",
        action="append",
        default=[],
        metavar="ARG",
        help="one more `explorer serve` argument (repeatable), e.g. --serve-arg=--no-simulate",
    )
    parser.add_argument("jupyter_args", nargs=argparse.REMAINDER, help=argparse.SUPPRESS)


def run(args: argparse.Namespace) -> int:
    """The ``explorer lab`` command."""
    from explorer.cli import default_db

    try:
        import jupyterlab  # noqa: F401
    except ImportError:
        print(
            "explorer lab: JupyterLab is not installed; pip install 'explorer[lab]' "
            "(or run `make lab`, which does)",
            file=sys.stderr,
        )
        return 2
    db = args.db or str(default_db())
    log = (default_db() if db == ":memory:" else Path(db)).parent / "platform.log"
    serve = ["--port", str(args.port), "--db", db, *args.serve_arg]
    root, extra = args.root, [a for a in args.jupyter_args if a != "--"]
    if root is not None and root.startswith("-"):
        # argparse hands the first word after `--` to the optional folder: it is JupyterLab's.
        root, extra = None, [root, *extra]
    if hasattr(os, "geteuid") and os.geteuid() == 0 and "--allow-root" not in extra:
        extra.append("--allow-root")  # JupyterLab refuses root otherwise (containers, CI)
    folder = Path(root) if root else default_root()
    command = [sys.executable, "-m", "jupyter", "lab", str(folder), *extra]
    try:
        return with_platform(command, serve, log)
    except PlatformFailed as exc:
        print(f"explorer lab: {exc}", file=sys.stderr)
        return 1
