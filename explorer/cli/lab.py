"""``explorer lab``: the platform and JupyterLab together, the Binder experience on a laptop.

It starts ``explorer serve`` as a child process, waits for the ``REST <url>`` line it prints
once it answers, runs ``jupyter lab`` with ``EXPLORER_BASE_URL`` set to that URL (so every
notebook, in every kernel, shares the one live platform, as on Binder), and stops the
platform when JupyterLab exits, however it exits.

JupyterLab opens the user's own copy of the recipes (:mod:`explorer.cli.recipes`), so running
and saving a recipe never writes outputs into the recipes themselves (``notebooks/``, in a wheel
``explorer/recipes/``). It starts without
JupyterLab's news pop-up and update check: ``fetchNews`` and ``checkForUpdates`` of
``@jupyterlab/apputils-extension:notification`` default to off through a
``labconfig/default_setting_overrides.json`` on ``JUPYTER_CONFIG_PATH`` (a choice the user
makes in Settings still wins), plus ``--LabApp.check_for_updates_class``.

Why a child process rather than the platform in a thread of this process: ``explorer lab`` is
then only a supervisor of two processes (:mod:`explorer.core.processes`), the platform keeps its
own event loop, logs and signal handling, and none of it mixes with JupyterLab's terminal. The
platform runs in its own session, so the Ctrl-C meant for JupyterLab (which asks before it
shuts down) does not reach it; this process ignores that Ctrl-C too and, once JupyterLab is
gone, stops the platform by its PID (SIGINT, then SIGKILL after a grace period). SIGTERM to
this process unwinds it through the same cleanup, and on Linux the platform also gets SIGINT
if this process dies without cleaning up, so no platform is left behind.

The platform counts anonymous rate limits per client (``--limits-per-client``): every kernel
reaches it over loopback, and a re-run in a new kernel should not wait for the buckets an
earlier one used. The platform's database is the one ``explorer serve`` uses by default, so
what the notebooks write survives a restart; its output goes to ``platform.log`` beside the
database file (in the data folder for a PostgreSQL database). :func:`with_platform` runs any
command this way; the tests use it with short commands.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

from explorer.cli import paths, recipes
from explorer.core import processes
from explorer.core.processes import Child, ChildFailed

#: Seconds to wait for the platform's REST line (a new database is seeded first).
START_TIMEOUT = 120.0
#: Seconds the platform (and the command) get to exit before they are killed.
STOP_TIMEOUT = 10.0
#: JupyterLab setting defaults for the lab this command starts: no news, no update check.
LAB_DEFAULTS = {
    "@jupyterlab/apputils-extension:notification": {"fetchNews": "false", "checkForUpdates": False}
}
#: JupyterLab's documented server-side switch for the update check.
LAB_ARGUMENTS = ["--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate"]


def with_platform(
    command: Sequence[str],
    serve_arguments: Sequence[str],
    log: Path,
    *,
    env: dict[str, str] | None = None,
    announce: bool = True,
) -> int:
    """Run ``command`` in the foreground with ``EXPLORER_BASE_URL`` pointing at a platform
    started for it with ``serve_arguments`` (and ``env`` added to its environment); stop the
    platform when the command exits. The command's exit code; :class:`ChildFailed` if the
    platform does not start."""
    platform = processes.serve(serve_arguments, log, new_session=True, die_with_parent=True)
    try:
        platform.start().wait_ready(1, START_TIMEOUT)
        if announce:
            print(
                f"explorer lab: platform at {platform.address} (pid {platform.pid}, log {log})",
                flush=True,
            )
        variables = {**(env or {}), "EXPLORER_BASE_URL": platform.address}
        return processes.foreground(Child(command, env=variables, stop_signal=signal.SIGTERM))
    finally:
        platform.stop(STOP_TIMEOUT)


def lab_environment(config: Path) -> dict[str, str]:
    """The environment for a JupyterLab with :data:`LAB_DEFAULTS`, whose config folder
    ``config`` this writes; the user's own Jupyter config folders still apply after it."""
    overrides = config / "labconfig" / "default_setting_overrides.json"
    overrides.parent.mkdir(parents=True, exist_ok=True)
    overrides.write_text(json.dumps(LAB_DEFAULTS, indent=2) + "\n", encoding="utf-8")
    search = [str(config), *filter(None, [os.environ.get("JUPYTER_CONFIG_PATH")])]
    return {"JUPYTER_CONFIG_PATH": os.pathsep.join(search)}


