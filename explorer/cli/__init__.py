"""The ``explorer`` command: one module per subcommand, each with ``add_parser`` and ``run``.

- ``explorer serve`` (:mod:`explorer.cli.serve`): the platform in the foreground, or one
  more chat node of a multi-process platform;
- ``explorer lab`` (:mod:`explorer.cli.lab`): the platform and JupyterLab on the user's copy
  of the recipes;
- ``explorer tour`` (:mod:`explorer.cli.tour`, steps in :mod:`explorer.cli.guide`): the
  recipes in a terminal;
- ``explorer record`` (:mod:`explorer.cli.record`): chat and directory snapshots of many
  channels to a Parquet capture, for long runs;
- ``explorer coverage`` (:mod:`explorer.cli.coverage`): which shard wrote what in a capture,
  and the gaps;
- ``explorer import`` (:mod:`explorer.cli.imports`): a chat log of a real platform into a
  capture;
- ``explorer compact`` (:mod:`explorer.cli.compact`): a capture's small files merged into
  day files, doubles dropped.

Building the parser imports every subcommand's module, so each imports at its top only what
its flags need, and what its run needs in ``run``: ``explorer serve`` loads no pandas, and
``explorer record`` (or any ``--help``) no platform.
"""

from __future__ import annotations

import argparse
import logging
from collections.abc import Sequence

from explorer.cli import compact, coverage, imports, lab, record, serve, tour

__all__ = ["main"]

_COMMANDS = {
    "serve": serve,
    "lab": lab,
    "tour": tour,
    "record": record,
    "coverage": coverage,
    "import": imports,
    "compact": compact,
}
_DESCRIPTION = (
    "Explore a live-streaming platform: serve it, open the recipes in JupyterLab beside it, "
    "take the tour in a terminal, record many channels to disk and check what was recorded, "
    "or import real chat logs."
)


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``explorer`` console script."""
    parser = argparse.ArgumentParser(prog="explorer", description=_DESCRIPTION)
    sub = parser.add_subparsers(dest="command", required=True)
    for command in _COMMANDS.values():
        command.add_parser(sub.add_parser)
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    return _COMMANDS[args.command].run(args)
