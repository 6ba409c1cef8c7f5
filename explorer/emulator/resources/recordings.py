"""Recordings (VODs) of a channel's past broadcasts: ``GET /channels/{id}/recordings``.

Recordings live in ``recordings`` and ``recording_vods``. A channel's past ones are seeded the
first time anyone lists them, deterministically from the world seed and the channel's row: a
channel without ``hasVod`` has none; one with it has a few, more the more viewers it has, made
in the two months before the world's day (``WORLD_NOW``; their ``expiresAt`` is 90 days after
they were made, in that same world time) and encoded like the channel's broadcast source (see
``manifests``). Ids are derived from the channel id, so every platform with the same seed
answers the same ids.

When the channel has ``vodsEnabled`` off, only its owner (and staff) see its recordings; others
get an empty list. Paging is the channels list's: ``page`` (from 0), ``limit`` (default 50, at
most 100), ``order`` over ``id``, ``createdAt``, ``viewsTotal``, ``duration`` (default newest
first) and ``noCount``; the total is in ``X-Total-Count``. ``where``, ``q`` and ``fields`` are
refused (400), not ignored.
"""

from __future__ import annotations

import math
import random
from datetime import datetime, timedelta
from typing import Any

import orjson
from starlette.responses import Response

from explorer.emulator.access import ChannelRef, channel_ref, is_owner, is_staff
from explorer.emulator.context import Context
from explorer.emulator.policy import Param, Route
from explorer.emulator.resources.manifests import MEDIA_HOST, source_of
from explorer.emulator.responses import JSONResponse, not_found
from explorer.emulator.store import dumps
from explorer.emulator.world import WORLD_NOW, iso
from explorer.wire.query import MAX_PAGE, FieldKind, QueryError, parse_list_query

SCHEMA = """
CREATE TABLE IF NOT EXISTS recordings (
    id INTEGER PRIMARY KEY, channelId INTEGER NOT NULL, name TEXT NOT NULL, typeId INTEGER,
    state TEXT NOT NULL, viewsTotal INTEGER NOT NULL, duration REAL NOT NULL,
    expiresAt TEXT NOT NULL, createdAt TEXT NOT NULL, updatedAt TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS recordings_channel ON recordings (channelId, createdAt);
CREATE TABLE IF NOT EXISTS recording_vods (
    id INTEGER PRIMARY KEY, recordingId INTEGER NOT NULL REFERENCES recordings (id),
    baseUrl TEXT NOT NULL, format TEXT NOT NULL, data TEXT, createdAt TEXT NOT NULL,
    updatedAt TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS recording_vods_recording ON recording_vods (recordingId, id);
CREATE TABLE IF NOT EXISTS recordings_seeded (channelId INTEGER PRIMARY KEY);
"""

RECORDING_FIELDS = (
    "id",
    "channelId",
    "name",
    "typeId",
    "state",
    "viewsTotal",
    "duration",
    "expiresAt",
    "createdAt",
    "updatedAt",
)
VOD_FIELDS = ("id", "recordingId", "baseUrl", "format", "data", "createdAt", "updatedAt")
ORDERABLE: dict[str, FieldKind] = {
    "id": "int",
    "createdAt": "time",
    "viewsTotal": "int",
    "duration": "float",
}
RETENTION = timedelta(days=90)
SEEDED_SPAN = timedelta(days=60)


def _vods(seed: int, channel_id: int, recording_id: int, made: str) -> list[dict[str, Any]]:
    """The files of one recording: HLS and raw video at the source's encoding, a thumbnail
    and the chat replay. ``data`` keys are capitalized as the historical API sent them
    (``Width``, ``Height``, ``Fps``, ``Bitrate``; e.g. Mixer.Base's ChannelVODDataModel reads
    them so); ``Bitrate`` is in kbit/s."""
    source = source_of(seed, channel_id)
    video = {
        "Width": source.width,
        "Height": source.height,
        "Fps": source.fps,
        "Bitrate": source.kbps,
    }
    formats: tuple[tuple[str, dict[str, int] | None], ...] = (
        ("hls", video),
        ("raw", video),
        ("thumbnail", {"Width": 1280, "Height": 720}),
        ("chat", None),
    )
    return [
        {
            "id": recording_id * 10 + index,
            "recordingId": recording_id,
            "baseUrl": f"https://{MEDIA_HOST}/vods/{recording_id}/",
            "format": name,
            "data": None if data is None else dumps(data),
            "createdAt": made,
            "updatedAt": made,
        }
        for index, (name, data) in enumerate(formats, start=1)
    ]


