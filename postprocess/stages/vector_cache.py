"""An append-only store of vectors on disk: a folder of Parquet parts, never rewritten.

The page embedding cache (``cache/embeddings-<model>/``) and the paragraph cache
(``cache/passages-<model>/``) are folders of ``part-*.parquet`` files with a ``key``
column (content hash and model) and list<float32> vector columns. A run reads every
part and appends one new part holding only what it embedded: after 1% of a million
pages change, the next run writes 1% of the vectors, not all of them. Parts are
written under a temporary name and renamed, so a killed run leaves no half part; an
unreadable part is named in a warning and skipped (its pages are embedded again).
A cache file of the older layout (``embeddings-<model>.parquet``) is read as the
first part and left as it is.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from postprocess.memory import give_back
from postprocess.stages.chunk_vectors import ChunkVectors, RowWriter
from postprocess.stages.output import replace_atomically

log = logging.getLogger(__name__)


def model_slug(model_id: str) -> str:
    """A model id as a file-name part of its caches (``sentence-transformers-all-minilm-l6-v2``)."""
    return "".join(c if c.isalnum() or c in "-." else "-" for c in model_id).strip("-").lower()


def vector_column(vectors: Sequence[np.ndarray]) -> pa.Array:
    """A list<float32> column from arrays (flattened), without Python float lists."""
    flat = [np.asarray(v, dtype=np.float32).reshape(-1) for v in vectors]
    offsets = np.zeros(len(flat) + 1, dtype=np.int32)
    if flat:
        offsets[1:] = np.cumsum([len(v) for v in flat])
    values = np.concatenate(flat) if flat else np.zeros(0, dtype=np.float32)
    return pa.ListArray.from_arrays(pa.array(offsets), pa.array(values, pa.float32()))


def vectors_of(column: pa.ChunkedArray, dim: int | None = None) -> list[np.ndarray]:
    """The arrays of a list<float32> column, each reshaped to rows of ``dim`` (None: as stored)."""
    out: list[np.ndarray] = []
    for chunk in column.chunks:
        offsets = chunk.offsets.to_numpy()  # absolute positions in chunk.values
        values = chunk.values.to_numpy(zero_copy_only=False).astype(np.float32, copy=False)
        for i in range(len(chunk)):
            vector = values[offsets[i]:offsets[i + 1]]
            out.append(vector if dim is None else vector.reshape(-1, dim))
    return out


BATCH_ROWS = 8192


class VectorParts:
    """The parts of one cache folder (``folder``), plus an older single-file cache (``legacy``)."""

    def __init__(self, folder: Path, legacy: Path | None = None) -> None:
        self.folder = folder
        self.legacy = legacy
        self._seq = 0
        self._unreadable: set[Path] = set()  # named once in a warning, then skipped

    @classmethod
    def for_model(cls, cache_dir: str | Path, kind: str, model_id: str) -> VectorParts:
        """``cache_dir/<kind>-<model>/`` (``embeddings``, ``passages``), with the older
        ``<kind>-<model>.parquet`` read as its first part."""
        name = f"{kind}-{model_slug(model_id)}"
        return cls(Path(cache_dir) / name, Path(cache_dir) / f"{name}.parquet")

    def files(self) -> list[Path]:
        """Existing parts, oldest first (the legacy file before all)."""
        parts = sorted(self.folder.glob("part-*.parquet")) if self.folder.is_dir() else []
        return ([self.legacy] if self.legacy is not None and self.legacy.is_file() else []) + parts

    def tables(self, columns: list[str] | None = None) -> Iterator[pa.Table]:
        """Each readable part as a table, oldest first; an unreadable one is skipped with a warning."""
        for path in self.files():
            try:
                yield pq.read_table(path, columns=columns)
            except (OSError, pa.ArrowException) as exc:
                self._unreadable_part(path, exc)

    def _unreadable_part(self, path: Path, exc: Exception) -> None:
        if path not in self._unreadable:
            self._unreadable.add(path)
            log.warning("cache part %s is unreadable (%s); its vectors are made again", path,
                        str(exc).splitlines()[0] if str(exc) else type(exc).__name__)

    def missing(self, keys: Sequence[str]) -> np.ndarray:
        """Which of ``keys`` no readable part holds (a mask); reads the key column alone."""
        held = [np.asarray(table["key"].to_numpy(zero_copy_only=False), dtype=np.bytes_)
                for table in self.tables(columns=["key"])]
        wanted = np.asarray(keys, dtype=np.bytes_) if len(keys) else np.zeros(0, np.bytes_)
        if not held or not len(wanted):
            return np.ones(len(wanted), dtype=bool)
        return ~np.isin(wanted, np.concatenate(held))

    def lookup(self, keys: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
        """(one vector per key, which keys were found) from parts of a single ``vector`` column (the
        paragraph cache), newest part first, a batch of rows at a time: only the vectors asked for
        are ever held. A key not found has a row of zeros (no row at all when nothing was read)."""
        wanted = np.asarray(keys, dtype=np.bytes_) if len(keys) else np.zeros(0, np.bytes_)
        order = np.argsort(wanted, kind="stable")
        ordered = wanted[order]
        found = np.zeros(len(wanted), dtype=bool)
        vectors: np.ndarray | None = None
        for path in reversed(self.files()):
            if found.all():
                break
            try:
                for batch in pq.ParquetFile(path).iter_batches(BATCH_ROWS, columns=["key", "vector"]):
                    pages, rows = _matches(ordered, order, found, batch.column("key"))
                    if not len(pages):
                        continue
                    column = batch.column("vector").take(pa.array(rows))
                    lengths = pc.list_value_length(column).to_numpy(zero_copy_only=False)
                    dim = int(lengths[0]) if vectors is None else vectors.shape[1]
                    if np.any(lengths != dim):
                        raise ValueError("another dimension")
                    if vectors is None:
                        vectors = np.zeros((len(wanted), dim), dtype=np.float32)
                    values = column.flatten().to_numpy(zero_copy_only=False)
                    vectors[pages] = np.asarray(values, np.float32).reshape(-1, dim)
                    found[pages] = True
            except (OSError, pa.ArrowException, KeyError) as exc:
                self._unreadable_part(path, exc)
            except ValueError:
                log.warning("a part of the cache %s has another shape; its vectors are made again",
                            self.folder)
        give_back()
        return (vectors if vectors is not None else np.zeros((len(wanted), 0), np.float32)), found

    def gather(self, keys: Sequence[str], dim: int | None,
               chunks: RowWriter | Callable[[int], RowWriter]) -> Gathered | None:
        """The page vector and chunk vectors of each of ``keys`` from the parts (newest first), the
        chunks written to ``chunks`` (or to the writer it makes for the dimension ``dim`` found):
        one batch of rows at a time, never the whole cache in memory. None when ``dim`` is None
        and no part can be read; ``found`` says which keys were there."""
        wanted = np.asarray(keys, dtype=np.bytes_) if len(keys) else np.zeros(0, np.bytes_)
        order = np.argsort(wanted, kind="stable")
        ordered = wanted[order]
        found = np.zeros(len(wanted), dtype=bool)
        starts = np.zeros(len(wanted), dtype=np.int64)
        counts = np.zeros(len(wanted), dtype=np.int64)
        vectors: np.ndarray | None = None
        writer = chunks if isinstance(chunks, RowWriter) else None
        for path in reversed(self.files()):
            try:
                batches = pq.ParquetFile(path).iter_batches(BATCH_ROWS, columns=["key", "vector", "chunks"])
                for batch in batches:
                    if not batch.num_rows:
                        continue
                    if dim is None:
                        dim = int(pc.list_value_length(batch.column("vector"))[0].as_py() or 0) or None
                    if dim is None:
                        continue
                    if writer is None:
                        writer = chunks(dim)  # type: ignore[operator]
                    if vectors is None:
                        vectors = np.zeros((len(wanted), dim), dtype=np.float32)
                    pages, rows = _matches(ordered, order, found, batch.column("key"))
                    if not len(pages):
                        continue
                    vector_values, chunk_values, chunk_counts = _rows_of(batch, rows, dim)
                    vectors[pages] = vector_values
                    first = writer.add(chunk_values)
                    counts[pages] = chunk_counts
                    starts[pages] = first + np.cumsum(chunk_counts) - chunk_counts
                    found[pages] = True
            except (OSError, pa.ArrowException, KeyError) as exc:
                self._unreadable_part(path, exc)
            except ValueError:
                log.warning("a part of the embedding cache %s has another shape; its pages are embedded "
                            "again", self.folder)
        give_back()  # the batches' buffers: kept by Arrow's pool otherwise
        if writer is None or vectors is None:
            return None
        return Gathered(vectors, writer.finish(starts, counts), found)

    def append(self, table: pa.Table) -> Path | None:
        """Write ``table`` as a new part (temporary name, then rename); nothing for an empty table."""
        if table.num_rows == 0:
            return None
        self.folder.mkdir(parents=True, exist_ok=True)
        stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S%fZ")
        self._seq += 1
        path = self.folder / f"part-{stamp}-{os.getpid()}-{self._seq:04d}.parquet"
        replace_atomically(path, lambda tmp: pq.write_table(table, tmp, compression="zstd",
                                                           row_group_size=BATCH_ROWS))
        return path


@dataclass
class Gathered:
    """What ``VectorParts.gather`` read: one page vector per key, their chunks, which were found."""

    vectors: np.ndarray
    chunks: ChunkVectors
    found: np.ndarray


def _matches(ordered: np.ndarray, order: np.ndarray, found: np.ndarray, batch_keys: pa.Array
             ) -> tuple[np.ndarray, np.ndarray]:
    """(wanted positions, batch rows) of the batch's keys that are wanted and not found yet."""
    keys = np.asarray(batch_keys.to_numpy(zero_copy_only=False), dtype=np.bytes_)
    if not len(ordered) or not len(keys):
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    at = np.minimum(np.searchsorted(ordered, keys), len(ordered) - 1)
    rows = np.flatnonzero(ordered[at] == keys)
    pages = order[at[rows]]
    fresh = ~found[pages]
    pages, rows = pages[fresh], rows[fresh]
    pages, first = np.unique(pages, return_index=True)  # a key twice in one batch: its first row
    return pages, rows[first]


def _rows_of(batch: pa.RecordBatch, rows: np.ndarray, dim: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(page vectors, chunk vectors, chunks per page) of ``rows``; ValueError for another dimension."""
    taken = batch.take(pa.array(rows))
    vector_column, chunk_column = taken.column("vector"), taken.column("chunks")
    if pc.any(pc.not_equal(pc.list_value_length(vector_column), dim)).as_py():
        raise ValueError("another dimension")
    lengths = pc.list_value_length(chunk_column).to_numpy(zero_copy_only=False)
    if np.any(lengths % dim):
        raise ValueError("another dimension")
    vectors = np.asarray(vector_column.flatten().to_numpy(zero_copy_only=False), np.float32).reshape(-1, dim)
    chunks = np.asarray(chunk_column.flatten().to_numpy(zero_copy_only=False), np.float32).reshape(-1, dim)
    return vectors, chunks, (lengths // dim).astype(np.int64)
