"""The candidate pool as columns: rows made when read, its stage file, anchors a source at a time."""

from __future__ import annotations

import copy
import gc
import time
from pathlib import Path

import numpy as np
import pytest
from crawlkit import SITE, SITE_LINKS

from postprocess.apps.report import read_pool, read_suggestions, suggestions_table, write_parquet
from postprocess.apps.report.queue import pool_table
from postprocess.errors import InputError
from postprocess.stages.anchors import AnchorFinder, add_anchors, anchored_rows, choose_anchors
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
    assert pool_table(Pool.from_rows(ROWS)).equals(suggestions_table(ROWS))
    assert pool_table(Pool.from_rows([])).equals(suggestions_table([]))
    path = tmp_path / "candidates.parquet"
    write_parquet(path, Pool.from_rows(ROWS))
    assert read_suggestions(path) == ROWS
    assert list(read_pool(path)) == ROWS
    write_parquet(path, Pool.from_rows([]))
    assert list(read_pool(path)) == []
    with pytest.raises(InputError, match="run the earlier stages first"):
        read_pool(tmp_path / "missing.parquet")


def test_a_pool_is_written_a_row_group_at_a_time_into_the_file_a_whole_write_makes(tmp_path, monkeypatch
                                                                                  ) -> None:  # noqa: ANN001
    """Only a row group's URL strings are made at once; the file is byte for byte the one writing the
    whole table with groups of that size makes (a part absent in some groups, or in all, included)."""
    import pyarrow.parquet as pq

    from postprocess.apps.report import queue

    monkeypatch.setattr(queue, "POOL_WRITE_ROWS", 2)
    pool = Pool.from_rows(ROWS)
    grouped, whole = tmp_path / "grouped.parquet", tmp_path / "whole.parquet"
    write_parquet(grouped, pool)
    pq.write_table(pool_table(pool), whole, row_group_size=2)
    file = pq.ParquetFile(grouped)
    assert [file.metadata.row_group(i).num_rows for i in range(file.metadata.num_row_groups)] == [2, 2, 1]
    assert grouped.read_bytes() == whole.read_bytes()
    assert list(read_pool(grouped)) == ROWS


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


def test_the_names_found_a_batch_at_a_time_give_the_anchors_a_pair_at_a_time_gives(monkeypatch) -> None:
    """The anchoring finds the places of a batch's targets' names at once (``NameTable``); each source's
    rows get the anchors, contexts and parts its pairs get when each target's names are looked for in
    the source a pair at a time — batches of one, two and every source."""
    from postprocess.stages import anchors

    crawl = build_crawl(SITE, SITE_LINKS, [])
    urls = [p.url for p in crawl.pages]
    rows = [Suggestion(s, t, round(1.0 - k / 1000, 6), {"similarity": 0.5}, rank=1 + k % 3)
            for k, (s, t) in enumerate((s, t) for s in urls for t in urls if s != t)]
    finder = AnchorFinder(crawl)
    by_pair = copy.deepcopy(rows)
    for source in urls:
        finder.choose(source, [s for s in by_pair if s.source_url == source])  # no places: pair by pair
    expected = [s for s in by_pair if s.anchor]
    assert len({s.anchor for s in expected if len(s.anchor.split()) > 1}) > 1
    made: list[int] = []  # the names made from the table, by number
    table_name = anchors._table_name
    monkeypatch.setattr(anchors, "_table_name",
                        lambda table, number: made.append(number) or table_name(table, number))
    for batch in (1, 2, len(urls)):
        monkeypatch.setattr(anchors, "SOURCE_BATCH", batch)
        made.clear()
        assert anchored_rows(Pool.from_rows(rows), AnchorFinder(crawl)) == expected
        if batch == len(urls):  # a name is made once a batch, however many places it stands at
            assert made and len(made) == len(set(made))


