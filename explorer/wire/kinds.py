"""The kinds a record field or an event-log column holds: one vocabulary for both halves.

The toolkit turns each kind into one pandas dtype (``explorer.core.columns``); the platform's JSON
and the recorder's Arrow files follow from the same declarations (``records.py``,
``events.py``)::

    int       integers               float     numbers
    bool      booleans               str       text
    category  text from a few values (names of events, countries)
    time      ISO-8601 text or epoch milliseconds
    seconds   epoch seconds          object    lists and dicts, as they are
"""

from __future__ import annotations

from typing import Literal

Kind = Literal["int", "float", "bool", "str", "category", "time", "seconds", "object"]
