"""The recipes in notebooks/: stored without outputs, and each runs top to bottom without an
error cell against one shared live platform (simulated activity on, real rate limits), as on
Binder and under ``explorer lab``.

The notebooks execute once, all at the same time (nbclient's async API, one kernel each), in
a module fixture; each test then reads its notebook's result. Kernels get the platform through
``EXPLORER_BASE_URL`` in their environment and run in ``notebooks/``, as JupyterLab runs them.
"""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError, CellTimeoutError, DeadKernelError

from explorer.emulator import start

NOTEBOOK_DIR = Path(__file__).resolve().parent.parent / "notebooks"
NOTEBOOKS = sorted(NOTEBOOK_DIR.glob("*.ipynb"))
#: Longest a single cell may run: the poll recipe may first wait out a simulated poll (the
#: seeded simulator starts its first one in streamer's channel about two minutes in).
CELL_TIMEOUT = 150
#: Each recipe runs in under a minute on its own; all four share one machine here.
RECIPE_BUDGET = 60.0


@dataclass(frozen=True)
class Run:
    """How one notebook's execution went."""

    seconds: float
    error: str | None


async def _execute(path: Path, env: dict[str, str]) -> Run:
    notebook = nbformat.read(path, as_version=4)
    client = NotebookClient(
        notebook,
        timeout=CELL_TIMEOUT,
        kernel_name="python3",
        resources={"metadata": {"path": str(NOTEBOOK_DIR)}},
    )
    started = time.monotonic()
    try:
        await client.async_execute(env=env)
    except (CellExecutionError, CellTimeoutError, DeadKernelError) as exc:
        return Run(time.monotonic() - started, str(exc))
    return Run(time.monotonic() - started, None)


async def _execute_all(env: dict[str, str]) -> dict[str, Run]:
    runs = await asyncio.gather(*(_execute(path, env) for path in NOTEBOOKS))
    return {path.name: run for path, run in zip(NOTEBOOKS, runs, strict=True)}


@pytest.fixture(scope="module")
def runs() -> Iterator[dict[str, Run]]:
    """Every notebook executed once, in parallel, against one live platform."""
    with start(simulate=True) as platform:
        env = {**os.environ, "EXPLORER_BASE_URL": platform.base_url}
        yield asyncio.run(_execute_all(env))


def test_there_are_four_recipes() -> None:
    """notebooks/ holds the four recipes, in reading order."""
    assert [path.stem for path in NOTEBOOKS] == [
        "01-ranking-channels",
        "02-poll-responses",
        "03-sampling-history",
        "04-tour",
    ]


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[path.stem for path in NOTEBOOKS])
def test_notebook_is_stored_without_outputs(path: Path) -> None:
    """No outputs, execution counts or saved widget state are checked in."""
    notebook = nbformat.read(path, as_version=4)
    nbformat.validate(notebook)
    code = [cell for cell in notebook.cells if cell.cell_type == "code"]
    assert code, "a recipe has code"
    assert [cell.outputs for cell in code] == [[] for _ in code]
    assert [cell.execution_count for cell in code] == [None for _ in code]
    assert "widgets" not in notebook.metadata


@pytest.mark.timeout(CELL_TIMEOUT * 2)
@pytest.mark.parametrize("path", NOTEBOOKS, ids=[path.stem for path in NOTEBOOKS])
def test_notebook_runs_without_an_error_cell(path: Path, runs: dict[str, Run]) -> None:
    """The recipe runs top to bottom against the shared platform without an error."""
    run = runs[path.name]
    assert run.error is None, run.error


@pytest.mark.timeout(CELL_TIMEOUT * 2)
def test_recipes_run_in_under_a_minute(runs: dict[str, Run]) -> None:
    """Each recipe finished within a minute, even with all four running at once."""
    slow = {
        name: round(run.seconds, 1) for name, run in runs.items() if run.seconds > RECIPE_BUDGET
    }
    assert not slow, f"recipes over {RECIPE_BUDGET:g} s: {slow}"
