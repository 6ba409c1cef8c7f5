"""Uploaded images: channel thumbnails, badges and banners, served back from ``/resources/{id}``.

Images arrive as ``multipart/form-data`` with the image in a part named ``file``. The bytes are
kept in the database (table ``uploads``, ``db/uploads.py``), never on the filesystem, so no
name a client sends can reach a path. Each (kind, record) holds one upload: storing a new one
replaces the old in the same transaction that points the owning record at it. Other resource
groups reuse the whole flow through :func:`store_upload` (game covers, for one).

Refusals, checked in this order after the caller's ownership:

- 415: the request is not ``multipart/form-data``, or the file is not a PNG or JPEG (told by
  its magic bytes; the client's declared type and file name are ignored);
- 413: the body is larger than ``Config.max_upload`` plus a small multipart envelope (refused
  from ``Content-Length`` before reading, or as soon as the stream passes it), or the file
  itself is larger than ``Config.max_upload``;
- 400 with ``details``: a malformed multipart body, no ``file`` part, an empty file.

An upload is answered 201 with the Resource ``{id, type, relid, url, contentType, size,
createdAt}``; ``url`` is this platform's path ``/api/v1/resources/{id}``, which serves the exact
bytes with their content type. Ids are never reused, so those responses are cacheable forever.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, Callable
from typing import Any

from starlette.datastructures import UploadFile
from starlette.formparsers import MultiPartException, MultiPartParser
from starlette.responses import Response

from explorer.emulator.access import channel_ref, require_owner
from explorer.emulator.context import Context
from explorer.emulator.db import channels, uploads
from explorer.emulator.db.engine import Transaction
from explorer.emulator.policy import Handler, Route
from explorer.emulator.responses import ApiError, bad_request, not_found
from explorer.wire import channel_routes as channel_wire
from explorer.wire import routes as wire

#: Accepted images by their leading bytes.
IMAGE_TYPES: tuple[tuple[bytes, str], ...] = (
    (b"\x89PNG\r\n\x1a\n", "image/png"),
    (b"\xff\xd8\xff", "image/jpeg"),
)
#: Room for the multipart envelope (boundaries, part headers, small fields) beside the file.
ENVELOPE = 16 * 1024
RESOURCE_FIELDS = ("id", "type", "relid", "contentType", "size", "createdAt")

#: Called inside the upload's transaction with the new Resource: update the owning record.
Link = Callable[[Transaction, dict[str, Any]], None]


def resource_url(resource_id: int) -> str:
    """Where upload ``resource_id`` is served."""
    return f"/api/v1/resources/{resource_id}"


def render_resource(row: tuple[Any, ...]) -> dict[str, Any]:
    """The Resource object of an upload described as ``RESOURCE_FIELDS``."""
    resource = dict(zip(RESOURCE_FIELDS, row, strict=True))
    resource["url"] = resource_url(resource["id"])
    return resource


def _unsupported(message: str, path: str) -> ApiError:
    return ApiError(415, message, details=[{"path": path, "type": "media", "message": message}])


async def _replay(data: bytes) -> AsyncGenerator[bytes, None]:
    yield data


async def read_image(ctx: Context) -> tuple[bytes, str]:
    """The image in the request's ``file`` part and its content type (refusals: see module)."""
    limit = ctx.services.config.max_upload
    if not ctx.request.headers.get("content-type", "").lower().startswith("multipart/form-data"):
        raise _unsupported("Send the image as multipart/form-data in a part named file.", "body")
    raw = await ctx.body(limit + ENVELOPE)
    parser = MultiPartParser(
        ctx.request.headers, _replay(raw), max_files=1, max_fields=16, max_part_size=ENVELOPE
    )
    parser.spool_max_size = len(raw) + 1  # keep the file in memory: never a temporary file
    try:
        form = await parser.parse()
    except MultiPartException as error:
        raise bad_request(
            f"Malformed multipart body: {error.message}", "body", "multipart"
        ) from None
    try:
        part = form.get("file")
        if not isinstance(part, UploadFile):
            raise bad_request("A file part named file is required.", "file", "required")
        data = await part.read()
    finally:
        await form.close()
    if len(data) > limit:
        raise ApiError(413, f"The file is larger than {limit} bytes.")
    if not data:
        raise bad_request("The file is empty.", "file", "empty")
    for magic, content_type in IMAGE_TYPES:
        if data.startswith(magic):
            return data, content_type
    raise _unsupported("Only PNG and JPEG images are accepted.", "file")


