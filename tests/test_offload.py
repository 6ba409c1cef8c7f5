"""Waits on the event loop for synchronous code (``explorer/emulator/db/offload.py``): inside a
request run by ``overlapping`` a call's awaitable form is awaited while the loop serves others,
and its result or error comes back where it was called; outside, its blocking form runs."""

from __future__ import annotations

import asyncio
import contextvars
from typing import Any

import pytest

from explorer.emulator.db.offload import blocking, overlapping

#: Seconds a test waits for what the loop should do meanwhile (a hang's bound).
BOUND = 10.0

requester: contextvars.ContextVar[str] = contextvars.ContextVar("requester", default="nobody")


def _never() -> Any:
    """A blocking form no test inside ``overlapping`` may reach."""
    raise AssertionError("the blocking form ran inside a request")


def test_a_waiting_call_leaves_the_loop_serving_others() -> None:
    """A call waiting until another task on the loop releases it returns, in the request's
    context."""

    async def both() -> tuple[bool, str]:
        started, released = asyncio.Event(), asyncio.Event()

        async def hold() -> bool:
            started.set()
            await released.wait()
            return True

        async def request() -> tuple[bool, str]:
            return blocking(_never, hold), requester.get()

        async def release() -> None:
            await asyncio.wait_for(started.wait(), BOUND)
            released.set()

        requester.set("a caller")
        served, _ = await asyncio.wait_for(asyncio.gather(overlapping(request()), release()), BOUND)
        return served

    assert asyncio.run(both()) == (True, "a caller")


def test_a_calls_error_is_raised_where_it_was_called() -> None:
    """An exception of the awaited call reaches the request's own handler of it."""

    async def fail() -> None:
        raise LookupError("not there")

    async def request() -> str:
        try:
            blocking(_never, fail)
        except LookupError as error:
            return f"handled: {error}"
        return "not raised"

    assert asyncio.run(overlapping(request())) == "handled: not there"


def test_a_request_cancelled_while_its_call_waits_ends_cancelled() -> None:
    """Cancelling a request whose call is awaited raises CancelledError in the request, and
    the call itself is cancelled."""
    seen: list[str] = []

    async def cancel() -> Any:
        started = asyncio.Event()

        async def hold() -> None:
            started.set()
            try:
                await asyncio.sleep(3600)
            except asyncio.CancelledError:
                seen.append("call cancelled")
                raise

        async def request() -> None:
            try:
                blocking(_never, hold)
            except asyncio.CancelledError:
                seen.append("request cancelled")
                raise

        served = asyncio.ensure_future(overlapping(request()))
        await asyncio.wait_for(started.wait(), BOUND)
        served.cancel()
        return await served

    with pytest.raises(asyncio.CancelledError):
        asyncio.run(cancel())
    assert seen == ["call cancelled", "request cancelled"]


def test_outside_a_request_the_blocking_form_runs_here() -> None:
    """Called outside ``overlapping``, the blocking form runs at once with the arguments."""

    async def waiting(value: int) -> int:
        raise AssertionError("awaited outside a request")

    assert blocking(lambda value: value + 1, waiting, 41) == 42
