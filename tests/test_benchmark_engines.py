"""The PostgreSQL floor of ``benchmarks/engines.py``: what it writes is what the platform wrote."""

from __future__ import annotations

import pytest

from benchmarks.engines import postgres_floor
from explorer.emulator import credentials
from explorer.emulator.categories import opening
from explorer.emulator.db.engine import LATER_INDEXES, Store
from explorer.emulator.world import seed_store
from tests import pgcluster

pytestmark = pytest.mark.any_engine("runs both engines itself, in every pass")


def test_the_floor_writes_every_row_and_the_indexes_before_the_line(
    postgres: pgcluster.Cluster,
) -> None:
    """The floor copies every table's rows of a seeded database into a schema of its own and
    builds every index of it but the later ones."""
    postgres.create("floor_check")
    url = postgres.url_of("floor_check")
    store = Store(url)
    seed_store(store, 0, 200, credentials.hash_password, opening)
    store.close()
    wall, cpu = postgres_floor(url, postgres.pid)
    assert wall > 0 and cpu > 0
    import psycopg  # installed where the postgres fixture did not skip

    with psycopg.connect(url) as conn:
        tables = [
            r[0]
            for r in conn.execute("SELECT tablename FROM pg_tables WHERE schemaname = 'public'")
        ]
        assert tables
        for table in tables:
            counts = [
                conn.execute(f'SELECT count(*) FROM {schema}."{table}"').fetchone()
                for schema in ("public", "floor")
            ]
            assert counts[0] == counts[1], table
        assert conn.execute('SELECT count(*) FROM floor."channels"').fetchone() == (200,)
        indexes = {
            schema: {
                r[0]
                for r in conn.execute(
                    "SELECT indexname FROM pg_indexes WHERE schemaname = %s", (schema,)
                )
            }
            for schema in ("public", "floor")
        }
    assert indexes["floor"] == indexes["public"] - set(LATER_INDEXES)
    assert indexes["floor"]