def test_the_targets_names_are_made_once_before_the_anchoring_is_shared_with_a_second_process(monkeypatch):
    """Before the anchoring forks its second process, every target's names are made (and shared with
    it): the second process makes none again, and the anchors are those of one process."""
    from postprocess import background
    from postprocess.stages import anchors

    crawl = build_crawl(SITE, SITE_LINKS, [])
    urls = [p.url for p in crawl.pages]
    rows = [Suggestion(s, t, round(1.0 - k / 1000, 6), {"similarity": 0.5}, rank=1)
            for k, (s, t) in enumerate((s, t) for s in urls for t in urls if s != t)]
    alone = anchored_rows(Pool.from_rows(rows), AnchorFinder(crawl))
    finder = AnchorFinder(crawl)
    known: list[int] = []
    real = anchors.in_chunks

    def in_chunks(work, items, fork=True, chunk=None, name=None):  # noqa: ANN001, ANN202 - the names known
        if name is None:  # the anchoring's fork, not the names' own (``_names_in_two``)
            known.append(len(finder._names))
        return real(work, items, fork, chunk=1, name=name)

    monkeypatch.setattr(background, "SPLIT_MIN_ITEMS", 1)
    monkeypatch.setattr(background, "SPLIT_MIN_SOURCES", 1)
    monkeypatch.setattr(anchors, "in_chunks", in_chunks)
    both = anchored_rows(Pool.from_rows(rows), finder, workers=2)
    assert known == [len(urls)]  # every target's, before the fork
    assert both == alone
    chosen = choose_anchors(Pool.from_rows(rows), finder, workers=2)  # rows in files until read, once
    assert chosen.rows() == alone
    with pytest.raises(RuntimeError, match="read already"):
        chosen.rows()


def test_the_targets_names_are_made_on_both_cores_as_one_process_makes_them(tmp_path, monkeypatch):
    """A site's finder makes its targets' names before the anchoring's fork in chunks shared with a
    second process (named ``ls-target-names``); it keeps the same names for each target as one
    process makes."""
    from postprocess import background
    from postprocess.stages import anchors

    crawl = build_crawl(SITE, SITE_LINKS, [])
    urls = [p.url for p in crawl.pages]
    pool = Pool.from_rows([Suggestion(s, t, 0.5, {"similarity": 0.5}, rank=1)
                           for s in urls for t in urls if s != t])
    one = AnchorFinder(crawl)
    anchors.target_names(pool, one, workers=1)
    made = tmp_path / "made"
    real_names, real_chunks = AnchorFinder.names, anchors.in_chunks

    def names(self, target, written=None):  # noqa: ANN001, ANN202 - which process made which names
        with made.open("a") as log:
            log.write(Path("/proc/self/comm").read_text().strip() + "\n")
        time.sleep(0.3)  # slow enough that the second process, started by a fork, takes chunks too
        return real_names(self, target, written)

    monkeypatch.setattr(AnchorFinder, "names", names)
    monkeypatch.setattr(background, "SPLIT_MIN_ITEMS", 1)
    monkeypatch.setattr(anchors, "in_chunks", lambda work, items, chunk=None, name=None:
                        real_chunks(work, items, chunk=1, name=name))
    two = AnchorFinder(crawl)
    anchors.target_names(pool, two, workers=2)
    assert two._names == one._names and len(one._names) == len(urls)  # a look-up: its order is no matter
    makers = made.read_text().split()
    assert len(makers) == len(urls) and "ls-target-names" in makers
    assert set(makers) - {"ls-target-names"}  # this process took chunks too


def test_a_rows_parts_read_and_change_as_a_dict_does() -> None:
    """``Parts``: the pool's rows hold their parts in an array with shared names; reading, adding,
    changing, deleting, comparing, copying and pickling give what a dict of the same items gives."""
    import pickle

    from postprocess.stages.suggestions import Parts

    parts = Pool.from_rows(ROWS)[3].parts
    assert isinstance(parts, Parts)
    plain = {"similarity": 0.5, "lexical": 0.0, "mention": 1.0}
    assert parts == plain and dict(parts) == plain and list(parts) == list(plain) and len(parts) == 3
    parts["anchor_words"], plain["anchor_words"] = 2.0, 2.0  # added last, as a dict adds it
    parts["similarity"], plain["similarity"] = -0.0, -0.0
    parts["odd"], plain["odd"] = 3, 3  # not a float: kept as it is
    del parts["lexical"], plain["lexical"]
    assert list(parts.items()) == list(plain.items()) and type(parts["odd"]) is int
    assert str(parts["similarity"]) == "-0.0" and parts.get("lexical") is None and "lexical" not in parts
    parts["odd"] = 0.25
    assert parts["odd"] == 0.25 and parts.get("odd") == 0.25
    plain["odd"] = 0.25
    for copied in (copy.deepcopy(parts), pickle.loads(pickle.dumps(parts)), Parts(plain)):
        assert list(copied.items()) == list(plain.items())
    with pytest.raises(KeyError):
        parts["missing"]


