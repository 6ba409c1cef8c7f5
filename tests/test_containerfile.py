"""The container definition runs `explorer serve` with arguments it accepts, from files that
exist (no container engine here: the image itself is not built in the suite)."""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
from pathlib import Path

import pytest

from explorer.cli import serve

ROOT = Path(__file__).resolve().parent.parent
CONTAINERFILE = ROOT / "Containerfile"


def instructions() -> list[tuple[str, str]]:
    """The Containerfile's (instruction, arguments) pairs, continuation lines joined."""
    joined = CONTAINERFILE.read_text(encoding="utf-8").replace("\\\n", " ")
    pairs = []
    for line in joined.splitlines():
        if line.strip() and not line.lstrip().startswith("#"):
            word, _, rest = line.strip().partition(" ")
            pairs.append((word.upper(), rest.strip()))
    return pairs


def test_the_container_runs_explorer_serve_with_valid_arguments() -> None:
    """ENTRYPOINT is the explorer command and CMD a `serve` its parser accepts, with the
    database in the /data volume."""
    found = dict(instructions())
    assert json.loads(found["ENTRYPOINT"]) == ["explorer"]
    command = json.loads(found["CMD"])
    parser = argparse.ArgumentParser(prog="explorer")
    serve.add_parser(parser.add_subparsers(dest="command", required=True).add_parser)
    args = parser.parse_args(command)
    assert args.command == "serve" and args.db.startswith("/data/")
    assert json.loads(found["VOLUME"]) == ["/data"]


def test_the_container_copies_files_that_exist() -> None:
    """Every COPY source is in the repository, and the image does not run as root."""
    copies = [rest.split()[:-1] for word, rest in instructions() if word == "COPY"]
    assert copies and all((ROOT / source).exists() for sources in copies for source in sources)
    user = [rest for word, rest in instructions() if word == "USER"]
    assert user and user[-1] not in ("root", "0")


@pytest.mark.skipif(shutil.which("hadolint") is None, reason="hadolint is not installed")
def test_hadolint_accepts_the_containerfile() -> None:
    """hadolint, where installed, finds nothing to say."""
    done = subprocess.run(
        ["hadolint", str(CONTAINERFILE)], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stdout + done.stderr
