"""The recipes in explorer/recipes/: stored without outputs, and each runs top to bottom without an
error cell against one shared live platform (simulated activity on, real rate limits), as on
Binder and under ``explorer lab``.

The notebooks execute once, all at the same time (nbclient's async API, one kernel each), in
a module fixture; each test then reads its notebook's result. Kernels get the platform through
``EXPLORER_BASE_URL`` in their environment and run in a copy of ``explorer/recipes/``, as JupyterLab
runs them in the user's copy, so what a recipe writes (recipe 5's capture) stays out of the
repository.

Kernels talk ZeroMQ over Unix sockets (``transport="ipc"``), each under its own path prefix in
a private folder, not over TCP: a TCP kernel gets ports that its manager found free and
released, and a kernel starting in parallel (here, or in another test run on the machine)
could bind one of them first (``ZMQError: Address already in use``). Socket files under
distinct prefixes cannot collide.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError, CellTimeoutError, DeadKernelError
from traitlets.config import Config

from explorer.emulator import start

NOTEBOOK_DIR = Path(__file__).resolve().parent.parent / "explorer" / "recipes"
NOTEBOOKS = sorted(NOTEBOOK_DIR.glob("*.ipynb"))
#: Longest a single cell may run: the poll recipe may first wait out a simulated poll (the
#: seeded simulator starts its first one in streamer's channel about two minutes in).
CELL_TIMEOUT = 150
#: Each recipe runs in under a minute on its own (recipe 5, which records for one, in two); all
#: five share one machine here.
RECIPE_BUDGET = {"05-collecting-over-time": 120.0}
DEFAULT_BUDGET = 60.0
#: How to clear one recipe's outputs, counts and widget state (`make clear-notebooks`: all).
CLEAR = (
    "jupyter nbconvert --clear-output --inplace --ClearMetadataPreprocessor.enabled=True "
    "--ClearMetadataPreprocessor.clear_cell_metadata=False "
    "--ClearMetadataPreprocessor.preserve_nb_metadata_mask=kernelspec "
    "--ClearMetadataPreprocessor.preserve_nb_metadata_mask=language_info explorer/recipes/{name}"
)


@dataclass(frozen=True)
class Run:
    """How one notebook's execution went."""

    seconds: float
    error: str | None


async def _execute(path: Path, env: dict[str, str], sockets: Path, folder: Path) -> Run:
    notebook = nbformat.read(path, as_version=4)
    client = NotebookClient(
        notebook,
        timeout=CELL_TIMEOUT,
        kernel_name="python3",
        resources={"metadata": {"path": str(folder)}},
        config=Config(KernelManager={"transport": "ipc", "ip": str(sockets / path.stem[:2])}),
    )
    started = time.monotonic()
    try:
        await client.async_execute(env=env)
    except (CellExecutionError, CellTimeoutError, DeadKernelError) as exc:
        return Run(time.monotonic() - started, str(exc))
    return Run(time.monotonic() - started, None)


async def _execute_all(env: dict[str, str]) -> dict[str, Run]:
    # A short folder: a Unix socket's path has at most 107 bytes.
    with tempfile.TemporaryDirectory(prefix="nb-") as sockets:
        folder = Path(sockets) / "recipes"
        shutil.copytree(NOTEBOOK_DIR, folder)
        runs = await asyncio.gather(
            *(_execute(path, env, Path(sockets), folder) for path in NOTEBOOKS)
        )
    return {path.name: run for path, run in zip(NOTEBOOKS, runs, strict=True)}


@pytest.fixture(scope="module")
def runs() -> Iterator[dict[str, Run]]:
    """Every notebook executed once, in parallel, against one live platform."""
    with start(simulate=True) as platform:
        env = {**os.environ, "EXPLORER_BASE_URL": platform.base_url}
        yield asyncio.run(_execute_all(env))


def test_there_are_five_recipes() -> None:
    """explorer/recipes/ holds the five recipes, in reading order."""
    assert [path.stem for path in NOTEBOOKS] == [
        "01-ranking-channels",
        "02-poll-responses",
        "03-sampling-history",
        "04-tour",
        "05-collecting-over-time",
    ]


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[path.stem for path in NOTEBOOKS])
def test_notebook_is_stored_without_outputs(path: Path) -> None:
    """No outputs, execution counts or saved widget state are checked in."""
    notebook = nbformat.read(path, as_version=4)
    nbformat.validate(notebook)
    code = [cell for cell in notebook.cells if cell.cell_type == "code"]
    assert code, "a recipe has code"
    dirty = [
        number
        for number, cell in enumerate(code, 1)
        if cell.outputs or cell.execution_count is not None
    ]
    saved = "widgets" in notebook.metadata
    assert not dirty and not saved, (
        f"{path.name} was saved with outputs (code cells {dirty})"
        f"{' and widget state' if saved else ''}: run `make clear-notebooks`, or "
        f"`{CLEAR.format(name=path.name)}` (`explorer lab` opens a copy of the recipes, so "
        "running them there keeps explorer/recipes/ clean)"
    )


@pytest.mark.timeout(CELL_TIMEOUT * 2)
@pytest.mark.parametrize("path", NOTEBOOKS, ids=[path.stem for path in NOTEBOOKS])
def test_notebook_runs_without_an_error_cell(path: Path, runs: dict[str, Run]) -> None:
    """The recipe runs top to bottom against the shared platform without an error."""
    run = runs[path.name]
    assert run.error is None, run.error


@pytest.mark.timeout(CELL_TIMEOUT * 2)
def test_recipes_run_within_their_budget(runs: dict[str, Run]) -> None:
    """Each recipe finished within its budget, even with all five running at once."""
    slow = {
        name: round(run.seconds, 1)
        for name, run in runs.items()
        if run.seconds > RECIPE_BUDGET.get(Path(name).stem, DEFAULT_BUDGET)
    }
    assert not slow, f"recipes over budget ({DEFAULT_BUDGET:g} s, {RECIPE_BUDGET}): {slow}"
