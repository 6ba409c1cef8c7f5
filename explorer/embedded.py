"""The platform embedded in this process: the toolkit's default when no base URL is set.

The first client created without ``base_url`` or ``EXPLORER_BASE_URL`` starts the platform in a
background thread (a seeded in-memory world with simulated live activity and real rate limits,
counted per client as in ``explorer lab``: every client of this process reaches it over
loopback, and each gets its own buckets), logs its address once, and every later client reuses
it, so a notebook works offline and on Binder with no setup. It stops when the process exits.
The server is imported only here and only then, so the toolkit does not load it when it talks
to a remote platform.
"""

from __future__ import annotations

import atexit
import logging
import os
import threading
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from explorer.emulator import Platform

log = logging.getLogger(__name__)

_lock = threading.Lock()
_platform: Platform | None = None
_pid = 0


def base_url() -> str:
    """The embedded platform's REST base URL, starting the platform on first call."""
    global _platform, _pid
    with _lock:
        if _platform is None or _pid != os.getpid():
            from explorer.core.jupyterhub import served_hosts
            from explorer.emulator import start

            _platform = start(simulate=True, limits_per_client=True, allowed_hosts=served_hosts())
            _pid = os.getpid()
            atexit.register(_platform.stop)
            log.info("explorer: started the embedded platform at %s", _platform.base_url)
        return _platform.base_url
