"""The report's near-duplicate table: the most similar pairs of cannibalisation.csv."""

from __future__ import annotations

import csv
import tracemalloc

from postprocess.apps.report import csv_rows
from postprocess.apps.report.analysis import near_duplicates

COLUMNS = ["url_a", "url_b", "title_a", "title_b", "similarity", "already_linked"]


def write_pairs(path, similarities):  # noqa: ANN001, ANN201
    with open(path / "cannibalisation.csv", "w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(COLUMNS)
        for i, similarity in enumerate(similarities):
            writer.writerow([f"https://site.test/a-{i}/", f"https://site.test/b-{i}/", f"Page A {i}",
                             f"Page B {i}", similarity, "False"])


def test_the_most_similar_pairs_come_first_ties_in_file_order(tmp_path):
    write_pairs(tmp_path, [0.5, 0.9, 0.7, 0.9, 0.1])
    shown = near_duplicates(tmp_path, 3)
    assert [(r["url_a"], r["similarity"]) for r in shown] == [
        ("https://site.test/a-1/", "0.9"), ("https://site.test/a-3/", "0.9"),
        ("https://site.test/a-2/", "0.7")]
    assert near_duplicates(tmp_path / "nothing") == []


def test_the_file_is_read_a_row_at_a_time(tmp_path):
    """60,000 pairs (~6 MB of CSV, ~40 MB as a list of rows) are read keeping the 25 shown."""
    write_pairs(tmp_path, [round((i * 7919 % 60_000) / 60_000, 6) for i in range(60_000)])
    tracemalloc.start()
    try:
        shown = near_duplicates(tmp_path)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert len(shown) == 25 and float(shown[0]["similarity"]) == max(float(r["similarity"]) for r in shown)
    assert peak < 2_000_000, peak


def test_the_pairs_are_counted_as_csv_rows_not_lines(tmp_path):
    """A title with a line break is one row; no file is no pairs."""
    write_pairs(tmp_path, [0.5, 0.9])
    with open(tmp_path / "cannibalisation.csv", "a", newline="", encoding="utf-8") as handle:
        csv.writer(handle).writerow(["https://site.test/c/", "https://site.test/d/", "Two\nlines", "D",
                                     0.97, "False"])
    assert csv_rows(tmp_path / "cannibalisation.csv") == 3
    assert csv_rows(tmp_path / "nothing.csv") == 0
