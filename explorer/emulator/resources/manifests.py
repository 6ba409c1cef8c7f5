"""Playback manifests of a live channel: HLS (``.m3u8``), SMIL, FTL and the "light" JSON ones.

A manifest describes the stream a live channel is sending: its renditions (the source, plus a
ladder of transcodes below it when the channel ``hasTranscodes``) and where to fetch them. The
emulator carries no video, so rendition URLs point at ``MEDIA_HOST``, a reserved ``.invalid``
host that never resolves; everything else is real state:

- the channel must be online (else 404, as historically; unknown and hidden channels too);
- when the current broadcast started is kept in ``live_streams`` (``db/live_streams.py``): its
  stream session's start (``sessions.py``; for a channel made through the API, a deterministic
  10-240 minutes before the first read), renewed when another session runs and forgotten once
  the channel is seen offline, so the next broadcast starts afresh;
- the source rendition is drawn once per channel from the world seed; unlocking transcodes
  (``POST /channels/{id}/transcodes/unlock``) adds the ladder.

Content types: ``application/vnd.apple.mpegurl`` (m3u8), ``application/smil+xml`` (smil),
``application/json`` (ftl, light, light2).
"""

from __future__ import annotations

import random
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from starlette.responses import Response

from explorer.emulator import credentials, streams
from explorer.emulator.access import channel_ref
from explorer.emulator.context import Context
from explorer.emulator.db import channels, live_streams
from explorer.emulator.policy import Handler, Route
from explorer.emulator.responses import ApiError
from explorer.emulator.world import iso
from explorer.wire import channel_routes as channel_wire
from explorer.wire.endpoint import Endpoint

#: Where rendition and recording media "live": a reserved name that never resolves (RFC 2606).
MEDIA_HOST = "media.explorer.invalid"
HLS_TYPE = "application/vnd.apple.mpegurl"
SMIL_TYPE = "application/smil+xml"


@dataclass(frozen=True, slots=True)
class Rendition:
    """One encoding of a stream."""

    slug: str
    width: int
    height: int
    kbps: int
    fps: int
    codecs: str


#: What broadcasters send (one is drawn per channel).
SOURCES: tuple[Rendition, ...] = (
    Rendition("source", 1920, 1080, 6000, 60, "avc1.64002a,mp4a.40.2"),
    Rendition("source", 1920, 1080, 4500, 30, "avc1.640028,mp4a.40.2"),
    Rendition("source", 1280, 720, 3500, 60, "avc1.640020,mp4a.40.2"),
    Rendition("source", 1280, 720, 2500, 30, "avc1.4d401f,mp4a.40.2"),
)
#: The transcodes a channel with ``hasTranscodes`` gets below its source's height.
LADDER: tuple[Rendition, ...] = (
    Rendition("720p", 1280, 720, 2000, 30, "avc1.4d401f,mp4a.40.2"),
    Rendition("480p", 852, 480, 1000, 30, "avc1.4d401e,mp4a.40.2"),
    Rendition("160p", 284, 160, 250, 30, "avc1.42c00c,mp4a.40.2"),
)


@dataclass(frozen=True, slots=True)
class LiveStream:
    """What the manifests of one live channel describe."""

    channel_id: int
    title: str
    ftl: bool
    started_at: float
    access_key: str
    renditions: tuple[Rendition, ...]

    def url(self, kind: str, rendition: Rendition) -> str:
        """Where ``rendition`` would be fetched over ``kind`` (``hls``, ``light``)."""
        name = f"{self.channel_id}_{rendition.slug}"
        if kind == "hls":
            return f"https://{MEDIA_HOST}/hls/{name}/index.m3u8"
        return f"https://{MEDIA_HOST}/{kind}/{name}.mp4"


def source_of(seed: int, channel_id: int) -> Rendition:
    """The source rendition channel ``channel_id`` broadcasts (fixed by the world seed)."""
    return random.Random(f"{seed}:{channel_id}:source").choice(SOURCES)


