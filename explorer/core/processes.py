"""The one supervisor of the child processes ``explorer`` starts: the platform beside
JupyterLab (``explorer lab``), the processes of a multi-process platform (``emulator.fleet``).

A :class:`Child` starts a command, forwards its output (stdout and stderr) line by line to a
log file, collects the lines that say it is ready (``REST <url>``, ``CHAT <url>``, Redis's
"Ready to accept connections") and waits for them with a timeout, and stops it by its own PID:
its stop signal first (SIGINT lets ``explorer serve`` close its connections and unregister),
then SIGKILL after a grace period. Every child still running when this process exits
(normally, or through :func:`terminating`'s SIGTERM) is stopped the same way, so none is left
behind. Without a log file the child shares this terminal and has no ready lines (a foreground
command, see :func:`foreground`).
"""

from __future__ import annotations

import atexit
import contextlib
import ctypes
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import IO

#: Seconds a child gets to print its ready lines.
READY_TIMEOUT = 30.0
#: Seconds a child gets to exit after its stop signal before it is killed.
GRACE = 5.0
_PR_SET_PDEATHSIG = 1
#: The children started and not yet stopped, killed or found exited by :meth:`Child.stop`.
_LIVE: set[Child] = set()


class ChildFailed(RuntimeError):
    """A child exited, or stayed silent, before it printed its ready lines."""


def _die_with_parent() -> None:
    """In the child, before exec: ask Linux for SIGINT when the parent dies (best effort)."""
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGINT)


def _always(line: str) -> bool:
    return True


class Child:
    """One child process and the ready lines it printed (see the module's docstring).

    ``ready`` picks the lines that count as ready lines; ``new_session`` keeps the terminal's
    Ctrl-C from reaching it; ``die_with_parent`` asks Linux to SIGINT it if this process dies
    without cleaning up (sent when the *thread* that started it ends: start it from one that
    lives as long as the child should).
    """

    def __init__(
        self,
        command: Sequence[str],
        log: Path | None = None,
        *,
        ready: Callable[[str], bool] = _always,
        env: Mapping[str, str] | None = None,
        stop_signal: int = signal.SIGINT,
        new_session: bool = False,
        die_with_parent: bool = False,
    ) -> None:
        self.command = list(command)
        self.log = log
        self.ready = ready
        self.env = {**os.environ, "PYTHONUNBUFFERED": "1", **(env or {})}
        self.stop_signal = stop_signal
        self.new_session = new_session
        self.die_with_parent = die_with_parent and sys.platform == "linux"
        self.lines: list[str] = []
        self._process: subprocess.Popen[str] | None = None
        self._changed = threading.Condition()
        self._ended = False
        self._reader: threading.Thread | None = None

    @property
    def process(self) -> subprocess.Popen[str]:
        """The running (or ended) process; RuntimeError before :meth:`start`."""
        if self._process is None:
            raise RuntimeError(f"{self.command[0]} was not started")
        return self._process

    @property
    def pid(self) -> int:
        """Its process id."""
        return self.process.pid

    @property
    def address(self) -> str:
        """The address its first ready line announces (``REST <url>`` gives ``<url>``)."""
        return self.lines[0].split()[1]

    def running(self) -> bool:
        """Whether it was started and has not exited."""
        return self._process is not None and self._process.poll() is None

    def start(self, *, default_sigint: bool = False) -> Child:
        """Start it; its output goes to the log (created with its folder) from now on.
        ``default_sigint`` gives it the default Ctrl-C even if this process ignores it."""
        logged = self.log is not None
        if self.log is not None:
            self.log.parent.mkdir(parents=True, exist_ok=True)
        die_with_parent = self.die_with_parent

        def prepare() -> None:  # in the child, before exec
            if default_sigint:
                signal.signal(signal.SIGINT, signal.SIG_DFL)
            if die_with_parent:
                _die_with_parent()

        self._process = subprocess.Popen(
            self.command,
            stdin=subprocess.DEVNULL if logged else None,
            stdout=subprocess.PIPE if logged else None,
            stderr=subprocess.STDOUT if logged else None,
            text=True,
            bufsize=1,
            env=self.env,
            start_new_session=self.new_session,
            preexec_fn=prepare if default_sigint or die_with_parent else None,
        )
        _LIVE.add(self)
        if self._process.stdout is not None:
            self._reader = threading.Thread(
                target=self._forward, args=(self._process.stdout,), daemon=True
            )
            self._reader.start()
        return self

    def _forward(self, stream: IO[str]) -> None:
        """Copy the output to the log, noting the ready lines; note the end of the output."""
        assert self.log is not None
        try:
            with stream, self.log.open("a", encoding="utf-8") as log:
                for line in stream:
                    log.write(line)
                    log.flush()
                    if self.ready(line):
                        with self._changed:
                            self.lines.append(line.strip())
                            self._changed.notify_all()
        finally:
            with self._changed:
                self._ended = True
                self._changed.notify_all()

    def wait_ready(self, count: int = 1, timeout: float = READY_TIMEOUT) -> Child:
        """Wait until it printed ``count`` ready lines; if it exits or stays silent for
        ``timeout`` seconds, kill it and raise :class:`ChildFailed` quoting its log."""
        deadline = time.monotonic() + timeout
        with self._changed:
            while len(self.lines) < count and not self._ended:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    break
                self._changed.wait(remaining)
            if len(self.lines) >= count:
                return self
        self.kill()
        raise ChildFailed(
            f"{' '.join(self.command)} did not start (exit code {self.process.returncode}); "
            f"see {self.log}:\n{self.log_tail()}"
        )

    def log_tail(self, lines: int = 20) -> str:
        """The last ``lines`` lines of its log ("" without one)."""
        if self.log is None:
            return ""
        try:
            return "".join(self.log.read_text(encoding="utf-8").splitlines(True)[-lines:])
        except OSError:
            return ""

    def wait(self, timeout: float | None = None) -> int:
        """Wait for it to exit; its exit code (``subprocess.TimeoutExpired`` on timeout)."""
        return self.process.wait(timeout)

    def kill(self) -> None:
        """``kill -9`` it by its PID, and reap it."""
        if self.running():
            with contextlib.suppress(ProcessLookupError):
                os.kill(self.pid, signal.SIGKILL)
        if self._process is not None:
            self._process.wait(GRACE)
        self._finish()

    def stop(self, grace: float = GRACE) -> int | None:
        """Send its stop signal by its PID, then SIGKILL if it has not exited within ``grace``
        seconds; its exit code (None if it was never started)."""
        if self._process is None:
            return None
        if self.running():
            with contextlib.suppress(ProcessLookupError):
                os.kill(self.pid, self.stop_signal)
            try:
                self._process.wait(grace)
            except subprocess.TimeoutExpired:
                self.kill()
        self._process.wait()
        self._finish()
        return self._process.returncode

    def _finish(self) -> None:
        """Forget it, once exited: the rest of its output reaches the log."""
        _LIVE.discard(self)
        if self._reader is not None and self._reader is not threading.current_thread():
            self._reader.join(2)


