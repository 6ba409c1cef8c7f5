"""How chat events look in the live views: messages as HTML the way the platform sends them
(emoticons cut from the platform's sprite sheets, links, tags), role badges, one-line
summaries of other events, and a small SVG sparkline.

Pure functions of their arguments, with no widget library: :mod:`explorer.views.chat` and
:mod:`explorer.views.watch` put what they return into HTML widgets.

Every piece of text from the platform is escaped. A link becomes an anchor only for an
``http`` or ``https`` address (``rel="noopener noreferrer" target="_blank"``), and an
emoticon becomes an image only from a builtin pack on the platform the chat came from or an
external pack at an ``http``/``https`` address; anything else stays text.

Builtin packs live where the historical platform kept them, on the site beside the API:
``<site>/_latest/emoticons/<pack>.png`` (each component's ``coords`` is its rectangle on that
sheet; :func:`sprite_url`). A builtin emoticon's image travels inline, cut from that sheet by
an :data:`Inline` function (:class:`explorer.views.sprites.SpriteSheets`, which says why), so it
shows in a browser that cannot reach the platform; an external pack's sheet is the browser's
to load, offset to the emoticon's rectangle.
"""

from __future__ import annotations

import html
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any
from urllib.parse import quote, urlsplit, urlunsplit

import pandas as pd
from pandas.api.types import is_scalar

#: Where builtin emoticon packs live, relative to the site root.
SPRITES = "/_latest/emoticons/"
#: A message shown in a view is cut to this many characters of text.
TEXT_LIMIT = 300

#: An emoticon's image cut from the sheet at an address, by its ``(x, y, width, height)`` on
#: it, as a ``data:`` URL; None while it cannot be had.
Inline = Callable[[str, tuple[int, int, int, int]], str | None]

_API_PATH = re.compile(r"/api/v[0-9]+/?\Z")
_PACK = re.compile(r"[A-Za-z0-9_-]{1,64}")
#: Badge colours by role, strongest first; a user shows the badges of the roles they hold.
_BADGES: dict[str, str] = {
    "Owner": "#d4380d",
    "Staff": "#531dab",
    "GlobalMod": "#08979c",
    "Mod": "#389e0d",
    "Founder": "#c41d7f",
    "Subscriber": "#1d39c4",
    "Pro": "#d48806",
    "Muted": "#8c8c8c",
    "Banned": "#262626",
}


def site_root(base_url: str) -> str:
    """The platform's site root from its REST base (``http://host/api/v1`` -> ``http://host``)."""
    parts = urlsplit(base_url)
    return urlunsplit((parts.scheme, parts.netloc, _API_PATH.sub("", parts.path), "", ""))


def sprite_url(base_url: str, pack: str) -> str | None:
    """The sprite sheet of builtin ``pack`` on the platform at ``base_url`` (None when the
    pack's name is not a plain name or the base is not an http/https address)."""
    if not _PACK.fullmatch(pack) or not _web(base_url):
        return None
    return f"{site_root(base_url).rstrip('/')}{SPRITES}{quote(pack)}.png"


def _web(url: str) -> bool:
    """Whether ``url`` is an absolute http or https address (False for one that cannot even
    be parsed, such as ``http://[::1``)."""
    try:
        parts = urlsplit(url.strip())
        parts.port  # noqa: B018 -- reading it validates the host and port
    except ValueError:
        return False
    return parts.scheme.lower() in ("http", "https") and bool(parts.netloc)


def chart_text(text: str) -> str:
    """``text`` for a matplotlib title or label, shown as written: a ``$`` would otherwise
    start mathtext, and a malformed formula stops the chart from drawing at all."""
    return text.replace("$", r"\$")


def _attr(text: str) -> str:
    return html.escape(text, quote=True)


def _coords(component: Mapping[str, Any]) -> tuple[int, int, int, int] | None:
    """An emoticon's rectangle on its sheet, as integers (None when malformed)."""
    coords = component.get("coords")
    if not isinstance(coords, Mapping):
        return None
    try:
        x, y, width, height = (int(coords[k]) for k in ("x", "y", "width", "height"))
    except (KeyError, TypeError, ValueError):
        return None
    if min(x, y) < 0 or not (0 < width <= 256 and 0 < height <= 256):
        return None
    return x, y, width, height


def emoticon_html(
    component: Mapping[str, Any], base_url: str | None, inline: Inline | None = None
) -> str:
    """An emoticon component as its image, or its text when there is none: a builtin one
    inline (``inline`` cuts it from its pack's sheet on the platform at ``base_url``), an
    external one cut from its sheet by the browser; odd packs or coordinates stay text."""
    text = str(component.get("text") or "")
    pack = str(component.get("pack") or "")
    source = component.get("source")
    coords = _coords(component)
    if coords is None:
        return html.escape(text)
    x, y, width, height = coords
    style = f"width:{width}px;height:{height}px;vertical-align:middle"
    image: str | None = None
    if source == "builtin" and base_url and inline is not None:
        sheet = sprite_url(base_url, pack)
        image = inline(sheet, coords) if sheet is not None else None
    elif source == "external" and _web(pack):
        image = pack.strip()
        style += f";object-fit:none;object-position:-{x}px -{y}px"
    if image is None:
        return html.escape(text)
    return (
        f'<img class="explorer-emoticon" src="{_attr(image)}" alt="{_attr(text)}" '
        f'title="{_attr(text)}" style="{style}">'
    )


#: How a link looks: the notebook's widget styles reset anchors to plain text, so it says so.
LINK_STYLE = "color:#0958d9;text-decoration:underline;cursor:pointer"


