"""README stays true: its bucket map is the one the platform enforces."""

from __future__ import annotations

from pathlib import Path

from explorer.emulator.docs import render

README = Path(__file__).resolve().parent.parent / "README.md"


def test_readme_bucket_map_matches_the_route_table() -> None:
    """README's endpoint-to-bucket map equals the map rendered from the routes (make docs)."""
    text = README.read_text()
    assert render(text) == text
