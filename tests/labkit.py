"""JupyterLab for the browser tests: one real server on port 0 with a token, configured as
``explorer lab`` configures it (no news, no update check), its settings, workspaces, config
and runtime in the test's own folder, its kernels pointed at a platform."""

from __future__ import annotations

import re
import signal
import sys
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path

from explorer.cli import lab
from explorer.core import processes


@contextmanager
def jupyterlab(
    folder: Path,
    root: Path,
    token: str,
    platform_url: str,
    *,
    ip: str = "127.0.0.1",
    base_url: str = "/",
    env: Mapping[str, str] | None = None,
) -> Iterator[int]:
    """JupyterLab serving ``root`` at ``ip`` under ``base_url`` until the block ends, its
    kernels given ``EXPLORER_BASE_URL=platform_url`` and ``env``; yields its port."""
    serving = re.compile(rf"http://{re.escape(ip)}:(\d+){re.escape(base_url)}lab\?token=")
    environment = {
        **lab.lab_environment(folder / "lab-config"),
        "EXPLORER_BASE_URL": platform_url,
        "JUPYTERLAB_SETTINGS_DIR": str(folder / "lab-settings"),
        "JUPYTERLAB_WORKSPACES_DIR": str(folder / "lab-workspaces"),
        "JUPYTER_CONFIG_DIR": str(folder / "jupyter-config"),
        "JUPYTER_RUNTIME_DIR": str(folder / "jupyter-runtime"),
        **(env or {}),
    }
    command = [
        *(sys.executable, "-m", "jupyter", "lab", "--no-browser", "--allow-root"),
        *(f"--ServerApp.ip={ip}", "--ServerApp.port=0", f"--ServerApp.token={token}"),
        f"--ServerApp.base_url={base_url}",
        f"--ServerApp.root_dir={root}",
        *lab.LAB_ARGUMENTS,
    ]
    server = processes.Child(
        command,
        folder / "jupyterlab.log",
        env=environment,
        ready=lambda line: serving.search(line) is not None,
        stop_signal=signal.SIGTERM,
    )
    try:
        found = serving.search(server.start().wait_ready(1, 60).lines[0])
        assert found
        yield int(found.group(1))
    finally:
        server.stop(20)
