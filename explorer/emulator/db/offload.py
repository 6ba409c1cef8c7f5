"""Blocking statements off the event loop, handlers and repositories staying synchronous code.

The PostgreSQL engine's reads are network round trips. Made on the loop, 32 connections'
listings queue behind each other's; made in threads, their waits overlap (see
``docs/architecture.md``, "Reads in threads on PostgreSQL"). :func:`overlapping` awaits a
coroutine (a request's ASGI call) with each of its steps run in a greenlet of its own, just as
asyncio would run them; a blocking call made inside it through :func:`blocking` switches back
to the loop with the call, which the loop hands to a thread pool and awaits, serving other
requests meanwhile, then switches back into the request with the result (or the error).
Outside such a greenlet :func:`blocking` simply calls. SQLAlchemy's asyncio extension bridges
its synchronous ORM to asynchronous drivers the same way (``greenlet_spawn``,
``await_only``), with greenlet's documented ``switch``.

A request resumes where it called, on the loop's thread, so the code before and after a read
runs as before; what changes is that other requests may run while it waits, as they already
do at every ``await``.
"""

from __future__ import annotations

import asyncio
import contextvars
import types
from collections.abc import Callable, Coroutine, Generator
from concurrent.futures import Executor
from functools import partial
from typing import Any, TypeVar

from greenlet import getcurrent, greenlet

T = TypeVar("T")

#: What a request's greenlet asks of the loop: pass a value its coroutine yielded on to the
#: task (an asyncio future to wait for), run a call in a thread, or take its result.
_YIELD, _CALL, _DONE = "yield", "call", "done"


class _Steps(greenlet):
    """The greenlet that runs one coroutine's steps (:func:`overlapping`)."""


def _drive(coro: Coroutine[Any, Any, Any]) -> tuple[str, Any]:
    """Run ``coro`` to its end, a step per value the loop sends (or error it throws) back."""
    value: Any = None
    error: BaseException | None = None
    while True:
        try:
            yielded = coro.send(value) if error is None else coro.throw(error)
        except StopIteration as done:
            return _DONE, done.value
        value, error = getcurrent().parent.switch((_YIELD, yielded))


@types.coroutine
def overlapping(coro: Coroutine[Any, Any, T]) -> Generator[Any, Any, T]:
    """Await ``coro`` so that its :func:`blocking` calls run in threads, the loop serving
    others meanwhile; in the caller's context variables (a copy, as a task has)."""
    steps = _Steps(_drive)
    steps.gr_context = contextvars.copy_context()
    message = steps.switch(coro)
    while True:
        kind, item = message
        if kind == _DONE:
            result: T = item
            return result
        reply: tuple[Any, BaseException | None]
        try:
            if kind == _YIELD:
                reply = (yield item), None
            else:
                threads, call = item
                future = asyncio.get_running_loop().run_in_executor(threads, call)
                reply = (yield from future.__await__()), None
        except BaseException as error:  # a cancellation, or the call's own error
            reply = None, error
        message = steps.switch(reply)


def blocking(threads: Executor, call: Callable[..., T], *args: Any) -> T:
    """``call(*args)``: inside :func:`overlapping`, in a thread of ``threads`` while the loop
    serves others; anywhere else, here and now."""
    current = getcurrent()
    if not isinstance(current, _Steps):
        return call(*args)
    value, error = current.parent.switch((_CALL, (threads, partial(call, *args))))
    if error is not None:
        raise error
    result: T = value
    return result
