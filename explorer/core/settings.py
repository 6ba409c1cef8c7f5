"""Client settings from arguments, then ``EXPLORER_*`` environment variables, then defaults.

Notebooks stay free of addresses and secrets: export ``EXPLORER_BASE_URL`` (and a token or
credentials) once and every ``explorer.connect()`` picks them up; leave the base URL unset and
the toolkit starts the embedded platform instead. Explicit arguments always win, and
credentials are taken as a whole from one source (an explicit ``token=`` is not mixed with an
environment password). Pure: the environment is passed in.

=======================  ====================================================
variable                 meaning
=======================  ====================================================
``EXPLORER_BASE_URL``    REST base address ending in ``/api/v1``
``EXPLORER_TOKEN``       OAuth bearer token
``EXPLORER_USERNAME``    username for a cookie session (with the password)
``EXPLORER_PASSWORD``    its password
``EXPLORER_PROGRESS``    ``0`` turns progress bars off by default
=======================  ====================================================
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass

ENV_PREFIX = "EXPLORER_"
DEFAULT_TIMEOUT = 30.0
#: Pages of one listing in flight at once; measured in benchmarks/rest_client.py.
DEFAULT_CONCURRENCY = 4

_FALSE = frozenset({"0", "false", "no", "off"})


@dataclass(frozen=True, slots=True)
class Settings:
    """Resolved client settings; ``base_url`` None means "use the embedded platform"."""

    base_url: str | None = None
    token: str | None = None
    username: str | None = None
    password: str | None = None
    progress: bool = True


def resolve(
    base_url: str | None = None,
    *,
    token: str | None = None,
    username: str | None = None,
    password: str | None = None,
    progress: bool | None = None,
    environ: Mapping[str, str] = os.environ,
) -> Settings:
    """Merge explicit arguments with ``EXPLORER_*`` variables from ``environ``."""

    def env(name: str) -> str | None:
        return environ.get(ENV_PREFIX + name) or None

    if token is None and username is None:
        token, username, password = env("TOKEN"), env("USERNAME"), env("PASSWORD")
    if progress is None:
        raw = env("PROGRESS")
        progress = raw is None or raw.lower() not in _FALSE
    url = base_url or env("BASE_URL")
    return Settings(
        base_url=url.rstrip("/") if url else None,
        token=token,
        username=username,
        password=password,
        progress=progress,
    )
