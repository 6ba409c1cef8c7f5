"""HTTP front benchmark (issue 23, rule 5): a bystander's ``GET /channels`` p99 while another
client attacks the front, against its p99 with nobody attacking, side by side in one run.

Attacks, each from its own process on another loopback address (127.0.0.2, so the
bystander's 127.0.0.1 keeps its own per-address allowance):

* ``slowloris``: as many connections as the server lets it hold, each sending its head a
  byte at a time every 0.2 s and reopened as soon as the server closes it;
* ``headers``: 8 connections sending megabyte-sized heads as fast as they can, each reopened
  once its head is written (it never waits for the server's answer);
* ``live-bombs`` (:mod:`benchmarks.live_attacks`, like ``live-hold``): 8 live-events
  sockets each sending 58 KB gzipped frames that inflate to 60 MB, reopened as soon as the
  server closes them (issue 36, item 2);
* ``live-hold``: 8 live-events sockets each subscribing to as many 100-character event names
  as it is let, then sending pings with 100-character ids without ever reading, reopened when
  closed (items 1 and 9);
* ``hooks``: one user's client registers every hook it may (up to 500), each naming 1,000
  events that never happen, while the attacker changes its own channel in a loop (4
  workers), so every change is an event the dispatcher matches against hooks (item 4);
* ``related`` (issue 36, the cost of a request): one client asking, one request at a time,
  for the related channels of another channel and page each time (nothing a cache could
  keep), in a world of ``RELATED_CHANNELS`` channels where such a page once sorted tens of
  thousands of rows (about 150 ms each; a bystander's median went from 4 ms to 1-2.7 s). It
  spends its whole ``channel-read`` allowance (1,000 per 5 minutes, a fixed window: all of it
  may come at once) over the runs' seconds of attack, about 55 requests a second: the most
  a client within its rate limits can ask. Compared with the bystander's p99 on the same world with
  nobody attacking, in the same round: an attacker of one connection costs the machine
  little, so no decoy is needed.

Runs alternate (normal, then per attack: the same attack on a decoy, then on the platform)
for ``ROUNDS`` rounds and the median p99 of each is compared. On this 2-core machine the
attacking process takes most of a core of its own, and the header flood's loopback copies
more, which the bystander's client and the platform then share: a p99 against an idle
machine measures the machine as much as the server. So each attack also runs, in the same
round, against a decoy (``benchmarks.targets decoy``: a listener that holds or drops each
connection and does nothing else; for the live-events attacks a websockets server that
discards every frame; for ``hooks`` the same channel changes on the platform with no hook
registered), the bystander measured meanwhile: the "busy" p99, the
machine as loaded by the attacker with no server work. Goal: the bystander's p99 under each
attack within 2x the busy p99, no errors: what the server's handling of the attack adds.
The ratio to the idle machine's p99 is printed beside it.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import statistics
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable, Iterator
from urllib.parse import urlsplit

import httpx

from benchmarks import live_attacks
from benchmarks.http_load import LoadResult, load
from benchmarks.targets import running
from explorer.wire.ratelimit import BUCKETS

ROUNDS = 3
SECONDS = 4.0
CONCURRENCY = 4
ATTACKER = "127.0.0.2"
QUERY = "/channels?order=viewersTotal:desc&limit=10"
HEAD = b"GET /api/v1/channels HTTP/1.1\r\nHost: x\r\n"
#: The runs of an attack on a decoy are named after the attack and this.
DECOY = " on a decoy"
#: Connections the slowloris tries to hold (the server's per-address cap is 256).
SLOW_CONNECTIONS = 600
#: Channels of the world the ``related`` attack runs in (as large as the issue's).
RELATED_CHANNELS = 50_000
#: Channels whose related pages the attacker asks for, and pages of each.
RELATED_TARGETS, RELATED_PAGES = 500, 20
#: Requests a second of the ``related`` attack: its address's channel-read allowance spread
#: over every second it attacks.
RELATED_RATE = BUCKETS["channel-read"].count / (ROUNDS * (SECONDS + 2))


async def _dribble(
    reader: asyncio.StreamReader, writer: asyncio.StreamWriter, until: float
) -> None:
    """Send heads a byte every 0.2 s until closed."""
    for byte in HEAD * 1000:
        if time.monotonic() >= until or reader.at_eof():
            return
        writer.write(bytes([byte]))
        await writer.drain()
        await asyncio.sleep(0.2)


async def _flood(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, until: float) -> None:
    """Send a megabyte of headers as fast as the server reads them."""
    writer.write(HEAD)
    for _ in range(128):
        writer.write(b"X-Pad: " + b"a" * 8000 + b"\r\n")
        await writer.drain()


#: Hooks the ``hooks`` attack tries to register (the issue's figure; the platform allows 100).
ATTACK_HOOKS = 500
#: The live-events attacks' sockets.
LIVE_SOCKETS = 8


async def _hooks(url: str, seconds: float, register: bool) -> None:
    """As a user of the platform at ``url``: register every hook allowed (``register``), each
    naming 1,000 events that never happen, then change one's own channel from 4 workers for
    ``seconds``; delete the client (its hooks end) at the end."""
    local = httpx.AsyncHTTPTransport(local_address=ATTACKER)
    async with httpx.AsyncClient(base_url=url, transport=local, timeout=30) as person:
        signed = await person.post(
            "/users/login", json={"username": "viewer", "password": "explorer"}
        )
        person.headers["X-CSRF-Token"] = signed.headers["X-CSRF-Token"]
        channel = (await person.get("/users/current")).json()["channel"]["id"]
        made = (
            await person.post(
                "/oauth/clients",
                json={"name": "b", "redirectUris": ["http://127.0.0.1/"], "confidential": True},
            )
        ).json()
        secret = {"Client-ID": made["id"], "Authorization": f"Secret {made['secret']}"}
        hooks = 0
        while register and hooks < ATTACK_HOOKS:
            idle = [f"costream:{hooks}-{n}:update" for n in range(1000)]
            body = {"kind": "web", "events": idle, "url": "http://127.0.0.1:9/"}
            if (await person.post("/hooks", json=body, headers=secret)).status_code != 201:
                break
            hooks += 1
        print("attacking", flush=True)
        until = time.monotonic() + seconds

        async def change(worker: int) -> None:
            n = 0
            while time.monotonic() < until:
                n += 1
                await person.patch(f"/channels/{channel}", json={"name": f"b{worker}-{n}"})
                OPENED.append(1)

        await asyncio.gather(*(change(w) for w in range(4)))
        await person.delete(f"/oauth/clients/{made['id']}")


#: Connections the attacker opened (one entry each), to show the attack ran.
OPENED: list[int] = []

Attack = Callable[[asyncio.StreamReader, asyncio.StreamWriter, float], Awaitable[None]]


async def _again_and_again(attack: Attack, host: str, port: int, until: float) -> None:
    """Run ``attack`` on one connection from the attacker's address, reconnecting whenever
    the server closes or refuses it, until ``until``."""
    while time.monotonic() < until:
        try:
            reader, writer = await asyncio.open_connection(host, port, local_addr=(ATTACKER, 0))
        except OSError:
            await asyncio.sleep(0.05)
            continue
        OPENED.append(1)
        try:
            await attack(reader, writer, until)
        except OSError:
            pass
        finally:
            writer.close()


async def _answer(reader: asyncio.StreamReader) -> bytes:
    """One response's body (by its Content-Length)."""
    head = await reader.readuntil(b"\r\n\r\n")
    length = next(
        (int(line[15:]) for line in head.split(b"\r\n") if line[:15].lower() == b"content-length:"),
        0,
    )
    return await reader.readexactly(length)


