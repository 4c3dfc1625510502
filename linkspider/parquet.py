"""Atomic Parquet part files: buffered rows of one table written as ``part-*.parquet``.

A :class:`PartWriter` buffers rows and writes them as one part file when
``flush_rows`` rows or about ``flush_bytes`` bytes are buffered, when the oldest
buffered row is ``flush_seconds`` old, and at close: a million-page crawl makes
hundreds of parts, not hundreds of thousands, and a kill -9 loses at most one
flush interval. Each part is written to a hidden temporary
name (``.tmp-part-…``) and renamed into place with ``os.replace``, so readers
that glob ``part-*.parquet`` never see a half-written file: a crash loses at
most the rows not yet flushed. Part names carry the job id, a UTC stamp, the
process id and a sequence number, so resumed crawls, Scrapyd jobs and several
workers can write into the same directory without clashing.
"""

from __future__ import annotations

import logging
import os
import re
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

logger = logging.getLogger(__name__)
_SAFE = re.compile(r"[^A-Za-z0-9_.-]+")


def part_name(job: str, seq: int, *, stamp: str | None = None, pid: int | None = None) -> str:
    """``part-<job>-<utc stamp>-<pid>-<seq>.parquet``, safe as a file name."""
    stamp = stamp or datetime.now(UTC).strftime("%Y%m%dT%H%M%S%fZ")
    pid = os.getpid() if pid is None else pid
    return f"part-{_SAFE.sub('_', job)}-{stamp}-{pid}-{seq:05d}.parquet"


class PartWriter:
    """Writes rows of one table (``schema``) into part files under ``directory``."""

    def __init__(
        self,
        directory: str | os.PathLike[str],
        schema: pa.Schema,
        job: str,
        *,
        flush_rows: int = 500,
        flush_bytes: int = 0,
        flush_seconds: float = 0.0,
        compression: str = "zstd",
    ) -> None:
        if flush_rows < 1:
            raise ValueError(f"flush_rows must be >= 1, got {flush_rows}")
        if flush_bytes < 0 or flush_seconds < 0:
            raise ValueError("flush_bytes and flush_seconds must not be negative")
        self.flush_bytes = flush_bytes  # 0: no byte limit
        self.flush_seconds = flush_seconds  # 0: no timer
        self._bytes = 0
        self._since: float | None = None
        self.directory = Path(directory)
        self.schema = schema
        self.job = job
        self.flush_rows = flush_rows
        self.compression = compression
        self.rows_written = 0
        self.parts: list[Path] = []
        self._rows: list[Mapping[str, Any]] = []
        self._stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S%fZ")
        #: Called before each part is written: another writer whose rows must reach the disk first.
        self.before_flush: Callable[[], object] | None = None
        self._seq = 0
        self.directory.mkdir(parents=True, exist_ok=True)

    def __enter__(self) -> PartWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def pending(self) -> int:
        """Rows buffered and not yet in a part file."""
        return len(self._rows)

    def add(self, row: Mapping[str, Any]) -> None:
        """Buffer one row; writes a part file when a limit (rows, bytes, age) is reached."""
        if not self._rows:
            self._since = time.monotonic()
        self._rows.append(row)
        self._bytes += row_bytes(row)
        if (len(self._rows) >= self.flush_rows or (self.flush_bytes and self._bytes >= self.flush_bytes)
                or self.due()):
            self.flush()

    def due(self) -> bool:
        """Whether the oldest buffered row has waited ``flush_seconds`` (the timer's check)."""
        return bool(self.flush_seconds and self._rows and self._since is not None
                    and time.monotonic() - self._since >= self.flush_seconds)

    def add_many(self, rows: Iterable[Mapping[str, Any]]) -> None:
        """Buffer several rows."""
        for row in rows:
            self.add(row)

    def flush(self) -> Path | None:
        """Write the buffered rows as one part file (atomically); None when nothing is buffered."""
        if not self._rows:
            return None
        if self.before_flush is not None:
            self.before_flush()
        final = self._write(pa.Table.from_pylist(self._rows, schema=self.schema))
        self.rows_written += len(self._rows)
        self._rows = []
        self._bytes = 0
        self._since = None
        return final

    def write_table(self, table: pa.Table) -> Path | None:
        """Write rows already in Arrow form as one part (columns missing from ``table`` are null)."""
        if table.num_rows == 0:
            return None
        columns = [table[f.name].cast(f.type) if f.name in table.column_names
                   else pa.nulls(table.num_rows, f.type) for f in self.schema]
        final = self._write(pa.Table.from_arrays(columns, schema=self.schema))
        self.rows_written += table.num_rows
        return final

    def _write(self, table: pa.Table) -> Path:
        self._seq += 1
        name = part_name(self.job, self._seq, stamp=self._stamp)
        final = self.directory / name
        tmp = self.directory / f".tmp-{name}"
        try:
            pq.write_table(table, tmp, compression=self.compression)
            fd = os.open(tmp, os.O_RDONLY)
            try:
                os.fsync(fd)
            finally:
                os.close(fd)
            os.replace(tmp, final)
        except BaseException:
            tmp.unlink(missing_ok=True)
            raise
        self.parts.append(final)
        return final

    def close(self) -> None:
        """Flush what is left."""
        self.flush()


def row_bytes(row: Mapping[str, Any]) -> int:
    """About how many bytes a row takes in a part: its strings (block texts included), 8 per other value."""
    size = 0
    for value in row.values():
        if isinstance(value, str):
            size += len(value)
        elif isinstance(value, list):
            for item in value:
                if isinstance(item, str):
                    size += len(item)
                elif isinstance(item, Mapping):
                    size += len(item.get("text") or "") + 16 * (len(item.get("links") or ()) + 1)
                else:
                    size += 8
        else:
            size += 8
    return size


def part_files(directory: str | os.PathLike[str]) -> list[Path]:
    """The complete part files under ``directory``, in name order (none when it does not exist)."""
    folder = Path(directory)
    return sorted(folder.glob("part-*.parquet")) if folder.is_dir() else []


def read_part(path: Path, columns: Sequence[str] | None = None) -> pa.Table | None:
    """One part file (only ``columns`` of them that it has, when given); None, with a warning,
    when it cannot be read."""
    try:
        if columns is not None:
            names = pq.read_schema(path).names
            columns = [c for c in columns if c in names]
        return pq.read_table(path, columns=columns)
    except (OSError, pa.ArrowException) as exc:
        logger.warning("linkspider: part %s is unreadable (%s); skipped", path, exc)
        return None


def read_table(directory: str | os.PathLike[str], schema: pa.Schema | None = None) -> pa.Table:
    """All complete part files under ``directory`` as one table (empty when there are none)."""
    parts = part_files(directory)
    if not parts:
        if schema is None:
            raise FileNotFoundError(f"no part files in {directory}")
        return schema.empty_table()
    tables = [pq.read_table(p) for p in parts]
    return pa.concat_tables(tables, promote_options="default")
