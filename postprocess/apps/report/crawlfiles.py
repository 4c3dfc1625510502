"""Light reads of the crawl columns a loaded ``Crawl`` leaves out (found_by, skipped URLs, jobs)."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq


def read_rows(directory: str | Path, table: str, columns: tuple[str, ...],
              job: str | None = None, urls: Iterable[str] | None = None) -> list[dict]:
    """``columns`` of every part of ``table`` (a column a part lacks is None); ``job`` keeps that job's rows,
    ``urls`` the rows of those URLs (read from the ``url`` column before any row becomes a dict).

    The loader has already checked the parts (and stopped, or skipped and named an unreadable one):
    a part that cannot be read here is left out.
    """
    rows: list[dict] = []
    wanted = pa.array(sorted(set(urls)), pa.string()) if urls is not None else None
    for path in sorted((Path(directory) / table).glob("part-*.parquet")):
        try:
            names = pq.read_schema(path).names
            extra = ["job"] if job is not None and "job" in names and "job" not in columns else []
            part = pq.read_table(path, columns=[c for c in columns if c in names] + extra)
        except (OSError, pa.ArrowException):
            continue
        if job is not None:
            if "job" not in part.column_names:
                continue
            part = part.filter(pc.equal(part["job"], job))
        if wanted is not None:
            part = part.filter(pc.is_in(part["url"], value_set=wanted))
        for c in columns:
            if c not in part.column_names:
                part = part.append_column(c, pa.nulls(part.num_rows))
        rows.extend(part.select(list(columns)).to_pylist())
    return rows
