"""The distribution: the wheel and sdist build and pass ``twine check``, the wheel holds every
module of the source tree, and a fresh virtual environment outside the repository with only the
wheel (and its ``lab`` extra) installed runs ``explorer lab``'s copy of the recipes from an
empty folder, imports everything any recipe imports, and runs the tour recipe there against
the platform the wheel carries.

Every recipe runs top to bottom in ``tests/test_notebooks.py``, from the source tree: what
only a wheel can break is what it holds (modules, recipes, data), what its ``lab`` extra
installs (every import of every recipe) and its commands (``explorer lab``, ``explorer
serve``), and one recipe proves a kernel of the environment reaches its platform (REST, chat,
a signed-in message); running the others here too cost minutes of CPU for nothing more.

One module fixture builds (``python -m build --no-isolation``: the build backend is the one
installed, nothing is fetched for the build; the wheel is built from the sdist) and one
installs: a virtual environment made without pip of its own (``ensurepip`` installs a pip
nothing here uses, seconds of CPU), into which this environment's pip installs the wheel with
its extra (``pip --python``: the same resolution and install as the user's ``pip install``,
with a current pip, where the ``venv`` module's bundled one took more than twice its CPU),
the dependencies from the package index (pip's cache makes a second run quick where the index
allows caching), with ``--no-compile``: pip would otherwise byte-compile every module of the
~120 packages, most of the install's CPU time, where the environment's commands compile only
the modules they import, once.
"""

from __future__ import annotations

import ast
import json
import os
import signal
import subprocess
import sys
import tarfile
import time
import zipfile
from collections.abc import Iterator
from pathlib import Path

import nbformat
import pytest

from tests.recipe_runs import CELL_TIMEOUT

pytestmark = pytest.mark.any_engine("the wheel's venv (no psycopg): on SQLite whatever the switch")


ROOT = Path(__file__).resolve().parent.parent
RECIPES = sorted(p.name for p in (ROOT / "notebooks").glob("*.ipynb"))
#: What the recipes read (recipe 7's chat logs and the page citing them), under notebooks/.
DATA = sorted(
    p.relative_to(ROOT / "notebooks").as_posix()
    for p in (ROOT / "notebooks" / "data").rglob("*")
    if p.is_file()
)
RUNNER = Path(__file__).resolve().parent / "recipe_runs.py"
#: The recipe run in the wheel's environment: it reads the platform over REST, joins a chat,
#: signs in and sends a message, without the minutes of CPU recipes 5 and 6 spend.
TOUR = "04-tour.ipynb"


def recipe_imports() -> list[str]:
    """Every import statement of every recipe's code cells, once each, in order."""
    found: dict[str, None] = {}
    for name in RECIPES:
        notebook = nbformat.read(ROOT / "notebooks" / name, as_version=4)
        for cell in notebook.cells:
            if cell.cell_type == "code":
                for node in ast.walk(ast.parse(cell.source)):
                    if isinstance(node, ast.Import | ast.ImportFrom):
                        found[ast.unparse(node)] = None
    return list(found)


def run(
    command: list[str],
    timeout: float,
    env: dict[str, str] | None = None,
    cwd: Path | None = None,
) -> str:
    """Run ``command`` (in ``cwd``, with ``env``), fail with its output unless it exits 0;
    its stdout."""
    done = subprocess.run(
        command, capture_output=True, text=True, timeout=timeout, env=env, cwd=cwd
    )
    output = f"{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    assert done.returncode == 0, f"{command[:4]} exited {done.returncode}:\n{output}"
    return done.stdout


def wait_for_url(log: Path, platform: subprocess.Popen[bytes], timeout: float = 180) -> str:
    """The URL of the ``REST <url>`` line the platform writes to ``log`` once it answers."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and platform.poll() is None:
        for line in log.read_text().splitlines():
            if line.startswith("REST "):
                return line.split()[1]
        time.sleep(0.1)
    raise AssertionError(f"the platform did not start:\n{log.read_text()[-3000:]}")


@pytest.fixture(scope="module")
def dist(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The folder holding the built sdist and wheel."""
    out = tmp_path_factory.mktemp("dist")
    # No --sdist/--wheel: the wheel is built from the sdist, so it holds what the sdist does
    # (and no stale build/ leftovers of the work tree).
    command = [sys.executable, "-m", "build", "--no-isolation"]
    run([*command, "--outdir", str(out), str(ROOT)], timeout=300)
    return out


def the(dist: Path, pattern: str) -> Path:
    """The one file in ``dist`` matching ``pattern``."""
    (found,) = dist.glob(pattern)
    return found


def test_wheel_and_sdist_pass_twine_check(dist: Path) -> None:
    """twine check accepts both (metadata, README rendering); the name is the distribution's."""
    files = [the(dist, "*.whl"), the(dist, "*.tar.gz")]
    run([sys.executable, "-m", "twine", "check", "--strict", *map(str, files)], timeout=120)
    assert all(f.name.startswith("explorer_livestream-") for f in files)


def test_wheel_and_sdist_carry_the_recipes(dist: Path) -> None:
    """The sdist holds every recipe and its data under notebooks/, the wheel built from it each
    under explorer/recipes/ (where `explorer lab` finds them) with the realism page they link
    to, and the typing marker."""
    assert "data/README.md" in DATA
    with zipfile.ZipFile(the(dist, "*.whl")) as wheel:
        names = set(wheel.namelist())
    assert {f"explorer/recipes/{name}" for name in [*RECIPES, *DATA, "realism.md"]} <= names
    assert "explorer/py.typed" in names
    with tarfile.open(the(dist, "*.tar.gz")) as sdist:
        members = {m.name.split("/", 1)[1] for m in sdist.getmembers() if "/" in m.name}
    assert {f"notebooks/{name}" for name in [*RECIPES, *DATA]} <= members


