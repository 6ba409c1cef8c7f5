"""Marks of stream sessions: which broadcast of its channel each event belongs to, and how far
into it (pure; the looks that make marks are ``collect/broadcasts.py``).

A *mark* is what one look at a channel's broadcast found: the channel is live in broadcast
``session`` since its start, or it was offline when looked at. An event is in the session of
its channel's latest mark at or before it (:func:`stamp`): column ``session`` (the broadcast
id; missing before the channel's first look and after a look found it offline) and
``session_offset``, how long after the session's start it came (a timedelta). Nothing is
invented in between: a session that ended between two looks runs, for its events, until the
look that found the channel offline. A recording keeps the marks in its recorder's manifest
(``sessions``), so a capture stamps its events the same way
(``Capture.events(sessions=True)``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from explorer.core import columns

#: The columns :func:`stamp` adds to an event frame.
SESSION_COLUMNS = ("session", "session_offset")
#: The dtype of ``session_offset``.
OFFSET = np.dtype("timedelta64[ms]")


@dataclass(frozen=True, slots=True)
class Mark:
    """What one look at ``channel`` found: live in broadcast ``session`` since ``since``
    (epoch seconds, the events' clock), or offline (``session`` None) at ``since``."""

    channel: int
    session: str | None
    since: float

    def json(self) -> dict[str, Any]:
        """The mark as a manifest keeps it."""
        return {"channel": self.channel, "session": self.session, "since": self.since}


def marks_frame(marks: Iterable[Mapping[str, Any]]) -> pd.DataFrame:
    """Marks (as :meth:`Mark.json` writes them) as a frame: ``channel`` (Int64), ``session``
    (str, missing when offline) and ``since`` (UTC), in time order."""
    rows = list(marks)
    frame = pd.DataFrame(
        {
            "channel": columns.column([r.get("channel") for r in rows], "int"),
            "session": columns.column([r.get("session") for r in rows], "str"),
            "since": columns.column([r.get("since") for r in rows], "seconds"),
        }
    )
    return frame.sort_values(["since", "channel"], kind="stable", ignore_index=True)


def stamp(frame: pd.DataFrame, marks: pd.DataFrame) -> pd.DataFrame:
    """``frame`` (with ``received_at`` and ``channel``) with :data:`SESSION_COLUMNS` added:
    each event's channel's latest mark at or before it (see the module docstring)."""
    count = len(frame)
    session = np.full(count, None, dtype=object)
    offset = np.full(count, np.timedelta64("NaT", "ms"), dtype=OFFSET)
    known = (frame["channel"].notna() & frame["received_at"].notna()).to_numpy(dtype=bool)
    marked = marks.dropna(subset=["channel", "since"])
    if known.any() and len(marked):
        events = pd.DataFrame(
            {
                "position": np.flatnonzero(known),
                "channel": frame["channel"].to_numpy()[known].astype(np.int64),
                "at": frame["received_at"].to_numpy()[known],
            }
        ).sort_values("at", kind="stable")
        right = pd.DataFrame(
            {
                "channel": marked["channel"].to_numpy().astype(np.int64),
                "since": marked["since"].to_numpy(),
                "mark": marked["session"].to_numpy(dtype=object, na_value=None),
            }
        ).sort_values("since", kind="stable")
        found = pd.merge_asof(
            events, right, left_on="at", right_on="since", by="channel", direction="backward"
        )
        hit = found["mark"].notna().to_numpy()
        where = found["position"].to_numpy()[hit]
        session[where] = found["mark"].to_numpy()[hit]
        offset[where] = (found["at"] - found["since"]).to_numpy()[hit].astype(OFFSET)
    return frame.assign(session=columns.column(list(session), "str"), session_offset=offset)
