"""``explorer lab``: a platform beside a command (JupyterLab), stopped when the command exits;
JupyterLab on the user's copy of the recipes, without its news pop-up."""

from __future__ import annotations

import os
import re
import secrets
import signal
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from explorer import cli
from explorer.cli import lab, recipes
from explorer.core import processes
from tests.test_processes import alive

pytestmark = pytest.mark.any_engine("JupyterLab's processes, on SQLite whatever the switch")


FETCH = (
    "import os, httpx; url = os.environ['EXPLORER_BASE_URL']; "
    "print('TOKEN', httpx.get(url + '/channels/streamer', timeout=10).json()['token']); "
    "raise SystemExit(3)"
)
ROOT = Path(__file__).resolve().parent.parent
#: What the copy gets: the recipes and the realism page they link to.
NOTEBOOKS = ROOT / "notebooks"
#: Every file of the recipes' folder (the recipes, the page they cite, their data), in the order
#: the copy walks them; what a local run of the recipes wrote and hidden files aside.
RECIPES = sorted(
    path
    for path in NOTEBOOKS.rglob("*")
    if path.is_file()
    and not any(part.startswith(".") for part in path.relative_to(NOTEBOOKS).parts)
    and path.relative_to(NOTEBOOKS).parts[0] != recipes.OUTPUTS
)
SMALL = ["--port", "0", "--db", ":memory:", "--channels", "50", "--no-simulate"]


def _announced_pid(output: str) -> int:
    """The platform's PID from with_platform's "platform at URL (pid N, log F)" line."""
    return int(output.split("(pid ")[1].split(",")[0])


