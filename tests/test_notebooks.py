"""The recipes in notebooks/: stored without outputs, and each runs top to bottom without an
error cell against one shared live platform (simulated activity on, real rate limits), as on
Binder and under ``explorer lab``.

The notebooks execute once, all at the same time (``tests/recipe_runs.py``), in a module
fixture; each test then reads its notebook's result. Kernels get the platform through
``EXPLORER_BASE_URL`` in their environment and run in a copy of ``notebooks/``, as
JupyterLab runs them in the user's copy, so what a recipe writes (recipe 5's capture) stays out
of the repository. This is the suite's one run of every recipe: ``tests/test_wheel.py`` runs the
tour alone from the installed wheel, after checking that every import of every recipe succeeds
there.
"""

from __future__ import annotations

import asyncio
import os
import re
import shutil
import tempfile
from collections.abc import Iterator
from itertools import pairwise
from pathlib import Path

import nbformat
import pytest

from explorer.cli import recipes
from tests.databases import start
from tests.recipe_runs import CELL_TIMEOUT, Run, execute_all

#: Runs alone (serial): the recipes' time budgets are set for seven kernels sharing the machine
#: with nothing else.
pytestmark = [pytest.mark.serial, pytest.mark.any_engine("the recipes, fed by the platform")]

NOTEBOOK_DIR = Path(__file__).resolve().parent.parent / "notebooks"
NOTEBOOKS = sorted(NOTEBOOK_DIR.glob("*.ipynb"))
#: Each recipe runs in under a minute on its own (recipe 5, which records for one while a
#: simulated day passes at 1,000 times the speed, 86 s, and recipe 6, which runs two fast
#: worlds for 33 and 40 s, in two and a half; recipe 7, which starts no platform, in about
#: 10 s); all seven share one machine here.
RECIPE_BUDGET = {
    "05-collecting-over-time": 150.0,
    "06-phenomena": 150.0,
}
DEFAULT_BUDGET = 60.0
#: How to clear one recipe's outputs, counts and widget state (`make clear-notebooks`: all).
CLEAR = (
    "jupyter nbconvert --clear-output --inplace --ClearMetadataPreprocessor.enabled=True "
    "--ClearMetadataPreprocessor.clear_cell_metadata=False "
    "--ClearMetadataPreprocessor.preserve_nb_metadata_mask=kernelspec "
    "--ClearMetadataPreprocessor.preserve_nb_metadata_mask=language_info notebooks/{name}"
)


#: A Markdown link's target: [text](target).
LINK = re.compile(r"\]\(([^)\s]+)\)")


def relative_links(path: Path) -> list[str]:
    """The targets of the Markdown links of a recipe that are not addresses or anchors."""
    notebook = nbformat.read(path, as_version=4)
    found = [
        target
        for cell in notebook.cells
        if cell.cell_type == "markdown"
        for target in LINK.findall(cell.source)
    ]
    return [t for t in found if not re.match(r"[a-z][a-z0-9+.-]*:|#", t)]


@pytest.fixture(scope="module")
def runs() -> Iterator[dict[str, Run]]:
    """Every notebook executed once, in parallel, against one live platform (5,000 channels:
    ranking every channel of the default 50,000 within the read bucket takes minutes)."""
    with start(simulate=True, channels=5000) as platform:
        env = {**os.environ, "EXPLORER_BASE_URL": platform.base_url}
        with tempfile.TemporaryDirectory() as folder:
            copy = Path(folder) / "recipes"
            shutil.copytree(NOTEBOOK_DIR, copy)
            yield asyncio.run(execute_all(copy, env))


def test_there_are_seven_recipes() -> None:
    """notebooks/ holds the seven recipes, in reading order."""
    assert [path.stem for path in NOTEBOOKS] == [
        "01-ranking-channels",
        "02-poll-responses",
        "03-sampling-history",
        "04-tour",
        "05-collecting-over-time",
        "06-phenomena",
        "07-real-chat",
    ]