def live_stream(ctx: Context) -> LiveStream:
    """The live broadcast of the channel in the path: 404 when unknown or offline."""
    ref = channel_ref(ctx)
    store = ctx.store
    if not ref.online:
        live_streams.forget(store, ref.id)
        raise ApiError(404, "Channel is not live.")
    row = channels.fields(store, ref.id, "hasTranscodes", "ftl", "name")
    assert row is not None  # channel_ref found it in this same request
    has_transcodes, ftl, title = row
    seed = int(store.meta("seed") or 0)
    started = live_streams.started(store, ref.id)
    began = _session_start(ctx, ref.id)
    if started is None or (began is not None and started[0] != began):
        if began is None:
            began = ctx.world_now - random.Random(f"{seed}:{ref.id}:live").randint(10, 240) * 60
        started = (began, credentials.new_token(16))
        live_streams.start(store, ref.id, *started)
    source = source_of(seed, ref.id)
    ladder = tuple(r for r in LADDER if r.height < source.height) if has_transcodes else ()
    return LiveStream(ref.id, title, bool(ftl), started[0], started[1], (source, *ladder))


def _session_start(ctx: Context, channel_id: int) -> float | None:
    """When the channel's running stream session began (``sessions.py``), or None for a
    channel with no habits (made through the API) or none running."""
    index = streams.index_of(ctx.store, channel_id)
    if index is None:
        return None
    moment = streams.applied(ctx.store)
    running = streams.schedule_of(ctx.store).of_channel(index, moment, moment + 1)
    return running[0].start if running else None


def _iso(moment: float) -> str:
    return iso(datetime.fromtimestamp(moment, UTC))


async def manifest_m3u8(ctx: Context) -> Response:
    """GET /channels/{id}/manifest.m3u8: the HLS master playlist, one variant per rendition."""
    stream = live_stream(ctx)
    lines = ["#EXTM3U", "#EXT-X-VERSION:3"]
    for r in stream.renditions:
        lines.append(
            f"#EXT-X-STREAM-INF:BANDWIDTH={r.kbps * 1000},RESOLUTION={r.width}x{r.height},"
            f'CODECS="{r.codecs}",NAME="{r.slug}"'
        )
        lines.append(stream.url("hls", r))
    return Response("\n".join(lines) + "\n", media_type=HLS_TYPE)


async def manifest_smil(ctx: Context) -> Response:
    """GET /channels/{id}/manifest.smil: the renditions as a SMIL switch (adaptive players)."""
    stream = live_stream(ctx)
    smil = ET.Element("smil", title=stream.title)
    head = ET.SubElement(smil, "head")
    ET.SubElement(head, "meta", base=f"rtmp://{MEDIA_HOST}/live/")
    switch = ET.SubElement(ET.SubElement(smil, "body"), "switch")
    for r in stream.renditions:
        ET.SubElement(
            switch,
            "video",
            {
                "src": f"{stream.channel_id}_{r.slug}",
                "title": r.slug,
                "system-bitrate": str(r.kbps * 1000),
                "width": str(r.width),
                "height": str(r.height),
            },
        )
    body = ET.tostring(smil, encoding="utf-8", xml_declaration=True)
    return Response(body, media_type=SMIL_TYPE)


async def manifest_ftl(ctx: Context) -> dict[str, Any]:
    """GET /channels/{id}/manifest.ftl: how the broadcast arrives (FTL or RTMP) and its RTP
    tracks; FTL numbers a channel's audio SSRC with its id and video with id + 1."""
    stream = live_stream(ctx)
    source = stream.renditions[0]
    return {
        "channelId": stream.channel_id,
        "now": ctx.iso_now(),
        "startedAt": _iso(stream.started_at),
        "ingestProtocol": "ftl" if stream.ftl else "rtmp",
        "ftlSrc": f"wss://{MEDIA_HOST}/ftl/{stream.channel_id}",
        "audio": {"codec": "opus", "payloadType": 97, "ssrc": stream.channel_id},
        "video": {
            "codec": "h264",
            "payloadType": 96,
            "ssrc": stream.channel_id + 1,
            "width": source.width,
            "height": source.height,
            "fps": source.fps,
            "bitrate": source.kbps,
        },
    }


