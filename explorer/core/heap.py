"""Freed native memory handed back to the operating system, so a process that builds and frees
tables for hours (a recorder, a watch building its rows) keeps a level resident size.

Two allocators keep what they freed: glibc's ``malloc`` keeps holes in its heap resident
(numpy and pandas buffers: reading a log, concatenating its columns), and pyarrow's pool
(mimalloc by default) keeps freed pages per thread for reuse (building a flush's table,
writing its Parquet file; a recorder writes from whichever thread of the loop's pool is free,
so each of them keeps its own). Neither is a leak, but over an hour of flushes both show as
resident memory that creeps up (issue 28: 6 to 12 MB over the last half of an hour's soak,
about half of it pyarrow's pool). :func:`release_freed` returns both, at a few milliseconds a
call, so it runs after work that freed much (a flush, a merge of a log's segments), not per row;
and after a recorder's flushes at most once a second (:class:`ReleaseEvery`), since the next
allocations take back what it returned, faulted in and zeroed by the kernel: after each of a
busy recording's many small flushes, that was about a tenth of its worker's time.
"""

from __future__ import annotations

import ctypes
import math
import time
from collections.abc import Callable
from typing import cast

import pyarrow as pa


def _find_trim() -> Callable[[int], int] | None:
    """glibc's ``malloc_trim`` from the running process, None elsewhere (other C libraries
    return freed memory on their own)."""
    try:
        return cast("Callable[[int], int]", ctypes.CDLL(None).malloc_trim)
    except (OSError, AttributeError, TypeError):
        return None


_TRIM = _find_trim()


def release_freed() -> None:
    """Return the free pages of pyarrow's pool (the calling thread's, for mimalloc) and of the
    C heap to the operating system."""
    pa.default_memory_pool().release_unused()
    if _TRIM is not None:
        _TRIM(0)


#: Seconds a recorder's flushes leave between returns of freed memory (see the docstring).
RELEASE_EVERY = 1.0


class ReleaseEvery:
    """Calls :func:`release_freed` when called, unless it did less than ``seconds`` ago on
    ``clock``."""

    def __init__(
        self, seconds: float = RELEASE_EVERY, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self._seconds = seconds
        self._clock = clock
        self._last = -math.inf

    def __call__(self) -> None:
        now = self._clock()
        if now - self._last >= self._seconds:
            self._last = now
            release_freed()
