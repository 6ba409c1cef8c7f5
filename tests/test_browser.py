"""A real browser runs the tour notebook in JupyterLab and sees the live chat widget count,
show emoticon images and open links safely.

JupyterLab (port 0, a token, ``--no-browser``, configured as ``explorer lab`` configures it)
serves a temporary copy of notebooks/ (the copy takes JupyterLab's autosaves and checkpoints)
with ``EXPLORER_BASE_URL`` pointing at a platform with simulated chat. Debian's chromium,
driven by Playwright for Python, opens ``04-tour.ipynb``, runs every cell through the Run menu,
and reads the widget's event counter twice, a few seconds apart: it must rise while the page is
left alone, which proves the whole path from chat node to toolkit thread to kernel comm to
browser. A message with a link, sent into the channel from the test, must then show as an
anchor opening a new tab without an opener, and the emoticons as images the browser loaded
from the platform's sprite sheet. The screenshot of the live widget it takes is the README's
(``docs/live-widget.png``): written when that file is missing or ``EXPLORER_SCREENSHOT=1`` is
set, so an ordinary test run leaves the work tree unchanged.

Playwright only drives the browser; its own browser downloads are never used. The test skips
only when ``/usr/bin/chromium`` is missing (``apt-get install chromium``).
"""

from __future__ import annotations

import os
import re
import secrets
import shutil
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Page, sync_playwright
from playwright.sync_api import TimeoutError as PlaywrightTimeout

import explorer
from tests import labkit
from tests.databases import start

ROOT = Path(__file__).resolve().parent.parent
CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
SCREENSHOT = ROOT / "docs" / "live-widget.png"
#: The LiveChat header: "<state> <endpoint> · 1,234 events, 5.0/s".
COUNTER = re.compile(r"([\d,]+) events,")
#: The status bar once the notebook's kernel is connected and ready.
KERNEL_IDLE = re.compile(r"Python 3 \(ipykernel\) \| Idle")
#: The link the test sends into the tour's channel.
LINK = "https://example.org/explorer-browser-test"
#: Emoticon images in the widget that the browser loaded (JavaScript, run in the page).
LOADED_EMOTICONS = """() => Array.from(document.querySelectorAll("img.explorer-emoticon"))
    .filter((image) => image.complete && image.naturalWidth > 0).length"""

#: Runs alone (serial): a browser and the servers it drives, waited on with time limits.
pytestmark = [
    pytest.mark.serial,
    pytest.mark.any_engine("the widget in JupyterLab, fed by the platform"),
    pytest.mark.skipif(
        not CHROMIUM.exists(),
        reason="Debian's chromium is not installed at /usr/bin/chromium (apt-get install chromium)",
    ),
]


@pytest.fixture
def jupyterlab(tmp_path: Path) -> Iterator[tuple[str, str]]:
    """JupyterLab on a copy of notebooks/ beside a live platform, configured as
    `explorer lab` configures it (no news, no update check); its URL with the token, and the
    platform's."""
    root = tmp_path / "notebooks"
    shutil.copytree(ROOT / "notebooks", root)
    token = secrets.token_hex(16)
    with (
        start(simulate=True) as platform,
        labkit.jupyterlab(tmp_path, root, token, platform.base_url) as port,
    ):
        notebook = f"http://127.0.0.1:{port}/lab/tree/04-tour.ipynb?token={token}"
        yield notebook, platform.base_url


def _events(page: Page) -> int:
    """The widget's event counter as the page shows it now."""
    header = page.locator(".widget-html-content").filter(has_text=COUNTER).first
    found = COUNTER.search(header.inner_text())
    assert found, "the widget shows its event counter"
    return int(found.group(1).replace(",", ""))


def _screenshot_path(tmp_path: Path) -> Path:
    """docs/live-widget.png when it is missing or EXPLORER_SCREENSHOT=1 asks for a new one;
    otherwise a temporary file, so that running the tests leaves the work tree unchanged."""
    if os.environ.get("EXPLORER_SCREENSHOT") == "1" or not SCREENSHOT.exists():
        SCREENSHOT.parent.mkdir(exist_ok=True)
        return SCREENSHOT
    return tmp_path / SCREENSHOT.name


