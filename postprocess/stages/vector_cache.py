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
from collections.abc import Iterator, Sequence
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

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


class VectorParts:
    """The parts of one cache folder (``folder``), plus an older single-file cache (``legacy``)."""

    def __init__(self, folder: Path, legacy: Path | None = None) -> None:
        self.folder = folder
        self.legacy = legacy
        self._seq = 0

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
                log.warning("cache part %s is unreadable (%s); its vectors are made again", path,
                            str(exc).splitlines()[0] if str(exc) else type(exc).__name__)

    def append(self, table: pa.Table) -> Path | None:
        """Write ``table`` as a new part (temporary name, then rename); nothing for an empty table."""
        if table.num_rows == 0:
            return None
        self.folder.mkdir(parents=True, exist_ok=True)
        stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S%fZ")
        self._seq += 1
        path = self.folder / f"part-{stamp}-{os.getpid()}-{self._seq:04d}.parquet"
        replace_atomically(path, lambda tmp: pq.write_table(table, tmp, compression="zstd"))
        return path
