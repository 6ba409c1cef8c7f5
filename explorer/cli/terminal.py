"""Text the commands print: what the platform sent (chat messages, user names, channel titles,
poll answers) made inert before it reaches a terminal.

A terminal obeys control sequences in what a program prints: a chatter's message could clear
the screen, set the window title, write the clipboard (OSC 52) or overwrite earlier lines.
Every hidden character (``explorer.wire.text``) is printed as a visible escape instead
(``\\x1b``, ``\\u202e``); the newlines a command writes itself are kept.
"""

from __future__ import annotations

from explorer.wire.text import escaped, hidden


def inert(text: str, keep: str = "\n") -> str:
    """``text`` with each hidden character but those in ``keep`` written as an escape."""
    if text.isprintable():
        return text
    return "".join(escaped(char) if char not in keep and hidden(char) else char for char in text)


def say(text: str) -> None:
    """Print ``text`` made inert (its own newlines kept)."""
    print(inert(text), flush=True)
