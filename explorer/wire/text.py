"""Characters that hide or rearrange what text shows: the one list, for the platform (names
people are shown refuse them) and the toolkit (a terminal shows them escaped).

Controls (newlines, carriage returns, backspaces, and escape sequences a terminal obeys: clear
the screen, set the window title, write the clipboard), invisible format characters
(bidirectional overrides that reverse text, zero-width spaces that make two texts look the
same), line and paragraph separators, surrogates, private-use and unassigned code points. The
zero-width joiner is kept: emoji sequences need it. Pure: no I/O.
"""

from __future__ import annotations

import unicodedata

#: Unicode categories of hidden characters (see the module's docstring).
HIDDEN_CATEGORIES = frozenset({"Cc", "Cf", "Co", "Cs", "Cn", "Zl", "Zp"})
#: Format characters that are not hidden: the zero-width joiner of emoji sequences.
KEPT = frozenset({"\u200d"})


def hidden(char: str) -> bool:
    """Whether the character ``char`` hides or rearranges what text shows."""
    return char not in KEPT and unicodedata.category(char) in HIDDEN_CATEGORIES


def escaped(char: str) -> str:
    """``char`` written as a visible escape: ``\\x1b``, ``\\u202e``, ``\\U000e0001``."""
    code = ord(char)
    return (
        f"\\x{code:02x}"
        if code < 0x100
        else f"\\u{code:04x}"
        if code < 0x10000
        else f"\\U{code:08x}"
    )