async def store_upload(ctx: Context, kind: str, relid: int, link: Link) -> dict[str, Any]:
    """Store the request's image as the ``kind`` upload of record ``relid`` and return its
    Resource object.

    Reads the ``multipart/form-data`` part named ``file`` (refusing with 415, 413 or 400 as the
    module docstring lists), then in one transaction: inserts the bytes, deletes the previous
    ``kind`` upload of ``relid`` (its URL then answers 404), and calls ``link(tx, resource)``
    so the caller updates its own record (e.g. the game's ``coverUrl`` to ``resource["url"]``)
    atomically with the upload. Authorize the caller before calling this, so a refused
    caller's body is never read. ``kind`` becomes the Resource's ``type``.
    """
    data, content_type = await read_image(ctx)
    created = ctx.iso_now()
    with ctx.store.transaction() as tx:
        resource_id = uploads.replace(tx, kind, relid, content_type, data, created)
        resource = render_resource((resource_id, kind, relid, content_type, len(data), created))
        link(tx, resource)
    return resource


#: Channel media: the upload kind, the channel column that points at it and the Resource
#: field it holds.
CHANNEL_MEDIA: dict[str, tuple[str, str]] = {
    "thumbnail": ("thumbnailId", "id"),
    "badge": ("badgeId", "id"),
    "banner": ("bannerUrl", "url"),
}


def _channel_upload(kind: str) -> Handler:
    column, field = CHANNEL_MEDIA[kind]

    async def upload(ctx: Context) -> dict[str, Any]:
        channel = channel_ref(ctx)
        require_owner(ctx, channel)
        updated = ctx.iso_now()

        def link(tx: Transaction, resource: dict[str, Any]) -> None:
            channels.update(tx, channel.id, {column: resource[field]}, updated)

        return await store_upload(ctx, kind, channel.id, link)

    upload.__doc__ = f"POST /channels/{{id}}/{kind}: upload the channel's {kind} (owner only)."
    return upload


async def get_banner(ctx: Context) -> dict[str, Any]:
    """GET /channels/{id}/banner: the Resource of the channel's uploaded banner, else 404."""
    channel = channel_ref(ctx)
    row = uploads.described(ctx.store, "banner", channel.id)
    if row is None:
        raise not_found("Banner")
    return render_resource(row)


async def delete_banner(ctx: Context) -> None:
    """DELETE /channels/{id}/banner: drop the banner (idempotent: 204 even when there was none)."""
    channel = channel_ref(ctx)
    require_owner(ctx, channel)
    with ctx.store.transaction() as tx:
        uploads.delete(tx, "banner", channel.id)
        channels.update(tx, channel.id, {"bannerUrl": None}, ctx.iso_now())


async def get_resource(ctx: Context) -> Response:
    """GET /resources/{id}: the uploaded bytes, with their content type."""
    row = uploads.content(ctx.store, ctx.path_int("resource"))
    if row is None:
        raise not_found("Resource")
    content_type, data, digest = row
    headers = {
        "ETag": f'"{digest}"',
        "Cache-Control": "public, max-age=31536000, immutable",
        "X-Content-Type-Options": "nosniff",
    }
    return Response(data, media_type=content_type, headers=headers)


_WRITE_ERRORS = (400, 401, 403, 404, 461)


_FILE_PART = {
    "content": "multipart/form-data",
    "schema": {
        "type": "object",
        "required": ["file"],
        "properties": {"file": {"type": "string", "format": "binary"}},
    },
}

routes = [
    *(
        Route(
            endpoint,
            _channel_upload(kind),
            summary=f"Upload the channel's {kind} (PNG or JPEG, owner only)",
            body=_FILE_PART,
            status=201,
            errors=(*_WRITE_ERRORS, 413, 415),
        )
        for kind, endpoint in (
            ("thumbnail", channel_wire.CHANNEL_SET_THUMBNAIL),
            ("badge", channel_wire.CHANNEL_SET_BADGE),
            ("banner", channel_wire.CHANNEL_SET_BANNER),
        )
    ),
    Route(
        channel_wire.CHANNEL_BANNER,
        get_banner,
        summary="The channel's banner",
        errors=(404,),
    ),
    Route(
        channel_wire.CHANNEL_CLEAR_BANNER,
        delete_banner,
        summary="Remove the channel's banner (owner only)",
        status=204,
        errors=_WRITE_ERRORS,
    ),
    Route(
        wire.IMAGE,
        get_resource,
        summary="The bytes of an uploaded image",
        response={"type": "string", "format": "binary"},
        content_type="image/*",
        errors=(400, 404),
    ),
]
