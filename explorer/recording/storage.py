"""Where a capture's files live: a local folder, or any filesystem URL fsspec knows
(``s3://bucket/prefix``, ``gs://...``, ``abfs://...``, ``memory://...``).

The recorder and the capture reader see one small seam, :class:`CaptureStore`: files are named by
their path inside the capture (``events/date=2026-01-01/r1-000003.parquet``). A file appears
whole or not at all, in two steps so that a recorder can commit its state between them
(``explorer.recording.recorder``): :meth:`CaptureStore.stage` makes the file ready without
showing it and :meth:`CaptureStore.publish` shows it.

- A local folder stages under a dot name (``.name.partial``, which neither ``*.parquet`` globs
  nor pyarrow's discovery pick up), synced to the disk, and publishes by rename.
- Object storage has no rename, but a PUT is atomic: an object is whole or absent. So a remote
  store stages the file's bytes in memory and publishes them in one put
  (``fs.pipe_file``); nothing half-written is ever listed.

Credentials and endpoints come from the filesystem's own configuration: for S3 (``s3fs``,
``pip install 'explorer-livestream[s3]'``) the standard variables ``AWS_ACCESS_KEY_ID``,
``AWS_SECRET_ACCESS_KEY``, ``AWS_ENDPOINT_URL``, ``AWS_DEFAULT_REGION`` or a profile.
DuckDB reads a remote capture through the same fsspec filesystem (:meth:`CaptureStore.attach`),
so no DuckDB extension is downloaded at run time.
"""

from __future__ import annotations

import contextlib
import os
import pathlib
from abc import ABC, abstractmethod
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import fsspec
import pyarrow as pa
import pyarrow.parquet as pq
from fsspec.implementations.local import LocalFileSystem

#: Suffix of local files being written (never matched by ``*.parquet``).
PARTIAL = ".partial"


@dataclass(frozen=True, slots=True)
class Staged:
    """A file made ready and not shown yet: where it goes (inside the capture), its size, and
    the local dot file or the bytes that :meth:`CaptureStore.publish` shows."""

    final: str
    nbytes: int
    partial: str | None = None
    data: bytes | None = None


class CaptureStore(ABC):
    """A capture's files, by their path inside it (see the module docstring)."""

    #: What the user gave: a local path or a URL (shown in reprs and messages).
    location: pathlib.Path | str

    @abstractmethod
    def stage(self, relative: str, table: pa.Table) -> Staged:
        """Write ``table`` as the Parquet file ``relative`` (one row group, zstd), not
        visible yet."""

    @abstractmethod
    def stage_batches(
        self, relative: str, schema: pa.Schema, batches: Iterable[pa.RecordBatch]
    ) -> Staged:
        """Write ``batches`` as the Parquet file ``relative``, a row group each (zstd), not
        visible yet: a file too big to hold as one table (a compacted day)."""

    @abstractmethod
    def stage_bytes(self, relative: str, data: bytes) -> Staged:
        """Make ``data`` the file ``relative`` (a CSV or JSON Lines file), not visible yet."""

    @abstractmethod
    def publish(self, staged: Staged) -> None:
        """Show a staged file; a second call for the same file does nothing harmful."""

    @abstractmethod
    def write_whole(self, relative: str, data: bytes) -> None:
        """Replace the small file ``relative`` by ``data`` at once (manifests)."""

    @abstractmethod
    def glob(self, pattern: str) -> list[str]:
        """The published files matching ``pattern`` (inside the capture), sorted, as seen
        now (no cached listing)."""

    @abstractmethod
    def remove(self, relative: str) -> None:
        """Delete file ``relative``; one already gone is not an error."""

    @abstractmethod
    def read_bytes(self, relative: str) -> bytes:
        """The content of file ``relative``."""

    @abstractmethod
    def kind(self) -> str | None:
        """``"directory"``, ``"file"`` or None (nothing there)."""

    @abstractmethod
    def make_folders(self, *folders: str) -> None:
        """Make ``folders`` where a filesystem needs them (object stores do not)."""

    @abstractmethod
    def discard_staged(self, pattern: str, keep: set[str]) -> None:
        """Remove staged files left behind that match ``pattern`` (local dot files), except
        those in ``keep``; what cannot be removed stays."""

    @abstractmethod
    def url(self, relative: str) -> str:
        """``relative`` as a path or URL that DuckDB resolves once :meth:`attach` ran."""

    @abstractmethod
    def attach(self, db: Any) -> None:
        """Let DuckDB connection ``db`` read this store's URLs."""


def _write_batches(sink: Any, schema: pa.Schema, batches: Iterable[pa.RecordBatch]) -> None:
    """Write ``batches`` to ``sink`` as a Parquet file, one row group each."""
    with pq.ParquetWriter(sink, schema, compression="zstd") as writer:
        for batch in batches:
            writer.write_batch(batch, row_group_size=max(batch.num_rows, 1))


def _parquet_bytes(table: pa.Table) -> bytes:
    buffer = pa.BufferOutputStream()
    pq.write_table(table, buffer, compression="zstd", row_group_size=max(table.num_rows, 1))
    return bytes(buffer.getvalue().to_pybytes())


