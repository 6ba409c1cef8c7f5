"""Running recipes top to bottom, all at the same time (nbclient's async API, one kernel
each): what ``tests/test_notebooks.py`` does in the repository, and ``tests/test_wheel.py`` in a
fresh virtual environment, where this file runs as a script (it imports only nbclient,
nbformat and traitlets, which the ``lab`` extra brings).

Kernels talk ZeroMQ over Unix sockets (``transport="ipc"``), each under its own path prefix in
a private folder, not over TCP: a TCP kernel gets ports that its manager found free and
released, and a kernel starting in parallel (here, or in another test run on the machine)
could bind one of them first (``ZMQError: Address already in use``). Socket files under
distinct prefixes cannot collide.

As a script: ``python recipe_runs.py FOLDER [NAME ...]`` runs every recipe in ``FOLDER`` (or
those named) in place (the environment's ``EXPLORER_BASE_URL`` names the platform) and prints
one JSON object, each recipe's seconds, error (null when it ran through) and output texts.
"""

from __future__ import annotations

import asyncio
import json
import sys
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path

import nbformat
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError, CellTimeoutError, DeadKernelError
from traitlets.config import Config

#: Longest a single cell may run: the poll recipe may first wait out a simulated poll (the
#: seeded simulator starts its first one in streamer's channel about two minutes in).
CELL_TIMEOUT = 150


@dataclass(frozen=True)
class Run:
    """How one notebook's execution went, and what its cells printed or showed as text."""

    seconds: float
    error: str | None
    texts: list[str]


def texts(notebook: nbformat.NotebookNode) -> list[str]:
    """Each output's text (a stream's, or a result's text/plain), in order."""
    found = []
    for cell in notebook.cells:
        for output in cell.get("outputs", []):
            text = output.get("text") or output.get("data", {}).get("text/plain")
            if text:
                found.append(str(text))
    return found


async def _execute(path: Path, env: dict[str, str], sockets: Path) -> Run:
    notebook = nbformat.read(path, as_version=4)
    client = NotebookClient(
        notebook,
        timeout=CELL_TIMEOUT,
        kernel_name="python3",
        resources={"metadata": {"path": str(path.parent)}},
        config=Config(KernelManager={"transport": "ipc", "ip": str(sockets / path.stem[:2])}),
    )
    started = time.monotonic()
    try:
        await client.async_execute(env=env)
    except (CellExecutionError, CellTimeoutError, DeadKernelError) as exc:
        return Run(time.monotonic() - started, str(exc), texts(notebook))
    return Run(time.monotonic() - started, None, texts(notebook))


async def execute_all(
    folder: Path, env: dict[str, str], names: list[str] | None = None
) -> dict[str, Run]:
    """Run every ``*.ipynb`` of ``folder`` (or those ``names``) in place, at once, in kernels
    with ``env``; how each went, by file name."""
    notebooks = sorted(folder / name for name in names) if names else sorted(folder.glob("*.ipynb"))
    # A short folder: a Unix socket's path has at most 107 bytes.
    with tempfile.TemporaryDirectory(prefix="nb-") as sockets:
        runs = await asyncio.gather(*(_execute(path, env, Path(sockets)) for path in notebooks))
    return {path.name: run for path, run in zip(notebooks, runs, strict=True)}


def main() -> None:
    """The script: run the recipes of the folder given (or those named after it), print how
    each went as JSON."""
    import os

    runs = asyncio.run(execute_all(Path(sys.argv[1]), dict(os.environ), sys.argv[2:]))
    print(json.dumps({name: asdict(run) for name, run in runs.items()}))


if __name__ == "__main__":
    main()
