"""Rich-text fields: the HTML a client may store, cleaned on write with an allow-list.

A channel description is HTML that clients render, so a write keeps harmless formatting
(paragraphs, emphasis, lists, headings, images) and links with ``http``/``https`` targets and
drops everything else: scripts and styles with their content, event-handler attributes,
``javascript:`` and ``data:`` URLs, unknown tags (their text stays). The work is done by ``nh3``
(the maintained Python binding of the Rust ``ammonia`` sanitizer) with an explicit allow-list,
so an upgrade of its defaults cannot widen what is kept. Plain-text fields (names, titles, chat
messages) are never passed here: they stay text and whoever renders them escapes them.
"""

from __future__ import annotations

import nh3

#: Tags kept; any other tag is removed and its text kept.
TAGS = frozenset(
    {"a", "b", "blockquote", "br", "code", "em", "h1", "h2", "h3", "h4", "hr", "i", "img"}
    | {"li", "ol", "p", "pre", "s", "span", "strong", "sub", "sup", "u", "ul"}
)
#: Tags removed together with their content.
DROPPED = frozenset({"script", "style", "iframe", "object", "embed", "template", "noscript"})
#: Attributes kept, per tag (no ``style``, no ``on*`` handler, no ``class`` or ``id``).
ATTRIBUTES = {"a": {"href", "title"}, "img": {"src", "alt", "title", "width", "height"}}
#: URL schemes kept in ``href`` and ``src``; relative URLs are dropped too.
SCHEMES = frozenset({"http", "https"})


def rich_text(html: str) -> str:
    """``html`` with everything outside the allow-list removed (links get
    ``rel="noopener noreferrer"``)."""
    return nh3.clean(
        html,
        tags=set(TAGS),
        clean_content_tags=set(DROPPED),
        attributes={tag: set(names) for tag, names in ATTRIBUTES.items()},
        url_schemes=set(SCHEMES),
        url_relative="deny",
        strip_comments=True,
        link_rel="noopener noreferrer",
    )
