"""The neighbour table: every page's nearest pages asked of the page index once, in a fresh process,
and read back by the ranking as the index would have answered."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest

from postprocess import cli
from postprocess.stages import index as page_index
from postprocess.stages import neighbour_table
from postprocess.stages.index import INDEX_FILE, build_index, load_index
from postprocess.stages.neighbour_table import NeighbourTable, start_table


def saved_index(tmp_path: Path, pages: int = 400, dim: int = 16):
    """An index of ``pages`` random vectors saved in ``tmp_path``, loaded back (as the ranking has it)."""
    vectors = np.random.default_rng(7).normal(size=(pages, dim)).astype(np.float32)
    urls = [f"https://example.test/p{i}/" for i in range(pages)]
    page_index.save_index(build_index(urls, vectors, trees=4, path=tmp_path / INDEX_FILE), tmp_path)
    return load_index(tmp_path)


def answers(index, count: int, search_k: int) -> list[tuple[np.ndarray, np.ndarray]]:
    return [index.neighbour_columns(item, count, search_k) for item in range(len(index.urls))]


@pytest.mark.parametrize("count,search_k", [(10, -1), (30, 8)])
def test_the_table_answers_as_the_index(tmp_path, monkeypatch, count, search_k):
    """Every page's columns from the table equal the index's, dtypes included — also where the
    index found fewer than asked (a small ``search_k``), which the table pads — and the index is
    not asked once the table is ready (unloaded, it could answer nothing)."""
    monkeypatch.setattr(neighbour_table, "MIN_PAGES", 0)
    direct = saved_index(tmp_path)
    expected = answers(direct, count, search_k)
    if search_k == 8:  # the case is only a case if some answer is short
        assert min(len(rows) for rows, _ in expected) < count
    index = load_index(tmp_path)
    index.table = start_table(str(tmp_path / INDEX_FILE), index.dimension, len(index.urls), count,
                              search_k, workers=2)
    assert index.table is not None
    index.ready()
    index.annoy.unload()
    for (rows, cosines), (want_rows, want_cosines) in zip(answers(index, count, search_k), expected,
                                                           strict=True):
        assert rows.dtype == want_rows.dtype and cosines.dtype == want_cosines.dtype
        assert np.array_equal(rows, want_rows) and np.array_equal(cosines, want_cosines)


def test_a_query_the_table_does_not_hold_asks_the_index(tmp_path, monkeypatch):
    monkeypatch.setattr(neighbour_table, "MIN_PAGES", 0)
    index = saved_index(tmp_path)
    index.table = start_table(str(tmp_path / INDEX_FILE), index.dimension, len(index.urls), 10, -1, workers=2)
    index.ready()
    assert index.table is not None and index.table.fits(10, -1)
    assert not index.table.fits(12, -1) and not index.table.fits(10, 100)
    rows, _ = index.neighbour_columns(3, 12)
    assert len(rows) == 12


def test_no_table_for_one_worker_or_a_small_site(tmp_path):
    index = saved_index(tmp_path, pages=50)
    path = str(tmp_path / INDEX_FILE)
    assert start_table(path, index.dimension, 50, 10, -1, workers=2) is None  # under MIN_PAGES
    assert start_table(path, index.dimension, 5000, 10, -1, workers=1) is None


def test_an_index_that_is_not_the_sites_is_an_error_not_a_wrong_table(tmp_path):
    index = saved_index(tmp_path, pages=100)
    table = NeighbourTable(pages=120, width=11, search_k=-1)
    table.start(str(tmp_path / INDEX_FILE), index.dimension, fork=True)
    with pytest.raises(RuntimeError, match="holds 100 pages, not 120"):
        table.ready()


def test_the_table_leaves_no_file_behind(tmp_path, monkeypatch):
    """Its file is unlinked from the start: nothing in ``TMPDIR`` once it is made, mapped or not."""
    import tempfile

    monkeypatch.setattr(neighbour_table, "MIN_PAGES", 0)
    spare = tmp_path / "tmp"
    spare.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(spare))
    index = saved_index(tmp_path / "index")
    index.table = start_table(str(tmp_path / "index" / INDEX_FILE), index.dimension, len(index.urls), 10, -1,
                              workers=2)
    assert os.listdir(spare) == []
    index.ready()
    assert os.listdir(spare) == []


@pytest.mark.slow
def test_a_run_ranks_from_the_table_and_queues_as_without_it(tmp_path, monkeypatch):
    """A two-worker run makes the table and its ranking (each confidence fold's and the site's)
    reads every source's neighbours from it; every output is the one a run without it makes."""
    from crawlkit import write_linked_ring

    crawl = write_linked_ring(tmp_path / "crawl")

    read: list[int] = []
    answer = NeighbourTable.answer

    def counted(self, item):  # noqa: ANN001, ANN202
        read.append(item)
        return answer(self, item)

    monkeypatch.setattr(NeighbourTable, "answer", counted)
    monkeypatch.setattr(neighbour_table, "MIN_PAGES", 0)
    assert cli.main(["run", "--crawl", str(crawl), "--out", str(tmp_path / "table"), "--workers", "2"]) == 0
    assert set(read) == set(range(30))  # each page ranked as a source from the table
    read.clear()
    monkeypatch.setattr(neighbour_table, "MIN_PAGES", 10**9)
    assert cli.main(["run", "--crawl", str(crawl), "--out", str(tmp_path / "index"), "--workers", "2"]) == 0
    assert read == []
    for name in ("suggestions.csv", "anchored.parquet", "candidates.parquet", "confidence.json"):
        assert (tmp_path / "table" / name).read_bytes() == (tmp_path / "index" / name).read_bytes(), name
