"""Rule 5 of issue 23: no one stalls the server. Attacks on the HTTP front over raw sockets
(head size, slow and half-sent heads, a pool taken by one address) and hostile list input,
each with a bystander served meanwhile. Figures under attack: ``python -m benchmarks front``.
"""

from __future__ import annotations

import asyncio
import inspect
import json
import re
import socket
import time
from collections.abc import Iterator
from contextlib import ExitStack, closing, suppress
from urllib.parse import urlsplit

import httpx
import pytest

from explorer.emulator import Platform, front
from explorer.emulator.context import Config
from tests.test_security import MakePlatform, attempt

HEAD = b"GET /api/v1/channels?limit=1 HTTP/1.1\r\nHost: 127.0.0.1\r\n"
ATTACKER = "127.0.0.2"  # another loopback address: the bystander keeps 127.0.0.1


def raw(platform: Platform, source: str = "127.0.0.1") -> socket.socket:
    """A TCP connection to the platform's REST port from ``source``."""
    parts = urlsplit(platform.root_url)
    assert parts.hostname is not None and parts.port is not None
    sock = socket.create_connection(
        (parts.hostname, parts.port), timeout=10, source_address=(source, 0)
    )
    return sock


def answer(sock: socket.socket) -> bytes:
    """What the server sends until it closes (b"" when it resets the connection)."""
    chunks = []
    try:
        while chunk := sock.recv(65536):
            chunks.append(chunk)
    except ConnectionResetError:
        pass
    return b"".join(chunks)


def one_answer(sock: socket.socket) -> bytes:
    """One whole answer on a kept-alive connection: its head, then its ``Content-Length``
    bytes of body (a loaded machine may deliver them in several reads)."""
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = sock.recv(65536)
        assert chunk, data
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    length = re.search(rb"(?im)^content-length: *(\d+)", head)
    assert length is not None, head
    while len(body) < int(length.group(1)):
        chunk = sock.recv(65536)
        assert chunk, head
        body += chunk
    return head + b"\r\n\r\n" + body


def answer_head(sock: socket.socket) -> bytes:
    """The first bytes the server answers (b"" when it drops the connection unread)."""
    try:
        return sock.recv(65536)
    except ConnectionResetError:
        return b""


def turned_away(answered: bytes) -> bool:
    """Whether ``answered`` is the 429 (JSON, ``Retry-After``) a held connection ends with."""
    head, _, body = answered.partition(b"\r\n\r\n")
    return (
        head.startswith(b"HTTP/1.1 429 ")
        and b"\r\nretry-after: " in head.lower()
        and json.loads(body)["statusCode"] == 429
    )


def bystander_ok(platform: Platform) -> None:
    """A normal client is served."""
    response = httpx.get(platform.base_url + "/channels", params={"limit": 1}, timeout=5)
    assert response.status_code == 200


@pytest.fixture
def quick(make_platform: MakePlatform) -> Platform:
    """A platform whose heads and bodies must arrive within half a second, 20 connections an
    address."""
    return make_platform(
        rate_limits=False, header_timeout=0.5, body_timeout=0.5, http_address_connections=20
    )