def add_parser(add: Callable[..., argparse.ArgumentParser]) -> None:
    """Register ``explorer lab`` and its flags."""
    parser = add(
        "lab",
        help="start the platform, then JupyterLab on your copy of the recipes",
        usage="explorer lab [-h] [--port PORT] [--db DB] [--serve-arg ARG] [folder] "
        "[-- JUPYTERLAB ARGS]",
        description=(
            "Start `explorer serve` in the background, run JupyterLab with EXPLORER_BASE_URL "
            "pointing at it, and stop the platform when JupyterLab exits. Without a folder, "
            f"JupyterLab opens your copy of the recipes ({paths.recipes_copy()}), where "
            "recipes missing from it are copied from the installed package first (your edits are "
            "never overwritten). Arguments after `--` go to `jupyter lab`."
        ),
    )
    parser.add_argument(
        "folder",
        nargs="?",
        default=None,
        help="folder to open as is (default: your copy of the recipes)",
    )
    parser.add_argument(
        "--port", type=int, default=0, help="the platform's REST port (default 0: a free one)"
    )
    parser.add_argument(
        "--db",
        type=paths.database_file,
        default=None,
        help=f"the platform's SQLite file ({paths.default_db()}) or postgresql:// URL",
    )
    parser.add_argument(
        "--serve-arg",
        action="append",
        default=[],
        metavar="ARG",
        help="one more `explorer serve` argument (repeatable), e.g. --serve-arg=--no-simulate",
    )
    parser.add_argument("jupyter_args", nargs=argparse.REMAINDER, help=argparse.SUPPRESS)


def _open_folder(folder: str | None) -> Path:
    """The folder JupyterLab opens: the one given, else the user's copy of the recipes,
    brought up to date (and said where) first."""
    if folder is not None:
        return Path(folder)
    target = paths.recipes_copy()
    copied = recipes.copy_missing(recipes.SOURCE, target)
    print(
        f"explorer lab: your copy of the recipes is {target} ({len(copied)} new from "
        f"{recipes.SOURCE}/; your edits are kept: delete a file there to get it afresh)",
        flush=True,
    )
    return target


def run(args: argparse.Namespace) -> int:
    """The ``explorer lab`` command."""
    try:
        import jupyterlab  # noqa: F401
    except ImportError:
        print(
            "explorer lab: JupyterLab is not installed; pip install 'explorer-livestream[lab]' "
            "(or run `make lab`, which does)",
            file=sys.stderr,
        )
        return 2
    db = args.db or str(paths.default_db())
    log = paths.platform_log(db)
    # One person's lab: each kernel's client gets its own anonymous buckets (on loopback only).
    serve = ["--port", str(args.port), "--db", db, "--limits-per-client", *args.serve_arg]
    folder, extra = args.folder, [a for a in args.jupyter_args if a != "--"]
    if folder is not None and folder.startswith("-"):
        # argparse hands the first word after `--` to the optional folder: it is JupyterLab's.
        folder, extra = None, [folder, *extra]
    if hasattr(os, "geteuid") and os.geteuid() == 0 and "--allow-root" not in extra:
        extra.append("--allow-root")  # JupyterLab refuses root otherwise (containers, CI)
    command = [
        *(sys.executable, "-m", "jupyter", "lab", str(_open_folder(folder))),
        *LAB_ARGUMENTS,
        *extra,
    ]
    env = lab_environment(paths.data_dir() / "jupyter-config")
    try:
        return with_platform(command, serve, log, env=env)
    except ChildFailed as exc:
        print(f"explorer lab: {exc}", file=sys.stderr)
        return 1
