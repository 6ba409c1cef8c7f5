"""Sign in with a short code: the historical platform's shortcode grant, for a notebook or a
script that has no browser redirect to receive a token.

The toolkit asks for a code (``POST /oauth/shortcode``), shows it with the address where a
person enters it (:func:`show`: a small widget in Jupyter, one line in a script), polls
``GET /oauth/shortcode/check/{handle}`` until the person approves or refuses, then exchanges
the authorization code for tokens. The transport drives the requests
(:meth:`~explorer.rest.transport.Transport.authorize_shortcode`); this module owns the shapes and
the showing.
"""

from __future__ import annotations

import html
import sys
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlencode, urlsplit

from explorer.core.jupyterhub import browser_root


@dataclass(frozen=True, slots=True)
class Shortcode:
    """A pending shortcode grant: the code to type, where, and how long it stays valid."""

    code: str
    handle: str
    expires_in: int
    url: str


def shortcode(base_url: str, body: dict[str, Any]) -> Shortcode:
    """The :class:`Shortcode` of a ``POST /oauth/shortcode`` answer, with its ``/go`` address
    (at the platform's web root, beside ``/api/v1``, as the person's browser reaches it: on a
    JupyterHub or Binder, through the Jupyter server; :mod:`explorer.core.jupyterhub`)."""
    parts = urlsplit(base_url)
    root = browser_root(f"{parts.scheme}://{parts.netloc}")
    code = str(body["code"])
    return Shortcode(
        code=code,
        handle=str(body["handle"]),
        expires_in=int(body["expires_in"]),
        url=f"{root}/go?{urlencode({'code': code})}",
    )


def _in_jupyter() -> bool:
    """Whether this runs in a Jupyter kernel (an IPython shell with a kernel attached)."""
    ipython = sys.modules.get("IPython")
    shell = ipython.get_ipython() if ipython is not None else None
    return shell is not None and hasattr(shell, "kernel")


def show(pending: Shortcode) -> None:
    """Tell the person where to enter the code: a widget in Jupyter, a line elsewhere."""
    line = (
        f"Go to {pending.url} and enter {pending.code} to sign in "
        f"(valid for {pending.expires_in} s)."
    )
    if not _in_jupyter():
        print(line, flush=True)
        return
    import ipywidgets
    from IPython.display import display

    display(ipywidgets.HTML(widget_html(pending)))


def widget_html(pending: Shortcode) -> str:
    """The widget's HTML: the code and the address come from the platform, so both are
    escaped, and the address is a link only when it is an http(s) one or a path on the
    Jupyter server (a JupyterHub's proxy)."""
    url, code = html.escape(pending.url, quote=True), html.escape(pending.code)
    linkable = pending.url.startswith(("http://", "https://")) or (
        pending.url.startswith("/") and not pending.url.startswith("//")
    )
    place = (
        f'<a href="{url}" target="_blank" rel="noopener noreferrer">{url}</a>' if linkable else url
    )
    return (
        f"<p>Go to {place} and enter "
        f"<b style='font-size:1.4em;letter-spacing:.2em'>{code}</b> to sign in "
        f"(valid for {int(pending.expires_in)} s).</p>"
    )
