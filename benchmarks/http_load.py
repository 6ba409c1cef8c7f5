"""A lean HTTP/1.1 keep-alive load generator on asyncio streams, for loopback benchmarks.

``N`` connections each send one request at a time (closed loop) for a fixed duration and
record every latency. Raw sockets rather than an HTTP client library, so the generator costs
as little CPU as possible and both servers of a comparison meet the same client.
"""

from __future__ import annotations

import asyncio
import itertools
import statistics
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from urllib.parse import urlsplit


@dataclass(frozen=True)
class LoadResult:
    """Requests completed, their rate and latency percentiles (milliseconds)."""

    requests: int
    seconds: float
    p50_ms: float
    p99_ms: float
    errors: int

    @property
    def rate(self) -> float:
        """Requests per second."""
        return self.requests / self.seconds


async def _worker(
    host: str,
    port: int,
    requests: Iterator[bytes],
    until: float,
    latencies: list[float],
    errors: list[int],
    max_requests: int,
) -> None:
    reader, writer = await asyncio.open_connection(host, port)
    try:
        while time.perf_counter() < until and len(latencies) < max_requests:
            request = next(requests, None)
            if request is None:
                break
            started = time.perf_counter()
            writer.write(request)
            head = await reader.readuntil(b"\r\n\r\n")
            length = 0
            for line in head.split(b"\r\n"):
                if line[:15].lower() == b"content-length:":
                    length = int(line[15:])
            await reader.readexactly(length)
            latencies.append(time.perf_counter() - started)
            if not head.startswith(b"HTTP/1.1 200"):
                errors.append(1)
    finally:
        writer.close()


async def _load(
    urls: Iterable[str], concurrency: int, seconds: float, max_requests: int
) -> LoadResult:
    urls = iter(urls)
    first = next(urls)
    parts = urlsplit(first)
    host, port = parts.hostname or "127.0.0.1", parts.port or 80

    def encode(url: str) -> bytes:
        target = urlsplit(url)
        path = target.path + (f"?{target.query}" if target.query else "")
        return f"GET {path} HTTP/1.1\r\nHost: {host}:{port}\r\n\r\n".encode()

    requests = map(encode, itertools.chain([first], urls))
    latencies: list[float] = []
    errors: list[int] = []
    started = time.perf_counter()
    until = started + seconds
    await asyncio.gather(
        *(
            _worker(host, port, requests, until, latencies, errors, max_requests)
            for _ in range(concurrency)
        )
    )
    elapsed = time.perf_counter() - started
    ordered = sorted(latencies)
    p99 = ordered[min(int(len(ordered) * 0.99), len(ordered) - 1)] if ordered else 0.0
    return LoadResult(
        len(ordered),
        elapsed,
        statistics.median(ordered) * 1000 if ordered else 0.0,
        p99 * 1000,
        len(errors),
    )


def load(
    url: str | Iterable[str],
    concurrency: int = 32,
    seconds: float = 3.0,
    max_requests: int = 200_000,
) -> LoadResult:
    """Drive ``url`` (one address, repeated; or a finite sequence, each sent once) with
    ``concurrency`` keep-alive connections for at most ``seconds`` and ``max_requests``."""
    urls = itertools.repeat(url) if isinstance(url, str) else url
    return asyncio.run(_load(urls, concurrency, seconds, max_requests))
