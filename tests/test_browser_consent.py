"""Rule 4 of issue 23 in a real browser: the /go page shows the approver which client asks for
which scopes before it offers Approve, and no other site can frame it.

Debian's chromium (driven by Playwright, ``executable_path`` only) opens ``/go?code=...`` on
a live platform, signs in, reads the consent section, approves; the app's poll then gets its
code. A page of another origin (a second loopback server) framing ``/go`` gets an empty frame.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import httpx
import pytest
from playwright.sync_api import Browser

from explorer.emulator import Platform
from tests.databases import start
from tests.test_browser import CHROMIUM
from tests.test_browser_escaping import browser  # noqa: F401 -- the fixture
from tests.test_security import attempt

#: Runs alone (serial): a browser and the servers it drives, waited on with time limits.
pytestmark = [
    pytest.mark.serial,
    pytest.mark.skipif(not CHROMIUM.exists(), reason="needs /usr/bin/chromium"),
]


@pytest.fixture(scope="module")
def live() -> Iterator[Platform]:
    """A platform for this module."""
    with start(channels=50, rate_limits=False) as running:
        yield running


def test_the_go_page_shows_client_and_scopes_before_approval(
    live: Platform,
    browser: Browser,  # noqa: F811 -- the fixture imported above
) -> None:
    """Continue signs in and shows the client's name and each scope as text, with Approve
    hidden until then; Approve grants the app its code."""
    started = httpx.post(
        live.base_url + "/oauth/shortcode",
        json={"client_id": "explorer-toolkit", "scope": "chat:connect chat:whisper"},
    ).json()
    page = browser.new_page()
    try:
        page.goto(f"{live.root_url}/go?code={started['code']}")
        assert not page.is_visible("#approve")
        page.fill("#username", "viewer")
        page.fill("#password", "explorer")
        page.click("#continue")
        page.wait_for_selector("#approve", state="visible", timeout=10_000)
        assert page.inner_text("#client") == "explorer toolkit"
        assert page.inner_text("#scopes").split() == ["chat:connect", "chat:whisper"]
        check = f"{live.base_url}/oauth/shortcode/check/{started['handle']}"
        assert httpx.get(check).status_code == 204  # nothing granted by reading
        page.click("#approve")
        page.wait_for_function("document.getElementById('result').textContent.length > 0")
        assert "Approved" in page.inner_text("#result")
    finally:
        page.close()
    assert "code" in httpx.get(check).json()


class _Framing(BaseHTTPRequestHandler):
    """Another site: a page that frames the platform's /go."""

    target = ""

    def do_GET(self) -> None:
        body = f'<iframe id="f" src="{self.target}" width="600" height="400"></iframe>'.encode()
        self.send_response(200)
        self.send_header("Content-Type", "text/html")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: object) -> None:
        """Quiet."""


def test_another_site_cannot_frame_go(
    live: Platform,
    browser: Browser,  # noqa: F811 -- the fixture imported above
) -> None:
    """A page served from another origin that frames /go shows no /go content in it."""
    _Framing.target = f"{live.root_url}/go?code=ABC234"
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Framing)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    page = browser.new_page()
    try:
        page.goto(f"http://127.0.0.1:{server.server_address[1]}/")
        page.wait_for_load_state("load")
        frame = page.frame_locator("#f")
        attempt("framing /go from another site")
        assert frame.locator("#go").count() == 0
        framed = [f for f in page.frames if f != page.main_frame]
        assert all("Connect an app" not in f.content() for f in framed)
    finally:
        page.close()
        server.shutdown()
        thread.join(5)
