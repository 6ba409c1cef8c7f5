"""Progress bars for listings: a tqdm bar once a fetch has several pages or has to wait."""

from __future__ import annotations

from typing import Any

from tqdm.auto import tqdm


class Progress:
    """A tqdm bar for one listing, shown once it has several pages or has to wait."""

    def __init__(self, enabled: bool, label: str) -> None:
        self._enabled, self._label = enabled, label
        self._bar: Any = None

    def start(self, total: int | None, done: int) -> None:
        """Show the bar: ``total`` rows expected (None if unknown), ``done`` already here."""
        if not self._enabled:
            return
        if self._bar is None:
            self._bar = tqdm(total=total, initial=done, desc=self._label, unit="rows", leave=False)
        elif total is not None:
            self._bar.total = total
            self._bar.update(done - self._bar.n)

    def update(self, rows: int) -> None:
        """Count ``rows`` more rows fetched."""
        if self._bar is not None:
            self._bar.update(rows)

    def status(self, text: str | None) -> None:
        """Say what the fetch waits for; None restores the label."""
        if self._enabled:
            self.start(None, 0)
            self._bar.set_description_str(text or self._label)

    def close(self) -> None:
        """Remove the bar."""
        if self._bar is not None:
            self._bar.close()
