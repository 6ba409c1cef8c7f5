"""The private event loop behind the sync API: from scripts, threads, running loops, Jupyter."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

from explorer.core import loop
from explorer.emulator import Platform
from explorer.errors import LoopThreadError

ROOT = Path(__file__).resolve().parent.parent


async def answer(value: int) -> int:
    await asyncio.sleep(0)
    return value


def test_run_returns_the_coroutine_result() -> None:
    """run() blocks until the coroutine is done and returns its value."""
    assert loop.run(answer(42)) == 42


def test_run_raises_the_coroutine_exception() -> None:
    """An exception inside the coroutine surfaces in the caller."""

    async def fail() -> None:
        raise KeyError("boom")

    with pytest.raises(KeyError, match="boom"):
        loop.run(fail())


def test_run_works_inside_a_running_event_loop() -> None:
    """Sync calls work from a coroutine of another running loop (as in a Jupyter cell)."""

    async def cell() -> int:
        return loop.run(answer(7))

    assert asyncio.run(cell()) == 7


def test_run_from_the_loop_thread_raises_a_clear_error() -> None:
    """Calling the sync API on the toolkit's own loop raises LoopThreadError, no deadlock."""

    async def nested() -> int:
        return loop.run(answer(1))

    with pytest.raises(LoopThreadError, match="AsyncClient") as info:
        loop.run(nested(), timeout=5)
    assert isinstance(info.value, RuntimeError)


def test_timeout_cancels_the_coroutine() -> None:
    """When the timeout passes first, the coroutine is cancelled and TimeoutError raised."""
    cancelled = threading.Event()

    async def slow() -> None:
        try:
            await asyncio.sleep(30)
        except asyncio.CancelledError:
            cancelled.set()
            raise

    with pytest.raises(TimeoutError, match=r"0\.1 s"):
        loop.run(slow(), timeout=0.1)
    assert cancelled.wait(5)


def test_the_loop_survives_many_calls_from_many_threads() -> None:
    """One daemon loop thread serves every call, from any thread, for the whole process."""
    first = loop.get_loop()
    results: list[int] = []

    def worker(start: int) -> None:
        results.extend(loop.run(answer(start + i)) for i in range(200))

    threads = [threading.Thread(target=worker, args=(n * 1000,)) for n in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(results) == sorted(n * 1000 + i for n in range(4) for i in range(200))
    assert loop.get_loop() is first
    assert next(t for t in threading.enumerate() if t.name == "explorer-loop").daemon


def test_sync_client_runs_all_cells_of_a_jupyter_notebook(platform: Platform) -> None:
    """In a real ipykernel (with its own running loop), Run All completes: no nest_asyncio."""
    cells = [
        f"import asyncio, explorer\napi = explorer.connect({platform.base_url!r}, progress=False)",
        "await asyncio.sleep(0)\nfirst = api.channels(order='viewersTotal:desc', max_rows=150)",
        "import time\ntime.sleep(0.1)\nsecond = api.channel(int(first.index[0])).info()",
        "assert len(first) == 150 and second.index[0] == first.index[0]\napi.close()",
    ]
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in cells])
    NotebookClient(
        notebook, timeout=60, kernel_name="python3", resources={"metadata": {"path": str(ROOT)}}
    ).execute()
    errors = [o for c in notebook.cells for o in c.outputs if o.output_type == "error"]
    assert errors == []
