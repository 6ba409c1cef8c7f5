"""Recordings (VODs) of a channel's past broadcasts: ``GET /channels/{id}/recordings``.

Recordings live in ``recordings`` and ``recording_vods`` (``db/recordings.py``). Every stream
session of a channel with ``hasVod`` becomes a recording when it ends (``sessions.py`` plans
them, the simulator stores them as they end, and the past 30 days' are stored the first time
anyone lists the channel's): its id is the session's, ``createdAt`` its start, ``updatedAt``
its end, ``duration`` its length in seconds, ``viewsTotal`` grows with its audience and length,
and ``expiresAt`` is 90 days after it was made. Files are encoded like the channel's broadcast
source (see ``manifests``). A channel without ``hasVod`` has none; the same seed gives the same
recordings.

When the channel has ``vodsEnabled`` off, only its owner (and staff) see its recordings; others
get an empty list. Paging is the channels list's: ``page`` (from 0), ``limit`` (default 50, at
most 100), ``order`` over ``id``, ``createdAt``, ``viewsTotal``, ``duration`` (default newest
first) and ``noCount``; the total is in ``X-Total-Count``. ``where``, ``q`` and ``fields`` are
refused (400), not ignored.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

import orjson
from starlette.responses import Response

from explorer.emulator import categories, streams
from explorer.emulator.access import ChannelRef, channel_ref, is_owner, is_staff
from explorer.emulator.context import Context
from explorer.emulator.db import channels, recordings
from explorer.emulator.db.engine import Store, dumps
from explorer.emulator.db.recordings import RECORDING_FIELDS, VOD_FIELDS
from explorer.emulator.policy import Param, Route
from explorer.emulator.resources.manifests import MEDIA_HOST, source_of
from explorer.emulator.responses import JSONResponse, not_found
from explorer.emulator.sessions import HISTORY_START, SESSION_IDS, Session
from explorer.emulator.world import iso
from explorer.wire import channel_routes as channel_wire
from explorer.wire import routes as wire
from explorer.wire.query import MAX_PAGE, FieldKind, QueryError, parse_list_query

ORDERABLE: dict[str, FieldKind] = {
    "id": "int",
    "createdAt": "time",
    "viewsTotal": "int",
    "duration": "float",
}
RETENTION = timedelta(days=90)


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


def store_sessions(store: Store, seed: int, ended: Sequence[Session]) -> int:
    """Store the recordings of ended sessions (once each: ids are the sessions'), for those of
    channels with ``hasVod``; returns how many were new."""
    if not ended:
        return 0
    ids = sorted({streams.channel_id(item) for item in ended})
    titles = recordings.recorded_channels(store, ids)
    stored, vods = [], []
    # A recording's category is the one its stream ended in (what the channel shows after).
    last = categories.of_sessions(seed, int(store.meta("channels") or 0), ended).second.tolist()
    for item, type_id in zip(ended, last, strict=True):
        channel = streams.channel_id(item)
        if channel not in titles:
            continue
        title = titles[channel]
        made, done = _moment(item.start), _moment(item.end)
        views = item.audience * item.hours * streams.VOD_VIEWS_PER_VIEWER_HOUR
        stored.append(
            (
                item.id,
                channel,
                title,
                type_id,
                "AVAILABLE",
                round(views) + item.id % 7,
                item.end - item.start,
                _moment(item.start + RETENTION.total_seconds()),
                made,
                done,
            )
        )
        vods += [tuple(vod.values()) for vod in _vods(seed, channel, item.id, made)]
    return recordings.add(store, stored, vods)


def sync_recordings(store: Store, channel_id: int) -> None:
    """Store the recordings of the channel's sessions that ended by the instant the world's
    channels are at (``streams.applied``), from the start of the world's history."""
    index = streams.index_of(store, channel_id)
    if index is None:
        return
    until = streams.applied(store)
    synced = recordings.synced_until(store, channel_id)
    if synced is not None and synced >= until:
        return
    schedule = streams.schedule_of(store)
    ended = [s for s in schedule.of_channel(index, HISTORY_START, until) if s.end <= until]
    store_sessions(store, int(store.meta("seed") or 0), ended)
    recordings.mark_synced(store, channel_id, until)


def _moment(seconds: float) -> str:
    return iso(datetime.fromtimestamp(seconds, UTC))


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
        or channels.field(ctx.store, channel.id, "vodsEnabled")
    )


def _with_vods(ctx: Context, rows: list[tuple[Any, ...]]) -> list[dict[str, Any]]:
    """Recording objects from ``RECORDING_FIELDS`` rows, each with its ``vods``."""
    found = [{**dict(zip(RECORDING_FIELDS, row, strict=True)), "vods": []} for row in rows]
    by_id = {recording["id"]: recording for recording in found}
    for row in recordings.vods(ctx.store, list(by_id)):
        by_id[row[1]]["vods"].append(_render_vod(row))
    return found


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
    sync_recordings(ctx.store, channel.id)
    order = [(o.field, o.descending) for o in query.order]
    rows = recordings.page(ctx.store, channel.id, order, query.limit, query.page * query.limit)
    found = _with_vods(ctx, rows)
    if query.count:
        headers["X-Total-Count"] = str(recordings.count(ctx.store, channel.id))
    return JSONResponse(found, headers=headers)


async def get_recording(ctx: Context) -> dict[str, Any]:
    """GET /recordings/{id}: one recording with its VODs (404 when there is none, or its
    channel's recordings are hidden from the caller). A recording's id names its channel
    (``channelId * SESSION_IDS + n``, that of its session), so its channel's recordings are
    stored first if need be."""
    recording_id = ctx.path_int("recording")
    row = channels.fields(
        ctx.store, recording_id // SESSION_IDS, "id", "userId", "token", "online", "suspended"
    )
    if row is None:
        raise not_found("Recording")
    channel = ChannelRef(row[0], row[1], row[2], bool(row[3]), bool(row[4]))
    if _hidden(ctx, channel) or (channel.suspended and not is_staff(ctx)):
        raise not_found("Recording")
    sync_recordings(ctx.store, channel.id)
    found = recordings.by_id(ctx.store, recording_id)
    if found is None:
        raise not_found("Recording")
    return _with_vods(ctx, [found])[0]


routes = [
    Route(
        channel_wire.CHANNEL_RECORDINGS,
        list_recordings,
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
        errors=(400, 404, 461),
    ),
    Route(
        wire.RECORDING,
        get_recording,
        summary="One recording with its VODs (what video tools read: vods[].baseUrl, format, "
        "data.Width/Height/Fps/Bitrate)",
        errors=(400, 404, 461),
    ),
]