class LocalStore(CaptureStore):
    """A capture in a local folder: dot files, synced, renamed into place."""

    def __init__(self, root: pathlib.Path) -> None:
        self.location = root
        #: Absolute, so that the recorder's worker process (and a later chdir) agree.
        self.root = root.absolute()

    def stage(self, relative: str, table: pa.Table) -> Staged:
        final = self.root / relative
        final.parent.mkdir(parents=True, exist_ok=True)
        partial = final.with_name(f".{final.name}{PARTIAL}")
        pq.write_table(table, partial, compression="zstd", row_group_size=max(table.num_rows, 1))
        _sync(partial)
        return Staged(relative, partial.stat().st_size, partial=str(partial))

    def stage_batches(
        self, relative: str, schema: pa.Schema, batches: Iterable[pa.RecordBatch]
    ) -> Staged:
        final = self.root / relative
        partial = final.with_name(f".{final.name}{PARTIAL}")
        _write_batches(str(partial), schema, batches)
        _sync(partial)
        return Staged(relative, partial.stat().st_size, partial=str(partial))

    def stage_bytes(self, relative: str, data: bytes) -> Staged:
        final = self.root / relative
        final.parent.mkdir(parents=True, exist_ok=True)
        partial = final.with_name(f".{final.name}{PARTIAL}")
        partial.write_bytes(data)
        _sync(partial)
        return Staged(relative, len(data), partial=str(partial))

    def publish(self, staged: Staged) -> None:
        assert staged.partial is not None
        with contextlib.suppress(FileNotFoundError):  # published before an interruption
            os.replace(staged.partial, self.root / staged.final)

    def write_whole(self, relative: str, data: bytes) -> None:
        final = self.root / relative
        partial = final.with_name(f".{final.name}{PARTIAL}")
        try:
            partial.write_bytes(data)
            os.replace(partial, final)
        except OSError:
            partial.unlink(missing_ok=True)
            raise

    def glob(self, pattern: str) -> list[str]:
        return sorted(str(p.relative_to(self.root)) for p in self.root.glob(pattern))

    def remove(self, relative: str) -> None:
        (self.root / relative).unlink(missing_ok=True)

    def read_bytes(self, relative: str) -> bytes:
        return (self.root / relative).read_bytes()

    def kind(self) -> str | None:
        if self.root.is_dir():
            return "directory"
        return "file" if self.root.exists() else None

    def make_folders(self, *folders: str) -> None:
        for folder in folders:
            (self.root / folder).mkdir(parents=True, exist_ok=True)

    def discard_staged(self, pattern: str, keep: set[str]) -> None:
        for partial in self.root.glob(pattern):
            if str(partial) not in keep:
                with contextlib.suppress(OSError):
                    partial.unlink()

    def url(self, relative: str) -> str:
        return str(self.root / relative)

    def attach(self, db: Any) -> None:
        """Nothing to do: DuckDB reads local files itself."""


class RemoteStore(CaptureStore):
    """A capture on a filesystem fsspec knows (object storage): each file one put."""

    def __init__(self, fs: fsspec.AbstractFileSystem, root: str, location: str) -> None:
        self.fs, self.root, self.location = fs, root.rstrip("/"), location

    def _path(self, relative: str) -> str:
        return f"{self.root}/{relative}"

    def stage(self, relative: str, table: pa.Table) -> Staged:
        data = _parquet_bytes(table)
        return Staged(relative, len(data), data=data)

    def stage_batches(
        self, relative: str, schema: pa.Schema, batches: Iterable[pa.RecordBatch]
    ) -> Staged:
        buffer = pa.BufferOutputStream()
        _write_batches(buffer, schema, batches)
        return self.stage_bytes(relative, bytes(buffer.getvalue().to_pybytes()))

    def stage_bytes(self, relative: str, data: bytes) -> Staged:
        return Staged(relative, len(data), data=data)

    def publish(self, staged: Staged) -> None:
        assert staged.data is not None
        self.fs.pipe_file(self._path(staged.final), staged.data)

    def write_whole(self, relative: str, data: bytes) -> None:
        self.fs.pipe_file(self._path(relative), data)

    def glob(self, pattern: str) -> list[str]:
        self.fs.invalidate_cache()
        prefix = len(self.root) + 1
        return sorted(str(path)[prefix:] for path in self.fs.glob(self._path(pattern)))

    def remove(self, relative: str) -> None:
        with contextlib.suppress(FileNotFoundError):
            self.fs.rm_file(self._path(relative))

    def read_bytes(self, relative: str) -> bytes:
        return bytes(self.fs.cat_file(self._path(relative)))

    def kind(self) -> str | None:
        self.fs.invalidate_cache()
        if self.fs.isdir(self.root):
            return "directory"
        return "file" if self.fs.isfile(self.root) else None

    def make_folders(self, *folders: str) -> None:
        """No folders to make; but the bucket (the root's first part) must be there, so that a
        wrong name fails now rather than at the first flush."""
        bucket = self.root.split("/", 1)[0]
        if bucket and not self.fs.exists(bucket):
            raise ValueError(f"No bucket {bucket!r} for {self.location!r} (or no access to it).")

    def discard_staged(self, pattern: str, keep: set[str]) -> None:
        """Nothing to do: a remote store stages in memory."""

    def url(self, relative: str) -> str:
        return str(self.fs.unstrip_protocol(self._path(relative)))

    def attach(self, db: Any) -> None:
        db.register_filesystem(self.fs)


def open_store(location: str | os.PathLike[str]) -> CaptureStore:
    """The store at ``location``: a local path (or ``file://`` URL), else a URL of a
    filesystem fsspec knows (raises ``ValueError`` for one it does not, or whose package is
    missing)."""
    if isinstance(location, str) and "://" in location:
        try:
            fs, root = fsspec.core.url_to_fs(location)
        except (ImportError, ValueError) as error:
            raise ValueError(f"Cannot open {location!r}: {error}") from None
        if isinstance(fs, LocalFileSystem):
            return LocalStore(pathlib.Path(root))
        return RemoteStore(fs, root, location)
    return LocalStore(pathlib.Path(location))


def _sync(path: pathlib.Path) -> None:
    """Flush a written file to the disk, so that once renamed it is whole even after a
    power cut (``kill -9`` alone needs no sync)."""
    with open(path, "rb+") as file:
        os.fsync(file.fileno())
