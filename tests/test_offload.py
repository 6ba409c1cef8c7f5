"""Blocking calls off the event loop (``explorer/emulator/db/offload.py``): inside a request
run by ``overlapping`` a call waits in a thread while the loop serves others, and its result
or error comes back where it was called; outside, it is an ordinary call."""

from __future__ import annotations

import asyncio
import contextvars
import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest

from explorer.emulator.db.offload import blocking, overlapping

#: Seconds a test's thread waits for what the loop should do meanwhile (a hang's bound).
BOUND = 10.0

requester: contextvars.ContextVar[str] = contextvars.ContextVar("requester", default="nobody")


def test_a_blocked_call_leaves_the_loop_serving_others() -> None:
    """A call blocked in its thread until another task on the loop releases it returns, in
    the request's context."""
    started, released = threading.Event(), threading.Event()

    def hold() -> bool:
        started.set()
        return released.wait(BOUND)

    async def request() -> tuple[bool, str]:
        return blocking(threads, hold), requester.get()

    async def release() -> None:
        await asyncio.to_thread(started.wait, BOUND)
        released.set()

    async def both() -> tuple[bool, str]:
        requester.set("a caller")
        served, _ = await asyncio.gather(overlapping(request()), release())
        return served

    with ThreadPoolExecutor(2) as threads:
        assert asyncio.run(both()) == (True, "a caller")


def test_a_calls_error_is_raised_where_it_was_called() -> None:
    """An exception of the call in its thread reaches the request's own handler of it."""

    def fail() -> None:
        raise LookupError("not there")

    async def request() -> str:
        try:
            blocking(threads, fail)
        except LookupError as error:
            return f"handled: {error}"
        return "not raised"

    with ThreadPoolExecutor(1) as threads:
        assert asyncio.run(overlapping(request())) == "handled: not there"


def test_a_request_cancelled_while_its_call_runs_ends_cancelled() -> None:
    """Cancelling a request whose call is in a thread raises CancelledError in the request."""
    started, released = threading.Event(), threading.Event()
    seen: list[str] = []

    def hold() -> None:
        started.set()
        released.wait(BOUND)

    async def request() -> None:
        try:
            blocking(threads, hold)
        except asyncio.CancelledError:
            seen.append("cancelled")
            raise

    async def cancel() -> Any:
        served = asyncio.ensure_future(overlapping(request()))
        await asyncio.to_thread(started.wait, BOUND)
        served.cancel()
        try:
            return await served
        finally:
            released.set()

    with ThreadPoolExecutor(1) as threads, pytest.raises(asyncio.CancelledError):
        asyncio.run(cancel())
    assert seen == ["cancelled"]


def test_outside_a_request_a_call_runs_in_the_callers_thread() -> None:
    """Called outside ``overlapping``, the call runs at once in the calling thread."""
    with ThreadPoolExecutor(1) as threads:
        assert blocking(threads, threading.current_thread) is threading.current_thread()