def test_wheel_holds_every_module_of_the_source_tree(dist: Path) -> None:
    """Each module of explorer/ in the repository is in the wheel (no subpackage left out)."""
    modules = {p.relative_to(ROOT).as_posix() for p in (ROOT / "explorer").rglob("*.py")}
    with zipfile.ZipFile(the(dist, "*.whl")) as wheel:
        names = set(wheel.namelist())
    assert len(modules) > 100 and not modules - names, sorted(modules - names)


def test_wheel_declares_its_license_and_classifiers(dist: Path) -> None:
    """The wheel's metadata names the MIT license (an SPDX expression) and carries its text,
    with trove classifiers."""
    with zipfile.ZipFile(the(dist, "*.whl")) as wheel:
        info = next(n for n in wheel.namelist() if n.endswith(".dist-info/METADATA"))
        metadata = wheel.read(info).decode()
        license_text = wheel.read(info.replace("METADATA", "licenses/LICENSE")).decode()
    assert "License-Expression: MIT" in metadata.splitlines()
    assert license_text == (ROOT / "LICENSE").read_text() and "MIT License" in license_text
    assert "Classifier: Framework :: Jupyter :: JupyterLab" in metadata.splitlines()


@pytest.fixture(scope="module")
def venv(
    dist: Path, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[Path, dict[str, str]]]:
    """A fresh virtual environment with the wheel and its lab extra, and an environment for
    its commands: a home, data folder and Jupyter folders of its own, no PYTHONPATH."""
    base = tmp_path_factory.mktemp("fresh")
    run([sys.executable, "-m", "venv", "--without-pip", str(base / "venv")], timeout=120)
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("PYTHON", "JUPYTER", "VIRTUAL_ENV", "EXPLORER_"))
    }
    env.update(
        HOME=str(base / "home"),
        XDG_DATA_HOME=str(base / "data"),
        JUPYTER_DATA_DIR=str(base / "jupyter-data"),
        JUPYTER_RUNTIME_DIR=str(base / "jupyter-runtime"),
        PIP_DISABLE_PIP_VERSION_CHECK="1",
        # The user's pip cache, though HOME is new: a second run downloads nothing.
        PIP_CACHE_DIR=os.environ.get("PIP_CACHE_DIR", str(Path.home() / ".cache" / "pip")),
        PATH=f"{base / 'venv' / 'bin'}{os.pathsep}{env['PATH']}",
    )
    pip = [sys.executable, "-m", "pip", "--python", str(base / "venv" / "bin" / "python")]
    pip += ["install", "--quiet", "--no-compile"]
    run([*pip, f"{the(dist, '*.whl')}[lab]"], timeout=900, env=env, cwd=base)
    yield base, env


@pytest.mark.timeout(900)
def test_explorer_lab_imports_and_a_recipe_run_from_the_wheel(
    venv: tuple[Path, dict[str, str]],
) -> None:
    """In the fresh environment, from an empty folder: explorer is imported from the venv,
    `explorer lab` copies all the recipes and their data to the user's data folder and starts
    JupyterLab beside the platform, every import of every recipe succeeds, and the tour recipe
    runs there top to bottom without an error against the platform `explorer serve` starts."""
    base, env = venv
    empty = base / "empty"
    empty.mkdir()
    python = str(base / "venv" / "bin" / "python")
    where = run([python, "-c", "import explorer; print(explorer.__file__)"], 60, env=env, cwd=empty)
    assert where.startswith(str(base / "venv")), where
    explorer = str(base / "venv" / "bin" / "explorer")
    # JupyterLab's --version makes the lab it starts print its version and exit at once.
    said = run([explorer, "lab", "--", "--version"], timeout=300, env=env, cwd=empty)
    copy = base / "data" / "explorer" / "notebooks"
    new = len(RECIPES) + len(DATA) + 1  # and realism.md
    assert f"your copy of the recipes is {copy} ({new} new" in said
    assert sorted(p.name for p in copy.glob("*.ipynb")) == RECIPES
    assert all(
        (copy / name).read_bytes() == (ROOT / "notebooks" / name).read_bytes() for name in DATA
    )
    assert (copy / "realism.md").read_text() == (ROOT / "docs" / "realism.md").read_text()
    assert list(empty.iterdir()) == []
    imports = recipe_imports()
    assert "import pyarrow as pa" in imports and "import explorer" in imports
    run([python, "-c", "\n".join(imports)], 120, env=env, cwd=empty)
    # The tour against a platform the wheel serves (as explorer lab does).
    log = base / "platform.log"
    serve = [explorer, "serve", "--port", "0", "--channels", "1000"]
    # SQLite whatever the suite's switch says: the wheel's venv has the lab extra, no psycopg.
    serve += ["--db", str(base / "platform.db")]
    with log.open("w") as output:
        platform = subprocess.Popen(serve, stdout=output, stderr=output, env=env)
    try:
        url = wait_for_url(log, platform)
        runner = [python, str(RUNNER), str(copy), TOUR]
        results = json.loads(
            run(runner, CELL_TIMEOUT * 2, env={**env, "EXPLORER_BASE_URL": url}, cwd=empty)
        )
    finally:
        platform.send_signal(signal.SIGINT)
        platform.wait(30)
    assert sorted(results) == [TOUR] and results[TOUR]["error"] is None, results[TOUR]["error"]
