"""The queue's files: suggestions.csv / .parquet, pages.parquet, cannibalisation.csv, stage files.

Every file is written under a temporary name and renamed when complete, so a file
with the final name is always whole (an old one stays as it was if a run fails).
"""

from __future__ import annotations

import csv
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from postprocess.errors import InputError
from postprocess.stages.load import Crawl
from postprocess.stages.openings import OPENING_COLUMN, opening_column
from postprocess.stages.output import PAGES_FILE, replace_atomically
from postprocess.stages.scoring import PART_COLUMNS, inbound_counts
from postprocess.stages.suggestions import Parts, Pool, Suggestion, names_of_parts, part_columns
from postprocess.stages.titles import clean_title, site_title_parts

SUGGESTION_COLUMNS = ("source_url", "target_url", "anchor", "anchor_type", "context", "confidence", "score",
                      "evidence", "rank")
INFO_COLUMNS = ("source_title", "target_title", "target_inbound")
#: The queue's files in the output folder.
SUGGESTIONS_PARQUET = "suggestions.parquet"
SUGGESTIONS_CSV = "suggestions.csv"
CANNIBAL_COLUMNS = ("url_a", "url_b", "title_a", "title_b", "similarity", "already_linked")


def part_names(rows: Sequence[Suggestion]) -> list[str]:
    """Score parts in column order: the known ones first, then any others by name."""
    if isinstance(rows, Pool):
        return _ordered_parts(set(rows.parts), not rows)
    return _ordered_parts(names_of_parts(rows), not rows)


def _ordered_parts(seen: set[str], empty: bool) -> list[str]:
    return [c for c in PART_COLUMNS if c in seen or empty] + sorted(seen - set(PART_COLUMNS))


def page_titles(crawl: Crawl) -> dict[str, str]:
    """URL → title without the site-wide segments (what an editor reads)."""
    site = site_title_parts([p.title for p in crawl.pages])
    return {p.url: clean_title(p.title, site) or p.h1 for p in crawl.pages}


def suggestions_table(rows: Sequence[Suggestion], crawl: Crawl | None = None,
                      titles: dict[str, str] | None = None) -> pa.Table:
    """The queue as a table, best first; titles and inbound counts when ``crawl`` is given
    (``titles``: ``page_titles`` of ``crawl`` when the caller has them)."""
    parts = part_names(rows)
    columns: dict[str, pa.Array] = {
        "source_url": pa.array([s.source_url for s in rows], pa.string()),
        "target_url": pa.array([s.target_url for s in rows], pa.string()),
        "anchor": pa.array([s.anchor for s in rows], pa.string()),
        "anchor_type": pa.array([s.anchor_type for s in rows], pa.string()),
        "context": pa.array([s.context for s in rows], pa.string()),
        "confidence": pa.array([s.confidence for s in rows], pa.float64()),
        "score": pa.array([s.score for s in rows], pa.float64()),
        "evidence": pa.array([s.evidence for s in rows], pa.string()),
        "rank": pa.array([s.rank for s in rows], pa.int32()),
    }
    read = part_columns(rows, parts)
    for name in parts:
        columns[name] = (pa.array([s.parts.get(name) for s in rows], pa.float64()) if read is None
                         else pa.array(read[name][0], pa.float64(), mask=read[name][1]))
    if crawl is not None:
        titles = titles if titles is not None else page_titles(crawl)
        inbound = inbound_counts(crawl)
        columns["source_title"] = pa.array([titles.get(s.source_url, "") for s in rows], pa.string())
        columns["target_title"] = pa.array([titles.get(s.target_url, "") for s in rows], pa.string())
        columns["target_inbound"] = pa.array([inbound.get(s.target_url, 0) for s in rows], pa.int32())
    return pa.table(columns)


def read_suggestions(path: Path) -> list[Suggestion]:
    """Suggestions back from a Parquet file written by ``write_parquet``."""
    table = _read_stage_file(path)
    parts = _part_columns(table)
    rows = []
    # a batch of rows made Python values at a time (the whole table at once, 1.84M rows at 1M pages, was
    # the report command's peak), each row's parts a ``Parts`` (~0.3 KB; ~1.8 KB as a dict)
    for batch in table.to_batches(max_chunksize=CSV_BATCH_ROWS):
        for r in batch.to_pylist():
            rows.append(Suggestion(r["source_url"], r["target_url"], r["score"],
                                   Parts([(p, r[p]) for p in parts if r[p] is not None]), r["rank"] or 0,
                                   r["anchor"] or "", r["anchor_type"] or "", r["context"] or "",
                                   r.get("evidence") or "", confidence=r.get("confidence") or 0.0))
    return rows


