"""``explorer tour``: the recipes in a terminal, against a live platform, saving PNG plots."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from explorer.cli.guide import length_shares
from tests.databases import start

pytestmark = pytest.mark.any_engine("the recipes' terminal tour: the platform only serves it")


PLOTS = ["ranking.png", "languages.png", "chat-rate.png", "poll.png", "history-lengths.png"]


@pytest.mark.timeout(180)
def test_tour_prints_four_steps_and_saves_the_plots(tmp_path: Path) -> None:
    """`explorer tour` ranks, watches chat, runs a poll and samples history in a terminal,
    printing each step (counts as integers) and saving five PNG files, without importing
    Jupyter."""
    out = tmp_path / "tour"
    probe = (
        "import sys; from explorer.cli import main; code = main(sys.argv[1:]); "
        "jupyter = sorted(m for m in sys.modules if m.split('.')[0] in "
        "('ipywidgets', 'IPython', 'ipykernel', 'jupyter_client')); "
        "print('JUPYTER', jupyter); raise SystemExit(code)"
    )
    with start(simulate=True) as platform:
        done = subprocess.run(
            [sys.executable, "-c", probe, "tour", "--out", str(out), "--watch", "2", "--poll", "4"],
            capture_output=True,
            text=True,
            env={**os.environ, "EXPLORER_BASE_URL": platform.base_url},
            timeout=170,
        )
    assert done.returncode == 0, done.stderr[-3000:]
    for step in ("1/4  Ranking", "2/4  Watching", "3/4  A 4-second poll", "4/4  Sampling"):
        assert step in done.stdout
    assert "PollEnd" in done.stdout
    assert "JUPYTER []" in done.stdout
    history = done.stdout.split("History per sample:\n", 1)[1].split("\n\n", 1)[0]
    for line in history.splitlines()[1:]:
        assert all(count.isdigit() for count in line.rsplit(maxsplit=7)[1:4]), line
    assert sorted(p.name for p in out.iterdir()) == sorted(PLOTS)
    assert all((out / name).read_bytes().startswith(b"\x89PNG") for name in PLOTS)


def test_length_shares_are_shares_of_each_samples_messages() -> None:
    """Each bin's value is the share of the sample's messages of that length (5 of 8 is
    0.625), so every sample's column sums to 1."""
    history = pd.DataFrame(
        {"sample": ["a"] * 8 + ["b"] * 2, "length": [2, 3, 2, 3, 3, 10, 11, 40, 5, 7]}
    )
    shares = length_shares(history)
    assert list(shares.index) == list(range(0, 42, 2))
    assert shares.loc[2, "a"] == 0.625 and shares.loc[10, "a"] == 0.25
    assert shares.sum().tolist() == [1.0, 1.0]
