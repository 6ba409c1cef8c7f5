"""As on Binder: a browser that reaches JupyterLab but not the kernel's loopback sees whole
widgets. Every emoticon is an image it loaded, the shortcode sign-in's ``/go`` page opens
(through the Jupyter server's proxy) and approves, and recipes 4 and 5 run to their end with
every plot and widget drawn.

JupyterLab serves a copy of notebooks/ at ``127.0.0.2`` under the path prefix Binder gives
(``/user/binder/``), with ``JUPYTERHUB_SERVICE_PREFIX`` set as a hub sets it, and
jupyter-server-proxy installed as ``binder/requirements.txt`` installs it; the kernels reach
a platform on ``127.0.0.1``. Playwright's request routing (``BrowserContext.route``) aborts
every request of the page, or of a tab it opens, to ``127.0.0.1`` or ``localhost``, so
nothing that only the kernel can reach can be what the page shows; the test also asserts that
the page never even asked. Debian's chromium only (``executable_path``); the test skips
without it.
"""

from __future__ import annotations

import re
import secrets
import shutil
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import nbformat
import pytest
from playwright.sync_api import BrowserContext, Page, Route, sync_playwright
from playwright.sync_api import TimeoutError as PlaywrightTimeout

from explorer.core.jupyterhub import PREFIX
from tests import labkit
from tests.databases import start
from tests.test_browser import CHROMIUM, CHROMIUM_ARGS, ROOT, _explain, _run_all_cells

#: Binder's path prefix for the single-user server.
SERVER = "/user/binder/"
#: Any address on the kernel's loopback: the page may reach none.
LOOPBACK = re.compile(r"^[a-z]+://(127\.0\.0\.1|localhost|\[::1\])(:\d+)?/")
#: The notebook the test adds: the shortcode sign-in, which shows the /go link.
GO_NOTEBOOK = "go.ipynb"
GO_CELL = (
    "import explorer\n"
    "api = explorer.connect()\n"
    'grant = api.authorize(["chat:connect"], flow="shortcode", poll=0.5)\n'
    'print("approved for", grant.scopes)'
)
#: Emoticon images in the page: how many, and how many the browser has not (yet) decoded.
EMOTICONS = """() => {
    const images = Array.from(document.querySelectorAll("img.explorer-emoticon"));
    const loaded = images.filter((image) => image.complete && image.naturalWidth > 0);
    return [images.length, images.length - loaded.length];
}"""
#: Every image of the notebook's outputs (plots, charts, emoticons) is loaded.
IMAGES_LOADED = """() => {
    const images = Array.from(document.querySelectorAll(".jp-OutputArea-output img"));
    return images.length > 0 && images.every((image) => image.complete && image.naturalWidth > 0);
}"""
#: A code cell still to run or running ("[ ]:" or "[*]:").
PENDING = re.compile(r"\[( |\*)?\]")

#: Runs alone (serial): a browser and the servers it drives, waited on with time limits.
pytestmark = [
    pytest.mark.serial,
    pytest.mark.any_engine("the widgets as on Binder, fed by the platform"),
    pytest.mark.skipif(not CHROMIUM.exists(), reason="needs /usr/bin/chromium"),
]


@dataclass
class Lab:
    """JupyterLab as the browser reaches it: its address with the server's prefix, and the
    token."""

    url: str
    token: str

    def notebook(self, name: str) -> str:
        """The address that opens notebook ``name`` alone, in a workspace of its own: a new
        tab would otherwise restore the last tab's notebooks too, and Run All might run
        theirs."""
        workspace = Path(name).stem
        return f"{self.url}lab/workspaces/{workspace}/tree/{name}?reset&token={self.token}"


@pytest.fixture
def binder(tmp_path: Path) -> Iterator[Lab]:
    """JupyterLab at 127.0.0.2 under /user/binder/ on a copy of notebooks/ and the shortcode
    notebook, its kernels beside a live platform on 127.0.0.1, as Binder runs them."""
    root = tmp_path / "notebooks"
    shutil.copytree(ROOT / "notebooks", root)
    tour = nbformat.read(root / "04-tour.ipynb", as_version=4)
    go = nbformat.v4.new_notebook(
        cells=[nbformat.v4.new_code_cell(GO_CELL)], metadata=tour.metadata
    )
    nbformat.write(go, root / GO_NOTEBOOK)
    token = secrets.token_hex(16)
    # Every cell in the page, as the checks read them (JupyterLab's default windowing leaves
    # cells scrolled out of view, with their outputs, out of the DOM).
    tracker = tmp_path / "lab-settings" / "@jupyterlab" / "notebook-extension"
    tracker.mkdir(parents=True)
    (tracker / "tracker.jupyterlab-settings").write_text('{"windowingMode": "none"}')
    with (
        start(simulate=True) as platform,
        labkit.jupyterlab(
            tmp_path,
            root,
            token,
            platform.base_url,
            ip="127.0.0.2",
            base_url=SERVER,
            env={PREFIX: SERVER},
        ) as port,
    ):
        yield Lab(f"http://127.0.0.2:{port}{SERVER}", token)


