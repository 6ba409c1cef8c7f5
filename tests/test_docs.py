"""docs/ stays true: its generated parts are what the platform serves and enforces, and every
local link in the documentation points at a file of the repository."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from explorer.emulator.docs import render, rest_reference

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
PAGES = [ROOT / "README.md", *sorted(DOCS.glob("*.md"))]
#: A Markdown link's target: [text](target), not an http(s) URL or an anchor alone.
LINK = re.compile(r"\]\((?!https?://|#)([^)#\s]+)")


def test_bucket_map_matches_the_route_table() -> None:
    """docs/platform.md's endpoint-to-bucket map equals the map rendered from the routes
    (make docs)."""
    text = (DOCS / "platform.md").read_text()
    assert render(text) == text


def test_rest_reference_matches_the_route_table() -> None:
    """docs/rest.md equals the reference rendered from the OpenAPI description (make docs)."""
    assert (DOCS / "rest.md").read_text() == rest_reference()


def test_rest_reference_lists_every_endpoint() -> None:
    """docs/rest.md has a section for every method and path the platform routes."""
    from explorer.emulator.app import platform_routes

    text = (DOCS / "rest.md").read_text()
    missing = [
        f"{r.method} {r.path}"
        for r in platform_routes()
        if f"### `{r.method} {r.path}`" not in text
    ]
    assert not missing


@pytest.mark.parametrize("page", PAGES, ids=[page.name for page in PAGES])
def test_local_links_resolve(page: Path) -> None:
    """Every relative link of the page names a file or folder of the repository."""
    targets = {(page.parent / target).resolve() for target in LINK.findall(page.read_text())}
    names = {target.relative_to(ROOT).as_posix() for target in targets if not target.exists()}
    assert not names, f"{page.name} links to missing {sorted(names)}"
