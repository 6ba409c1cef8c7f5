"""Chat events as HTML: emoticons from the platform's sprite sheets (builtin ones inline),
safe links, tags, badges, and the sparkline; hostile text and addresses never become markup."""

from __future__ import annotations

import re
from html.parser import HTMLParser
from typing import Any

from explorer.views.rendering import (
    badges_html,
    message_html,
    site_root,
    sparkline,
    sprite_url,
)

BASE = "http://127.0.0.1:8123/api/v1"
SHEET = "http://127.0.0.1:8123/_latest/emoticons/default.png"
SMILE = {
    "type": "emoticon",
    "source": "builtin",
    "pack": "default",
    "coords": {"x": 24, "y": 48, "width": 24, "height": 24},
    "text": ":)",
}


class Tags(HTMLParser):
    """The start tags of an HTML fragment with their attributes."""

    def __init__(self, fragment: str) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.feed(fragment)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))


def text(value: str) -> dict[str, Any]:
    """A text component."""
    return {"type": "text", "data": value, "text": value}


def test_site_root_drops_the_api_path() -> None:
    """The site root is the REST base without its /api/vN path; builtin sheets live there."""
    assert site_root(BASE) == "http://127.0.0.1:8123"
    assert site_root("https://example.org/sub/api/v2/") == "https://example.org/sub"
    assert sprite_url(BASE, "default") == "http://127.0.0.1:8123/_latest/emoticons/default.png"
    assert sprite_url("file:///tmp/api/v1", "default") is None


def inline(sheet: str, rect: tuple[int, int, int, int]) -> str:
    """An inliner that names what it was asked for."""
    return f"data:image/png;base64,{sheet}|{rect}"


def test_builtin_emoticon_is_inline_from_the_platforms_sprite_sheet() -> None:
    """A builtin emoticon is the image the inliner cuts from its pack's sheet on the platform
    at its coordinates, sized as they say, with its text as alt."""
    [(tag, attrs)] = Tags(message_html([SMILE], BASE, inline)).tags
    assert tag == "img"
    assert attrs["src"] == f"data:image/png;base64,{SHEET}|(24, 48, 24, 24)"
    assert attrs["alt"] == ":)"
    assert "width:24px;height:24px" in (attrs["style"] or "")


def test_builtin_emoticon_is_text_until_its_image_is_had() -> None:
    """Without an inliner, or while it has no image, a builtin emoticon is its text."""
    assert message_html([SMILE], BASE) == ":)"
    assert message_html([SMILE], BASE, lambda sheet, rect: None) == ":)"


def test_emoticon_without_a_known_sheet_is_text() -> None:
    """Without a base URL, with a pack that is not a plain name, or with an external pack
    that is not an http(s) address, an emoticon shows as its escaped text."""
    hostile = {**SMILE, "pack": '../x" onerror=alert(1)', "text": "<b>"}
    external = {**SMILE, "source": "external", "pack": "javascript:alert(1)"}
    for component, base in ((SMILE, None), (hostile, BASE), (external, BASE)):
        rendered = message_html([component], base, inline)
        assert "<img" not in rendered, rendered
    assert message_html([hostile], BASE, inline) == "&lt;b&gt;"


def test_external_emoticon_uses_its_own_address() -> None:
    """An external pack's image address is used as it is, escaped, offset to the emoticon's
    coordinates: the browser cuts it, the kernel never fetches a chatter's address."""
    external = {**SMILE, "source": "external", "pack": "https://cdn.example/p.png?a=1&b=2"}
    [(_, attrs)] = Tags(message_html([external], BASE, inline)).tags
    assert attrs["src"] == "https://cdn.example/p.png?a=1&b=2"
    assert "object-position:-24px -48px" in (attrs["style"] or "")


def test_links_open_safely_and_only_for_web_addresses() -> None:
    """An http(s) link is an anchor opening a new tab without an opener, styled as a link
    (coloured, underlined); other schemes stay text."""
    good = {"type": "link", "url": "https://example.org/a?b=1&c=2", "text": "example.org/a"}
    [(tag, attrs)] = Tags(message_html([good])).tags
    assert tag == "a" and attrs["href"] == "https://example.org/a?b=1&c=2"
    assert (attrs["rel"], attrs["target"]) == ("noopener noreferrer", "_blank")
    assert "text-decoration:underline" in attrs["style"] and "color:" in attrs["style"]
    for url in ("javascript:alert(1)", " JavaScript:alert(1)", "data:text/html,x", "//evil"):
        rendered = message_html([{"type": "link", "url": url, "text": url}])
        assert "<a" not in rendered and "href" not in rendered, rendered


def test_hostile_text_is_escaped_everywhere() -> None:
    """Script in text, a tag, a link's text or an attribute never becomes markup."""
    hostile = '<script>alert(1)</script>"><img src=x onerror=alert(2)>'
    rendered = message_html(
        [
            text(hostile),
            {"type": "tag", "text": hostile, "username": hostile, "id": 1},
            {"type": "link", "url": "https://ok.example/" + hostile, "text": hostile},
            {**SMILE, "text": hostile},
        ],
        BASE,
        inline,
    )
    assert "<script" not in rendered
    tags = Tags(rendered).tags
    assert [tag for tag, _ in tags] == ["span", "a", "img"]
    assert all("onerror" not in attrs for _, attrs in tags)


def test_tags_are_highlighted() -> None:
    """A tag component is a highlighted span with its text."""
    rendered = message_html([{"type": "tag", "text": "@ana", "username": "ana", "id": 3}])
    assert rendered.startswith('<span class="explorer-tag"') and "@ana</span>" in rendered


def test_badges_show_the_roles_that_matter() -> None:
    """Owner and Mod get badges, strongest first; a plain User gets none."""
    rendered = badges_html("User,Mod,Owner")
    assert re.findall(r">(\w+)</span>", rendered) == ["Owner", "Mod"]
    assert badges_html("User") == "" and badges_html(None) == ""


def test_sparkline_scales_to_its_largest_value() -> None:
    """The sparkline is an SVG polyline from left to right, the largest value at the top."""
    rendered = sparkline([0.0, 5.0, 10.0], width=100, height=20)
    points = re.search(r'points="([^"]*)"', rendered)
    assert rendered.startswith("<svg") and points
    assert points.group(1) == "0.0,19.0 50.0,10.0 100.0,1.0"
    assert 'points=""' in sparkline([])