@pytest.mark.parametrize("shape", ["one header", "many headers", "long request line"])
def test_a_head_past_the_limit_never_reaches_the_app(quick: Platform, shape: str) -> None:
    """A request head over 16 KiB is answered 431 (or the connection dropped), never served,
    in one header, many headers or the request line."""
    limit = 16 * 1024
    if shape == "one header":
        head = HEAD + b"X-Big: " + b"a" * limit
    elif shape == "many headers":
        head = HEAD + b"".join(b"X-%d: %s\r\n" % (n, b"b" * 90) for n in range(limit // 90))
    else:
        head = b"GET /api/v1/channels?q=" + b"c" * limit + b" HTTP/1.1\r\nHost: 127.0.0.1\r\n"
    with closing(raw(quick, ATTACKER)) as sock:
        try:
            sock.sendall(head)
            sock.sendall(b"\r\n")
        except (BrokenPipeError, ConnectionResetError):
            pass
        got = answer(sock)
    attempt(f"oversized head ({shape})")
    assert got == b"" or got.startswith(b"HTTP/1.1 431 "), got[:80]
    bystander_ok(quick)


def test_a_large_body_is_not_counted_as_head(quick: Platform) -> None:
    """A 300 KB body after a small head reaches the app (a 401 for wrong credentials)."""
    body = b'{"username": "viewer", "password": "' + b"p" * 300_000 + b'"}'
    response = httpx.post(quick.base_url + "/users/login", content=body, timeout=10)
    assert response.status_code == 401


@pytest.mark.parametrize("sent", [b"", HEAD, b"G", HEAD + b"X-Slow: 1\r\n"])
def test_a_half_sent_head_is_closed_at_the_deadline(quick: Platform, sent: bytes) -> None:
    """A connection that sends nothing, or part of a head and then stops, is answered 408
    and closed once the deadline passes; a bystander is served meanwhile."""
    with closing(raw(quick, ATTACKER)) as sock:
        sock.sendall(sent)
        bystander_ok(quick)
        got = answer(sock)
    attempt("half-sent head")
    assert got.startswith(b"HTTP/1.1 408 "), got[:80]


def test_a_half_sent_body_is_closed_at_the_deadline(
    quick: Platform, caplog: pytest.LogCaptureFixture
) -> None:
    """A request whose body stops short of its Content-Length is closed once the body
    deadline passes, without an error in the platform's log; a bystander is served."""
    head = (
        b"POST /api/v1/users/login HTTP/1.1\r\nHost: 127.0.0.1\r\n"
        b"Content-Type: application/json\r\n"
    )
    with closing(raw(quick, ATTACKER)) as sock:
        sock.sendall(head + b"Content-Length: 1000\r\n\r\n" + b'{"username": "vi')
        bystander_ok(quick)
        got = answer(sock)
    attempt("half-sent body")
    assert b"200 OK" not in got
    assert not [r for r in caplog.records if r.levelname == "ERROR"]


def test_a_dribbled_head_is_closed_at_the_deadline(quick: Platform) -> None:
    """Slowloris: a head sent a byte at a time, each in time for an idle timer, still ends
    with 408 once the whole head is late, also on a kept-alive connection."""
    for warm, source in ((False, "127.0.0.3"), (True, "127.0.0.4")):
        with closing(raw(quick, source)) as sock:
            if warm:
                sock.sendall(HEAD + b"\r\n")
                assert one_answer(sock).startswith(b"HTTP/1.1 200 ")
            sock.settimeout(0.05)
            got = b""
            for byte in (HEAD * 200)[:4000]:
                try:
                    sock.sendall(bytes([byte]))
                    got = sock.recv(65536)
                except TimeoutError:
                    continue
                except (BrokenPipeError, ConnectionResetError):
                    break
                if got:
                    break
            attempt("slowloris head")
            assert got.startswith(b"HTTP/1.1 408 "), (warm, got[:80])


def test_one_address_cannot_take_the_connection_pool(quick: Platform) -> None:
    """20 half-sent connections from one address are all it gets (the 21st is 503), and a
    client on another address is served meanwhile."""
    with ExitStack() as held:
        for _ in range(20):
            sock = held.enter_context(closing(raw(quick, ATTACKER)))
            sock.sendall(HEAD)
        with closing(raw(quick, ATTACKER)) as extra:
            got = answer(extra)
        attempt("connection pool exhaustion", 21)
        assert got.startswith(b"HTTP/1.1 503 "), got[:80]
        bystander_ok(quick)


def test_an_address_that_broke_a_limit_is_turned_away_for_a_while(
    make_platform: MakePlatform,
) -> None:
    """After a 431, the attacker's next connections are held unread and turned away (429)
    until the penalty passes, while another address is served throughout."""
    platform = make_platform(rate_limits=False, header_penalty=0.5)
    with closing(raw(platform, ATTACKER)) as sock:
        sock.sendall(HEAD + b"X-Big: " + b"a" * 20_000)
        assert answer(sock).startswith(b"HTTP/1.1 431 ")
    with closing(raw(platform, ATTACKER)) as again:
        again.sendall(HEAD + b"\r\n")
        attempt("reconnect loop after a refusal")
        assert turned_away(answer(again))
    bystander_ok(platform)
    served = b""
    deadline = time.monotonic() + 10  # the penalty is half a second
    while not served and time.monotonic() < deadline:
        with closing(raw(platform, ATTACKER)) as later:
            later.sendall(HEAD + b"\r\n")
            served = answer_head(later)
        time.sleep(0.05)
    assert served.startswith(b"HTTP/1.1 200 ")


def _bench(platform: Platform) -> None:
    """Break the head limit from the attacker's address, so its next connections are held."""
    with closing(raw(platform, ATTACKER)) as sock:
        sock.sendall(HEAD + b"X-Big: " + b"a" * 20_000)
        assert answer(sock).startswith(b"HTTP/1.1 431 ")


def _open(sock: socket.socket) -> bool:
    """Whether the server still holds ``sock`` open (nothing to read, no close)."""
    sock.setblocking(False)
    try:
        return not sock.recv(1)
    except BlockingIOError:
        return True
    except ConnectionResetError:
        return False
    finally:
        sock.setblocking(True)


def test_held_connections_end_each_at_its_own_deadline(make_platform: MakePlatform) -> None:
    """A connection held two seconds after another is turned away about two seconds after it,
    not with it: held connections do not all end, and reconnect, at once."""
    platform = make_platform(rate_limits=False, header_penalty=3.0)
    _bench(platform)
    with closing(raw(platform, ATTACKER)) as first:
        first.sendall(HEAD)
        time.sleep(2.0)  # the gap between the two deadlines
        with closing(raw(platform, ATTACKER)) as second:
            second.sendall(HEAD)
            assert turned_away(answer(first))
            first_dropped = time.monotonic()
            assert turned_away(answer(second))
            assert time.monotonic() - first_dropped > 1.0


@pytest.mark.parametrize(("header_timeout", "held_past"), [(10.0, True), (1.5, False)])
def test_held_connections_wait_while_their_address_is_refused(
    make_platform: MakePlatform, header_timeout: float, held_past: bool
) -> None:
    """A held connection whose address is refused again before its deadline is held another
    penalty (reconnecting would only be held again), but never past the head deadline."""
    platform = make_platform(rate_limits=False, header_penalty=1.0, header_timeout=header_timeout)
    with closing(raw(platform, ATTACKER)) as served:
        served.sendall(HEAD)
        _bench(platform)
        with closing(raw(platform, ATTACKER)) as held:
            held.sendall(HEAD)
            opened = time.monotonic()
            time.sleep(0.3)
            served.sendall(b"X-Big: " + b"a" * 20_000)
            assert answer(served).startswith(b"HTTP/1.1 431 ")
            assert turned_away(answer(held))
            assert (time.monotonic() - opened > 1.5) is held_past


def test_held_connections_are_bounded_in_all(make_platform: MakePlatform) -> None:
    """Past ``http_held_connections`` held in all, a benched address's next connection is
    turned away at once, while those held stay held and another address is served."""
    platform = make_platform(rate_limits=False, header_penalty=30.0, http_held_connections=3)
    _bench(platform)
    with ExitStack() as held:
        socks = [held.enter_context(closing(raw(platform, ATTACKER))) for _ in range(3)]
        for sock in socks:
            sock.sendall(HEAD)
        with closing(raw(platform, ATTACKER)) as extra:
            started = time.monotonic()
            assert turned_away(answer(extra))
            assert time.monotonic() - started < 15  # turned away, not held for the penalty
        assert all(_open(sock) for sock in socks)
        bystander_ok(platform)


def test_a_held_flood_is_dropped_at_once(make_platform: MakePlatform) -> None:
    """A held connection that sends more than a head may hold is dropped at once, not left
    holding its unread bytes for the penalty, while one that sends a head stays held."""
    platform = make_platform(rate_limits=False, header_penalty=30.0)
    _bench(platform)
    with closing(raw(platform, ATTACKER)) as quiet, closing(raw(platform, ATTACKER)) as flood:
        quiet.sendall(HEAD)
        started = time.monotonic()
        with suppress(BrokenPipeError, ConnectionResetError):  # dropped while still sending
            flood.sendall(HEAD + b"X-Pad: " + b"a" * 200_000)
        assert answer(flood) == b""
        assert time.monotonic() - started < 15  # dropped, not held for the penalty
        assert _open(quiet)


def test_a_held_connection_that_hangs_up_frees_its_slot(make_platform: MakePlatform) -> None:
    """A held connection whose client hangs up frees its held slot at once: with one slot
    in all, the next held connection takes it instead of being dropped."""
    platform = make_platform(rate_limits=False, header_penalty=30.0, http_held_connections=1)
    _bench(platform)
    with closing(raw(platform, ATTACKER)) as first:
        first.sendall(HEAD)
        first.shutdown(socket.SHUT_WR)
        assert answer(first) == b""  # the server closed it on the client's hang-up
    with closing(raw(platform, ATTACKER)) as second:
        second.sendall(HEAD)
        time.sleep(0.3)  # a dropped one would be closed by now
        assert _open(second)


def test_upgrade_requests_do_not_leak_connection_slots(quick: Platform) -> None:
    """WebSocket upgrades (the live service's, or to a REST path, refused) give their
    connection slot back: 30 of them in turn leave the address its 20 slots."""
    upgrade = HEAD + (
        b"Connection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Version: 13\r\n"
        b"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n"
    )
    for _ in range(30):
        with closing(raw(quick, ATTACKER)) as sock:
            sock.sendall(upgrade)
            assert answer_head(sock).startswith(b"HTTP/1.1 ")
    attempt("websocket upgrade on REST", 30)
    with ExitStack() as held:
        for _ in range(20):
            sock = held.enter_context(closing(raw(quick, ATTACKER)))
            sock.sendall(HEAD + b"\r\n")
            assert answer_head(sock).startswith(b"HTTP/1.1 200 ")


def test_a_chunked_body_is_followed_to_the_next_request(quick: Platform) -> None:
    """A chunked POST, sent in pieces with a chunk extension and a trailer, is answered and
    the GET after it on the same connection is served too."""
    body = b'5\r\n{"a":\r\n3;ext=1\r\n 1}\r\n0\r\nX-Trailer: 1\r\n\r\n'
    head = (
        b"POST /api/v1/users/login HTTP/1.1\r\nHost: 127.0.0.1\r\n"
        b"Transfer-Encoding: chunked\r\n\r\n"
    )
    with closing(raw(quick, "127.0.0.5")) as sock:
        for piece in (head[:20], head[20:], body[:9], body[9:]):
            sock.sendall(piece)
        sock.sendall(HEAD + b"Connection: close\r\n\r\n")
        got = answer(sock)
    assert got.startswith(b"HTTP/1.1 4"), got[:80]
    assert got.count(b"HTTP/1.1 ") == 2 and b"HTTP/1.1 200 " in got, got[-300:]


@pytest.mark.parametrize("step", [1, 7, 1000])
def test_framing_follows_pipelined_requests_however_split(step: int) -> None:
    """Pipelined requests (no body, Content-Length, chunked with trailers, blank lines
    between) leave the framing idle at their end however the bytes are split."""
    stream = (
        HEAD
        + b"\r\n\r\n"
        + b"POST / HTTP/1.1\r\nContent-Length: 5\r\n\r\nhello"
        + b"POST / HTTP/1.1\r\ntransfer-encoding: chunked\r\n\r\n"
        + b"2\r\nhi\r\n0\r\nX-T: 1\r\n\r\n"
        + HEAD
        + b"\r\n"
    )
    framing = front.Framing(16 * 1024)
    phases = []
    for at in range(0, len(stream), step):
        framing.feed(stream[at : at + step])
        phases.append(framing.phase)
    assert framing.phase == "idle", phases[-5:]
    assert framing.entered >= 8


@pytest.mark.parametrize(
    "chunks",
    [
        [HEAD + b"\r\n\r\n"] * 3,
        [b"\r\n" + HEAD + b"\r\n\r\n", HEAD + b"\r\n\r\n"],
        [HEAD[:5], HEAD[5:] + b"\r\n\r\n", HEAD + b"\r\n\r\n"],
        [HEAD + b"\r\n\r\n", b"POST / HTTP/1.1\r\nContent-Length: 2\r\n\r\n", b"hi"],
    ],
)
def test_framing_of_whole_heads_is_that_of_their_bytes_one_by_one(chunks: list[bytes]) -> None:
    """Heads arriving whole leave the same phase and phase count as the same bytes one at a
    time (a deadline restarts on each change of phase)."""
    whole, bytewise = front.Framing(16 * 1024), front.Framing(16 * 1024)
    for chunk in chunks:
        whole.feed(chunk)
        for at in range(len(chunk)):
            bytewise.feed(chunk[at : at + 1])
        assert (whole.phase, whole.entered) == (bytewise.phase, bytewise.entered)


def test_framing_counts_head_bytes_only() -> None:
    """A head at the limit passes and one byte over is too large; a small head with a large
    body is not too large."""
    framing = front.Framing(100)
    framing.feed(b"POST / HTTP/1.1\r\nContent-Length: 1000\r\n\r\n" + b"x" * 1000)
    assert framing.phase == "idle"
    head = b"GET / HTTP/1.1\r\nX: " + b"a" * 100
    framing.feed(head[: 100 - 4] + b"\r\n\r\n")
    assert framing.phase == "idle"
    with pytest.raises(front.HeadTooLarge):
        front.Framing(100).feed(head[: 100 - 4 + 1] + b"\r\n\r\n")


@pytest.mark.parametrize(
    "head",
    [
        b"POST / HTTP/1.1\r\nTransfer-Encoding: gzip\r\n\r\n",
        b"POST / HTTP/1.1\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\n",
        b"POST / HTTP/1.1\r\nContent-Length: -5\r\n\r\n",
        b"POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
    ],
)
def test_framing_refuses_what_no_valid_request_sends(head: bytes) -> None:
    """A body length no valid request announces is BadFraming, not a guess."""
    with pytest.raises(front.BadFraming):
        front.Framing(16 * 1024).feed(head)


def test_the_guard_overrides_no_uvicorn_method() -> None:
    """The guard composes uvicorn's protocol: no uvicorn class among its bases, and no public
    method beyond asyncio.Protocol's interface."""
    guard = front.protocol(Config())
    assert not [c for c in guard.__mro__ if c.__module__.split(".")[0] == "uvicorn"]
    public = {
        name
        for cls in guard.__mro__[: guard.__mro__.index(asyncio.Protocol)]
        for name, value in vars(cls).items()
        if inspect.isfunction(value) and not name.startswith("_")
    }
    assert public <= set(dir(asyncio.Protocol)), public - set(dir(asyncio.Protocol))


#: List parameters at their hostile extremes, each within what an HTTP head may carry.
HOSTILE_LISTS: tuple[dict[str, str], ...] = (
    {"q": "a" * 12_000},
    {"q": "%_" * 2000},
    {"where": ",".join(["viewersTotal:gt:1"] * 500)},
    {"where": "id:in:" + ";".join(map(str, range(2000)))},
    {"where": "id:eq:" + "9" * 40},
    {"where": "viewersTotal:gt:1e400"},
    {"order": ",".join(["viewersTotal:desc"] * 600)},
    {"order": ",".join(["id:asc", "id:desc"] * 500)},
    {"fields": ",".join(["id"] * 3000)},
    {"limit": "9" * 50, "page": "9" * 50},
    {"page": "-1"},
)


@pytest.fixture(scope="module")
def listing_platform() -> Iterator[Platform]:
    """A platform for the list-input walk."""
    from tests.databases import start

    with start(channels=300, rate_limits=False) as running:
        yield running


@pytest.mark.parametrize(
    "path", ["/channels", "/interactive/games", "/types", "/channels/100000/follow"]
)
def test_no_list_input_is_a_5xx(listing_platform: Platform, path: str) -> None:
    """Long searches, hundreds of where terms or order keys, huge numbers (each within the
    16 KiB head): 200 or 400 with a JSON error body, never a 5xx."""
    with httpx.Client(base_url=listing_platform.base_url, timeout=30) as client:
        for params in HOSTILE_LISTS:
            response = client.get(path, params=params)
            attempt("hostile list input")
            status = response.status_code
            assert status in (200, 400), (path, list(params), response.text[:200])
            if status != 200:
                assert response.json()["statusCode"] == 400
        bystander_ok(listing_platform)
