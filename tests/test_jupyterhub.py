"""On a JupyterHub or Binder the person's browser reaches a platform on the kernel's loopback
through the Jupyter server's proxy; elsewhere, and for a platform not on loopback, at its
own address."""

from __future__ import annotations

from dataclasses import replace
from html.parser import HTMLParser

import pytest

from explorer.core.jupyterhub import PREFIX, browser_root
from explorer.rest.shortcode import shortcode, widget_html

HUB = {PREFIX: "/user/ada/"}


def test_loopback_platform_on_a_hub_is_reached_through_the_server_proxy() -> None:
    """A platform on 127.0.0.1, ::1 or localhost becomes <prefix>proxy/<port>."""
    assert browser_root("http://127.0.0.1:8000", HUB) == "/user/ada/proxy/8000"
    assert browser_root("http://[::1]:8001", HUB) == "/user/ada/proxy/8001"
    assert browser_root("http://localhost", HUB) == "/user/ada/proxy/80"
    assert browser_root("http://127.0.0.1:8000", {PREFIX: "/"}) == "/proxy/8000"


def test_platform_address_stays_off_a_hub_or_off_loopback() -> None:
    """Without the hub's variable, or for a platform the browser may reach, the address is
    the platform's own."""
    assert browser_root("http://127.0.0.1:8000", {}) == "http://127.0.0.1:8000"
    assert browser_root("https://platform.example", HUB) == "https://platform.example"
    assert browser_root("http://10.0.0.5:8000", HUB) == "http://10.0.0.5:8000"


class Anchors(HTMLParser):
    """The href of every anchor of an HTML fragment."""

    def __init__(self, fragment: str) -> None:
        super().__init__()
        self.hrefs: list[str | None] = []
        self.feed(fragment)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "a":
            self.hrefs.append(dict(attrs).get("href"))


def test_shortcode_page_on_a_hub_is_a_link_through_the_proxy(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The shortcode widget links /go through the proxy path on a hub, and a protocol-
    relative address (another host) is never a link."""
    monkeypatch.setenv(PREFIX, "/user/ada/")
    body = {"code": "ABC234", "handle": "h", "expires_in": 300}
    pending = shortcode("http://127.0.0.1:8000/api/v1", body)
    assert pending.url == "/user/ada/proxy/8000/go?code=ABC234"
    assert Anchors(widget_html(pending)).hrefs == [pending.url]
    other = replace(pending, url="//evil.example/go")
    assert Anchors(widget_html(other)).hrefs == []
