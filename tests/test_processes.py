"""explorer/core/processes.py: ready lines awaited with a timeout, output logged, children stopped
by PID (grace, then SIGKILL), and every child still running stopped when this process exits."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from explorer.core import processes
from explorer.core.processes import Child, ChildFailed

pytestmark = pytest.mark.any_engine("process plumbing, on SQLite whatever the switch")


def _python(code: str) -> list[str]:
    return [sys.executable, "-c", code]


def alive(pid: int) -> bool:
    """Whether a process of that id exists (tests/test_lab.py uses it too)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def test_ready_lines_are_collected_and_all_output_is_logged(tmp_path: Path) -> None:
    """wait_ready returns once the ready lines came; every line, stderr too, is in the log."""
    code = (
        "import sys, time; print('noise'); print('READY one', flush=True); "
        "print('oops', file=sys.stderr, flush=True); print('READY two', flush=True); "
        "time.sleep(60)"
    )
    child = Child(_python(code), tmp_path / "c.log", ready=lambda line: line.startswith("READY"))
    try:
        assert child.start().wait_ready(2, 30).lines == ["READY one", "READY two"]
        assert child.address == "one"
    finally:
        assert child.stop() is not None
    assert set(child.log_tail().split()) >= {"noise", "oops", "READY", "one", "two"}


def test_a_child_that_exits_before_it_is_ready_fails_with_its_log(tmp_path: Path) -> None:
    """A child that exits without its ready line raises ChildFailed quoting its output."""
    child = Child(_python("print('no luck'); raise SystemExit(4)"), tmp_path / "c.log")
    child.ready = lambda line: line.startswith("READY")
    with pytest.raises(ChildFailed, match="no luck"):
        child.start().wait_ready(1, 30)
    assert child.process.returncode == 4


def test_a_silent_child_is_killed_when_the_wait_times_out(tmp_path: Path) -> None:
    """A child silent past the timeout raises ChildFailed and is killed."""
    child = Child(_python("import time; time.sleep(60)"), tmp_path / "c.log")
    with pytest.raises(ChildFailed, match="did not start"):
        child.start().wait_ready(1, 0.2)
    assert not child.running() and not alive(child.pid)


def test_stop_kills_a_child_that_ignores_its_stop_signal(tmp_path: Path) -> None:
    """stop() sends the stop signal, then SIGKILL once the grace period is over."""
    code = (
        "import signal, time; signal.signal(signal.SIGINT, signal.SIG_IGN); "
        "print('READY', flush=True); time.sleep(60)"
    )
    child = Child(_python(code), tmp_path / "c.log").start().wait_ready()
    assert child.stop(grace=0.2) == -9


def test_children_still_running_are_stopped_when_this_process_exits(tmp_path: Path) -> None:
    """A process that exits with a child still running stops it first (atexit)."""
    script = (
        "import sys; from pathlib import Path; from explorer.core.processes import Child; "
        "child = Child([sys.executable, '-c', 'import time; print(1, flush=True); "
        f"time.sleep(60)'], Path({str(tmp_path / 'c.log')!r})).start().wait_ready(); "
        "print(child.pid, flush=True)"
    )
    done = subprocess.run(_python(script), capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert not alive(int(done.stdout.split()[-1]))


def test_serve_waits_for_the_platform_rest_line(tmp_path: Path) -> None:
    """processes.serve starts `explorer serve` whose first ready line is its REST address."""
    arguments = ["--port", "0", "--db", ":memory:", "--channels", "50", "--no-simulate"]
    child = processes.serve(arguments, tmp_path / "p.log").start()
    try:
        child.wait_ready(2, 60)
        assert child.lines[0].startswith("REST http://127.0.0.1:")
        assert child.lines[1].startswith("CHAT ws://127.0.0.1:")
    finally:
        assert child.stop() == 0