def read_pool(path: Path) -> Pool:
    """The candidate pool back from ``candidates.parquet`` as columns (its rows have no anchor yet)."""
    table = _read_stage_file(path)
    both = pc.dictionary_encode(pa.concat_arrays([pa.array([], pa.string()), *table["source_url"].chunks,
                                                  *table["target_url"].chunks]))
    urls, ids = both.dictionary.to_pylist(), both.indices.to_numpy(zero_copy_only=False)
    parts = {name: table[name].to_numpy() for name in _part_columns(table)}  # NaN where null: absent
    absent = {name: table[name].is_null().to_numpy() for name in parts}
    return Pool(urls, ids[:table.num_rows], ids[table.num_rows:], table["score"].to_numpy(),
                pc.fill_null(table["rank"], 0).to_numpy(), parts, absent)


def _part_columns(table: pa.Table) -> list[str]:
    """A stage file's score-part columns: its number columns but the row's own fields and the info
    columns (an older candidates.parquet's empty text column ``passage`` is none; the score part
    ``passage`` of anchored.parquet is one)."""
    base = set(SUGGESTION_COLUMNS) | set(INFO_COLUMNS)
    return [f.name for f in table.schema if f.name not in base and pa.types.is_floating(f.type)]


def _read_stage_file(path: Path) -> pa.Table:
    if not path.is_file():
        raise InputError(f"{path} not found: run the earlier stages first")
    return pq.read_table(path)


#: Rows of a pool written at a time, each a row group of the file: only one group's URL strings and
#: encoded pages are made at once (a pool is ~15 rows a page; 5.9 M rows written whole held 865 MB
#: at once. The 1,484,955 rows of 100k synthetic pages: groups of 1,048,576 rows, Parquet's default,
#: +218 MB; of 262,144, +106 MB; of 131,072, +83 MB; of 65,536, +53 MB, in ~2 s each, and a file
#: ~5% smaller than with the default's).
POOL_WRITE_ROWS = 1 << 17


def write_parquet(path: Path, rows: Sequence[Suggestion], crawl: Crawl | None = None) -> None:
    """A stage file: the rows (or a ``Pool``'s columns, a row group at a time) with everything the
    next stage reads."""
    if isinstance(rows, Pool) and crawl is None:
        replace_atomically(path, lambda tmp: _write_pool(tmp, rows))
        return
    table = suggestions_table(rows, crawl)
    replace_atomically(path, lambda tmp: pq.write_table(table, tmp))


def _write_pool(path: Path, pool: Pool) -> None:
    """``pool_table`` of each ``POOL_WRITE_ROWS`` rows in turn, each a row group of one file."""
    urls = pa.array(pool.urls, pa.string())
    first = pool_table(pool, 0, POOL_WRITE_ROWS, urls)
    with pq.ParquetWriter(path, first.schema) as writer:
        writer.write_table(first)
        del first
        for start in range(POOL_WRITE_ROWS, len(pool), POOL_WRITE_ROWS):
            writer.write_table(pool_table(pool, start, start + POOL_WRITE_ROWS, urls))


def pool_table(pool: Pool, start: int = 0, stop: int | None = None, urls: pa.Array | None = None
               ) -> pa.Table:
    """``suggestions_table(rows)`` of the pool's rows ``start:stop`` (all: the whole pool), made from
    its columns (``urls``: the pool's URLs as an Arrow array, when made already)."""
    part = slice(start, stop)
    sources, targets = pool.sources[part], pool.targets[part]
    n = len(sources)
    urls = urls if urls is not None else pa.array(pool.urls, pa.string())
    empty = pa.array([""] * n, pa.string())
    columns: dict[str, pa.Array] = {
        "source_url": urls.take(pa.array(sources)),
        "target_url": urls.take(pa.array(targets)),
        "anchor": empty, "anchor_type": empty, "context": empty,
        "confidence": pa.array(np.zeros(n), pa.float64()),
        "score": pa.array(pool.scores[part], pa.float64()),
        "evidence": empty,
        "rank": pa.array(pool.ranks[part], pa.int32()),
    }
    for name in part_names(pool):
        values = pool.parts.get(name)
        mask = pool.absent.get(name)
        columns[name] = (pa.nulls(n, pa.float64()) if values is None
                         else pa.array(values[part], pa.float64(), mask=None if mask is None else mask[part]))
    return pa.table(columns)


#: Rows of a table made Python values at a time when it is written as CSV (the queue's 187,074 rows
#: at 100k synthetic pages, every column at once: 0.26 GB of Python objects).
CSV_BATCH_ROWS = 16_384