def test_recipes_links_open_here_and_in_the_users_copy(tmp_path: Path) -> None:
    """Every relative link of the recipes (the realism page's, recipe 7's data sources) names a
    file beside them, in notebooks/ and in the copy `explorer lab` makes, whose JupyterLab
    opens nothing above it."""
    copy = tmp_path / "copy"
    recipes.copy_missing(recipes.SOURCE, copy)
    links = {target.partition("#")[0] for path in NOTEBOOKS for target in relative_links(path)}
    assert {"realism.md", "data/README.md"} <= links
    for folder in (NOTEBOOK_DIR, copy):
        missing = [link for link in links if not (folder / link).is_file()]
        above = [link for link in links if not (folder / link).resolve().is_relative_to(folder)]
        assert not missing and (folder == NOTEBOOK_DIR or not above), (folder, missing, above)


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
        "running them there keeps notebooks/ clean)"
    )


@pytest.mark.timeout(CELL_TIMEOUT * 2)
@pytest.mark.parametrize("path", NOTEBOOKS, ids=[path.stem for path in NOTEBOOKS])
def test_notebook_runs_without_an_error_cell(path: Path, runs: dict[str, Run]) -> None:
    """The recipe runs top to bottom against the shared platform without an error."""
    run = runs[path.name]
    assert run.error is None, run.error


@pytest.mark.timeout(CELL_TIMEOUT * 2)
def test_tour_shows_the_audience_moving(runs: dict[str, Run]) -> None:
    """Recipe 4's "audience, as it changes" receives at least the five changes it waits for
    (it did not get one in 30 s at the platform's real-time speed)."""
    said = [
        re.search(r"(\d+) changes of viewersCurrent", text) for text in runs["04-tour.ipynb"].texts
    ]
    counts = [int(found.group(1)) for found in said if found]
    assert counts and counts[0] >= 5, counts


@pytest.mark.timeout(CELL_TIMEOUT * 2)
def test_real_chat_recipe_round_trips_and_compacts(runs: dict[str, Run]) -> None:
    """Recipe 7 reads its JSON Lines export back to the capture's rows, and its compaction
    keeps one of the two redacted TwitchDownloader comments that share the id "0"."""
    said = "".join(runs["07-real-chat.ipynb"].texts)
    assert "JSON Lines round trip loses nothing: True" in said
    assert "331 events after compaction (332 before)" in said


@pytest.mark.timeout(CELL_TIMEOUT * 2)
def test_recipes_run_within_their_budget(runs: dict[str, Run]) -> None:
    """Each recipe finished within its budget, even with all seven running at once."""
    slow = {
        name: round(run.seconds, 1)
        for name, run in runs.items()
        if run.seconds > RECIPE_BUDGET.get(Path(name).stem, DEFAULT_BUDGET)
    }
    assert not slow, f"recipes over budget ({DEFAULT_BUDGET:g} s, {RECIPE_BUDGET}): {slow}"


def test_activity_heat_map_time_labels_do_not_overlap() -> None:
    """Recipe 5's messages-per-5-s heat map, drawn by its own cell from a minute of 30
    channels' messages, has time labels that do not overlap (Agg's text extents)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np
    import pandas as pd

    notebook = nbformat.read(NOTEBOOK_DIR / "05-collecting-over-time.ipynb", as_version=4)
    [cell] = [c for c in notebook.cells if c.source.startswith("tokens = snapshots.")]
    started = pd.Timestamp("2026-01-01 12:00:02", tz="UTC")
    rng = np.random.default_rng(5)
    times = started + pd.to_timedelta(rng.uniform(0, 60, 3000), unit="s")
    namespace = {
        "pd": pd,
        "plt": plt,
        "messages": pd.DataFrame({"channel": rng.integers(1, 31, 3000), "received_at": times}),
        "snapshots": pd.DataFrame({"channel": range(1, 31), "token": [f"c{i}" for i in range(30)]}),
        "recording_started": started,
        "recording_stopped": started + pd.Timedelta("60s"),
    }
    exec(cell.source, namespace)
    figure = namespace["fig"]
    figure.canvas.draw()
    renderer = figure.canvas.get_renderer()
    labels = [t for t in namespace["ax"].get_xticklabels() if t.get_text()]
    boxes = sorted((t.get_window_extent(renderer) for t in labels), key=lambda b: b.x0)
    assert len(boxes) >= 3
    overlapping = [(a.x1, b.x0) for a, b in pairwise(boxes) if a.x1 > b.x0]
    plt.close(figure)
    assert not overlapping, [t.get_text() for t in labels]