def seed_recordings(ctx: Context, channel_id: int) -> None:
    """Store the channel's past recordings, once (see the module docstring)."""
    store = ctx.store
    if store.one("SELECT 1 FROM recordings_seeded WHERE channelId = ?", (channel_id,)):
        return
    row = store.one(
        "SELECT hasVod, name, typeId, viewersTotal, createdAt FROM channels WHERE id = ?",
        (channel_id,),
    )
    assert row is not None  # channel_ref found it in this same request
    has_vod, title, type_id, viewers, created = row
    seed = int(store.meta("seed") or 0)
    rng = random.Random(f"{seed}:{channel_id}:recordings")
    count = rng.randint(1, 3 + min(9, int(3 * math.log10(viewers + 1)))) if has_vod else 0
    earliest = max(datetime.fromisoformat(created), WORLD_NOW - SEEDED_SPAN)
    span = max((WORLD_NOW - earliest).total_seconds() - 86400, 0)
    starts = sorted(earliest + timedelta(seconds=rng.uniform(0, span)) for _ in range(count))
    recordings, vods = [], []
    for number, start in enumerate(starts, start=1):
        recording_id = channel_id * 100 + number
        duration = round(rng.uniform(1800, 6 * 3600), 3)
        made = iso(start)
        recordings.append(
            {
                "id": recording_id,
                "channelId": channel_id,
                "name": title,
                "typeId": type_id,
                "state": "AVAILABLE",
                "viewsTotal": int(viewers * rng.uniform(0.0005, 0.01)) + rng.randint(0, 20),
                "duration": duration,
                "expiresAt": iso(start + RETENTION),
                "createdAt": made,
                "updatedAt": iso(start + timedelta(seconds=duration)),
            }
        )
        vods += _vods(seed, channel_id, recording_id, made)
    with store.transaction() as conn:
        store.insert_many("recordings", recordings)
        store.insert_many("recording_vods", vods)
        conn.execute("INSERT INTO recordings_seeded (channelId) VALUES (?)", (channel_id,))


def _render_vod(row: tuple[Any, ...]) -> dict[str, Any]:
    vod = dict(zip(VOD_FIELDS, row, strict=True))
    vod["data"] = None if vod["data"] is None else orjson.loads(vod["data"])
    return vod


def _hidden(ctx: Context, channel: ChannelRef) -> bool:
    """Whether the caller may not see ``channel``'s recordings (``vodsEnabled`` off, and they
    are neither its owner nor staff)."""
    return not (
        is_owner(ctx, channel)
        or is_staff(ctx)
        or ctx.store.scalar("SELECT vodsEnabled FROM channels WHERE id = ?", (channel.id,))
    )


def _with_vods(ctx: Context, rows: list[tuple[Any, ...]]) -> list[dict[str, Any]]:
    """Recording objects from ``RECORDING_FIELDS`` rows, each with its ``vods``."""
    recordings = [{**dict(zip(RECORDING_FIELDS, row, strict=True)), "vods": []} for row in rows]
    by_id = {recording["id"]: recording for recording in recordings}
    if by_id:
        marks = ", ".join("?" * len(by_id))
        for row in ctx.store.all(
            f"SELECT {', '.join(VOD_FIELDS)} FROM recording_vods WHERE recordingId IN ({marks}) "
            "ORDER BY id",
            list(by_id),
        ):
            by_id[row[1]]["vods"].append(_render_vod(row))
    return recordings


