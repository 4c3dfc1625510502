"""The queue's copies made from suggestions.parquet alone: suggestions.csv and the queue's JSON that
report.html embeds, in a fresh second process while this one writes the pages file, analyses the
links and draws the report.

At a million synthetic pages the report stage ran on one core; these two passes over the queue's
1.8 M rows were about half of it. The second process is a new interpreter (``Background(fresh=True)``)
that reads the queue from its file: it shares none of this process's heap, so the rows this process
goes on reading are never copied for it. The JSON goes through a hidden temporary file in the output
folder, copied into report.html and removed (``QueueCopies.discard``).
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from postprocess.apps.report.queue import (
    CSV_BATCH_ROWS,
    SUGGESTIONS_CSV,
    SUGGESTIONS_PARQUET,
    csv_columns,
    write_csv_batches,
)
from postprocess.apps.report.queue_script import batches_json_pieces
from postprocess.background import Background, worth_a_fork

#: Queues of fewer rows than this are written by one process: a new interpreter (~1.5 s of a core
#: to start, its imports) would cost more than the copies (~45 µs a row).
COPIES_MIN_ROWS = 50_000
#: Rows of suggestions.parquet read at a time by the second process.
COPY_BATCH_ROWS = CSV_BATCH_ROWS


def copies_apart(rows: int, workers: int) -> bool:
    """Whether a queue of ``rows`` rows has its copies made by a second process (``workers`` may run)."""
    return worth_a_fork(rows, workers, COPIES_MIN_ROWS)


def write_copies(out: Path, json_path: Path) -> int:
    """suggestions.csv of ``out``'s suggestions.parquet, and the queue's JSON into ``json_path``, the
    file read ``COPY_BATCH_ROWS`` rows at a time (the queue is never held whole: at 100k synthetic
    pages, the whole table beside the main process's report was +0.38 GB at the run's peak); the
    queue's rows."""
    source = pq.ParquetFile(out / SUGGESTIONS_PARQUET)

    def read(columns: list[str]) -> Iterator[pa.RecordBatch]:
        return source.iter_batches(batch_size=COPY_BATCH_ROWS, columns=columns)

    columns = csv_columns(source.schema_arrow.empty_table())
    write_csv_batches(out / SUGGESTIONS_CSV, columns, read(columns))
    with open(json_path, "w", encoding="utf-8") as handle:
        for piece in batches_json_pieces(read):
            handle.write(piece)
    return source.metadata.num_rows


class QueueCopies:
    """``write_copies`` in a fresh second process, started once suggestions.parquet is written."""

    def __init__(self, out: Path) -> None:
        self.out = Path(out)
        handle, name = tempfile.mkstemp(prefix=".report-queue-", suffix=".json.tmp", dir=self.out)
        os.close(handle)
        self.json = Path(name)
        self._job: Background[int] | None = None
        self._made = False

    def start(self) -> None:
        """Start the second process (suggestions.parquet is complete)."""
        self._job = Background(write_copies, self.out, self.json, fresh=True, name="ls-queue-copies")

    def made(self) -> Path:
        """Wait for the copies (suggestions.csv written); the file that holds the queue's JSON."""
        if self._job is None:
            raise RuntimeError("the queue's copies were never started")
        if not self._made:
            self._job.result()
            self._made = True
        return self.json

    def discard(self) -> None:
        """Remove the JSON file (its text is in report.html, or the run failed: the second process
        is waited for first, so that it writes nothing after)."""
        if self._job is not None and not self._made:
            self._job.wait()
        self.json.unlink(missing_ok=True)
