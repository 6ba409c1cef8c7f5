"""A recorder's worker process: a child that builds and writes events files off this
process's GIL (``recording/recorder.py`` says when it is used), pickled requests and replies
over its stdin and stdout."""

from __future__ import annotations

import contextlib
import os
import pathlib
import pickle
import signal
import subprocess
import sys
import threading
from collections.abc import Callable
from typing import IO, Any

from explorer.core.heap import ReleaseEvery


class WorkerGone(Exception):
    """The worker process could not start or died."""


class Worker:
    """A child process (running ``entry``, Python code that calls :func:`serve`) that builds
    and writes a recorder's events files, so that the flattening of each row (a few
    microseconds of Python) does not hold this process's GIL while chats are read.

    Requests and replies are pickled, each after its length, over the child's stdin and
    stdout. The child ignores SIGINT and SIGTERM (a terminal's Ctrl-C reaches the whole
    process group, and this process still needs it to write its last flush) and exits when
    its stdin closes: at :meth:`close`, or when this process dies, even by ``kill -9``.
    """

    def __init__(self, entry: str) -> None:
        root = str(pathlib.Path(__file__).resolve().parent.parent)
        env = {
            **os.environ,
            "PYTHONPATH": os.pathsep.join(filter(None, [root, os.environ.get("PYTHONPATH")])),
        }
        try:
            self._process = subprocess.Popen(
                [sys.executable, "-c", entry],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                env=env,
            )
        except OSError as error:
            raise WorkerGone(str(error)) from None
        self._lock = threading.Lock()

    def call(self, request: tuple[Any, ...]) -> Any:
        """Send ``request`` and return the reply; raises what the child raised, and
        :class:`WorkerGone` when the child is not there."""
        with self._lock:
            process = self._process
            assert process.stdin is not None and process.stdout is not None
            try:
                send(process.stdin, request)
                reply = receive(process.stdout)
            except (OSError, EOFError, pickle.UnpicklingError) as error:
                process.kill()
                process.wait()
                raise WorkerGone(str(error)) from None
        if isinstance(reply, BaseException):
            raise reply
        return reply

    def close(self) -> None:
        """Close the child's stdin and wait for it to exit."""
        assert self._process.stdin is not None
        with contextlib.suppress(OSError):
            self._process.stdin.close()
        try:
            self._process.wait(10)
        except subprocess.TimeoutExpired:
            self._process.kill()
            self._process.wait()


def send(stream: IO[bytes], message: Any) -> None:
    data = pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL)
    stream.write(len(data).to_bytes(8, "little"))
    stream.write(data)
    stream.flush()


def receive(stream: IO[bytes]) -> Any:
    header = stream.read(8)
    if len(header) < 8:
        raise EOFError("the other side closed")
    data = stream.read(int.from_bytes(header, "little"))
    return pickle.loads(data)


def serve(handle: Callable[..., Any]) -> None:
    """The worker process: answer each request with ``handle(*request)`` until stdin closes;
    replies go to the original stdout, anything printed goes to stderr. What requests freed
    goes back to the operating system after a reply, at most once a second
    (:class:`~explorer.core.heap.ReleaseEvery`)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    replies = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)
    requests = sys.stdin.buffer
    release = ReleaseEvery()
    while True:
        try:
            request = receive(requests)
        except EOFError:
            return
        try:
            reply: Any = handle(*request)
        except Exception as error:  # handed back to the parent, which raises it
            reply = error
        try:
            send(replies, reply)
        except OSError:  # the recorder is gone
            return
        release()  # level memory for hours
