"""The Makefile's targets install what they need: the lab only the lab, the tests everything;
the serial passes of `make test` name every file that holds a test marked serial."""

from __future__ import annotations

import ast
import shlex
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

pytestmark = pytest.mark.skipif(shutil.which("make") is None, reason="needs make")


def planned(target: str, venv: Path) -> str:
    """The commands ``make -n target`` would run for a fresh clone whose venv is ``venv``."""
    done = subprocess.run(
        ["make", "-n", "--no-print-directory", target, f"VENV={venv}"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
        timeout=30,
    )
    return done.stdout


def test_lab_on_a_fresh_clone_installs_only_the_lab_extra(tmp_path: Path) -> None:
    """`make lab` on a fresh clone installs the package with `[lab]`, not the developer tools."""
    plan = planned("lab", tmp_path / "venv")
    assert 'install --quiet -e ".[lab]"' in plan
    assert "[dev]" not in plan


def test_test_on_a_fresh_clone_installs_everything(tmp_path: Path) -> None:
    """`make test` still installs the `[dev]` extra (the lab's tools included)."""
    plan = planned("test", tmp_path / "venv")
    assert 'install --quiet -e ".[dev]"' in plan


def test_full_install_satisfies_the_lab(tmp_path: Path) -> None:
    """After `make test`'s install, `make lab` installs nothing more."""
    venv = tmp_path / "venv"
    venv.mkdir()
    for stamp in (".installed", ".installed-lab"):
        (venv / stamp).touch()
    assert "pip install" not in planned("lab", venv)
    full = planned("test", venv / "missing")
    assert "touch" in full and ".installed-lab" in full


def marks_serial(path: Path) -> bool:
    """Whether the test file uses ``pytest.mark.serial`` (on a test or in ``pytestmark``)."""
    return any(
        isinstance(node, ast.Attribute)
        and node.attr == "serial"
        and isinstance(node.value, ast.Attribute)
        and node.value.attr == "mark"
        for node in ast.walk(ast.parse(path.read_text()))
    )


def test_serial_passes_name_every_file_with_serial_tests(tmp_path: Path) -> None:
    """Both serial passes of `make test` collect exactly the test files that mark a test
    serial, so a new serial file is not silently left out of them."""
    plan = planned("test", tmp_path / "venv").replace("\\\n", " ")
    serial = [
        shlex.split(line)
        for line in plan.splitlines()
        if "-m serial" in line or '-m "serial and' in line
    ]
    holding = sorted(
        str(path.relative_to(ROOT))
        for path in (ROOT / "tests").glob("test_*.py")
        if marks_serial(path)
    )
    assert len(serial) == 2 and "tests/test_notebooks.py" in holding
    for command in serial:
        assert sorted(word for word in command if word.startswith("tests/")) == holding, command
