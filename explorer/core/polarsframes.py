"""Polars frames of captures and event logs, for those who work in Polars: the optional
``polars`` dependency (``pip install 'explorer-livestream[polars]'``), imported only when a
frame is asked for. The data comes through Arrow's PyCapsule stream interface
(``__arrow_c_stream__``), which :class:`~explorer.recording.capture.Capture` and
:class:`~explorer.events.log.EventLog` implement, so nothing is converted twice.
"""

from __future__ import annotations

from typing import Any

import pyarrow as pa


def polars_frame(source: Any) -> Any:
    """A ``polars.DataFrame`` of ``source`` (an object with ``__arrow_c_stream__``); raises
    ``ImportError`` saying how to install polars when it is missing."""
    try:
        import polars
    except ImportError:
        raise ImportError(
            "A Polars frame needs polars: pip install 'explorer-livestream[polars]' "
            "(or pip install polars)."
        ) from None
    return polars.from_arrow(pa.RecordBatchReader.from_stream(source).read_all())