def _open(context: BrowserContext, address: str) -> Page:
    """A page at ``address`` whose notebook has started running every cell."""
    page = context.new_page()
    page.goto(address)
    _run_all_cells(page)
    return page


def _wait_until_run(page: Page, tmp_path: Path, timeout: float) -> None:
    """Wait until every code cell of the page's notebook has run ("[n]:"), then fail on an
    error output."""
    page.bring_to_front()  # a tab in the background renders nothing
    prompts = page.locator(".jp-CodeCell .jp-InputPrompt")
    script = """() => Array.from(document.querySelectorAll(".jp-CodeCell .jp-InputPrompt"))
        .every((prompt) => /\\[\\d+\\]/.test(prompt.textContent))"""
    try:
        page.wait_for_function(script, timeout=timeout * 1000, polling=500)
    except Exception:
        pytest.fail(f"cells left {prompts.all_inner_texts()}: {_explain(page, tmp_path)}")
    outputs = page.locator(".jp-OutputArea-output").all_inner_texts()
    failed = [text[-1500:] for text in outputs if "Traceback (most recent call last)" in text]
    broken = [text for text in outputs if "Error displaying widget" in text]
    assert not failed and not broken, failed or broken


def _emoticons_loaded(page: Page, tmp_path: Path) -> int:
    """Wait until the page shows emoticons and every one is a loaded image; how many."""
    page.bring_to_front()  # a tab in the background renders nothing
    try:
        page.wait_for_function(
            f"() => {{ const [shown, missing] = ({EMOTICONS})(); return shown > 0 && !missing; }}",
            timeout=60_000,
            polling=200,
        )
    except PlaywrightTimeout:
        shown = page.evaluate(EMOTICONS)
        pytest.fail(f"emoticons (shown, not loaded): {shown}; {_explain(page, tmp_path)}")
    shown, missing = page.evaluate(EMOTICONS)
    assert shown > 0 and missing == 0
    return int(shown)


def _approve_at_go(context: BrowserContext, page: Page, tmp_path: Path) -> str:
    """Open the /go link the sign-in cell shows, sign in and approve there; the page's
    address."""
    link = page.locator(".jp-OutputArea-output a", has_text="/go?code=").first
    try:
        link.wait_for(timeout=60_000)
    except PlaywrightTimeout:
        pytest.fail(f"no /go link: {_explain(page, tmp_path)}")
    with context.expect_page() as opened:
        link.click()
    go = opened.value
    go.wait_for_load_state()
    assert go.input_value("#code"), "the code is filled in from the link"
    go.fill("#username", "viewer2")
    go.fill("#password", "explorer")
    go.click("#continue")
    go.wait_for_selector("#approve", state="visible", timeout=30_000)
    go.click("#approve")
    go.wait_for_function("document.getElementById('result').textContent.length > 0", polling=200)
    assert "Approved" in go.inner_text("#result"), go.inner_text("#result")
    return go.url


@pytest.mark.timeout(900)
def test_widgets_and_recipes_whole_in_a_browser_that_cannot_reach_the_platform(
    binder: Lab, tmp_path: Path
) -> None:
    """With the kernel's loopback blocked for the page: recipe 4's and 5's emoticons are all
    loaded images, /go opens through the Jupyter server and approves the sign-in, both recipes
    run to the end with every output image drawn, and the page never asked for the
    platform."""
    asked: list[str] = []

    def refuse(route: Route) -> None:
        asked.append(route.request.url)
        route.abort()

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=str(CHROMIUM), args=CHROMIUM_ARGS, headless=True
        )
        try:
            context = browser.new_context(viewport={"width": 1280, "height": 1500})
            context.route(LOOPBACK, refuse)
            # Recipe 5 first: it records for a minute, its kernel running on while the
            # sign-in and the tour are checked in tabs of their own.
            collecting = _open(context, binder.notebook("05-collecting-over-time.ipynb"))
            sign_in = _open(context, binder.notebook(GO_NOTEBOOK))
            go = _approve_at_go(context, sign_in, tmp_path)
            assert go.startswith(f"{binder.url}proxy/"), go
            sign_in.bring_to_front()
            sign_in.get_by_text("approved for").first.wait_for(timeout=30_000)
            sign_in.close()

            tour = _open(context, binder.notebook("04-tour.ipynb"))
            assert _emoticons_loaded(tour, tmp_path) > 0
            _wait_until_run(tour, tmp_path, timeout=180)
            tour.wait_for_function(IMAGES_LOADED, timeout=30_000, polling=500)
            audience = tour.locator(".jp-CodeCell").filter(has_text="changes of viewersCurrent")
            rows = audience.first.locator(".jp-OutputArea table tbody tr")
            assert rows.count() == 5, audience.first.inner_text()
            tour.close()

            assert _emoticons_loaded(collecting, tmp_path) > 0
            _wait_until_run(collecting, tmp_path, timeout=400)
            collecting.wait_for_function(IMAGES_LOADED, timeout=30_000, polling=500)
            plots = collecting.locator(".jp-OutputArea-output img").count()
            assert plots >= 5, plots  # four figures and the tracker's chart, at least
        finally:
            browser.close()
    assert asked == [], asked[:5]
