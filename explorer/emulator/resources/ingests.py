"""Ingests: the servers a broadcaster streams to, and the best one to pick right now.

Each ingest has reference.md's shape ``{name, host, pingTest, protocols: [{type}]}`` plus
``load``: its share of capacity in use. The world has no geography, so every live channel is
taken to stream through ingest number ``channel id mod ingest count`` (ingests in id order);
``load`` is that number of live channels over the ingest's stored capacity. ``/ingests/best``
is the least-loaded ingest (ties broken by name): deterministic for a given world state, and
it moves as channels go live or offline. ``protocol`` narrows either list to the ingests that
accept it. Hosts are simulated (``.invalid``); nothing listens there.
"""

from __future__ import annotations

from typing import Any

import orjson

from explorer.emulator.context import Context
from explorer.emulator.db import ingests
from explorer.emulator.db.engine import Store, dumps
from explorer.emulator.policy import Param, Route
from explorer.emulator.responses import bad_request, not_found
from explorer.wire import routes as wire
from explorer.wire.models import INGEST_PROTOCOLS

PROTOCOLS = INGEST_PROTOCOLS
#: Seeded ingests: name, host code, capacity (live streams), protocols.
INGESTS: tuple[tuple[str, str, int, tuple[str, ...]], ...] = (
    ("US West: Seattle", "sea", 400, PROTOCOLS),
    ("US West: San Jose", "sjc", 400, PROTOCOLS),
    ("US Central: Dallas", "dfw", 300, PROTOCOLS),
    ("US East: Washington", "iad", 500, PROTOCOLS),
    ("Canada: Toronto", "yyz", 200, ("rtmp",)),
    ("EU West: Amsterdam", "ams", 400, PROTOCOLS),
    ("EU West: London", "lhr", 300, PROTOCOLS),
    ("EU Central: Frankfurt", "fra", 300, ("rtmp",)),
    ("Asia: Tokyo", "tyo", 200, PROTOCOLS),
    ("Oceania: Sydney", "syd", 150, ("rtmp",)),
    ("South America: Sao Paulo", "gru", 150, ("rtmp",)),
)


def seed(store: Store, world_seed: int) -> None:
    """Store the seeded ingests (those already stored are left as they are)."""
    ingests.add_ingests(
        store,
        [
            (name, f"ingest-{code}.explorer.invalid", capacity, dumps(list(protocols)))
            for name, code, capacity, protocols in INGESTS
        ],
    )


def _ingests(ctx: Context) -> list[dict[str, Any]]:
    """Every ingest accepting the ``protocol`` parameter (if given), with its live load."""
    protocol = ctx.params.get("protocol")
    if protocol is not None and protocol not in PROTOCOLS:
        raise bad_request(f"protocol must be one of {', '.join(PROTOCOLS)}.", "protocol")
    rows = ingests.stored(ctx.store)
    streams = ingests.live_by_slot(ctx.store, len(rows))
    found = []
    for slot, (name, host, capacity, raw_protocols) in enumerate(rows):
        protocols = orjson.loads(raw_protocols)
        if protocol is not None and protocol not in protocols:
            continue
        found.append(
            {
                "name": name,
                "host": host,
                "pingTest": f"wss://{host}/pingtest",
                "protocols": [{"type": p} for p in protocols],
                "load": round(streams.get(slot, 0) / capacity, 4),
            }
        )
    return found


async def list_ingests(ctx: Context) -> list[dict[str, Any]]:
    """GET /ingests: every ingest (accepting ``protocol``, if given)."""
    return _ingests(ctx)


async def best_ingest(ctx: Context) -> dict[str, Any]:
    """GET /ingests/best: the least-loaded ingest (accepting ``protocol``, if given)."""
    candidates = _ingests(ctx)
    if not candidates:
        raise not_found("Ingest")
    return min(candidates, key=lambda ingest: (ingest["load"], ingest["name"]))


_PROTOCOL = Param("protocol", {"type": "string", "enum": list(PROTOCOLS)}, "only ingests with it")


routes = [
    Route(
        wire.INGESTS,
        list_ingests,
        summary="Every ingest server, with its current load",
        params=(_PROTOCOL,),
        errors=(400,),
    ),
    Route(
        wire.BEST_INGEST,
        best_ingest,
        summary="The least-loaded ingest (deterministic for a world state)",
        params=(_PROTOCOL,),
        errors=(400, 404),
    ),
]
