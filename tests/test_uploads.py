"""Uploads of channel thumbnails, badges and banners: validation, storage and serving."""

from __future__ import annotations

import struct
import zlib
from collections.abc import Callable, Iterator

import httpx
import pytest

from explorer.emulator import Platform
from tests.databases import start

SignIn = Callable[..., httpx.Client]
#: A minimal JPEG: start of image, a JFIF header, end of image (only the magic is checked).
JPEG = b"\xff\xd8\xff\xe0\x00\x10JFIF\x00\x01\x01\x00\x00\x01\x00\x01\x00\x00\xff\xd9"


def png(width: int = 2, height: int = 2) -> bytes:
    """A valid RGB PNG of ``width`` x ``height`` black pixels."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        return (
            struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
        )

    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    pixels = b"".join(b"\x00" + b"\x00\x00\x00" * width for _ in range(height))
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(pixels))
        + chunk(b"IEND", b"")
    )


@pytest.fixture(scope="module")
def writable() -> Iterator[Platform]:
    """A platform of this module's own: uploads change channels."""
    with start(channels=300, rate_limits=False) as running:
        yield running


@pytest.fixture
def owner(writable: Platform, signed_in: SignIn) -> httpx.Client:
    """A client signed in as the streamer."""
    return signed_in(writable.base_url, "streamer")


@pytest.fixture
def channel(owner: httpx.Client) -> int:
    """The streamer's channel id."""
    return int(owner.get("/users/current").json()["channel"]["id"])


def upload(client: httpx.Client, channel: int, kind: str, data: bytes) -> httpx.Response:
    """POST ``data`` as the multipart ``file`` part of a channel upload."""
    return client.post(f"/channels/{channel}/{kind}", files={"file": ("image.bin", data)})


def served(platform: Platform, url: str) -> httpx.Response:
    """GET a Resource url (a path on the platform's host) without credentials."""
    return httpx.get(f"{platform.root_url}{url}")


def test_png_thumbnail_is_stored_and_served_back(
    writable: Platform, owner: httpx.Client, channel: int
) -> None:
    """A PNG thumbnail answers 201 and its URL serves the same bytes as image/png."""
    image = png()
    response = upload(owner, channel, "thumbnail", image)
    assert response.status_code == 201
    resource = response.json()
    assert (resource["type"], resource["relid"], resource["size"]) == (
        "thumbnail",
        channel,
        len(image),
    )
    back = served(writable, resource["url"])
    assert back.status_code == 200
    assert back.headers["content-type"] == "image/png"
    assert back.content == image


def test_thumbnail_updates_the_channel(owner: httpx.Client, channel: int) -> None:
    """The channel's thumbnailId becomes the new resource's id."""
    resource = upload(owner, channel, "thumbnail", png(3, 1)).json()
    assert owner.get(f"/channels/{channel}").json()["thumbnailId"] == resource["id"]


def test_badge_updates_the_channel(owner: httpx.Client, channel: int) -> None:
    """The channel's badgeId becomes the new badge's id."""
    resource = upload(owner, channel, "badge", png(1, 1)).json()
    assert owner.get(f"/channels/{channel}").json()["badgeId"] == resource["id"]


def test_jpeg_banner_sets_banner_url(writable: Platform, owner: httpx.Client, channel: int) -> None:
    """A JPEG banner is served as image/jpeg from the channel's bannerUrl."""
    response = upload(owner, channel, "banner", JPEG)
    assert response.status_code == 201
    banner_url = owner.get(f"/channels/{channel}").json()["bannerUrl"]
    assert banner_url == response.json()["url"]
    back = served(writable, banner_url)
    assert back.headers["content-type"] == "image/jpeg"
    assert back.content == JPEG


def test_get_banner_returns_the_resource(
    writable: Platform, owner: httpx.Client, channel: int
) -> None:
    """Anyone's GET banner answers the Resource of the current banner."""
    resource = upload(owner, channel, "banner", png()).json()
    assert httpx.get(f"{writable.base_url}/channels/{channel}/banner").json() == resource


def test_delete_banner_clears_it(writable: Platform, owner: httpx.Client, channel: int) -> None:
    """DELETE banner answers 204, nulls bannerUrl, and the banner and its bytes are gone."""
    resource = upload(owner, channel, "banner", png()).json()
    assert owner.delete(f"/channels/{channel}/banner").status_code == 204
    assert owner.get(f"/channels/{channel}").json()["bannerUrl"] is None
    assert owner.get(f"/channels/{channel}/banner").status_code == 404
    assert served(writable, resource["url"]).status_code == 404


def test_new_upload_replaces_the_old(writable: Platform, owner: httpx.Client, channel: int) -> None:
    """Uploading a thumbnail again retires the previous one's URL."""
    old = upload(owner, channel, "thumbnail", png(4, 4)).json()
    new = upload(owner, channel, "thumbnail", png(5, 5)).json()
    assert served(writable, old["url"]).status_code == 404
    assert served(writable, new["url"]).content == png(5, 5)