def test_command_sees_the_platform_which_stops_after(
    tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    """The command gets EXPLORER_BASE_URL of a live platform; its exit code is returned and the
    platform's process is gone afterwards."""
    code = lab.with_platform([sys.executable, "-c", FETCH], SMALL, tmp_path / "platform.log")
    assert code == 3
    out = capfd.readouterr().out
    assert "TOKEN streamer" in out
    assert not alive(_announced_pid(out))
    assert "REST http://" in (tmp_path / "platform.log").read_text()


def test_platform_that_fails_to_start_is_reported(tmp_path: Path) -> None:
    """A platform that exits before answering raises ChildFailed quoting its log."""
    log = tmp_path / "platform.log"
    with pytest.raises(processes.ChildFailed, match="must be positive"):
        lab.with_platform([sys.executable, "-c", "pass"], [*SMALL, "--chat-nodes", "0"], log)


def test_lab_runs_jupyterlab_on_the_users_copy(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`explorer lab`, started in an empty folder, copies the package's recipes to the data
    folder, says where, and runs `jupyter lab`
    there with the platform's flags, the arguments after `--` and the quiet lab settings;
    the platform's log sits beside its database."""
    seen: dict[str, object] = {}

    def fake(command: list[str], serve: list[str], log: Path, **options: object) -> int:
        seen.update(command=command, serve=serve, log=log, **options)
        return 0

    monkeypatch.setattr(lab, "with_platform", fake)
    (tmp_path / "empty").mkdir()
    monkeypatch.chdir(tmp_path / "empty")
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    db = tmp_path / "lab.db"
    assert cli.main(["lab", "--db", str(db), "--", "--no-browser"]) == 0
    copy = tmp_path / "data" / "explorer" / "notebooks"
    tops = {p.relative_to(NOTEBOOKS).parts[0] for p in RECIPES}
    assert sorted(p.name for p in copy.iterdir()) == sorted(tops)
    assert f"your copy of the recipes is {copy} ({len(RECIPES)} new" in capsys.readouterr().out
    command = seen["command"]
    assert isinstance(command, list)
    assert command[:5] == [sys.executable, "-m", "jupyter", "lab", str(copy)]
    assert "--no-browser" in command and lab.LAB_ARGUMENTS[0] in command
    assert seen["serve"] == ["--port", "0", "--db", str(db), "--limits-per-client"]
    assert seen["log"] == tmp_path / "platform.log"
    env = seen["env"]
    assert isinstance(env, dict)
    assert env["JUPYTER_CONFIG_PATH"].split(os.pathsep)[0] == str(
        tmp_path / "data" / "explorer" / "jupyter-config"
    )


def test_copy_keeps_the_users_edits(tmp_path: Path) -> None:
    """Recipes already in the copy are never overwritten; only missing ones are copied."""
    copy = tmp_path / "copy"
    copy.mkdir()
    edited = copy / RECIPES[0].name
    edited.write_text("my edits")
    copied = recipes.copy_missing(recipes.SOURCE, copy)
    assert [p.relative_to(copy) for p in copied] == [p.relative_to(NOTEBOOKS) for p in RECIPES[1:]]
    assert edited.read_text() == "my edits"
    assert recipes.copy_missing(recipes.SOURCE, copy) == []


@pytest.mark.timeout(90)
def test_jupyterlab_starts_without_news_or_update_check(tmp_path: Path) -> None:
    """The JupyterLab that `explorer lab` configures defaults fetchNews and checkForUpdates
    to off (its settings API says so), and its server-side update check is off."""
    env = {
        **lab.lab_environment(tmp_path / "config"),
        "JUPYTERLAB_SETTINGS_DIR": str(tmp_path / "user-settings"),
        "JUPYTER_RUNTIME_DIR": str(tmp_path / "runtime"),
    }
    token = secrets.token_hex(8)
    command = [
        *(sys.executable, "-m", "jupyter", "lab", str(tmp_path), "--no-browser", "--allow-root"),
        *("--ServerApp.ip=127.0.0.1", "--ServerApp.port=0", f"--ServerApp.token={token}"),
        *lab.LAB_ARGUMENTS,
    ]
    server = processes.Child(
        command, tmp_path / "lab.log", env=env, ready=lambda line: "/lab?token=" in line
    )
    try:
        found = re.search(r"(http://\S+)/lab\?", server.start().wait_ready(1, 60).lines[0])
        assert found, server.lines
        url = found.group(1)
        plugin = "@jupyterlab/apputils-extension:notification"
        reply = httpx.get(f"{url}/lab/api/settings/{plugin}", params={"token": token}, timeout=10)
        defaults = reply.json()["schema"]["properties"]
        assert defaults["fetchNews"]["default"] == "false"
        assert defaults["checkForUpdates"]["default"] is False
    finally:
        server.stop()


def test_lab_is_registered_with_its_help(capsys: pytest.CaptureFixture[str]) -> None:
    """`explorer lab --help` describes the command."""
    with pytest.raises(SystemExit) as exited:
        cli.main(["lab", "--help"])
    assert exited.value.code == 0
    assert "JupyterLab" in capsys.readouterr().out


def test_sigterm_stops_the_command_and_the_platform(tmp_path: Path) -> None:
    """SIGTERM to `explorer lab` ends the command and stops the platform before exiting."""
    script = (
        "import sys; from pathlib import Path; from explorer.cli import lab; "
        "sleeper = [sys.executable, '-c', 'import time; print(\\'READY\\', flush=True); "
        "time.sleep(60)']; "
        f"raise SystemExit(lab.with_platform(sleeper, {SMALL!r}, Path({str(tmp_path)!r}) / 'log'))"
    )
    command = [sys.executable, "-c", script]
    with subprocess.Popen(command, stdout=subprocess.PIPE, text=True) as process:
        assert process.stdout is not None
        platform = _announced_pid(process.stdout.readline())
        assert alive(platform)
        assert process.stdout.readline().strip() == "READY"  # the command is started
        process.send_signal(signal.SIGTERM)
        assert process.wait(30) == 128 + signal.SIGTERM
    assert not alive(platform)


def test_ctrl_c_reaches_the_command_not_explorer_lab(tmp_path: Path) -> None:
    """Ctrl-C (SIGINT to the terminal's process group) interrupts the command; explorer lab
    outlives it, stops the platform and returns the command's exit code."""
    waiter = (
        "import time\n"
        "try:\n    print('READY', flush=True)\n    time.sleep(60)\n"
        "except KeyboardInterrupt:\n    raise SystemExit(7)\n"
    )
    script = (
        "import signal, sys; from pathlib import Path; from explorer.cli import lab; "
        "signal.signal(signal.SIGINT, signal.default_int_handler); "
        f"command = [sys.executable, '-c', {waiter!r}]; "
        f"raise SystemExit(lab.with_platform(command, {SMALL!r}, Path({str(tmp_path)!r}) / 'log'))"
    )
    command = [sys.executable, "-c", script]
    with subprocess.Popen(
        command, stdout=subprocess.PIPE, text=True, start_new_session=True
    ) as process:
        assert process.stdout is not None
        platform = _announced_pid(process.stdout.readline())
        assert process.stdout.readline().strip() == "READY"
        os.killpg(process.pid, signal.SIGINT)
        assert process.wait(30) == 7
    assert not alive(platform)


def test_copy_leaves_out_what_recipes_wrote(tmp_path: Path) -> None:
    """A capture that a recipe run in place left in captures/ is not copied to the user."""
    source = tmp_path / "notebooks"
    (source / "captures" / "top30").mkdir(parents=True)
    (source / "captures" / "top30" / "part.parquet").write_bytes(b"data")
    (source / "01-recipe.ipynb").write_text("{}")
    copied = recipes.copy_missing(source, tmp_path / "copy")
    assert [p.name for p in copied] == ["01-recipe.ipynb"]
