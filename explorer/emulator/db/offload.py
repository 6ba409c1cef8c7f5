"""Waits on the event loop, handlers and repositories staying synchronous code.

The PostgreSQL engine's reads are network round trips. Made blocking on the loop, 32
connections' listings queue behind each other's; awaited, their waits overlap (see
``docs/architecture.md``, "Reads awaited on the loop on PostgreSQL"). :func:`overlapping`
awaits a coroutine (a request's ASGI call) with each of its steps run in a greenlet of its own,
just as asyncio would run them; a call made inside it through :func:`blocking` switches back to
the loop with the call's awaitable form, which the loop awaits, serving other requests
meanwhile, then switches back into the request with the result (or the error). Outside such a
greenlet :func:`blocking` makes the call's blocking form. SQLAlchemy's asyncio extension
bridges its synchronous ORM to asynchronous drivers the same way (``greenlet_spawn``,
``await_only``), with greenlet's documented ``switch``.

A request resumes where it called, on the loop's thread, so the code before and after a read
runs as before; what changes is that other requests may run while it waits, as they already
do at every ``await``. Nothing crosses threads: a hop to a thread and back cost a read about
2.5 times the CPU of the awaited read (``docs/architecture.md``).
"""

from __future__ import annotations

import contextvars
import types
from collections.abc import Awaitable, Callable, Coroutine, Generator
from functools import partial
from typing import Any, TypeVar

from greenlet import getcurrent, greenlet

T = TypeVar("T")

#: What a request's greenlet asks of the loop: pass a value its coroutine yielded on to the
#: task (an asyncio future to wait for), await a call, or take its result.
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
    """Await ``coro`` so that its :func:`blocking` calls are awaited, the loop serving others
    meanwhile; in the caller's context variables (a copy, as a task has)."""
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
                reply = (yield from item().__await__()), None
        except BaseException as error:  # a cancellation, or the call's own error
            reply = None, error
        message = steps.switch(reply)


def blocking(call: Callable[..., T], waiting: Callable[..., Awaitable[T]], *args: Any) -> T:
    """One call in two forms: inside :func:`overlapping`, ``await waiting(*args)`` on the loop
    while it serves others; anywhere else ``call(*args)``, here and now."""
    current = getcurrent()
    if not isinstance(current, _Steps):
        return call(*args)
    value, error = current.parent.switch((_CALL, partial(waiting, *args)))
    if error is not None:
        raise error
    result: T = value
    return result
