"""Rule 6 of issue 23 in a real browser: nothing a (hostile or spoofed) platform sends runs as
script in the toolkit's widgets, and no malformed message stops one from drawing.

A lighter page test than ``test_browser.py``'s JupyterLab run: each widget is built from
hostile platform text (chat messages, names, roles, links with odd URLs, emoticon packs, poll
questions, channel tokens, a shortcode), its HTML or SVG is put into a page of Debian's
chromium (driven by Playwright, ``executable_path`` only), every element gets a mouseover and
every hostile string must then be on the page as text while no handler ever ran.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pandas as pd
import pytest
from playwright.sync_api import Browser, sync_playwright

from explorer.events.log import EventLog
from explorer.rest.shortcode import shortcode, widget_html
from explorer.views.chat import LiveChat, PollChart
from explorer.views.track import TrackChart
from explorer.views.watch import WatchView
from tests.test_browser import CHROMIUM, CHROMIUM_ARGS
from tests.test_security import attempt

#: Runs alone (serial): a browser and the servers it drives, waited on with time limits.
pytestmark = [
    pytest.mark.serial,
    pytest.mark.any_engine("the widgets given hostile text"),
    pytest.mark.skipif(not CHROMIUM.exists(), reason="needs /usr/bin/chromium"),
]

BASE = "http://127.0.0.1:9/api/v1"
#: Text that would run script (setting ``window.pwned``) if it ever became markup.
HOSTILE = (
    "<script>window.pwned=1</script>",
    '<img src=x onerror="window.pwned=2">',
    '"><svg onload="window.pwned=3">',
    "' onmouseover='window.pwned=4' x='",
    "$\\foo{",
)
#: Links a message may carry: none may become an anchor that runs script or breaks a widget.
ODD_URLS = (
    'http://x/" onmouseover="window.pwned=5',
    "javascript:window.pwned=6",
    "http://[::1",
    "http://[x]/",
    "data:text/html,<script>window.pwned=7</script>",
    "",
)


def hostile_message(i: int, text: str) -> dict[str, Any]:
    """A ChatMessage whose every platform-given field is ``text`` or an odd link."""
    components: list[Any] = [
        {"type": "text", "data": text, "text": text},
        {"type": "tag", "username": text, "text": f"@{text}"},
        {
            "type": "emoticon",
            "source": "external",
            "pack": f"http://x/{text}",
            "text": text,
            "coords": {"x": 0, "y": 0, "width": 24, "height": 24},
        },
        *({"type": "link", "url": url, "text": text} for url in ODD_URLS),
        {"type": "link", "url": 7, "text": None},
        "not a component",
    ]
    data = {
        "channel": 7,
        "id": f"m{i}",
        "user_name": text,
        "user_id": 1,
        "user_roles": [text, "Mod"],
        "message": {"message": components, "meta": {}},
        "target": text,
    }
    return {"type": "event", "event": "ChatMessage", "data": data}


def hostile_log() -> EventLog:
    """A log of hostile messages and a poll whose question and answers are hostile."""
    log = EventLog()
    for i, text in enumerate(HOSTILE):
        log.append(hostile_message(i, text), 1_700_000_000 + i)
    poll = {
        "q": HOSTILE[0],
        "answers": list(HOSTILE[1:]),
        "responses": {answer: n for n, answer in enumerate(HOSTILE[1:])},
        "voters": 6,
        "duration": 0,
        "endsAt": 1_700_000_060_000,
    }
    log.append({"type": "event", "event": "PollStart", "data": poll}, 1_700_000_010)
    return log


def hostile_snapshots() -> pd.DataFrame:
    """Track snapshots of channels whose tokens are hostile."""
    count = len(HOSTILE)
    return pd.DataFrame(
        {
            "time": pd.to_datetime(
                [1_700_000_000 + 30 * (i % 2) for i in range(2 * count)], unit="s", utc=True
            ),
            "channel": pd.array([i // 2 + 1 for i in range(2 * count)], dtype="Int64"),
            "token": [HOSTILE[i // 2] for i in range(2 * count)],
            "viewersCurrent": pd.array(range(2 * count), dtype="Int64"),
        }
    )


def markup_of(widget: Any) -> Iterator[str]:
    """The HTML of ``widget`` and of every widget inside it."""
    value = getattr(widget, "value", None)
    if isinstance(value, str):
        yield value
    for child in getattr(widget, "children", ()):
        yield from markup_of(child)


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    """Debian's chromium, headless."""
    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        yield launched
        launched.close()


def shown(browser: Browser, markup: str) -> str:
    """The text ``markup`` shows in a page, after a mouseover on every element; fails if
    anything set ``window.pwned``."""
    page = browser.new_page()
    try:
        page.set_content(f"<!doctype html><html><body>{markup}</body></html>")
        page.evaluate(
            "document.querySelectorAll('*').forEach((e) => {"
            " e.dispatchEvent(new MouseEvent('mouseover', {bubbles: true}));"
            " e.dispatchEvent(new Event('load')); })"
        )
        page.wait_for_load_state("load")
        hrefs = page.eval_on_selector_all("a", "(anchors) => anchors.map((a) => a.href)")
        assert all(href.startswith(("http://", "https://")) for href in hrefs), hrefs
        assert page.evaluate("window.pwned") is None
        return page.inner_text("body")
    finally:
        page.close()


def test_live_chat_and_watch_view_show_hostile_text_as_text(browser: Browser) -> None:
    """The live chat's and the watch view's tables show every hostile string as text and
    run none of it, odd links and malformed components included."""
    log = hostile_log()
    chat = LiveChat(log, lambda: ("authenticated", HOSTILE[1]), base_url=BASE)
    stats = pd.DataFrame(
        {"token": [HOSTILE[2]], "state": [HOSTILE[3]], "events": [6], "rate": [1.0]},
        index=pd.Index([7], dtype="Int64", name="channel"),
    )
    view = WatchView(log, lambda: stats, lambda: {HOSTILE[0]: HOSTILE[1]}, base_url=BASE)
    for name, widget in (("LiveChat", chat), ("WatchView", view)):
        text = shown(browser, "".join(markup_of(widget)))
        attempt(f"hostile platform text in {name}")
        for hostile in HOSTILE[:4]:
            assert hostile in text, (name, hostile)


def test_charts_draw_hostile_labels_as_text(browser: Browser) -> None:
    """A poll and channel tokens with markup or a broken formula still draw, as text, in
    the SVG the browser shows."""
    for name, chart in (
        ("PollChart", PollChart(hostile_log())),
        ("TrackChart", TrackChart(hostile_snapshots, top=len(HOSTILE))),
    ):
        svg = chart.svg.decode()
        assert svg.startswith(("<?xml", "<svg")) and "<svg" in svg, name
        shown(browser, svg[svg.index("<svg") :])
        attempt(f"hostile platform text in {name}")
        assert "<script>" not in svg and "$\\foo{" in svg.replace("\\$", "$"), name


def test_shortcode_widget_shows_a_hostile_code_as_text(browser: Browser) -> None:
    """A code the platform sends as markup is shown as text, in a link that stays on the
    platform's /go page."""
    for hostile in HOSTILE[:4]:
        pending = shortcode(BASE, {"code": hostile, "handle": "h", "expires_in": 300})
        text = shown(browser, widget_html(pending))
        attempt("hostile shortcode")
        assert hostile in text
