"""``explorer lab``: a platform beside a command (JupyterLab), stopped when the command exits."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from explorer import cli, lab

FETCH = (
    "import os, httpx; url = os.environ['EXPLORER_BASE_URL']; "
    "print('TOKEN', httpx.get(url + '/channels/streamer', timeout=10).json()['token']); "
    "raise SystemExit(3)"
)
SMALL = ["--port", "0", "--db", ":memory:", "--channels", "50", "--no-simulate"]


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def test_command_sees_the_platform_which_stops_after(
    tmp_path: Path, capfd: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The command gets EXPLORER_BASE_URL of a live platform; its exit code is returned and the
    platform's process is gone afterwards."""
    started: list[lab.ServedPlatform] = []
    original = lab.ServedPlatform.start

    def remember(self: lab.ServedPlatform) -> lab.ServedPlatform:
        started.append(self)
        return original(self)

    monkeypatch.setattr(lab.ServedPlatform, "start", remember)
    code = lab.with_platform([sys.executable, "-c", FETCH], SMALL, tmp_path / "platform.log")
    assert code == 3
    assert "TOKEN streamer" in capfd.readouterr().out
    pid = started[0].pid
    assert pid is not None and not _alive(pid)
    assert started[0].process is not None and started[0].process.returncode == 0
    assert "REST http://" in (tmp_path / "platform.log").read_text()


def test_platform_that_fails_to_start_is_reported(tmp_path: Path) -> None:
    """A platform that exits before answering raises PlatformFailed quoting its log."""
    log = tmp_path / "platform.log"
    with pytest.raises(lab.PlatformFailed, match="must be positive"):
        lab.with_platform([sys.executable, "-c", "pass"], [*SMALL, "--chat-nodes", "0"], log)


def test_lab_runs_jupyterlab_on_the_recipes(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """`explorer lab` runs `jupyter lab notebooks` with the platform's flags and extra
    arguments after `--`, and keeps the platform's log beside its database."""
    seen: dict[str, object] = {}

    def fake(command: list[str], serve: list[str], log: Path, **_: object) -> int:
        seen.update(command=command, serve=serve, log=log)
        return 0

    monkeypatch.setattr(lab, "with_platform", fake)
    monkeypatch.chdir(Path(__file__).resolve().parent.parent)
    db = tmp_path / "lab.db"
    assert cli.main(["lab", "--db", str(db), "--", "--no-browser"]) == 0
    command = seen["command"]
    assert isinstance(command, list)
    assert command[:5] == [sys.executable, "-m", "jupyter", "lab", "notebooks"]
    assert "--no-browser" in command
    assert seen["serve"] == ["--port", "0", "--db", str(db)]
    assert seen["log"] == tmp_path / "platform.log"


def test_lab_is_registered_with_its_help(capsys: pytest.CaptureFixture[str]) -> None:
    """`explorer lab --help` describes the command."""
    with pytest.raises(SystemExit) as exited:
        cli.main(["lab", "--help"])
    assert exited.value.code == 0
    assert "JupyterLab" in capsys.readouterr().out


def test_sigterm_stops_the_command_and_the_platform(tmp_path: Path) -> None:
    """SIGTERM to `explorer lab` ends the command and stops the platform before exiting."""
    script = (
        "import sys; from pathlib import Path; from explorer import lab; "
        "sleeper = [sys.executable, '-c', 'import time; time.sleep(60)']; "
        f"raise SystemExit(lab.with_platform(sleeper, {SMALL!r}, Path({str(tmp_path)!r}) / 'log'))"
    )
    process = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    assert process.stdout is not None
    line = process.stdout.readline()
    platform = int(line.split("(pid ")[1].split(",")[0])
    assert _alive(platform)
    time.sleep(0.5)  # the command is started
    process.send_signal(signal.SIGTERM)
    assert process.wait(30) == 128 + signal.SIGTERM
    assert not _alive(platform)


def test_ctrl_c_reaches_the_command_not_explorer_lab(tmp_path: Path) -> None:
    """Ctrl-C (SIGINT to the terminal's process group) interrupts the command; explorer lab
    outlives it, stops the platform and returns the command's exit code."""
    waiter = (
        "import time\n"
        "print('READY', flush=True)\n"
        "try:\n    time.sleep(60)\n"
        "except KeyboardInterrupt:\n    raise SystemExit(7)\n"
    )
    script = (
        "import signal, sys; from pathlib import Path; from explorer import lab; "
        "signal.signal(signal.SIGINT, signal.default_int_handler); "
        f"command = [sys.executable, '-c', {waiter!r}]; "
        f"raise SystemExit(lab.with_platform(command, {SMALL!r}, Path({str(tmp_path)!r}) / 'log'))"
    )
    process = subprocess.Popen(
        [sys.executable, "-c", script], stdout=subprocess.PIPE, text=True, start_new_session=True
    )
    assert process.stdout is not None
    platform = int(process.stdout.readline().split("(pid ")[1].split(",")[0])
    assert process.stdout.readline().strip() == "READY"
    os.killpg(process.pid, signal.SIGINT)
    assert process.wait(30) == 7
    assert not _alive(platform)
