"""The private event loop that runs the sync API, in one daemon thread per process.

Why a thread of our own: a Jupyter kernel already runs an asyncio loop in the main thread, so
``asyncio.run`` fails there and ``nest_asyncio`` hangs "Run All" under ipykernel 7. Instead
every blocking call submits its coroutine to this loop with
:func:`asyncio.run_coroutine_threadsafe` and waits for the result, which works the same from a
script, a thread, or a cell of a running kernel. The loop also keeps background work (chat
sockets) alive while a cell blocks in ``time.sleep``.

The loop starts lazily on first use and is restarted after ``fork``. Calling :func:`run` from
the loop's own thread raises :class:`~explorer.errors.LoopThreadError` instead of deadlocking.
An interrupt (Ctrl-C, the kernel's stop button) cancels the submitted coroutine.

:class:`Blocking` makes the methods of a blocking twin (``chat.Chat``) out of the coroutine
methods of the async object it wraps, so the two cannot drift apart. (The REST clients get
their two modes from one declaration instead: ``rest/handle.py``.)
"""

from __future__ import annotations

import asyncio
import functools
import inspect
import os
import threading
from collections.abc import Callable, Coroutine
from dataclasses import dataclass
from typing import Any, Concatenate, Generic, ParamSpec, Protocol, TypeVar, overload

from explorer.errors import ExplorerError, LoopThreadError

T = TypeVar("T")
A = TypeVar("A")
P = ParamSpec("P")


@dataclass(frozen=True, slots=True)
class _Runner:
    loop: asyncio.AbstractEventLoop
    thread: threading.Thread
    pid: int


_lock = threading.Lock()
_runner: _Runner | None = None


def _serve(loop: asyncio.AbstractEventLoop, ready: threading.Event) -> None:
    asyncio.set_event_loop(loop)
    loop.call_soon(ready.set)
    loop.run_forever()


def _current() -> _Runner:
    global _runner
    with _lock:
        runner = _runner
        if runner is None or runner.pid != os.getpid() or not runner.thread.is_alive():
            loop = asyncio.new_event_loop()
            ready = threading.Event()
            thread = threading.Thread(
                target=_serve, args=(loop, ready), name="explorer-loop", daemon=True
            )
            thread.start()
            ready.wait()
            runner = _runner = _Runner(loop, thread, os.getpid())
        return runner


def get_loop() -> asyncio.AbstractEventLoop:
    """The toolkit's event loop, started on first use; for scheduling background tasks."""
    return _current().loop


def run(coro: Coroutine[Any, Any, T], timeout: float | None = None) -> T:
    """Run ``coro`` on the toolkit's loop and block until it finishes; return its result.

    Raises what the coroutine raises, :class:`TimeoutError` (after cancelling it) when
    ``timeout`` seconds pass first, and :class:`~explorer.errors.LoopThreadError` when called
    from the loop's own thread.
    """
    runner = _current()
    if threading.current_thread() is runner.thread:
        coro.close()
        raise LoopThreadError(
            "The blocking explorer API was called from its own event-loop thread, where it "
            "would wait for itself forever; inside a coroutine use explorer.AsyncClient and "
            "await its methods."
        )
    future = asyncio.run_coroutine_threadsafe(coro, runner.loop)
    try:
        return future.result(timeout)
    except TimeoutError:
        if future.done():
            raise
        future.cancel()
        raise TimeoutError(f"explorer call did not finish within {timeout} s") from None
    except ExplorerError as error:
        # An outcome the message explains: the loop thread's frames (the toolkit's internals)
        # would bury it under a long traceback; the caller's own frames stay.
        future.cancel()
        raise error.with_traceback(None) from error.__cause__
    except BaseException:
        future.cancel()
        raise


class Twin(Protocol):
    """A blocking twin: it wraps its async counterpart in ``_aio``."""

    _aio: Any


class Blocking(Generic[A, P, T]):
    """A method of a :class:`Twin` that runs the same-named coroutine method of its ``_aio``
    object on the toolkit's loop and returns the result; keeps the coroutine's name, docs and
    signature (without ``self``)."""

    def __init__(self, method: Callable[Concatenate[A, P], Coroutine[Any, Any, T]]) -> None:
        self._method = method
        signature = inspect.signature(method)
        self._signature = signature.replace(parameters=list(signature.parameters.values())[1:])
        self.__doc__ = method.__doc__

    @overload
    def __get__(self, instance: None, owner: type) -> Blocking[A, P, T]: ...

    @overload
    def __get__(self, instance: Twin, owner: type) -> Callable[P, T]: ...

    def __get__(self, instance: Twin | None, owner: type) -> Blocking[A, P, T] | Callable[P, T]:
        if instance is None:
            return self
        method, target = self._method, instance._aio

        @functools.wraps(method)
        def blocking(*args: P.args, **kwargs: P.kwargs) -> T:
            return run(method(target, *args, **kwargs))

        blocking.__signature__ = self._signature  # type: ignore[attr-defined]
        return blocking