async def _related(host: str, port: int, until: float) -> None:
    """Ask for related channels, one request at a time, another channel and page each time."""
    reader, writer = await asyncio.open_connection(host, port, local_addr=(ATTACKER, 0))

    async def get(path: str) -> bytes:
        writer.write(f"GET /api/v1{path} HTTP/1.1\r\nHost: {host}:{port}\r\n\r\n".encode())
        return await _answer(reader)

    ids: list[int] = []
    for page in range(RELATED_TARGETS // 100):
        body = await get(f"/channels?limit=100&page={page}&order=viewersTotal:desc&fields=id")
        ids += [channel["id"] for channel in json.loads(body)]
    started = time.monotonic()
    try:
        for sent in itertools.count():
            if time.monotonic() >= until:
                return
            channel, page = ids[sent % len(ids)], sent // len(ids) % RELATED_PAGES
            await get(f"/channels/{channel}/related?page={page}")
            OPENED.append(1)
            await asyncio.sleep(max(0.0, started + (sent + 1) / RELATED_RATE - time.monotonic()))
    finally:
        writer.close()


async def _attack(kind: str, url: str, seconds: float) -> None:
    parts = urlsplit(url)
    host, port = parts.hostname or "127.0.0.1", parts.port or 80
    until = time.monotonic() + seconds
    if kind in ("hooks", "hook-events"):
        # Counts the changes made (each an event), not connections.
        await _hooks(url, seconds, register=kind == "hooks")
        print(len(OPENED), flush=True)
        return
    if kind == "slowloris":
        tasks = [_again_and_again(_dribble, host, port, until) for _ in range(SLOW_CONNECTIONS)]
    elif kind == "related":
        tasks = [_related(host, port, until)]
    elif kind == "headers":
        tasks = [_again_and_again(_flood, host, port, until) for _ in range(8)]
    else:
        attack = live_attacks.bombs if kind == "live-bombs" else live_attacks.hold
        tasks = [
            live_attacks.again_and_again(url, ATTACKER, until, attack, OPENED)
            for _ in range(LIVE_SOCKETS)
        ]
    print("attacking", flush=True)
    await asyncio.gather(*tasks)
    print(len(OPENED), flush=True)


@contextlib.contextmanager
def attacking(kind: str, url: str, seconds: float) -> Iterator[list[int]]:
    """Run the ``kind`` attack on ``url`` in a process of its own for ``seconds``; the list
    yielded gets the number of connections it opened once it is over."""
    process = subprocess.Popen(
        [sys.executable, "-m", "benchmarks.front", "attack", kind, url, str(seconds)],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stdout is not None
        assert process.stdout.readline().strip() == "attacking"
        time.sleep(1.0)  # let it take hold before measuring
        opened: list[int] = []
        yield opened
        opened.append(int(process.stdout.readline() or 0))
    finally:
        process.terminate()
        process.wait(10)


def _line(name: str, runs: list[LoadResult]) -> str:
    p50 = statistics.median(r.p50_ms for r in runs)
    p99s = sorted(r.p99_ms for r in runs)
    errors = sum(r.errors for r in runs)
    spread = f"{p99s[0]:.2f}-{p99s[-1]:.2f}"
    return (
        f"  {name:<22} p50 {p50:6.2f} ms   p99 {statistics.median(p99s):6.2f} ms "
        f"(runs {spread})   errors {errors}"
    )


def main() -> None:
    """Measure the bystander normally, beside each attack on a decoy and under each attack;
    print PASS/FAIL per attack."""
    print(f"HTTP front: a bystander's GET /channels, {CONCURRENCY} connections, under attack")
    kinds = ("slowloris", "headers", "live-bombs", "live-hold", "hooks")
    runs: dict[str, list[LoadResult]] = {
        name: [] for name in ("normal", *(f"{kind}{on}" for kind in kinds for on in (DECOY, "")))
    }
    opened: dict[str, int] = {kind: 0 for kind in kinds}
    with contextlib.ExitStack() as stack:
        url, _ = stack.enter_context(running("platform", "300"))
        websocket = stack.enter_context(running("decoy", "websocket"))[0]
        decoys = {kind: stack.enter_context(running("decoy", kind))[0] for kind in kinds[:2]}
        decoys |= {"live-bombs": websocket, "live-hold": websocket, "hooks": url}
        target = url + QUERY
        load(target, CONCURRENCY, 1.0)
        for _ in range(ROUNDS):
            runs["normal"].append(load(target, CONCURRENCY, SECONDS))
            for kind in kinds:
                # The hooks attack's decoy: the same channel changes, no hook registered.
                decoy = "hook-events" if kind == "hooks" else kind
                with attacking(decoy, decoys[kind], SECONDS + 2):
                    runs[kind + DECOY].append(load(target, CONCURRENCY, SECONDS))
                with attacking(kind, url, SECONDS + 2) as connections:
                    runs[kind].append(load(target, CONCURRENCY, SECONDS))
                opened[kind] += sum(connections)
    for name, results in runs.items():
        print(_line(name, results))
    normal = statistics.median(r.p99_ms for r in runs["normal"])
    for kind in kinds:
        attacked = statistics.median(r.p99_ms for r in runs[kind])
        busy = statistics.median(r.p99_ms for r in runs[kind + DECOY])
        verdict = (
            "PASS" if attacked <= 2 * busy and not sum(r.errors for r in runs[kind]) else "FAIL"
        )
        print(
            f"  {kind}: p99 {attacked / busy:.2f}x the machine as busy, {attacked / normal:.2f}x "
            f"idle (goal <= 2x busy, no errors): {verdict}"
            f"  [attacker {'made' if kind == 'hooks' else 'opened'} {opened[kind]:,} "
            f"{'events' if kind == 'hooks' else 'connections'}]"
        )
    _cost_attack()


def _cost_attack() -> None:
    """The ``related`` attack: the bystander's p99 on a world of ``RELATED_CHANNELS`` with
    nobody attacking and under the attack, alternating; PASS within 2x."""
    world = f"{RELATED_CHANNELS:,} channels"
    print(f"Cost: a bystander's GET /channels while another asks for /related, {world}")
    runs: dict[str, list[LoadResult]] = {"normal": [], "related": []}
    sent = 0
    with running("platform", str(RELATED_CHANNELS)) as (url, _):
        target = url + QUERY
        load(target, CONCURRENCY, 1.0)
        for _ in range(ROUNDS):
            runs["normal"].append(load(target, CONCURRENCY, SECONDS))
            with attacking("related", url, SECONDS + 2) as requests:
                runs["related"].append(load(target, CONCURRENCY, SECONDS))
            sent += sum(requests)
    for name, results in runs.items():
        print(_line(name, results))
    normal = statistics.median(r.p99_ms for r in runs["normal"])
    attacked = statistics.median(r.p99_ms for r in runs["related"])
    errors = sum(r.errors for r in runs["related"])
    verdict = "PASS" if attacked <= 2 * normal and not errors else "FAIL"
    print(
        f"  related: p99 {attacked / normal:.2f}x normal (goal <= 2x, no errors): {verdict}"
        f"  [attacker answered {sent:,} related pages]"
    )


if __name__ == "__main__":
    if sys.argv[1:2] == ["attack"]:
        asyncio.run(_attack(sys.argv[2], sys.argv[3], float(sys.argv[4])))
    elif sys.argv[1:2] == ["cost"]:
        _cost_attack()  # the cost attack alone: python -m benchmarks.front cost
    else:
        main()
