"""The report stage's memory: the queue's CSV made Python values a batch at a time, and what each
step freed handed back before the next."""

from __future__ import annotations

import csv
import io
import json
import tracemalloc

import pyarrow as pa
import pytest
from crawlkit import SITE, SITE_LINKS, write_site

from postprocess import cli, memory
from postprocess.apps import report
from postprocess.apps.report import html, queue, queue_script, write_csv, write_parquet
from postprocess.stages.candidates import Suggestion
from postprocess.stages.load import build_crawl


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
    monkeypatch.setattr(memory, "give_back", lambda: events.append("give back"))  # at the stage's end
    for step in ("write_suggestions", "analyse", "write_html"):
        made = getattr(report, step)
        monkeypatch.setattr(report, step, lambda *a, _made=made, _step=step, **k: (events.append(_step),
                                                                                   _made(*a, **k))[1])
    assert cli.main(["report", "--crawl", str(crawl), "--out", str(out)]) == 0
    assert events == ["write_suggestions", "give back", "analyse", "give back", "write_html", "give back"]


def many_rows(n: int) -> list[Suggestion]:
    """Queue rows with every character the page must escape inside <script>, and non-ASCII text."""
    return [Suggestion(f"https://site.test/s{i % 500}/", f"https://site.test/t{i % 700}/", i / 3,
                       {"similarity": 0.5}, 1, f"café <b> & \u2028 {i}", "text",
                       f"A sentence </script> with “quotes” and the anchor café {i}.", "title", "", i / 7)
            for i in range(n)]


def test_the_queue_json_is_made_in_pieces_that_join_to_the_whole(monkeypatch):
    rows = many_rows(50)
    titles = {r.target_url: f"Title <{r.target_url}>" for r in rows}
    index: dict[str, int] = {}
    for r in rows:
        index.setdefault(r.source_url, len(index))
        index.setdefault(r.target_url, len(index))
    table = [[index[r.source_url], index[r.target_url], r.anchor, r.anchor_type, r.context,
              round(r.confidence, 4), round(r.score, 4), r.evidence] for r in rows]
    whole = json.dumps({"pages": [[u, titles.get(u, "")] for u in index], "rows": table},
                       ensure_ascii=False, separators=(",", ":"))
    escaped = whole.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026").replace(
        "\u2028", "\\u2028")
    monkeypatch.setattr(queue_script, "JSON_BATCH", 7)
    pieces = list(html.queue_json_pieces(rows, titles))
    assert len(pieces) > 10 and "".join(pieces) == escaped == html.queue_json(rows, titles)
    assert "</script>" not in escaped and json.loads(escaped)["rows"][3][4] == rows[3].context
    assert "".join(html.queue_json_pieces([], {})) == '{"pages":[],"rows":[]}'


def test_the_queue_json_is_written_holding_a_piece_at_a_time(tmp_path, monkeypatch):
    """30,000 rows (~5 MB of JSON, made several times over when whole: values, text, escaped) written
    piece by piece (here of 1,024 rows) hold a small share of what the whole takes."""
    monkeypatch.setattr(queue_script, "JSON_BATCH", 1024)
    rows = many_rows(30_000)
    titles = {r.target_url: "A title" for r in rows}
    tracemalloc.start()
    try:
        whole = html.queue_json(rows, titles)
        made_whole = tracemalloc.get_traced_memory()[1]
        del whole
        tracemalloc.reset_peak()
        start = tracemalloc.get_traced_memory()[0]
        with open(tmp_path / "queue.json", "w", encoding="utf-8") as handle:
            for piece in html.queue_json_pieces(rows, titles):
                handle.write(piece)
        in_pieces = tracemalloc.get_traced_memory()[1] - start
    finally:
        tracemalloc.stop()
    assert (tmp_path / "queue.json").read_text(encoding="utf-8") == html.queue_json(rows, titles)
    assert in_pieces < made_whole / 4, (in_pieces, made_whole)


def test_the_report_page_is_written_with_its_queue_a_piece_at_a_time(tmp_path, monkeypatch):
    """report.html is the page ``render_html`` makes; ``write_html`` writes its queue's JSON in pieces
    and never makes it whole."""
    crawl = build_crawl(SITE, SITE_LINKS, [])
    rows = many_rows(100)
    analysis = report.analyse(crawl, rows, tmp_path)
    figures = {"pages": len(crawl.pages)}
    expected = report.render_html(crawl, rows, figures, analysis, tmp_path)
    monkeypatch.setattr(queue_script, "JSON_BATCH", 7)
    monkeypatch.setattr(html, "queue_json", lambda *a: pytest.fail("the queue's JSON made whole"))
    report.write_html(tmp_path, crawl, rows, figures, analysis)
    assert (tmp_path / "report.html").read_text(encoding="utf-8") == expected


def test_a_large_pool_is_written_in_row_groups_of_a_bounded_size(tmp_path):
    """The candidate pool's file is written a row group at a time, each at most ``POOL_WRITE_ROWS``
    rows (Parquet's default million-row group held +218 MB of URL strings and encoded pages at 100k
    synthetic pages' 1.48M rows, a group of 131,072 +83 MB); it reads back as the pool."""
    import numpy as np
    import pyarrow.parquet as pq

    from postprocess.apps.report import read_pool
    from postprocess.stages.suggestions import Pool

    rows = 300_000
    rng = np.random.default_rng(0)
    urls = [f"https://site.test/page-{i}/" for i in range(1000)]
    pool = Pool(urls, rng.integers(0, 1000, rows), rng.integers(0, 1000, rows), rng.random(rows),
                np.ones(rows, dtype=np.int64), {"similarity": rng.random(rows)})
    write_parquet(tmp_path / "candidates.parquet", pool)
    groups = pq.ParquetFile(tmp_path / "candidates.parquet").metadata
    assert groups.num_row_groups == 3 and queue.POOL_WRITE_ROWS <= 131_072
    back = read_pool(tmp_path / "candidates.parquet")
    assert np.array_equal(back.scores, pool.scores) and np.array_equal(back.parts["similarity"],
                                                                       pool.parts["similarity"])
    assert [back.urls[i] for i in back.sources[:50]] == [urls[i] for i in pool.sources[:50]]