def link_html(component: Mapping[str, Any]) -> str:
    """A link component as an anchor opening a new tab (http/https only; else its text),
    styled as a link."""
    url = str(component.get("url") or "")
    text = str(component.get("text") or url)
    if not _web(url):
        return html.escape(text)
    return (
        f'<a class="explorer-link" href="{_attr(url.strip())}" rel="noopener noreferrer" '
        f'target="_blank" style="{LINK_STYLE}">{html.escape(text)}</a>'
    )


def tag_html(component: Mapping[str, Any]) -> str:
    """A tag component (``@name``) highlighted."""
    text = str(component.get("text") or f"@{component.get('username') or ''}")
    return (
        '<span class="explorer-tag" style="background:#e6f4ff;color:#0958d9;'
        f'border-radius:3px;padding:0 2px">{html.escape(text)}</span>'
    )


def message_html(
    components: Sequence[Any], base_url: str | None = None, inline: Inline | None = None
) -> str:
    """A message's components as the platform means them to look (see the module docstring;
    ``inline`` gives builtin emoticons' images); at most :data:`TEXT_LIMIT` characters of
    text."""
    parts: list[str] = []
    room = TEXT_LIMIT
    for component in components:
        if room <= 0:
            parts.append("&hellip;")
            break
        if not isinstance(component, Mapping):
            continue
        kind = component.get("type")
        text = str(component.get("text") or component.get("data") or "")
        if kind == "emoticon":
            parts.append(emoticon_html(component, base_url, inline))
        elif kind == "link":
            parts.append(link_html(component))
        elif kind == "tag":
            parts.append(tag_html(component))
        else:
            parts.append(html.escape(text[:room]))
        room -= len(text)
    return "".join(parts)


def badges_html(roles: str | Sequence[str] | None) -> str:
    """Role badges for a user's roles (comma-joined as in the log, or a list); the plain
    ``User`` role shows none."""
    if roles is None or (isinstance(roles, float) and pd.isna(roles)):
        return ""
    held = roles.split(",") if isinstance(roles, str) else list(roles)
    held = [role.strip() for role in held]
    return "".join(
        f'<span class="explorer-badge" style="background:{colour};color:white;'
        'border-radius:3px;padding:0 3px;margin-right:2px;font-size:75%">'
        f"{html.escape(role)}</span>"
        for role, colour in _BADGES.items()
        if role in held
    )


def _value(row: Any, name: str) -> Any:
    """A field of a log row, None where missing."""
    found = getattr(row, name, None)
    return None if is_scalar(found) and pd.isna(found) else found


def summary(row: Any, names: Mapping[int, str | None]) -> str:
    """One line of plain text saying what a log row is about (``names``: purged users' names
    by id, where known)."""
    event = str(row.event)
    if event == "ChatMessage":
        target = _value(row, "target")
        text = f"{_value(row, 'text') or ''}" + (f" (whisper to {target})" if target else "")
        return text[:TEXT_LIMIT]
    if event in ("PollStart", "PollEnd"):
        responses = _value(row, "poll_responses") or {}
        votes = ", ".join(f"{answer}: {count}" for answer, count in responses.items())
        return f"{_value(row, 'poll_q') or ''} [{votes}]"[:TEXT_LIMIT]
    if event in ("DeleteMessage", "PurgeMessage", "ClearMessages"):
        user = _value(row, "target_user_id")
        what = _value(row, "message_id") or ((names.get(user) or f"user {user}") if user else "")
        by = _value(row, "moderator")
        return f"{what}" + (f" by {by}" if by else "")
    if event == "UserTimeout":
        duration = _value(row, "duration_ms")
        return f"timed out for {duration / 1000:g} s" if duration is not None else "timed out"
    return str(_value(row, "user_roles") or "")


def event_html(
    row: Any,
    packet: Mapping[str, Any] | None,
    names: Mapping[int, str | None],
    base_url: str | None = None,
    inline: Inline | None = None,
) -> str:
    """What a log row shows in a view's text column: a chat message from its ``packet``'s
    components (emoticons, links, tags; see :func:`message_html`), anything else as its
    escaped :func:`summary`."""
    if str(row.event) == "ChatMessage" and packet is not None:
        data = packet.get("data")
        message = data.get("message") if isinstance(data, Mapping) else None
        components = message.get("message") if isinstance(message, Mapping) else None
        if isinstance(components, list):
            body = message_html(components, base_url, inline)
            target = _value(row, "target")
            whisper = f" <i>(whisper to {html.escape(str(target))})</i>" if target else ""
            return body + whisper
    return html.escape(summary(row, names))


def table_html(heads: Sequence[str], rows: Iterable[Sequence[str]]) -> str:
    """An HTML table: ``heads`` as text (escaped), ``rows`` of cells already HTML."""
    head = "".join(f"<th style='text-align:left'>{html.escape(h)}</th>" for h in heads)
    body = "".join("<tr>" + "".join(f"<td>{c}</td>" for c in row) + "</tr>" for row in rows)
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def sparkline(values: Sequence[float], width: int = 120, height: int = 24) -> str:
    """A small inline SVG line of ``values`` (oldest first), scaled to its largest value;
    empty values give an empty frame."""
    points = ""
    if values:
        top = max(max(values), 1e-9)
        step = width / max(len(values) - 1, 1)
        points = " ".join(
            f"{i * step:.1f},{height - 1 - (v / top) * (height - 2):.1f}"
            for i, v in enumerate(values)
        )
    return (
        f'<svg class="explorer-sparkline" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" style="vertical-align:middle">'
        f'<polyline fill="none" stroke="#1677ff" stroke-width="1.5" points="{points}"/></svg>'
    )
