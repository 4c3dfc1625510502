"""The report stage's memory: the queue's CSV made Python values a batch at a time, and what each
step freed handed back before the next."""

from __future__ import annotations

import csv
import io
import tracemalloc

import pyarrow as pa
import pytest
from crawlkit import SITE, write_site

from postprocess import cli
from postprocess.apps import report
from postprocess.apps.report import queue, write_csv, write_parquet
from postprocess.stages.candidates import Suggestion


def expected_csv(table: pa.Table, columns: list[str]) -> str:
    handle = io.StringIO(newline="")
    writer = csv.writer(handle)
    writer.writerow(columns)
    writer.writerows(zip(*(table[c].to_pylist() for c in columns), strict=True))
    return handle.getvalue()


def test_a_csv_is_written_a_batch_of_rows_at_a_time(tmp_path):
    """100,000 rows of three text columns (~30 MB as Python lists at once): written holding one
    batch's values, the file the same as one written whole."""
    rows = 100_000
    assert rows > 4 * queue.CSV_BATCH_ROWS
    table = pa.table({"url": [f"https://site.test/page-{i:06d}/" for i in range(rows)],
                      "anchor": [f"an anchor of page {i}, \"quoted\"" for i in range(rows)],
                      "score": [i / 7 for i in range(rows)],
                      "context": [f"A sentence about page {i}\nover two lines." for i in range(rows)]})
    columns = ["url", "anchor", "score", "context"]
    tracemalloc.start()
    try:
        write_csv(tmp_path / "rows.csv", table, columns)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert (tmp_path / "rows.csv").read_bytes() == expected_csv(table, columns).encode()
    assert peak < 12_000_000, peak  # whole: ~40 MB; a batch: ~6 MB


def test_a_csv_of_no_rows_is_its_header_and_a_missing_column_writes_no_file(tmp_path):
    table = pa.table({"url": pa.array([], pa.string()), "score": pa.array([], pa.float64())})
    write_csv(tmp_path / "empty.csv", table, ["url", "score"])
    assert (tmp_path / "empty.csv").read_bytes() == b"url,score\r\n"
    with pytest.raises(KeyError):
        write_csv(tmp_path / "bad.csv", table, ["url", "anchor"])
    assert sorted(p.name for p in tmp_path.iterdir()) == ["empty.csv"]


def test_the_report_hands_back_what_each_step_freed_before_the_next(tmp_path, monkeypatch):
    """Each step's transients are freed between live objects, where the next step's objects cannot
    reuse them: the memory is handed back after the queue's files and after the analysis."""
    crawl, out = write_site(tmp_path / "crawl"), tmp_path / "out"
    rows = [Suggestion(SITE[0]["url"], SITE[-1]["url"], 1.5, {"similarity": 0.7}, 1, "tyre pressure", "text",
                       "Check the tyre pressure weekly.", "title", "", 0.8)]
    write_parquet(out / "anchored.parquet", rows)
    events: list[str] = []
    monkeypatch.setattr(cli, "give_back", lambda: events.append("give back"))
    for step in ("write_suggestions", "analyse", "write_html"):
        made = getattr(report, step)
        monkeypatch.setattr(report, step, lambda *a, _made=made, _step=step, **k: (events.append(_step),
                                                                                   _made(*a, **k))[1])
    assert cli.main(["report", "--crawl", str(crawl), "--out", str(out)]) == 0
    assert events == ["write_suggestions", "give back", "analyse", "give back", "write_html", "give back"]
