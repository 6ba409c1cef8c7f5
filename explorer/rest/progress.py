"""Progress bars for listings: a tqdm bar once a fetch has several pages or has to wait.

A bar redraws itself in place with carriage returns, which only a terminal or Jupyter
undoes. Written to a file or a pipe (a log, CI), the same progress is plain lines instead: one
at most every :data:`LINE_INTERVAL` seconds while the fetch runs (the first wait for a rate
limit is said at once), and a final one if any was written, so a short fetch leaves nothing
and a long or throttled one a few readable lines. tqdm loads with the first bar or line, not
with the client.
"""

from __future__ import annotations

import sys
import time
from typing import Any

#: Seconds between two progress lines written to a file or a pipe.
LINE_INTERVAL = 5.0


def _interactive() -> bool:
    """Whether a bar can redraw in place: stderr is a terminal, or this is a Jupyter kernel
    (tqdm.auto then chose its notebook bar)."""
    from tqdm.auto import tqdm

    notebook = sys.modules.get("tqdm.notebook")
    if notebook is not None and issubclass(tqdm, notebook.tqdm_notebook):
        return True
    isatty = getattr(sys.stderr, "isatty", None)
    return bool(isatty and isatty())


class Lines:
    """Progress as plain lines on stderr, at most one every :data:`LINE_INTERVAL` seconds
    (tqdm's bar text, without its redrawing)."""

    def __init__(self, total: int | None, initial: int, desc: str) -> None:
        self.total, self.n, self.desc, self._label = total, initial, desc, desc
        self._started = self._written = time.monotonic()
        self._lines = 0

    def update(self, rows: int) -> None:
        """Count ``rows`` more; write a line if the last one is old enough."""
        self.n += rows
        if time.monotonic() - self._written >= LINE_INTERVAL:
            self._write()

    def set_description_str(self, text: str) -> None:
        """Say what the fetch does now: a wait at once if no line was written yet, else in
        the next line."""
        changed, self.desc = text != self.desc, text
        if (
            changed
            and text != self._label
            and (not self._lines or time.monotonic() - self._written >= LINE_INTERVAL)
        ):
            self._write()

    def _write(self) -> None:
        from tqdm import tqdm

        self._written = time.monotonic()
        self._lines += 1
        meter = tqdm.format_meter(
            self.n, self.total, self._written - self._started, prefix=self.desc, unit="rows"
        )
        print(meter, file=sys.stderr, flush=True)

    def close(self) -> None:
        """A final line, if the fetch wrote any."""
        if self._lines:
            self._write()


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
            from tqdm.auto import tqdm

            self._bar = (
                tqdm(total=total, initial=done, desc=self._label, unit="rows", leave=False)
                if _interactive()
                else Lines(total, done, self._label)
            )
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
