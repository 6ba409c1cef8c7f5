"""``python -m benchmarks`` runs every suite even when one fails, and says which failed."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest

from benchmarks.__main__ import run


def test_a_failing_suite_is_reported_and_the_others_still_run(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """A suite that raises is reported as failed with its error; the suites after it run and
    the run ends with status 1, naming it."""
    ran: list[str] = []

    def broken() -> None:
        ran.append("broken")
        raise IndexError("list index out of range")

    suites: dict[str, Any] = {
        "first": SimpleNamespace(main=lambda: ran.append("first")),
        "broken": SimpleNamespace(main=broken),
        "last": SimpleNamespace(main=lambda: ran.append("last")),
    }
    assert run(["first", "broken", "last"], None, suites.__getitem__) == 1
    assert ran == ["first", "broken", "last"]
    out = capsys.readouterr().out
    assert "FAILED: broken raised IndexError: list index out of range" in out
    assert out.rstrip().endswith("1 suite(s) failed: broken")


def test_a_run_without_failures_succeeds() -> None:
    """Every suite passing ends the run with status 0."""
    suites = {"only": SimpleNamespace(main=lambda: None)}
    assert run(["only"], None, suites.__getitem__) == 0
