"""The realism benchmark's measuring functions (``benchmarks/realism.py``) on frames whose answer
is known; the statistical checks of the world itself live in the benchmark."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from benchmarks.realism import (
    TARGETS,
    Phases,
    Result,
    live_exposure,
    poisson_interval,
    poisson_power_law,
    report,
    timeouts_seen,
)
from explorer.events.log import EventLog


def test_poisson_power_law_recovers_beta_with_silent_channels() -> None:
    """Counts drawn with β = 0.8 fit β near 0.8, channels that said nothing included."""
    rng = np.random.default_rng(1)
    viewers = rng.pareto(1.2, 2000) * 5 + 1
    minutes = np.full(len(viewers), 3.0)
    counts = rng.poisson(minutes * 0.05 * viewers**0.8)
    assert (counts == 0).any()
    beta, log_c = poisson_power_law(counts, viewers, minutes)
    assert beta == pytest.approx(0.8, abs=0.03)
    assert np.exp(log_c) == pytest.approx(0.05, rel=0.15)


def test_live_exposure_counts_only_the_minutes_a_channel_was_live() -> None:
    """A channel whose session ends halfway through the window gets half its minutes, at its
    audience while live; one live throughout gets all of them."""
    snapshots = pd.DataFrame(
        {
            "channel": [1, 1, 1, 1, 2, 2, 2, 2],
            "online": [True, True, False, False, True, True, True, True],
            "viewersCurrent": [100.0, 300.0, 0.0, None, 10.0, 10.0, 30.0, 30.0],
        }
    )
    exposure = live_exposure(snapshots, 60.0)
    assert exposure.loc[1].tolist() == [200.0, 30.0]
    assert exposure.loc[2].tolist() == [20.0, 60.0]


def test_poisson_interval_brackets_the_count() -> None:
    """The 95% interval of 36 events lies around 36, about ±12."""
    low, high = poisson_interval(36)
    assert 24 < low < 26 and 49 < high < 51


def test_a_rare_count_passes_when_its_interval_meets_the_band() -> None:
    """Row 12a's 2 removals in 1,000 messages (interval 0.2-7.2) is consistent with 3.6."""
    low, high = poisson_interval(2)
    assert Result(2.0, "", (low, high)).passed(TARGETS["12a"])
    assert not Result(2.0, "").passed(TARGETS["12a"])


def test_timeouts_are_counted_from_the_purges_they_cause() -> None:
    """An onlooker counts a timeout by its purge's cause; a plain purge is no timeout."""
    log = EventLog()
    for cause in ({"type": "timeout", "durationString": "5m"}, None):
        data = {"originatingChannel": 1, "user_id": 7, "moderator": {"user_name": "mod"}}
        if cause:
            data["cause"] = cause
        log.append({"type": "event", "event": "PurgeMessage", "data": data}, 1.0)
    assert timeouts_seen(log, log.frame) == 1


def test_a_statistic_the_world_cannot_give_is_reported_not_judged() -> None:
    """A row marked not meaningful shows n/a and leaves the verdict to the other rows."""
    out = Phases({row: Result(None, "missing") for row in TARGETS})
    out.results["9b"] = Result(0.5, "too far to extrapolate", meaningful=False)
    lines: list[str] = []
    assert not report(out, "test", lines.append)
    assert any(line.startswith("9b ") and line.endswith("n/a") for line in lines)
    assert lines[-1].endswith(
        f"{len(TARGETS) - 1} checks outside their tolerance: "
        + ", ".join(row for row in TARGETS if row != "9b")
        + "; not meaningful in this world: 9b"
    )