def _run_all_cells(page: Page, tries: int = 3) -> None:
    """Run > Run All Cells once the notebook's kernel is idle, until the first code cell ran.

    JupyterLab skips cells without a word while the notebook has no kernel connection yet
    (they keep their empty ``[ ]:`` prompt), and the toolbar's execution indicator says
    ``idle`` before any kernel exists; the status bar's "Python 3 (ipykernel) | Idle" is the
    reliable sign. On a loaded machine the click can still come early, and JupyterLab then
    asks which kernel to start: the preferred one, which is what "Select" takes.
    """
    page.get_by_text(KERNEL_IDLE).first.wait_for(timeout=90_000)
    first = page.locator(".jp-CodeCell .jp-InputPrompt").first
    for _ in range(tries):
        dialog = page.locator(".jp-Dialog")
        if dialog.count():
            dialog.get_by_role("button", name="Select").click()
            page.get_by_text(KERNEL_IDLE).first.wait_for(timeout=90_000)
        page.get_by_role("menuitem", name="Run", exact=True).click()
        page.get_by_role("menuitem", name="Run All Cells", exact=True).click()
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            if re.search(r"\[(\*|\d+)\]", first.inner_text()):
                return
            time.sleep(0.2)


def _explain(page: Page, tmp_path: Path) -> str:
    """What the page shows when the widget did not appear: prompts, outputs, a screenshot."""
    page.screenshot(path=str(tmp_path / "page.png"))
    prompts = page.locator(".jp-InputPrompt").all_inner_texts()
    outputs = [text[-800:] for text in page.locator(".jp-OutputArea-output").all_inner_texts()]
    return f"prompts {prompts}; outputs {outputs}; screenshot {tmp_path / 'page.png'}"


def _send_link(base_url: str) -> None:
    """Say :data:`LINK` with an emoticon in the tour's channel (the busiest online one)."""
    with explorer.connect(base_url, username="viewer2", password="explorer") as api:
        live = api.channels(where={"online": True}, order="viewersCurrent:desc", max_rows=1)
        with api.chat(int(live.index[0])) as chat:
            chat.send(f"from the browser test {LINK} :D")


@pytest.mark.timeout(180)
def test_tour_widget_counts_live_events_in_the_browser(
    jupyterlab: tuple[str, str], tmp_path: Path
) -> None:
    """After Run All Cells on 04-tour.ipynb, the live widget's event counter rises by itself,
    a link sent to the chat is a safe new-tab anchor, and emoticons are loaded images."""
    notebook, base_url = jupyterlab
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=str(CHROMIUM), args=CHROMIUM_ARGS, headless=True
        )
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 1500})
            console: list[str] = []
            page.on("console", lambda message: console.append(f"{message.type}: {message.text}"))
            page.goto(notebook)
            _run_all_cells(page)
            header = page.locator(".widget-html-content").filter(has_text=COUNTER).first
            try:
                header.wait_for(timeout=60_000)
            except PlaywrightTimeout:
                pytest.fail(f"no live widget appeared: {_explain(page, tmp_path)} {console[-30:]}")

            first = _events(page)
            # The counter rises by itself: wait for it (a busy machine delivers less often).
            deadline = time.monotonic() + 90
            while _events(page) <= first and time.monotonic() < deadline:
                page.wait_for_timeout(250)
            assert _events(page) > first, f"the counter stayed at {first} for 90 s"

            _send_link(base_url)
            link = page.locator(f'.widget-html-content a[href="{LINK}"]').first
            link.wait_for(timeout=30_000)
            assert link.get_attribute("target") == "_blank"
            assert link.get_attribute("rel") == "noopener noreferrer"
            page.wait_for_function(f"() => ({LOADED_EMOTICONS})() > 0", timeout=30_000)

            # Let the rest of the tour (a message, moderation) reach the widget, then keep it.
            time.sleep(4)
            widget = page.locator(".jp-OutputArea-output").filter(has=header).first
            widget.screenshot(path=str(_screenshot_path(tmp_path)))
        finally:
            browser.close()