async def manifest_light(ctx: Context) -> dict[str, Any]:
    """GET /channels/{id}/manifest.light: since when the channel is live and its renditions."""
    stream = live_stream(ctx)
    return {
        "now": ctx.iso_now(),
        "since": _iso(stream.started_at),
        "resolutions": [
            {
                "name": r.slug,
                "slug": r.slug,
                "width": r.width,
                "height": r.height,
                "bitrate": r.kbps,
                "fps": r.fps,
                "hasVideo": True,
                "url": stream.url("light", r),
            }
            for r in stream.renditions
        ],
    }


async def manifest_light2(ctx: Context) -> dict[str, Any]:
    """GET /channels/{id}/manifest.light2: start time, access key and the HLS playlist's path
    (clients prepend the platform's host, so it is a path, not a URL)."""
    stream = live_stream(ctx)
    return {
        "now": ctx.iso_now(),
        "isTestStream": False,
        "startedAt": _iso(stream.started_at),
        "accessKey": stream.access_key,
        "hlsSrc": f"/api/v1/channels/{stream.channel_id}/manifest.m3u8",
    }


_TIME = {"type": "string", "format": "date-time"}
_INT = {"type": "integer"}
_STR = {"type": "string"}


def _object(**properties: Any) -> dict[str, Any]:
    return {"type": "object", "required": list(properties), "properties": properties}


_TRACK = {"codec": _STR, "payloadType": _INT, "ssrc": _INT}
SCHEMAS: dict[str, Any] = {
    "FtlManifest": _object(
        channelId=_INT,
        now=_TIME,
        startedAt=_TIME,
        ingestProtocol={"type": "string", "enum": ["ftl", "rtmp"]},
        ftlSrc=_STR,
        audio=_object(**_TRACK),
        video=_object(
            **_TRACK, width=_INT, height=_INT, fps=_INT, bitrate={**_INT, "description": "kbit/s"}
        ),
    ),
    "LightManifest": _object(
        now=_TIME,
        since=_TIME,
        resolutions={
            "type": "array",
            "items": _object(
                name=_STR,
                slug=_STR,
                width=_INT,
                height=_INT,
                bitrate={**_INT, "description": "kbit/s"},
                fps=_INT,
                hasVideo={"type": "boolean"},
                url=_STR,
            ),
        },
    ),
    "Light2Manifest": _object(
        now=_TIME,
        isTestStream={"type": "boolean"},
        startedAt=_TIME,
        accessKey=_STR,
        hlsSrc={**_STR, "description": "path of the HLS master playlist on this host"},
    ),
}

_TEXT = {"type": "string"}
_JSON = "application/json"


#: endpoint, handler, content type, response schema (None: the row's record), summary
_MANIFESTS: tuple[tuple[Endpoint, Handler, str, dict[str, Any] | None, str], ...] = (
    (channel_wire.CHANNEL_MANIFEST_M3U8, manifest_m3u8, HLS_TYPE, _TEXT, "HLS master playlist"),
    (channel_wire.CHANNEL_MANIFEST_SMIL, manifest_smil, SMIL_TYPE, _TEXT, "SMIL rendition switch"),
    (channel_wire.CHANNEL_MANIFEST_FTL, manifest_ftl, _JSON, None, "FTL ingest and RTP tracks"),
    (
        channel_wire.CHANNEL_MANIFEST_LIGHT,
        manifest_light,
        _JSON,
        None,
        "Live since, with renditions",
    ),
    (
        channel_wire.CHANNEL_MANIFEST_LIGHT2,
        manifest_light2,
        _JSON,
        None,
        "Live since, with HLS source",
    ),
)

routes = [
    Route(
        endpoint,
        handler,
        summary=f"{summary} of a live channel",
        response=schema,
        content_type=content_type,
        errors=(404,),
    )
    for endpoint, handler, content_type, schema, summary in _MANIFESTS
]
