"""Keeps README's generated section (the endpoint-to-bucket map) in step with the route table.

``python -m explorer.emulator.docs`` rewrites the text between the README's bucket markers;
a test fails when they differ, so the documented map can never drift from what is enforced.
"""

from __future__ import annotations

import sys
from pathlib import Path

from explorer.emulator.app import platform_routes
from explorer.emulator.openapi import bucket_map

START = "<!-- bucket-map:start -->"
END = "<!-- bucket-map:end -->"


def render(readme: str) -> str:
    """``readme`` with the bucket map section replaced by the current one."""
    head, rest = readme.split(START, 1)
    _, tail = rest.split(END, 1)
    return f"{head}{START}\n{bucket_map(platform_routes())}\n{END}{tail}"


def main(path: str = "README.md") -> int:
    """Rewrite the README's bucket map in place."""
    readme = Path(path)
    readme.write_text(render(readme.read_text()))
    return 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:]))
