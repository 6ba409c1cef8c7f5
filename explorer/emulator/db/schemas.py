"""A platform's database of its own inside a PostgreSQL database others use: a schema.

A PostgreSQL server a user already runs (a test suite's, a CI service's) gives one database
and the right to create in it, seldom the right to create databases. Each platform then
runs in a new schema of that database: a URL whose connections work in it
(``options=-csearch_path=...``), so that the engine (:mod:`.postgres`) creates, reads and
notifies in that schema alone (its ``LISTEN`` channels are named after the schema,
:func:`.listener.channel`), and the schema is dropped with everything in it after use.
"""

from __future__ import annotations

import secrets
from collections.abc import Iterator
from contextlib import contextmanager
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from explorer.emulator.db.engine import engine_of

#: The prefix of the schemas made here (a leftover one is recognisable as the platform's).
PREFIX = "explorer_"


def in_schema(url: str, schema: str) -> str:
    """``url`` (a ``postgresql://`` URL) with its connections working in ``schema``: first
    on their search path, beside any server ``options`` the URL already gives."""
    parts = urlsplit(url)
    query = parse_qsl(parts.query, keep_blank_values=True)
    given = " ".join(value for key, value in query if key == "options")
    options = f"{given} -csearch_path={schema}".strip()
    query = [(key, value) for key, value in query if key != "options"] + [("options", options)]
    return urlunsplit(parts._replace(query=urlencode(query)))


@contextmanager
def private_schema(url: str) -> Iterator[str]:
    """A URL working in a new, empty schema of ``url``'s database, which is dropped (with
    everything in it) when the block ends; whoever used it must have closed its
    connections."""
    import psycopg

    if engine_of(url) != "postgresql":
        raise ValueError(f"a schema of its own needs a postgresql:// URL, not {url!r}")
    name = f"{PREFIX}{secrets.token_hex(6)}"
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(f"CREATE SCHEMA {name}")
    try:
        yield in_schema(url, name)
    finally:
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute(f"DROP SCHEMA {name} CASCADE")
