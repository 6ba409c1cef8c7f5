"""binder/: what repo2docker makes of it, and what ``binder/start`` does at launch.

``repo2docker --no-build`` (a dry run) detects the build packs and prints the Dockerfile it
would build, without contacting a container engine: in repo2docker 2024-2026 ``build()`` only
asks for the engine when it is not a dry run, and ``find_image()`` answers "not built" for dry
runs. The test points ``DOCKER_HOST`` at a socket that does not exist to prove it.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

pytestmark = pytest.mark.any_engine("Binder's files and start-up")


ROOT = Path(__file__).resolve().parent.parent
BINDER = ROOT / "binder"
README = ROOT / "README.md"


@pytest.fixture(scope="module")
def dockerfile(tmp_path_factory: pytest.TempPathFactory) -> str:
    """The Dockerfile repo2docker would build for this repository."""
    repo2docker = Path(sys.executable).parent / "repo2docker"
    env = {**os.environ, "DOCKER_HOST": f"unix://{tmp_path_factory.mktemp('no-docker')}/x.sock"}
    done = subprocess.run(
        [str(repo2docker), "--no-build", "--debug", str(ROOT)],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout


def test_binder_python_is_3_11(dockerfile: str) -> None:
    """runtime.txt gives Binder Python 3.11 (repo2docker's 3.11 environment lock)."""
    assert (BINDER / "runtime.txt").read_text().strip() == "python-3.11"
    assert "environment-2epy-2d3-2e11" in dockerfile


def test_binder_installs_the_repository(dockerfile: str) -> None:
    """requirements.txt installs this repository with the lab extra, and jupyter-server-proxy
    (the browser's way to the platform's /go page), after the repo is copied."""
    lines = [
        line.strip()
        for line in (BINDER / "requirements.txt").read_text().splitlines()
        if line.strip() and not line.startswith("#")
    ]
    assert lines == [".[lab]", "jupyter-server-proxy>=4.1"]
    assert 'pip install --no-cache-dir -r "binder/requirements.txt"' in dockerfile
    copy = re.search(r"COPY --chown=\S+ src/ \$\{REPO_DIR\}/", dockerfile)
    assert copy, "the repository is copied into the image"
    assert dockerfile.find('-r "binder/requirements.txt"', copy.end()) > 0


def test_binder_launches_through_start(dockerfile: str) -> None:
    """The image's entry point runs binder/start, which is executable."""
    assert re.search(r'ENV R2D_ENTRYPOINT="\$\{REPO_DIR\}/binder/start"', dockerfile)
    assert os.access(BINDER / "start", os.X_OK)


def test_start_exports_the_platform_url(tmp_path: Path) -> None:
    """binder/start serves the platform from $HOME and runs its command with
    EXPLORER_BASE_URL pointing at it, and JupyterLab's news and update check off."""
    env = {
        **os.environ,
        "HOME": str(tmp_path),
        "EXPLORER_PORT": "0",
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
    }
    env.pop("EXPLORER_BASE_URL", None)
    command = (
        "import os; print('URL', os.environ['EXPLORER_BASE_URL']); "
        "print('CONFIG', os.environ['JUPYTER_CONFIG_PATH'])"
    )
    done = subprocess.run(
        [str(BINDER / "start"), sys.executable, "-c", command],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    announced = re.search(r"platform at (\S+) \(pid (\d+),", done.stdout)
    assert announced, done.stdout + done.stderr
    pid = int(announced.group(2))
    try:
        assert done.returncode == 0, done.stderr
        url = done.stdout.split("URL ", 1)[1].split()[0]
        config = Path(done.stdout.split("CONFIG ", 1)[1].split(os.pathsep)[0].strip())
        assert (config / "labconfig" / "default_setting_overrides.json").exists()
        assert url == announced.group(1)
        channel = httpx.get(f"{url}/channels/streamer", timeout=10).json()
        assert channel["token"] == "streamer"
        assert (tmp_path / ".explorer" / "platform.db").exists()
    finally:
        os.kill(pid, signal.SIGINT)


def test_readme_explains_binder_without_a_placeholder_link() -> None:
    """README says how to open the recipes on Binder once published, and links no Binder URL
    with a placeholder owner."""
    text = README.read_text()
    assert "mybinder.org/v2/gh/OWNER/REPOSITORY/HEAD?urlpath=lab/tree/notebooks" in text
    assert (ROOT / "notebooks").is_dir()
    assert not re.search(r"\]\(https://mybinder\.org/v2/gh/[^)]*OWNER", text)