def write_csv(path: Path, table: pa.Table, columns: Sequence[str]) -> None:
    """``columns`` of ``table`` as UTF-8 CSV with a header row, ``CSV_BATCH_ROWS`` rows made Python
    values at a time."""
    chosen = table.select(list(columns))  # a column the table lacks fails here, before any file
    write_csv_batches(path, columns, chosen.to_batches(max_chunksize=CSV_BATCH_ROWS))


def write_csv_batches(path: Path, columns: Sequence[str], batches: Iterable[pa.RecordBatch]) -> None:
    """``write_csv`` of record batches that hold ``columns`` in that order (a table's, or a file's read
    a batch at a time: the whole is never held)."""
    def write(tmp: Path) -> None:
        with open(tmp, "w", newline="", encoding="utf-8") as handle:
            writer = csv.writer(handle)
            writer.writerow(columns)
            for batch in batches:
                writer.writerows(zip(*(column.to_pylist() for column in batch.columns), strict=True))

    replace_atomically(path, write)


def csv_rows(path: Path) -> int:
    """The rows of a CSV file that ``write_csv`` wrote, less its header (0 when there is no file);
    a field's line breaks do not count."""
    if not path.is_file():
        return 0
    with open(path, newline="", encoding="utf-8") as handle:
        return max(0, sum(1 for _ in csv.reader(handle)) - 1)


def csv_columns(table: pa.Table) -> list[str]:
    """Editor's order: who links to whom with which words, then the score and its parts."""
    first = ["source_url", "target_url", "anchor", "anchor_type", "context", "confidence", "score",
             "evidence"]
    info = [c for c in ("source_title", "target_title", "target_inbound", "rank") if c in table.column_names]
    return first + [c for c in table.column_names if c not in first and c not in info] + info


def write_pages(out: Path, titles: dict[str, str], openings: pa.ChunkedArray | None = None) -> None:
    """``pages.parquet``: url and clean title (``page_titles``) of every page of the crawl, and its opening
    words (``stages.openings.opening_column``, in the titles' order; shown by the review app) when given."""
    columns: dict[str, pa.Array | pa.ChunkedArray] = {"url": pa.array(list(titles), pa.string()),
                                                      "title": pa.array(list(titles.values()), pa.string())}
    if openings is not None:
        columns[OPENING_COLUMN] = openings
    table = pa.table(columns)
    replace_atomically(out / PAGES_FILE, lambda tmp: pq.write_table(table, tmp))


def write_suggestions(out: Path, rows: Sequence[Suggestion], crawl: Crawl,
                      csv_elsewhere: Callable[[], object] | None = None) -> pa.Table:
    """suggestions.parquet and suggestions.csv (same rows, score descending), and pages.parquet;
    ``csv_elsewhere``, when given, is called once suggestions.parquet is written, instead of writing
    the CSV here (``QueueCopies.start``: a second process makes it from that file)."""
    titles = page_titles(crawl)
    table = suggestions_table(rows, crawl, titles=titles)
    replace_atomically(out / SUGGESTIONS_PARQUET, lambda tmp: pq.write_table(table, tmp))
    if csv_elsewhere is not None:
        csv_elsewhere()
    pages = crawl.pages if len(titles) == len(crawl.pages) else list({p.url: p for p in crawl.pages}.values())
    write_pages(out, titles, opening_column(pages))  # a page a URL, in the titles' order
    if csv_elsewhere is None:
        write_csv(out / SUGGESTIONS_CSV, table, csv_columns(table))
    return table


def write_cannibalisation(out: Path, pairs: Sequence[Suggestion], crawl: Crawl) -> None:
    """Near-duplicate pairs (similarity above --max-similarity): one row per pair."""
    titles = page_titles(crawl)
    table = pa.table({
        "url_a": [p.source_url for p in pairs], "url_b": [p.target_url for p in pairs],
        "title_a": [titles.get(p.source_url, "") for p in pairs],
        "title_b": [titles.get(p.target_url, "") for p in pairs],
        "similarity": pa.array([p.parts.get("similarity", p.score) for p in pairs], pa.float64()),
        "already_linked": pa.array([bool(p.parts.get("already_linked")) for p in pairs], pa.bool_()),
    }, schema=pa.schema([(c, pa.float64() if c == "similarity" else pa.bool_() if c == "already_linked"
                          else pa.string()) for c in CANNIBAL_COLUMNS]))
    write_csv(out / "cannibalisation.csv", table, CANNIBAL_COLUMNS)
