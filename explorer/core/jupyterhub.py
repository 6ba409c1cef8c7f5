"""Where the person's browser reaches the platform when the kernel runs on a JupyterHub or
Binder: through the Jupyter server, not at the platform's own address.

There the platform listens on the container's loopback (``binder/start`` serves it on
``127.0.0.1:8000``), which the browser is not on. The single-user server says where it
lives with ``JUPYTERHUB_SERVICE_PREFIX`` (``/user/<name>/``), and jupyter-server-proxy,
which ``binder/`` installs, forwards ``<prefix>proxy/<port>/<path>`` to ``localhost:<port>``,
letting through only a user signed in to that server. So a page the person must open, such
as the shortcode grant's ``/go``, is given as that path: relative to the browser's own
address, which the kernel does not know. Elsewhere, or for a platform that is not on
loopback (which the browser may well reach), the platform's address stays as it is.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from ipaddress import ip_address
from urllib.parse import urlsplit

#: The variable a JupyterHub (and so Binder) sets for the single-user server and its kernels.
PREFIX = "JUPYTERHUB_SERVICE_PREFIX"


def _loopback(host: str) -> bool:
    """Whether ``host`` names this machine's loopback."""
    if host == "localhost":
        return True
    try:
        return ip_address(host).is_loopback
    except ValueError:
        return False


def browser_root(site_root: str, environ: Mapping[str, str] = os.environ) -> str:
    """The platform's web root (``http://127.0.0.1:8000``) as the person's browser reaches
    it: ``<prefix>proxy/<port>`` on a JupyterHub for a platform on loopback, else
    ``site_root`` itself."""
    prefix = environ.get(PREFIX, "")
    parts = urlsplit(site_root)
    if not prefix or parts.hostname is None or not _loopback(parts.hostname):
        return site_root
    port = parts.port or (443 if parts.scheme == "https" else 80)
    server = "/".join(filter(None, prefix.strip("/").split("/")))
    return f"{'/' + server if server else ''}/proxy/{port}{parts.path.rstrip('/')}"


def served_hosts(environ: Mapping[str, str] = os.environ) -> tuple[str, ...]:
    """The host names a platform started here serves beyond loopback names and addresses
    (``Config.allowed_hosts``): every name on a JupyterHub, none elsewhere.

    jupyter-server-proxy forwards the browser's ``Host`` (the hub's own name), and there the
    loopback is the container's, which no browser shares, so no page can have its name
    re-pointed at it (the DNS rebinding the platform's host check stops on a laptop)."""
    return ("*",) if environ.get(PREFIX) else ()
