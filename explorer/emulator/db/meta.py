"""The key/value ``meta`` table (declared with the core records in :mod:`.engine`): a world's
seed and size, and where its clock and streams stand. :meth:`~.engine.Store.meta` reads it."""

from __future__ import annotations

from explorer.emulator.db.engine import Transaction


def put(tx: Transaction, values: dict[str, str]) -> None:
    """Store every key of ``values`` with its value, in one statement."""
    rows = ", ".join(["(?, ?)"] * len(values))
    tx.execute(
        f"INSERT OR REPLACE INTO meta (key, value) VALUES {rows}",
        [part for pair in values.items() for part in pair],
    )