def serve(
    arguments: Sequence[str], log: Path, *, new_session: bool = False, die_with_parent: bool = False
) -> Child:
    """``explorer serve ARGUMENTS`` (not started yet): its ready lines are the ``REST`` and
    ``CHAT`` lines it prints once each server answers; the options as for :class:`Child`."""
    command = [sys.executable, "-m", "explorer.cli", "serve", *arguments]
    return Child(
        command,
        log,
        ready=_announces_address,
        new_session=new_session,
        die_with_parent=die_with_parent,
    )


def _announces_address(line: str) -> bool:
    return line.startswith(("REST ", "CHAT "))


@atexit.register
def stop_all() -> None:
    """Stop every child still running (this process is exiting)."""
    for child in list(_LIVE):
        child.stop()


def _terminated(signum: int, frame: object) -> None:
    raise SystemExit(128 + signum)


@contextlib.contextmanager
def terminating() -> Iterator[None]:
    """While inside: SIGTERM unwinds this process (``SystemExit(143)``), so ``finally``
    blocks and :func:`stop_all` still stop the children. Only in the main thread."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGTERM, _terminated)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def unwind_sigterm() -> None:
    """Make SIGTERM unwind (``SystemExit(143)``) rather than kill, from now on, when it still
    has the default handler and this is the main thread (a recorder's ``atexit`` hook then
    writes what is pending); elsewhere, or under another handler, nothing changes."""
    if threading.current_thread() is not threading.main_thread():
        return
    with contextlib.suppress(ValueError, OSError):
        if signal.getsignal(signal.SIGTERM) == signal.SIG_DFL:
            signal.signal(signal.SIGTERM, _terminated)


def foreground(child: Child) -> int:
    """Start ``child`` (made without a log: it shares this terminal), wait for it and return
    its exit code. Ctrl-C reaches only the child meanwhile (JupyterLab asks before it quits),
    SIGTERM unwinds this process, and the child is stopped if this process unwinds first."""
    try:
        with terminating():
            if threading.current_thread() is not threading.main_thread():
                return child.start().wait()
            previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
            try:
                return child.start(default_sigint=True).wait()
            finally:
                signal.signal(signal.SIGINT, previous)
    finally:
        child.stop()