async def list_recordings(ctx: Context) -> Response:
    """GET /channels/{id}/recordings: one page of the channel's recordings with their VODs."""
    channel = channel_ref(ctx)
    query = parse_list_query(ctx.params, ORDERABLE, ())
    for name, given in (("where", query.where), ("q", query.q)):
        if given:
            raise QueryError(name, f"{name} is not supported on recordings.")
    headers = {"X-Total-Count": "0"} if query.count else {}
    if _hidden(ctx, channel):
        return JSONResponse([], headers=headers)
    seed_recordings(ctx, channel.id)
    order = [f"{o.field} {'DESC' if o.descending else 'ASC'}" for o in query.order]
    rows = ctx.store.all(
        f"SELECT {', '.join(RECORDING_FIELDS)} FROM recordings WHERE channelId = ? "
        f"ORDER BY {', '.join(order or ['createdAt DESC'])}, id DESC LIMIT ? OFFSET ?",
        (channel.id, query.limit, query.page * query.limit),
    )
    recordings = _with_vods(ctx, rows)
    if query.count:
        total = ctx.store.scalar(
            "SELECT COUNT(*) FROM recordings WHERE channelId = ?", (channel.id,)
        )
        headers["X-Total-Count"] = str(total)
    return JSONResponse(recordings, headers=headers)


async def get_recording(ctx: Context) -> dict[str, Any]:
    """GET /recordings/{id}: one recording with its VODs (404 when there is none, or its
    channel's recordings are hidden from the caller). A recording's id names its channel
    (``channelId * 100 + n``), so its channel's recordings are seeded first if need be."""
    recording_id = ctx.path_int("recording")
    row = ctx.store.one(
        "SELECT id, userId, token, online, suspended FROM channels WHERE id = ?",
        (recording_id // 100,),
    )
    if row is None:
        raise not_found("Recording")
    channel = ChannelRef(row[0], row[1], row[2], bool(row[3]), bool(row[4]))
    if _hidden(ctx, channel) or (channel.suspended and not is_staff(ctx)):
        raise not_found("Recording")
    seed_recordings(ctx, channel.id)
    found = ctx.store.all(
        f"SELECT {', '.join(RECORDING_FIELDS)} FROM recordings WHERE id = ?", (recording_id,)
    )
    if not found:
        raise not_found("Recording")
    return _with_vods(ctx, found)[0]


_TIME = {"type": "string", "format": "date-time"}
_INT = {"type": "integer"}
_STR = {"type": "string"}

SCHEMAS: dict[str, Any] = {
    "Vod": {
        "type": "object",
        "required": list(VOD_FIELDS),
        "properties": {
            "id": _INT,
            "recordingId": _INT,
            "baseUrl": _STR,
            "format": {"type": "string", "enum": ["hls", "raw", "thumbnail", "chat"]},
            "data": {
                "type": "object",
                "nullable": True,
                "description": "Width, Height (and Fps, Bitrate in kbit/s for video), "
                "capitalized as the historical API sent them",
                "properties": {"Width": _INT, "Height": _INT, "Fps": _INT, "Bitrate": _INT},
            },
            "createdAt": _TIME,
            "updatedAt": _TIME,
        },
    },
    "Recording": {
        "type": "object",
        "required": [*RECORDING_FIELDS, "vods"],
        "properties": {
            "id": _INT,
            "channelId": _INT,
            "name": _STR,
            "typeId": {**_INT, "nullable": True},
            "state": {"type": "string", "enum": ["PROCESSING", "AVAILABLE", "DELETED"]},
            "viewsTotal": _INT,
            "duration": {"type": "number", "description": "seconds"},
            "expiresAt": _TIME,
            "createdAt": _TIME,
            "updatedAt": _TIME,
            "vods": {"type": "array", "items": {"$ref": "#/components/schemas/Vod"}},
        },
    },
}

routes = [
    Route(
        "GET",
        "/channels/{channel}/recordings",
        list_recordings,
        "channel-read",
        auth="optional",
        summary="A channel's recordings with their VODs",
        params=(
            Param(
                "page",
                {"type": "integer", "minimum": 0, "maximum": MAX_PAGE},
                "0-based page number",
            ),
            Param("limit", {"type": "integer", "minimum": 1, "maximum": 100}, "default 50"),
            Param("order", {"type": "string"}, "comma-separated field:asc|desc"),
            Param("noCount", {"type": "string", "enum": ["0", "1", "true", "false"]}),
        ),
        response={"type": "array", "items": {"$ref": "#/components/schemas/Recording"}},
        errors=(400, 404, 461),
    ),
    Route(
        "GET",
        "/recordings/{recording}",
        get_recording,
        "channel-read",
        auth="optional",
        summary="One recording with its VODs (what video tools read: vods[].baseUrl, format, "
        "data.Width/Height/Fps/Bitrate)",
        response={"$ref": "#/components/schemas/Recording"},
        errors=(400, 404, 461),
    ),
]