@pytest.mark.parametrize(
    "data",
    [b"GIF89a\x01\x00\x01\x00\x00\x00\x00;", b"<svg xmlns='http://www.w3.org/2000/svg'/>", b"PNG"],
)
def test_other_file_types_are_415(owner: httpx.Client, channel: int, data: bytes) -> None:
    """GIF, SVG or anything but PNG/JPEG magic is refused with 415 naming the file."""
    response = upload(owner, channel, "thumbnail", data)
    assert response.status_code == 415
    assert response.json()["details"][0]["path"] == "file"


def test_declared_type_does_not_matter(owner: httpx.Client, channel: int) -> None:
    """A GIF sent as image/png with a .png name is still refused."""
    files = {"file": ("cat.png", b"GIF89a\x01\x00\x01\x00", "image/png")}
    assert owner.post(f"/channels/{channel}/thumbnail", files=files).status_code == 415


def test_body_that_is_not_multipart_is_415(owner: httpx.Client, channel: int) -> None:
    """A raw image body (not multipart/form-data) is refused with 415."""
    response = owner.post(
        f"/channels/{channel}/thumbnail", content=png(), headers={"content-type": "image/png"}
    )
    assert response.status_code == 415


@pytest.mark.parametrize(
    ("files", "path"),
    [
        ({"image": ("a.png", png())}, "file"),
        ({"file": ("a.png", b"")}, "file"),
    ],
)
def test_missing_or_empty_file_is_400(
    owner: httpx.Client, channel: int, files: dict[str, tuple[str, bytes]], path: str
) -> None:
    """No part named file, or an empty one, answers 400 naming it."""
    response = owner.post(f"/channels/{channel}/thumbnail", files=files)
    assert response.status_code == 400
    assert response.json()["details"][0]["path"] == path


def test_malformed_multipart_is_400(owner: httpx.Client, channel: int) -> None:
    """A multipart body that does not follow its boundary answers 400."""
    response = owner.post(
        f"/channels/{channel}/thumbnail",
        content=b"not multipart at all",
        headers={"content-type": "multipart/form-data; boundary=xyz"},
    )
    assert response.status_code == 400


def test_other_user_is_403_and_channel_unchanged(
    writable: Platform, signed_in: SignIn, owner: httpx.Client, channel: int
) -> None:
    """Another user cannot upload to the channel, and its thumbnail stays as it was."""
    before = owner.get(f"/channels/{channel}").json()["thumbnailId"]
    viewer = signed_in(writable.base_url, "viewer")
    for kind in ("thumbnail", "badge", "banner"):
        assert upload(viewer, channel, kind, png()).status_code == 403
    assert viewer.delete(f"/channels/{channel}/banner").status_code == 403
    assert owner.get(f"/channels/{channel}").json()["thumbnailId"] == before


def test_anonymous_upload_is_401(writable: Platform, channel: int) -> None:
    """Uploading without credentials answers 401."""
    url = f"{writable.base_url}/channels/{channel}/thumbnail"
    assert httpx.post(url, files={"file": ("a.png", png())}).status_code == 401


def test_unknown_resource_is_404(writable: Platform) -> None:
    """A resource id that was never issued answers 404."""
    assert httpx.get(f"{writable.base_url}/resources/987654321").status_code == 404


def test_file_over_the_limit_is_413(
    make_platform: Callable[..., Platform], signed_in: SignIn
) -> None:
    """A file one byte over max_upload is refused with 413; one at the limit is accepted."""
    running = make_platform(rate_limits=False, max_upload=2048)
    owner = signed_in(running.base_url, "streamer")
    channel = owner.get("/users/current").json()["channel"]["id"]
    image = png()
    oversized = image + b"\0" * (2049 - len(image))
    assert upload(owner, channel, "thumbnail", oversized).status_code == 413
    assert upload(owner, channel, "thumbnail", oversized[:2048]).status_code == 201


def test_body_far_over_the_limit_is_413(
    make_platform: Callable[..., Platform], signed_in: SignIn
) -> None:
    """A body whose Content-Length is far past the limit is refused with 413 up front."""
    running = make_platform(rate_limits=False, max_upload=2048)
    owner = signed_in(running.base_url, "streamer")
    channel = owner.get("/users/current").json()["channel"]["id"]
    response = upload(owner, channel, "banner", png() + b"\0" * 200_000)
    assert response.status_code == 413
    assert owner.get(f"/channels/{channel}").json()["bannerUrl"] is None


def test_sixth_upload_in_ten_minutes_is_429(
    make_platform: Callable[..., Platform], signed_in: SignIn
) -> None:
    """The upload bucket allows 5 uploads per 600 s; the 6th answers 429."""
    running = make_platform(rate_limits=True)
    owner = signed_in(running.base_url, "streamer")
    channel = owner.get("/users/current").json()["channel"]["id"]
    statuses = [upload(owner, channel, "thumbnail", png()).status_code for _ in range(6)]
    assert statuses == [201] * 5 + [429]