def test_rows_with_the_same_parts_share_their_names() -> None:
    """The pool's rows with the same parts (and rows that gained the same ones since) share one list
    of names, so a row costs its values and not a dict."""
    rows = Pool.from_rows([ROWS[0], ROWS[1], ROWS[4]]).rows(np.arange(3))
    for s in rows:
        s.parts["passage"] = 0.5
    assert len({id(s.parts._layout) for s in rows}) == 1


def test_the_queues_part_columns_are_read_a_layout_at_a_time_into_the_file_a_row_at_a_time_makes(
        tmp_path, monkeypatch) -> None:  # noqa: ANN001
    """Rows whose parts are ``Parts`` of floats have their part columns read a layout's rows at a time:
    the same values, NaN and absent parts, and the same Parquet bytes as reading each row's part by
    name; a row with a dict of parts (or a value that is no float) reads them all one by one."""
    import pyarrow.parquet as pq

    from postprocess.apps.report import queue
    from postprocess.stages.suggestions import Parts, part_columns

    names = ["similarity", "lexical", "passage", "mention"]
    rows = []
    for i in range(300):
        parts = Parts()
        for k, name in enumerate(names):
            if (i + k) % 3:
                parts[name] = float("nan") if i % 17 == 0 else (i * (k + 1)) / 7
        rows.append(Suggestion(f"https://s/{i % 9}", f"https://s/t{i % 5}", i / 3, parts, rank=1 + i % 4))
    read = part_columns(rows, names)
    assert read is not None
    for name in names:
        values, absent = read[name]
        assert absent.tolist() == [name not in s.parts for s in rows]
        expected = np.array([s.parts.get(name, np.nan) for s in rows], dtype=np.float64)
        assert np.array_equal(values[~absent], expected[~absent], equal_nan=True)
    pq.write_table(suggestions_table(rows), tmp_path / "columns.parquet")
    monkeypatch.setattr(queue, "part_columns", lambda *_: None)
    pq.write_table(suggestions_table(rows), tmp_path / "rows.parquet")
    assert (tmp_path / "columns.parquet").read_bytes() == (tmp_path / "rows.parquet").read_bytes()
    assert part_columns([*rows, ROWS[0]], names) is None  # a dict of parts
    odd = Parts({"similarity": 0.5})
    odd["note"] = "kept beside"
    assert part_columns([*rows, Suggestion("https://s/x", "https://s/y", 1.0, odd)], names) is None


def test_a_queue_file_is_read_back_a_batch_at_a_time_its_parts_held_as_parts(tmp_path, monkeypatch) -> None:  # noqa: ANN001
    """``read_suggestions`` gives the rows written, made Python values a batch at a time (here 2 rows),
    each row's parts a ``Parts`` (~0.3 KB a row, not a dict's ~1.8 KB)."""
    from postprocess.apps.report import queue
    from postprocess.stages.suggestions import Parts

    path = tmp_path / "anchored.parquet"
    write_parquet(path, ROWS)
    import pyarrow.parquet as pq

    table = pq.read_table(path)
    made: list[int] = []

    class InBatches:
        """The file's table, which gives its rows in batches alone (no ``to_pylist`` of the whole)."""

        schema = table.schema

        def to_batches(self, max_chunksize: int) -> list:
            batches = table.to_batches(max_chunksize=max_chunksize)
            made.extend(b.num_rows for b in batches)
            return batches

    monkeypatch.setattr(queue, "CSV_BATCH_ROWS", 2)
    monkeypatch.setattr(queue, "_read_stage_file", lambda _: InBatches())
    rows = read_suggestions(path)
    assert rows == ROWS and all(type(s.parts) is Parts for s in rows)
    assert made == [2, 2, 1]
