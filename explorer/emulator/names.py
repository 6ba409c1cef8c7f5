"""Names and titles people are shown (a channel's title, an OAuth client's name on the consent
page, a game's or a confetti's name): one line of visible text.

Usernames (and so channel tokens) are ASCII letters, digits and underscores, matched whole
(``resources/users.py``), so no look-alike of another script can pose as a name. The free-text
names checked here may hold any script, but not characters that hide or rearrange what is
shown: controls (newlines, escape sequences a terminal would obey), invisible format
characters (bidirectional overrides that reverse a name, zero-width spaces that make two names
look the same), line and paragraph separators, surrogates, private-use and unassigned code
points (``explorer.wire.text``, the list the toolkit's terminal output escapes too). The
zero-width joiner stays: emoji sequences need it.
"""

from __future__ import annotations

from explorer.wire.text import hidden as _hidden


def hidden(text: str) -> str | None:
    """The first character of ``text`` that a name may not hold, as ``U+XXXX``, or None."""
    for char in text:
        if _hidden(char):
            return f"U+{ord(char):04X}"
    return None


def problem(text: str) -> str | None:
    """What is wrong with ``text`` as a name (for a 400's message), or None."""
    found = hidden(text)
    return None if found is None else f"must not hold control or invisible characters ({found})"
