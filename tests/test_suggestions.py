"""The candidate pool as columns: rows made when read, its stage file, anchors a source at a time."""

from __future__ import annotations

import copy
import gc

import numpy as np
import pytest
from crawlkit import SITE, SITE_LINKS

from postprocess.apps.report import read_pool, read_suggestions, suggestions_table, write_parquet
from postprocess.apps.report.queue import pool_table
from postprocess.errors import InputError
from postprocess.stages.anchors import AnchorFinder, add_anchors, anchored_rows
from postprocess.stages.load import build_crawl
from postprocess.stages.suggestions import Pool, Suggestion

ROWS = [Suggestion("https://s/a", "https://s/b", 0.9, {"similarity": 0.8, "lexical": 0.1}, rank=1),
        Suggestion("https://s/c", "https://s/a", 0.8, {"similarity": 0.7, "lexical": 0.2}, rank=1),
        Suggestion("https://s/a", "https://s/c", 0.7, {"similarity": 0.6}, rank=2),  # no lexical part
        Suggestion("https://s/d", "https://s/b", 0.6, {"similarity": 0.5, "lexical": 0.0, "mention": 1.0},
                   rank=1),
        Suggestion("https://s/c", "https://s/d", 0.5, {"similarity": 0.4, "lexical": 0.3}, rank=2)]


def test_a_pool_gives_back_the_rows_it_was_made_of() -> None:
    pool = Pool.from_rows(ROWS)
    assert len(pool) == 5 and list(pool) == ROWS
    assert pool[2] == ROWS[2] and "lexical" not in pool[2].parts and "mention" not in pool[0].parts
    assert pool[-1] == ROWS[-1] and pool[1:3] == ROWS[1:3]
    with pytest.raises(IndexError):
        pool[5]
    row = pool[0]
    row.anchor, row.parts["similarity"] = "changed", 0.0
    assert pool[0] == ROWS[0]  # a row read is a new one
    assert list(Pool.from_rows([])) == []


def test_a_pools_rows_are_grouped_by_source_in_page_order() -> None:
    order, bounds = Pool.from_rows(ROWS).by_source()
    groups = [order[a:b].tolist() for a, b in zip(bounds[:-1].tolist(), bounds[1:].tolist(), strict=True)]
    assert groups == [[0, 2], [1, 4], [3]]
    pool = Pool(["p0", "p1", "p2"], np.array([2, 0, 2, 1]), np.array([0, 1, 1, 0]), np.ones(4), np.ones(4),
                {})
    order, bounds = pool.by_source()  # by page number, not by the first row of each source
    assert order.tolist() == [1, 3, 0, 2] and bounds.tolist() == [0, 1, 2, 4]
    pool = Pool(["p2", "p0", "p1"], np.array([0, 1, 0, 2]), np.array([1, 2, 2, 1]), np.ones(4), np.ones(4),
                {})
    order, bounds = pool.by_source()  # URLs numbered as they came: the groups still in URL order
    assert order.tolist() == [1, 3, 0, 2] and bounds.tolist() == [0, 1, 2, 4]
    order, bounds = Pool.from_rows([]).by_source()
    assert order.tolist() == [] and bounds.tolist() == [0]


def test_a_pools_stage_file_is_the_one_its_rows_make(tmp_path) -> None:  # noqa: ANN001
    assert pool_table(Pool.from_rows(ROWS)).equals(suggestions_table(ROWS, stage=True))
    assert pool_table(Pool.from_rows([])).equals(suggestions_table([], stage=True))
    path = tmp_path / "candidates.parquet"
    write_parquet(path, Pool.from_rows(ROWS))
    assert read_suggestions(path) == ROWS
    assert list(read_pool(path)) == ROWS
    write_parquet(path, Pool.from_rows([]))
    assert list(read_pool(path)) == []
    with pytest.raises(InputError, match="run the earlier stages first"):
        read_pool(tmp_path / "missing.parquet")


def _live_suggestions() -> int:
    gc.collect()
    return sum(1 for o in gc.get_objects() if type(o) is Suggestion)


def test_anchors_are_chosen_a_source_at_a_time_and_only_anchored_pairs_stay_rows() -> None:
    crawl = build_crawl(SITE, SITE_LINKS, [])
    urls = [p.url for p in crawl.pages]
    pairs = [(s, t) for s in urls for t in urls if s != t]
    rows = [Suggestion(s, t, round(1.0 - k / 1000, 6), {"similarity": 0.5}, rank=1 + k % 3)
            for k, (s, t) in enumerate(pairs)]
    listed = copy.deepcopy(rows)
    add_anchors(crawl, listed, AnchorFinder(crawl))
    expected = [s for s in listed if s.anchor]
    assert 0 < len(expected) < len(rows) / 2
    pool = Pool.from_rows(rows)
    before = _live_suggestions()
    found = anchored_rows(pool, AnchorFinder(crawl))
    assert found == expected  # the same anchors, in pool order
    assert _live_suggestions() == before + len(found)  # the pairs without an anchor were let go
