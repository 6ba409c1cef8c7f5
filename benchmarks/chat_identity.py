"""Chat allowances per identity (issue 13): one user on 1, 10 and 50 sockets, loopback only.

One platform in this process (one chat node, default allowances: ``chat_rate`` 20/s, bursts of
``chat_burst`` 40, the user connection cap raised to 50 so that 50 sockets can sign in). One
user (``viewer``) opens N sockets and sends ``msg`` on each as fast as the replies come, for
``DURATION`` seconds and at most ``MAX_SENDS`` per socket; meanwhile an unrelated user
(``viewer2``) pings every ``PING_EVERY`` seconds. The table shows, per N: messages accepted per
second (over all N sockets), refused with 4004, and the bystander's ping latency (p50, p99,
max). The same run with ``rate_limits=False`` keeps only the per-connection bucket, the
behaviour before issue 13, as the baseline: there the accepted rate grows with N.

``python -m benchmarks chat_identity`` (or ``python -m benchmarks.chat_identity``).
"""

from __future__ import annotations

import asyncio
import statistics
import time
from itertools import count
from typing import Any

import httpx
import orjson
from websockets.asyncio.client import ClientConnection, connect

from explorer.emulator import start
from explorer.wire.packets import encode_method

SOCKETS = (1, 10, 50)
DURATION = 3.0
MAX_SENDS = 2_000
PING_EVERY = 0.05
PASSWORD = "explorer"


def authkey(base_url: str, username: str) -> tuple[int, int, str]:
    """(channel, user id, authkey) of ``username`` for the channel ``streamer``."""
    with httpx.Client(base_url=base_url, timeout=10) as client:
        login = client.post("/users/login", json={"username": username, "password": PASSWORD})
        login.raise_for_status()
        client.headers["X-CSRF-Token"] = login.headers["X-CSRF-Token"]
        channel = client.get("/channels/streamer").json()["id"]
        user = client.get("/users/current").json()["id"]
        return channel, user, client.get(f"/chats/{channel}").json()["authkey"]


async def call(ws: ClientConnection, ids: count[int], method: str, *args: object) -> Any:
    """Send one method and return its reply packet (events are skipped)."""
    wanted = next(ids)
    await ws.send(encode_method(method, list(args), wanted), text=True)
    while True:
        packet = orjson.loads(await ws.recv(decode=False))
        if packet.get("type") == "reply" and packet["id"] == wanted:
            return packet


async def signed_in(endpoint: str, auth: tuple[int, int, str]) -> ClientConnection:
    """A connection signed in with ``auth`` (its welcome read)."""
    ws = await connect(endpoint, compression=None, max_queue=None)
    await ws.recv()
    reply = await call(ws, count(1), "auth", *auth)
    assert reply["error"] is None, reply
    return ws


async def measure(
    endpoint: str, sender: tuple[int, int, str], bystander: tuple[int, int, str], n: int
) -> dict[str, float]:
    """One round: ``n`` flooding sockets of one user and a pinging bystander."""
    sockets = [await signed_in(endpoint, sender) for _ in range(n)]
    watcher = await signed_in(endpoint, bystander)
    accepted = refused = 0
    deadline = time.monotonic() + DURATION

    async def flood(ws: ClientConnection) -> None:
        nonlocal accepted, refused
        ids = count(100)
        for number in range(MAX_SENDS):
            if time.monotonic() >= deadline:
                return
            reply = await call(ws, ids, "msg", f"flood {number}")
            if reply["error"] is None:
                accepted += 1
            else:
                refused += 1

    async def ping() -> list[float]:
        latencies: list[float] = []
        ids = count(100)
        while time.monotonic() < deadline:
            sent = time.perf_counter()
            assert (await call(watcher, ids, "ping"))["error"] is None
            latencies.append((time.perf_counter() - sent) * 1000)
            await asyncio.sleep(PING_EVERY)
        return latencies

    started = time.monotonic()
    pinging = asyncio.ensure_future(ping())
    await asyncio.gather(*(flood(ws) for ws in sockets))
    latencies = sorted(await pinging)
    elapsed = time.monotonic() - started
    for ws in [*sockets, watcher]:
        await ws.close()
    return {
        "accepted_per_s": accepted / elapsed,
        "refused": refused,
        "p50_ms": statistics.median(latencies),
        "p99_ms": latencies[min(len(latencies) - 1, int(len(latencies) * 0.99))],
        "max_ms": latencies[-1],
    }


def released(root_url: str, timeout: float = 10.0) -> None:
    """Return once the node has let every connection go (they count against the cap)."""
    deadline = time.monotonic() + timeout
    while httpx.get(f"{root_url}/_emulator/chat/nodes", timeout=10).json()[0]["connections"]:
        if time.monotonic() > deadline:
            raise TimeoutError("the chat node kept connections open")
        time.sleep(0.01)


def run(rate_limits: bool) -> dict[int, dict[str, float]]:
    """Every socket count against a fresh platform."""
    platform = start(
        channels=300, chat_nodes=1, rate_limits=rate_limits, chat_user_connections=max(SOCKETS)
    )
    try:
        sender = authkey(platform.base_url, "viewer")
        bystander = authkey(platform.base_url, "viewer2")
        endpoint = platform.chat_endpoints[0]
        rows = {}
        for n in SOCKETS:
            rows[n] = asyncio.run(measure(endpoint, sender, bystander, n))
            released(platform.root_url)
        return rows
    finally:
        platform.stop()


def main() -> None:
    """Print accepted messages per second and the bystander's ping latency per socket count."""
    print(f"One user flooding msg on N sockets for {DURATION:g} s; another user pings meanwhile")
    header = f"{'limits':<14}{'sockets':>8}{'accepted/s':>12}{'refused':>9}"
    print(header + f"{'ping p50':>10}{'p99':>8}{'max':>8}  (ms)")
    for label, limits in (("per identity", True), ("per socket", False)):
        for n, row in run(limits).items():
            print(
                f"{label:<14}{n:>8}{row['accepted_per_s']:>12.1f}{row['refused']:>9.0f}"
                f"{row['p50_ms']:>10.2f}{row['p99_ms']:>8.2f}{row['max_ms']:>8.2f}",
                flush=True,
            )


if __name__ == "__main__":
    main()
