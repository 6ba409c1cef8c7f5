"""The documentation site (``mkdocs.yml``, ``docs/hooks.py``): it builds with warnings as
errors, every public name of the toolkit has a reference entry, the recipes, the security,
REST and chat pages are on it; and links are resolved against the repository, a missing target
failing the build."""

from __future__ import annotations

import importlib.util
import logging
import os
import subprocess
import sys
from pathlib import Path
from types import ModuleType, SimpleNamespace

import pytest

import explorer

pytestmark = pytest.mark.any_engine("the docs site's build and reference")


ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The site, built once with ``mkdocs build --strict`` (as ``make docs`` does)."""
    out = tmp_path_factory.mktemp("site")
    env = {**os.environ, "PYTHONPATH": str(ROOT), "NO_MKDOCS_2_WARNING": "1"}
    done = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(out)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-5000:]
    return out


@pytest.mark.timeout(300)
def test_every_public_name_has_a_reference_entry(site: Path) -> None:
    """The API reference has an entry (an anchor) for each name of explorer.__all__ and for
    the error tree, with the docstring's text, its Sphinx roles as code linking public
    names."""
    page = (site / "reference.html").read_text()
    missing = [name for name in explorer.__all__ if f'id="explorer.{name}"' not in page]
    assert not missing
    assert 'id="explorer.errors"' in page and 'id="explorer.Client.channels"' in page
    assert "Blocking client for the platform" in page
    assert ":class:" not in page and '<a href="#explorer.Chat"><code>Chat</code></a>' in page


@pytest.mark.timeout(300)
def test_the_pages_and_recipes_are_on_the_site(site: Path) -> None:
    """The README is the home page; the docs pages, SECURITY.md and every recipe (rendered,
    not executed) have a page; realism once docs/realism.md exists."""
    pages = ["index", "toolkit", "platform", "rest", "chat", "security", "storage", "fleet"]
    assert all((site / f"{name}.html").is_file() for name in pages)
    recipes = sorted((ROOT / "notebooks").glob("*.ipynb"))
    for recipe in recipes:
        html = (site / "notebooks" / f"{recipe.stem}.html").read_text()
        assert "jp-CodeCell" in html and "import explorer" in html
    assert (site / "realism.html").is_file() == (ROOT / "docs" / "realism.md").is_file()
    home = (site / "index.html").read_text()
    assert 'href="toolkit.html#collecting-over-time"' in home


@pytest.mark.timeout(300)
def test_search_works_from_disk(site: Path) -> None:
    """The search index also ships as a script (Material's offline plugin, whose pages load it
    when opened from disk, where fetching search_index.json fails), recipes included."""
    index = (site / "search" / "search_index.js").read_text()
    assert index.startswith("var __index = ")
    assert '"location":"notebooks/04-tour.html"' in index


def load_hooks() -> ModuleType:
    """docs/hooks.py as a module."""
    spec = importlib.util.spec_from_file_location("site_hooks", ROOT / "docs" / "hooks.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def page(uri: str) -> SimpleNamespace:
    """A stand-in for the page whose site path is ``uri``: the hook reads only that."""
    return SimpleNamespace(file=SimpleNamespace(src_uri=uri))


def test_links_are_resolved_against_the_repository(caplog: pytest.LogCaptureFixture) -> None:
    """A link to a page on the site becomes the page's site path, one to another repository
    file its path in code, one to nothing a warning (which fails the strict build)."""
    hooks = load_hooks()
    text = (
        "[sec](../SECURITY.md) [t](toolkit.md#x) [src](../explorer/recording/storage.py) "
        "[web](https://example.org) [gone](../no-such-file.md)"
    )
    with caplog.at_level(logging.WARNING, logger="mkdocs.plugins.explorer"):
        got = hooks.on_page_markdown(text, page("platform.md"), None, None)
    assert got == (
        "[sec](security.md) [t](toolkit.md#x) src (`explorer/recording/storage.py`) "
        "[web](https://example.org) [gone](../no-such-file.md)"
    )
    assert [r.getMessage() for r in caplog.records] == [
        "platform.md links to ../no-such-file.md, which does not exist"
    ]
    readme = hooks.on_page_markdown("![w](docs/live-widget.png)", page("index.md"), None, None)
    assert readme == "![w](live-widget.png)"
