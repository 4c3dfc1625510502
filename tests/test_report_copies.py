"""A long queue's CSV and report JSON are made from suggestions.parquet by a fresh second process:
the same bytes as when this process makes them, and no temporary file left behind."""

from __future__ import annotations

import json

import pyarrow as pa
import pytest
from crawlkit import SITE, write_site

from postprocess import cli
from postprocess.apps import report
from postprocess.apps.report import copies, html, queue, queue_script, write_parquet
from postprocess.stages.candidates import Suggestion
from postprocess.stages.load import load_crawl

FILES = ("suggestions.csv", "suggestions.parquet", "pages.parquet", "report.html")


def rows_of(n: int) -> list[Suggestion]:
    """Rows between the site's pages (titles known) and others (no title), with text the report's
    <script> must escape."""
    urls = [p["url"] for p in SITE] + [f"https://site.test/other/{i}/" for i in range(40)]
    return [Suggestion(urls[i % len(urls)], urls[(i * 7 + 3) % len(urls)], i / 3, {"similarity": i / (i + 1)},
                       1, f"café <b> & \u2028 {i}", "text", f"A sentence </script> with “quotes” {i}.",
                       "title", "", round(i / 7 % 1, 6))
            for i in range(n)]


def table_json_pieces(table: pa.Table) -> list[str]:
    """The queue's JSON pieces from a table in memory, read in batches of ``JSON_BATCH`` rows."""
    return list(queue_script.batches_json_pieces(
        lambda columns: table.select(columns).to_batches(max_chunksize=queue_script.JSON_BATCH)))


def test_the_queue_json_from_the_table_is_the_json_from_the_rows(tmp_path, monkeypatch):
    crawl = load_crawl(write_site(tmp_path / "crawl"))
    rows = rows_of(300)
    table = report.suggestions_table(rows, crawl)
    monkeypatch.setattr(queue_script, "JSON_BATCH", 7)
    made = list(table_json_pieces(table))
    expected = queue_script.queue_json(rows, report.page_titles(crawl))
    assert len(made) > 10 and "".join(made) == expected
    assert any(title for _, title in json.loads(expected)["pages"])  # titles from the table, not ""
    empty = report.suggestions_table([], crawl)
    assert "".join(table_json_pieces(empty)) == '{"pages":[],"rows":[]}'


def test_the_copies_read_the_queue_a_batch_at_a_time_into_the_files_a_table_makes(tmp_path, monkeypatch):
    """``write_copies`` reads suggestions.parquet in batches (here of 7 rows) and writes the CSV and
    the JSON the whole table makes."""
    crawl = load_crawl(write_site(tmp_path / "crawl"))
    out = tmp_path / "out"
    rows = rows_of(100)
    report.write_suggestions(out, rows, crawl)
    expected_csv = (out / "suggestions.csv").read_bytes()
    (out / "suggestions.csv").unlink()
    monkeypatch.setattr(copies, "COPY_BATCH_ROWS", 7)
    read: list[int] = []
    batches = copies.pq.ParquetFile.iter_batches

    def counted(self, *args, **kwargs):  # noqa: ANN001, ANN002, ANN003, ANN202
        for batch in batches(self, *args, **kwargs):
            read.append(batch.num_rows)
            yield batch

    monkeypatch.setattr(copies.pq.ParquetFile, "iter_batches", counted)
    assert copies.write_copies(out, tmp_path / "queue.json") == 100
    assert (out / "suggestions.csv").read_bytes() == expected_csv
    table = report.suggestions_table(rows, crawl)
    whole = "".join(table_json_pieces(table))
    assert (tmp_path / "queue.json").read_text(encoding="utf-8") == whole
    assert max(read) == 7 and sum(read) == 300  # the CSV, then the JSON's pages and rows: three passes


def run_report(tmp_path, name: str, workers: int) -> dict[str, bytes]:
    crawl, out = write_site(tmp_path / "crawl"), tmp_path / name
    write_parquet(out / "anchored.parquet", rows_of(500))
    assert cli.main(["report", "--crawl", str(crawl), "--out", str(out), "--workers", str(workers)]) == 0
    assert not list(out.glob(".report-queue-*")) and not list(out.glob(".*.tmp-*"))
    return {f: (out / f).read_bytes() for f in FILES}


def test_a_second_process_makes_the_same_files(tmp_path, monkeypatch):
    alone = run_report(tmp_path, "alone", workers=1)
    monkeypatch.setattr(copies, "COPIES_MIN_ROWS", 100)

    def made_here(*_: object) -> None:
        raise AssertionError("made in this process")

    # neither this process's CSV or JSON, nor the copies' own functions run here (a fresh interpreter's do)
    monkeypatch.setattr(queue, "write_csv", made_here)
    monkeypatch.setattr(html, "queue_json_pieces", made_here)
    monkeypatch.setattr(copies, "batches_json_pieces", made_here)
    apart = run_report(tmp_path, "apart", workers=2)
    assert apart == alone
    assert b"caf\xc3\xa9 \\u003cb\\u003e" in apart["report.html"]


def test_a_failed_report_waits_for_the_second_process_and_leaves_no_queue_file(tmp_path, monkeypatch):
    crawl, out = write_site(tmp_path / "crawl"), tmp_path / "out"
    write_parquet(out / "anchored.parquet", rows_of(500))
    monkeypatch.setattr(copies, "COPIES_MIN_ROWS", 100)

    def broken(*_: object) -> None:
        raise OSError("disk full")

    monkeypatch.setattr(report, "analyse", broken)
    with pytest.raises(OSError, match="disk full"):
        cli.main(["report", "--crawl", str(crawl), "--out", str(out), "--workers", "2"])
    assert not (out / "report.html").exists() and not list(out.glob(".report-queue-*"))
    assert (out / "suggestions.csv").read_text(encoding="utf-8").count("\n") > 500  # whole, from the parquet
