"""The columnar loader: a multi-part crawl read column by column gives what the row-by-row merge
gives, and its links are a ``LinkTable`` that stands in for a list of ``Link``."""

from __future__ import annotations

import dataclasses
import os
import pickle
import random
from collections import Counter

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from crawlkit import (
    COMPOST,
    ESPRESSO,
    GRINDER,
    POUR_OVER,
    SITE,
    SITE_LINKS,
    later,
    link,
    page,
    skip,
    traced_peak,
    url,
    write_crawl,
)

from postprocess.background import Background
from postprocess.errors import InputError
from postprocess.stages import links as links_module
from postprocess.stages import load
from postprocess.stages.anchors import AnchorFinder, add_anchors, defined_names, proper_nouns
from postprocess.stages.candidates import existing_links
from postprocess.stages.lexical import PageDocuments, page_document
from postprocess.stages.links import (
    FIRST_SEEN_BLOCK,
    Link,
    LinkTable,
    distinct,
    distinct_joined,
    first_seen,
    links_table,
)
from postprocess.stages.load import build_crawl, load_crawl
from postprocess.stages.scoring import inbound_counts
from postprocess.stages.spill import BatchFile, SpillFile
from postprocess.stages.suggestions import Suggestion

MOVED = url("old-espresso")


def _multi_part(tmp_path):
    """Three parts: the site; a newer fetch of one page with other links and a redirect; a part
    whose rows repeat a page with the same fetch time (the later part wins the tie)."""
    write_crawl(tmp_path, SITE, SITE_LINKS + [link(GRINDER, MOVED, "old espresso page", position="nav")],
                [], part="a-0001")
    newer = later(SITE[0], title="Espresso, revised")
    write_crawl(tmp_path, [newer],
                [later(link(ESPRESSO, POUR_OVER, "pour-over")), later(link(ESPRESSO, MOVED, "itself?"))],
                [skip(MOVED, "redirect", ESPRESSO)], part="b-0001")
    tie = dict(next(row for row in SITE if row["url"] == GRINDER), title="Grinder, same time, later part")
    write_crawl(tmp_path, [tie], [], [], part="c-0001")
    return tmp_path


def test_multi_part_crawl_loads_as_the_row_merge_does(tmp_path):
    directory = _multi_part(tmp_path)
    crawl = load_crawl(directory)
    rows = {table: load._read_parts(load._part_files(directory, table), table, required, optional, None)
            for table, required, optional in (("pages", load.PAGE_COLUMNS, load.PAGE_OPTIONAL),
                                              ("links", load.LINK_COLUMNS, load.LINK_OPTIONAL),
                                              ("skipped", load.SKIP_COLUMNS, load.SKIP_OPTIONAL))}
    merged = build_crawl(rows["pages"], rows["links"], rows["skipped"], str(directory))
    assert crawl.pages == merged.pages and crawl.aliases == merged.aliases
    assert list(crawl.links) == list(merged.links)
    by_url = {p.url: p for p in crawl.pages}
    assert by_url[ESPRESSO].title == "Espresso, revised"
    assert by_url[GRINDER].title == "Grinder, same time, later part"
    # the espresso page's links are its newest fetch's, the redirect resolved on both ends
    assert [(k.target_url, k.anchor_text) for k in crawl.links if k.source_url == ESPRESSO] == [
        (POUR_OVER, "pour-over"), (ESPRESSO, "itself?")]
    assert (GRINDER, ESPRESSO) in existing_links(crawl.links)


def test_link_table_stands_in_for_a_list_of_links(tmp_path):
    crawl = load_crawl(_multi_part(tmp_path))
    table = crawl.links
    assert isinstance(table, LinkTable)
    as_list = list(table)
    assert len(table) == len(as_list) and table[0] == as_list[0] and table[-1] == as_list[-1]
    assert list(table[1:3]) == as_list[1:3]
    assert all(isinstance(k, Link) for k in as_list)
    # the column methods answer what the row loops answer
    assert table.pairs() == {(k.source_url, k.target_url) for k in as_list}
    assert table.pairs(content_only=True) == {(k.source_url, k.target_url) for k in as_list
                                              if k.position == "content"}
    assert inbound_counts(crawl) == inbound_counts(type(crawl)(crawl.pages, as_list))
    assert table.linked_from()[ESPRESSO] == {POUR_OVER, ESPRESSO} == table.by_source()[ESPRESSO]
    assert table.by_source().get(url("no-such-page")) is None
    pairs = table.pair_set()
    assert set(pairs) == table.pairs() and len(pairs) == len(table.pairs())
    every = [p.url for p in crawl.pages]
    assert all(((a, b) in pairs) == ((a, b) in table.pairs()) for a in every for b in every)
    assert (ESPRESSO, POUR_OVER) in pairs and ("a", "b") not in pairs
    hidden = {(ESPRESSO, POUR_OVER), (COMPOST, "not a page")}
    assert list(table.without(hidden)) == [k for k in as_list if (k.source_url, k.target_url) not in hidden]
    assert list(links_table(as_list)) == as_list and links_table(table) is table


def test_linked_keys_made_a_step_of_links_at_a_time_are_those_of_all_at_once(tmp_path, monkeypatch):
    """``linked_keys`` makes the keys of a bounded step of links at a time (each link held ~40 bytes
    while the site's were made at once): any step gives the same sorted distinct keys."""
    from postprocess.stages import links

    crawl = load_crawl(_multi_part(tmp_path))
    every = [p.url for p in crawl.pages]
    expected = sorted({every.index(k.source_url) * len(every) + every.index(k.target_url)
                       for k in crawl.links if k.source_url in every and k.target_url in every
                       and k.source_url != k.target_url})
    content = sorted({every.index(k.source_url) * len(every) + every.index(k.target_url)
                      for k in crawl.links if k.source_url in every and k.target_url in every
                      and k.source_url != k.target_url and k.position == "content"})
    for step in (1, 2, 3, 1 << 20):
        monkeypatch.setattr(links, "KEY_STEP", step)
        assert links.linked_keys(crawl.links, every).tolist() == expected
        assert links.linked_keys(crawl.links, every, content_only=True).tolist() == content
    assert expected and content != expected


def test_blocks_stay_in_arrow_until_a_page_is_read(tmp_path):
    crawl = load_crawl(_multi_part(tmp_path))
    page = next(p for p in crawl.pages if p.url == ESPRESSO)
    assert isinstance(page.blocks, load.StoredBlocks)
    made = tuple(page.blocks)
    assert made and all(isinstance(b, load.Block) for b in made)
    assert page.blocks == made and len(page.blocks) == len(made) and page.blocks[0] == made[0]
    assert hash(page) == hash(load.Page(**{f: getattr(page, f) for f in page.__dataclass_fields__}))


def _page_with_blocks(n: int) -> dict:
    text = "\n".join(f"Paragraph {k} of page {n} says the same about espresso." for k in range(6))
    see = {"kind": "paragraph", "text": f"See page {n + 1} for `more` on espresso.",
           "code": [{"start": 18, "end": 24}],
           "links": [{"start": 0, "end": 15, "url": url(f"p{n + 1:03d}")}]}
    return page(url(f"p{n:03d}"), f"Page {n}", text,
                blocks=[see, {"kind": "heading", "text": f"Heading {n}", "code": [], "links": []}])


def test_blocks_are_compressed_in_groups_of_pages_in_page_order(tmp_path, monkeypatch):
    """Pages written out of URL order over three parts: each page's blocks come back as the row merge
    makes them, from groups of GROUP_PAGES pages that a pass in page order decompresses once each."""
    rows = [_page_with_blocks(n) for n in range(100)]
    rows.reverse()
    for k, part in enumerate((rows[:40], rows[40:70], rows[70:])):
        write_crawl(tmp_path, part, [], [], part=f"job1-{k:04d}")
    crawl = load_crawl(tmp_path)
    merged = build_crawl(list(reversed(rows)), [], [], str(tmp_path))
    store = crawl.pages[0].blocks.where[0]
    assert len(store.groups) == -(-100 // load.GROUP_PAGES) and store.chunks == []
    calls = []
    real = load._decompressed
    monkeypatch.setattr(load, "_decompressed", lambda packed: calls.append(1) or real(packed))
    assert [tuple(p.blocks) for p in crawl.pages] == [p.blocks for p in merged.pages]
    assert len(calls) == len(store.groups)  # each group once, in page order
    groups = list(store.links_in(["paragraph"]))
    assert len(groups) == len(store.groups)  # a group of pages at a time
    rows_of, urls = np.concatenate([r for r, _ in groups]), pa.concat_arrays([u for _, u in groups])
    page_of_row = {p.blocks.where[1]: p.url for p in crawl.pages}
    assert sorted(zip((page_of_row[r] for r in rows_of.tolist()), urls.to_pylist(), strict=True)) == [
        (url(f"p{n:03d}"), url(f"p{n + 1:03d}")) for n in range(100)]
    assert crawl.pages[7].blocks.where[1] != 7  # the rows are the parts' order, not the pages'


def test_a_pages_block_texts_of_some_kinds_are_read_from_the_columns_as_its_blocks_give_them(
        tmp_path, monkeypatch):
    """``block_texts``: the texts of a page's blocks of some kinds, as its ``Block`` objects give
    them (a block without a kind, null or "", is "other"; without a text, ""), read from its group's
    columns with no ``Block`` made, each group decompressed once by a pass in page order; a page
    without stored blocks reads its blocks."""
    rows = [_page_with_blocks(n) for n in range(70)]
    rows[3]["blocks"] = []
    rows[5]["blocks"] = [{"kind": None, "text": "no kind", "code": [], "links": []},
                         {"kind": "", "text": "empty kind", "code": [], "links": []},
                         {"kind": "paragraph", "text": None, "code": [], "links": []},
                         {"kind": "quote", "text": "quoted", "code": [], "links": []}]
    rows.reverse()
    for k, part in enumerate((rows[:30], rows[30:])):
        write_crawl(tmp_path, part, [], [], part=f"job1-{k:04d}")
    crawl = load_crawl(tmp_path)
    kinds = [frozenset({"paragraph", "quote"}), frozenset({"heading", "other"})]
    expected = {(p.url, k): [b.text for b in p.blocks if b.kind in k] for p in crawl.pages for k in kinds}
    assert expected[(url("p005"), kinds[0])] == ["", "quoted"]
    assert expected[(url("p005"), kinds[1])] == ["no kind", "empty kind"]
    made = []
    monkeypatch.setattr(load, "_blocks", lambda rows: made.append(1) or ())
    calls = []
    real = load._decompressed
    monkeypatch.setattr(load, "_decompressed", lambda packed: calls.append(1) or real(packed))
    for kind in kinds:
        assert {(p.url, kind): load.block_texts(p, kind) for p in crawl.pages} == {
            key: texts for key, texts in expected.items() if key[1] == kind}
    assert made == [] and len(calls) == 2 * -(-70 // load.GROUP_PAGES)
    # in any order, the same texts
    shuffled = random.Random(0).sample(crawl.pages, len(crawl.pages))
    assert [load.block_texts(p, kinds[0]) for p in shuffled] == [
        expected[(p.url, kinds[0])] for p in shuffled]
    plain = load.Page(url="x", blocks=(load.Block("paragraph", "a"), load.Block("heading", "b")))
    assert load.block_texts(plain, kinds[0]) == ["a"]


def test_a_pages_code_spans_of_some_kinds_are_read_from_the_columns_as_its_blocks_give_them(
        tmp_path, monkeypatch):
    """``code_spans``: the texts of the inline code spans in a page's blocks of some kinds, in block
    and span order, as its ``Block`` objects give them (``text[start:end]``; a block without a kind
    is "other", without a text ""), read from its group's columns with no ``Block`` made; the
    finder's defined names read them so."""
    rows = [_page_with_blocks(n) for n in range(70)]
    rows[3]["blocks"] = []
    rows[5]["blocks"] = [
        {"kind": "heading", "text": "The save() and QuerySet.filter methods", "code": [
            {"start": 15, "end": 30}, {"start": 4, "end": 10}], "links": []},
        {"kind": None, "text": "no kind `x_y`", "code": [{"start": 8, "end": 13}], "links": []},
        {"kind": "term", "text": None, "code": [], "links": []},
        {"kind": "term", "text": "DATA_DIR", "code": [{"start": 0, "end": 8}], "links": []},
        {"kind": "paragraph", "text": "skipped `code`", "code": [{"start": 8, "end": 14}], "links": []}]
    rows[9]["blocks"][1]["code"] = None
    rows.reverse()
    for k, part in enumerate((rows[:30], rows[30:])):
        write_crawl(tmp_path, part, [], [], part=f"job1-{k:04d}")
    crawl = load_crawl(tmp_path)
    kinds = [frozenset({"heading", "term"}), frozenset({"paragraph", "other"})]
    expected = {(p.url, k): [b.text[s:e] for b in p.blocks if b.kind in k for s, e in b.code]
                for p in crawl.pages for k in kinds}
    assert expected[(url("p005"), kinds[0])] == ["QuerySet.filter", "save()", "DATA_DIR"]
    assert expected[(url("p005"), kinds[1])] == ["`x_y`", "`code`"]
    names = {p.url: defined_names(p) for p in crawl.pages}
    assert names[url("p005")] == {("queryset.filter",), ("data_dir",)}
    made = []
    monkeypatch.setattr(load, "_blocks", lambda rows: made.append(1) or ())
    for kind in kinds:
        assert {(p.url, kind): load.code_spans(p, kind) for p in crawl.pages} == {
            key: spans for key, spans in expected.items() if key[1] == kind}
    assert {p.url: defined_names(p) for p in crawl.pages} == names
    assert made == []
    shuffled = random.Random(0).sample(crawl.pages, len(crawl.pages))
    assert [load.code_spans(p, kinds[0]) for p in shuffled] == [expected[(p.url, kinds[0])] for p in shuffled]
    plain = load.Page(url="x", blocks=(load.Block("heading", "a `b`", ((2, 5),)),
                                       load.Block("paragraph", "c", ((0, 1),))))
    assert load.code_spans(plain, kinds[0]) == ["`b`"]


def test_the_proper_nouns_pass_reads_each_group_of_texts_once(tmp_path, monkeypatch):
    """``proper_nouns`` over the loader's page texts (``PageValues``) reads each text once: its scan
    goes over a batch three times, and a page's text read again after others decompressed its group
    again (three times each, before)."""
    rows = [_page_with_blocks(n) for n in range(70)]
    for n, row in enumerate(rows):
        row["text"] += f" We brew with Chemex and Aeropress on day {n}."
    write_crawl(tmp_path, rows, [], [])
    crawl = load_crawl(tmp_path)
    calls = []
    real = load._decompressed
    monkeypatch.setattr(load, "_decompressed", lambda packed: calls.append(1) or real(packed))
    found = proper_nouns(load.PageValues(crawl.pages, lambda p: p.text))
    assert {"chemex", "aeropress"} <= found
    assert len(calls) == -(-70 // load.GROUP_PAGES)


def test_texts_are_compressed_beside_the_blocks_and_read_when_asked_for(tmp_path, monkeypatch):
    """The loader's pages hold no text string: each text is read from groups of GROUP_PAGES texts,
    which a pass in page order decompresses once each without touching the blocks."""
    rows = [_page_with_blocks(n) for n in range(100)]
    rows.reverse()
    for k, part in enumerate((rows[:40], rows[40:70], rows[70:])):
        write_crawl(tmp_path, part, [], [], part=f"job1-{k:04d}")
    arrow_before = pa.total_allocated_bytes()
    crawl = load_crawl(tmp_path)
    merged = build_crawl(list(reversed(rows)), [], [], str(tmp_path))
    store = crawl.pages[0].blocks.where[0]
    assert len(store.text_groups) == len(store.groups) and store.text_chunks == []
    packed = store.groups.nbytes + store.text_groups.nbytes
    assert packed == sum(g.size for g in store.groups) + sum(g.size for g in store.text_groups) > 0
    # the compressed groups are in the spill file, not in memory (the store holds their offsets)
    assert pa.total_allocated_bytes() - arrow_before < packed / 4
    slot = load.Page.__dict__["text"]._slot
    assert all(type(slot.__get__(p)) is load.StoredText for p in crawl.pages)
    calls = []
    real = load._decompressed
    monkeypatch.setattr(load, "_decompressed", lambda packed: calls.append(1) or real(packed))
    texts = load.PageValues(crawl.pages, lambda p: p.text)
    assert list(texts) == [p.text for p in merged.pages] and all(type(t) is str for t in texts)
    assert len(calls) == 2 * len(store.text_groups)  # two passes, each text group once a pass
    part = texts[10:20]
    assert isinstance(part, load.PageValues) and list(part) == [p.text for p in merged.pages[10:20]]
    assert crawl.pages[3] == merged.pages[3] and hash(crawl.pages[3]) == hash(merged.pages[3])
    plain = load.Page(url="x", text="plain")
    assert plain.text == "plain" and dataclasses.replace(crawl.pages[3]).text == merged.pages[3].text


def test_whether_a_page_has_text_is_known_from_the_load_without_reading_its_text(tmp_path, monkeypatch):
    """``has_text`` answers ``page.text.strip()`` for every kind of whitespace ``str.strip`` takes
    (and not for the characters it keeps), from a flag the loader set: no text group is read."""
    texts = ["", " \t\n", "\u3000\xa0\u2028\x1c\x85", " x ", "\u200b", "\ufeff", "\u180e", "é", "\u3000a"]
    rows = [page(url(f"t{n:02d}"), f"Text {n}", text) for n, text in enumerate(texts)]
    write_crawl(tmp_path, rows, [], [], part="job1-0000")
    crawl = load_crawl(tmp_path)
    expected = [bool(p.text.strip()) for p in crawl.pages]
    assert expected == [bool(t.strip()) for t in texts] and expected.count(True) == 6
    calls = []
    monkeypatch.setattr(load, "_decompressed", lambda packed: calls.append(1))
    assert [load.has_text(p) for p in crawl.pages] == expected and calls == []
    assert load.has_text(load.Page(url="x", text=" \u3000 ")) is False
    assert load.has_text(load.Page(url="x", text=" ok ")) is True


def test_anchors_for_rows_in_any_order_read_each_group_of_blocks_once(tmp_path, monkeypatch):
    """Rows handed to ``add_anchors`` as a list, sources shuffled (as a stage file read back gives
    them): the sources are still taken in page order, so each group of blocks is decompressed once."""
    rows = [_page_with_blocks(n) for n in range(100)]
    write_crawl(tmp_path, rows, [], [], part="job1-0000")
    crawl = load_crawl(tmp_path)
    finder = AnchorFinder(crawl)
    pairs = [Suggestion(url(f"p{n:03d}"), url(f"p{(n + 7) % 100:03d}"), 0.5, {}, rank=1) for n in range(100)]
    random.Random(4).shuffle(pairs)
    store = crawl.pages[0].blocks.where[0]
    blocks = []
    read = type(store.groups).__getitem__
    monkeypatch.setattr(type(store.groups), "__getitem__", lambda spill, g: (
        blocks.append(g) if spill is store.groups else None) or read(spill, g))
    add_anchors(crawl, pairs, finder)
    assert blocks == sorted(set(blocks)) == list(range(len(store.groups)))


def test_a_tables_inbound_counts_are_made_once_and_handed_out_as_copies():
    table = LinkTable.from_links([Link("a", "t"), Link("a", "t"), Link("b", "t"), Link("t", "t"),
                                  Link("b", "u")])
    first = table.inbound()
    assert first == {"t": 2, "u": 1}
    first["t"] = 99  # a caller's change stays the caller's
    assert table.inbound() == {"t": 2, "u": 1}
    assert table.inbound() is not table.inbound()
    assert table.without([("b", "t")]).inbound() == {"t": 1, "u": 1}  # another table, its own counts


@pytest.mark.parametrize(("size", "high"), [(0, 5), (1, 5), (2, 1), (1000, 30), (200_000, 10**12)])
def test_distinct_keys_by_sorting_are_numpys_unique(size, high):
    """``distinct`` and ``first_seen`` sort instead of calling NumPy's hashing ``unique`` (150× slower
    on millions of link keys): the same values, first positions and counts, also for one key or none."""
    keys = np.random.default_rng(size).integers(0, high, size)
    assert np.array_equal(distinct(keys), np.unique(keys)) and distinct(keys).dtype == keys.dtype
    values, first, counts = np.unique(keys, return_index=True, return_counts=True)
    order = np.argsort(first, kind="stable")
    for block in (FIRST_SEEN_BLOCK, 7, 1):  # at once, and a range of values at a time
        got = first_seen(keys, block)
        for mine, numpys in zip(got, (values[order], first[order], counts[order]), strict=True):
            assert np.array_equal(mine, numpys) and mine.dtype == numpys.dtype
        if size:
            assert list(got[1]) == sorted(got[1]) and keys[got[1][0]] == keys[0]


def test_first_seen_sorts_many_keys_a_range_of_values_at_a_time():
    """More keys than a block are sorted a range of values at a time: the peak beside the keys is a
    fraction of the three arrays of 8 bytes a key that one sort of them all makes (a million pages'
    in-content links: ~38M keys), and the answer is the one sort's, skewed keys and all."""
    rng = np.random.default_rng(3)
    values = rng.integers(0, 10**12, 20_000)  # ~40 links an (anchor, target) pair, some pairs far more
    keys = np.concatenate([values[rng.integers(0, len(values), 900_000)], np.full(50_000, 42),
                           rng.integers(0, 50, 50_000)])
    rng.shuffle(keys)
    whole = first_seen(keys, len(keys))
    parts, peak = traced_peak(lambda: first_seen(keys, len(keys) // 8))
    for a, b in zip(parts, whole, strict=True):
        assert np.array_equal(a, b)
    assert peak < 10 * len(keys), peak / len(keys)  # one sort of them all: ~18 bytes a key


def test_pairs_in_sorted_keys_make_their_keys_a_step_at_a_time(monkeypatch):
    """Which (high, low) pairs stand in sorted keys: the mask of the keys made at once, while the
    keys are made a step of pairs at a time (at once: ~24 bytes a pair beside the columns; a
    confidence fold asks it of every in-content link use, ~38M at a million pages)."""
    from postprocess.stages import links

    rng = np.random.default_rng(5)
    width = 50_000
    high = rng.integers(0, width, 2_000_000).astype(np.int32)
    low = rng.integers(0, width, 2_000_000).astype(np.int32)
    keys = np.sort(np.concatenate([high[::7].astype(np.int64) * width + low[::7], [width * width + 3]]))
    whole = links.in_sorted(keys, high.astype(np.int64) * width + low)
    monkeypatch.setattr(links, "KEY_STEP", 1 << 14)
    found, peak = traced_peak(lambda: links.pairs_in(keys, high, low, width))
    assert np.array_equal(found, whole) and found[::7].all() and found.sum() >= len(high) // 7
    assert peak < 3 * len(high), peak / len(high)  # the mask (1 byte a pair) and a step's keys


def test_compressed_groups_live_in_an_unlinked_file_that_a_forked_process_reads(tmp_path):
    """The store keeps its compressed groups in a temporary file with no name left in any folder (a
    kill leaves nothing behind), not in memory; a forked child reads the same pages' texts and blocks."""
    rows = [_page_with_blocks(n) for n in range(100)]
    write_crawl(tmp_path, rows, [], [], part="job1-0000")
    crawl = load_crawl(tmp_path)
    store = crawl.pages[0].blocks.where[0]
    for spill in (store.groups, store.text_groups):
        assert isinstance(spill, SpillFile)
        status = os.fstat(spill._file.fileno())
        assert status.st_nlink == 0 and status.st_size == spill.nbytes > 0
    expected = [(p.text, tuple(p.blocks)) for p in crawl.pages]
    store._open, store._last, store._last_text = {}, (-1, ()), (-1, "")  # nothing decompressed yet
    child = Background(lambda: [(p.text, tuple(p.blocks)) for p in reversed(crawl.pages)], fork=True)
    assert child.forked and child.result() == list(reversed(expected))
    assert [(p.text, tuple(p.blocks)) for p in crawl.pages] == expected  # the parent reads on after


def test_the_pages_documents_pickle_to_a_fresh_process_that_reads_the_texts_from_the_store(tmp_path):
    """A fresh process (``Background(fresh=True)``: a new interpreter, none of this one's memory) gets
    the loader's pages' indexed documents pickled: their titles, h1s and headings, and the store
    whose compressed groups are its file opened again there, not the texts."""
    rows = [_page_with_blocks(n) for n in range(100)]
    write_crawl(tmp_path, rows, [], [], part="job1-0000")
    pages = load_crawl(tmp_path).pages[::-1]
    documents = PageDocuments(pages)
    expected = [page_document(p.title, p.h1, p.headings, p.text) for p in pages]
    assert list(documents) == expected and list(documents[2:5]) == expected[2:5] and len(documents) == 100
    assert not any(p.text.encode() in pickle.dumps(documents) for p in pages)  # they stay in the store's file
    job = Background(list, documents, fresh=True)
    assert job.forked and job.result() == expected


def test_a_spill_file_opened_again_where_its_file_is_gone_says_so():
    spill = SpillFile([b"group"])
    pickled = pickle.dumps(spill)
    assert bytes(pickle.loads(pickled)[0]) == b"group"  # opened again, here
    spill._file.close()
    with pytest.raises(OSError, match="spilled groups at /proc/.* cannot be opened again here"):
        pickle.loads(pickled)


def test_a_spill_file_reads_back_each_group_it_was_given():
    groups = [b"first", b"", pa.py_buffer(b"third group"), bytes(range(256)) * 40]
    spill = SpillFile(groups)
    assert len(spill) == 4 and spill.nbytes == sum(len(g) for g in groups)
    assert [bytes(g) for g in spill] == [bytes(g) for g in groups]
    assert bytes(spill[-1]) == bytes(groups[-1]) and spill.offsets[3] - spill.offsets[2] == 11
    with pytest.raises(IndexError):
        spill[4]
    assert len(SpillFile()) == 0 and list(SpillFile()) == []


def test_fields_with_few_values_share_one_string_and_unread_columns_are_not_held(tmp_path):
    """A page's language, job and kind are one string object for every page with that value (not a
    copy a page), and the meta description, which no stage reads, is not kept at all."""
    rows = [dict(_page_with_blocks(n), lang="en-GB", meta_description=f"Summary {n} " * 10)
            for n in range(40)]
    write_crawl(tmp_path, rows, [], [], part="job1-0000")
    pages = load_crawl(tmp_path).pages
    for field in ("lang", "job", "kind"):
        values = [getattr(p, field) for p in pages]
        assert values[0] and len({id(v) for v in values}) == 1, field
    assert "meta_description" not in load.Page.__dataclass_fields__
    assert "meta_description" not in load.PAGE_COLUMNS + load.PAGE_OPTIONAL


def test_each_group_is_taken_from_the_batches_it_is_in_without_joining_the_column(tmp_path, monkeypatch):
    """Pages spread over three parts out of page order: every group is made from pieces of the parts'
    batches, a block of ``PACK_BLOCK_ROWS`` rows at most joined (never the whole column, which held it
    twice), and reads back as the row merge."""
    monkeypatch.setattr(load, "PACK_BLOCK_ROWS", 64)
    rows = [_page_with_blocks(n) for n in range(100)]
    rows.reverse()
    for k, part in enumerate((rows[:40], rows[40:70], rows[70:])):
        write_crawl(tmp_path, part, [], [], part=f"job1-{k:04d}")
    joined = []
    real = pa.concat_arrays
    monkeypatch.setattr(pa, "concat_arrays", lambda arrays, *args, **kwargs: joined.append(
        sum(len(a) for a in arrays)) or real(arrays, *args, **kwargs))
    crawl = load_crawl(tmp_path)
    assert joined and max(joined) <= 64
    merged = build_crawl(list(reversed(rows)), [], [], str(tmp_path))
    assert [(p.text, tuple(p.blocks)) for p in crawl.pages] == [(p.text, p.blocks) for p in merged.pages]


class _CountedChunk:
    """A chunk of a column that counts the ``take`` calls made on it."""

    def __init__(self, array: pa.Array, calls: list[int]) -> None:
        self.array, self.calls = array, calls

    def __len__(self) -> int:
        return len(self.array)

    def take(self, indices: pa.Array) -> pa.Array:
        self.calls.append(len(indices))
        return self.array.take(indices)


def test_a_block_of_groups_is_taken_from_each_chunk_once(monkeypatch):
    """Rows in URL order lie in every batch (a million pages: ~500 batches of 2,048 rows, a group's
    32 rows in ~31 of them): the rows of a block of groups are taken from each chunk in one call, not
    a call for each group in each chunk (~2M calls, 193 s of a million pages' 224-s load), and each
    group holds its rows in the order given."""
    monkeypatch.setattr(load, "PACK_BLOCK_ROWS", 4 * load.GROUP_PAGES)
    calls: list[int] = []
    values = [f"row {n}" for n in range(40 * 8)]
    chunks = [_CountedChunk(pa.array(values[k * 8:(k + 1) * 8]), calls) for k in range(40)]
    order = np.array([8 * (n % 40) + n // 40 for n in range(len(values))])  # each group in 32 chunks
    packed = load._packed(chunks, order)  # type: ignore[arg-type]
    assert len(packed) == len(values) // load.GROUP_PAGES
    assert [v for g in range(len(packed)) for v in load._decompressed(packed[g]).to_pylist()] == [
        values[i] for i in order]
    assert len(calls) == 3 * 40  # three blocks of four groups, each taken from the 40 chunks once


def test_batches_wait_for_packing_in_an_unlinked_file_not_in_memory():
    """The blocks and texts a store is given are written to a temporary file with no name and mapped
    back when packed: the process does not hold them while the loader reads on."""
    store = load.BlockStore()
    before = pa.total_allocated_bytes()
    for batch in range(4):
        blocks = pa.array([[{"kind": "paragraph", "text": f"{batch}-{row} " + "x" * 5000}]
                           for row in range(100)])
        texts = pa.array([f"{batch}-{row} " + "y" * 5000 for row in range(100)])
        assert store.add(blocks, texts) == 100 * batch
        del blocks, texts
    assert pa.total_allocated_bytes() - before < 200_000  # ~4 MB were given
    store.pack(list(range(399, -1, -1)))
    assert store.chunks == [] and store.text_chunks == []
    assert store.text(0) == "0-0 " + "y" * 5000 and store.text(399) == "3-99 " + "y" * 5000
    assert store._column(0)[0].as_py()[0]["text"].startswith("3-99 ")  # packed in the order given


def test_a_batch_file_reads_back_what_it_was_given_from_a_file_with_no_name():
    spill = BatchFile()
    assert spill.read() == []
    spill = BatchFile()
    batches = [pa.record_batch([pa.array([k, k + 1]), pa.array(["a", None])], names=["n", "s"])
               for k in range(3)]
    for batch in batches:
        spill.write(batch)
    assert os.fstat(spill._file.fileno()).st_nlink == 0
    assert [b.to_pylist() for b in spill.read()] == [b.to_pylist() for b in batches]


def test_a_links_part_is_read_a_batch_of_rows_at_a_time(tmp_path, monkeypatch):
    """A links part is read ``LINK_BATCH_ROWS`` rows at a time, each batch let go before the next (a
    synthetic 100k-page crawl's parts hold 1.4M links: read whole, ~0.5 GB at once): the Arrow memory
    held while the rows are encoded stays a small share of the part's."""
    targets = [url(f"t{i}") for i in range(300)]
    for n in range(3):
        rows = [link(SITE[i % len(SITE)]["url"], t, f"anchor {n} {t} " + "words " * 20)
                for i, t in enumerate(targets)]
        write_crawl(tmp_path, SITE if n == 0 else [], rows * 20, [], part=f"p{n}-0001")
    part_bytes = pq.read_table(tmp_path / "links" / "part-p1-0001.parquet").nbytes
    monkeypatch.setattr(load, "LINK_BATCH_ROWS", 500)
    held: list[int] = []
    encode = load._encode

    def counted(column, *args, **kwargs):  # noqa: ANN001, ANN202 - _encode's
        held.append(pa.total_allocated_bytes())
        return encode(column, *args, **kwargs)

    monkeypatch.setattr(load, "_encode", counted)
    crawl = load_crawl(tmp_path)
    assert len(crawl.links) == 3 * 6000 and part_bytes > 1_000_000
    assert len(held) > 3 * 2 * 12  # both passes, every batch
    assert max(held) < part_bytes / 4, (max(held), part_bytes)


def test_a_set_of_jobs_loads_as_the_row_merge_of_those_jobs_and_an_outline_without_text(tmp_path):
    """The report's trend reads each snapshot as the loader would, from a set of jobs, as an outline:
    the same pages (their URL, depth, kind, fetch time and job), aliases and links, no text or blocks."""
    newer = later(SITE[0], title="Espresso, revised", job="b")
    write_crawl(tmp_path, SITE, SITE_LINKS, [], part="a-0001")
    write_crawl(tmp_path, [newer], [later(link(ESPRESSO, POUR_OVER, "pour-over"), job="b")],
                [skip(MOVED, "redirect", ESPRESSO, job="b")], part="b-0001")
    write_crawl(tmp_path, [later(newer, title="Espresso, third", job="c")], [], [], part="c-0001")
    rows = {table: [r for r in load._read_parts(load._part_files(tmp_path, table), table, required, optional,
                                                None) if r["job"] in ("job1", "b")]
            for table, required, optional in (("pages", load.PAGE_COLUMNS, load.PAGE_OPTIONAL),
                                              ("links", load.LINK_COLUMNS, load.LINK_OPTIONAL),
                                              ("skipped", load.SKIP_COLUMNS, load.SKIP_OPTIONAL))}
    merged = build_crawl(rows["pages"], rows["links"], rows["skipped"], str(tmp_path))
    both = load_crawl(tmp_path, frozenset({"job1", "b"}))
    assert both.pages == merged.pages and list(both.links) == list(merged.links)
    assert both.aliases == merged.aliases == {MOVED: ESPRESSO}
    assert {p.url: p.title for p in both.pages}[ESPRESSO] == "Espresso, revised"  # not job c's
    outline = load_crawl(tmp_path, frozenset({"job1", "b"}), outline=True)
    assert outline.aliases == both.aliases and outline.links.anchors == [""]  # no anchor text read
    assert list(outline.links) == [dataclasses.replace(link, anchor_text="") for link in both.links]
    assert [(p.url, p.depth, p.kind, p.fetched_at, p.job) for p in outline.pages] == [
        (p.url, p.depth, p.kind, p.fetched_at, p.job) for p in both.pages]
    assert all(p.text == "" and p.blocks == () and p.title == "" for p in outline.pages)
    with pytest.raises(InputError, match="for jobs x, y"):
        load_crawl(tmp_path, frozenset({"y", "x"}))


def _anonymous_kb() -> int:
    with open("/proc/self/status") as status:
        return next(int(line.split()[1]) for line in status if line.startswith("RssAnon:"))


def test_a_mapped_array_is_read_from_an_unlinked_file_not_this_processs_memory(mapped_from_a_file):
    """``mapped`` gives the same values, read-only, from file pages: 48 MB mapped and read through
    leave the process's anonymous memory as it was; a forked child reads them too."""
    from postprocess.stages.spill import mapped

    values = np.arange(12_000_000, dtype=np.int32)
    before = _anonymous_kb()
    kept = mapped(values)
    del values
    assert int(kept[::1024].sum()) == sum(range(0, 12_000_000, 1024)) and int(kept.sum()) > 0
    assert _anonymous_kb() - before < -40_000  # the 48 MB array freed, nothing of it held again
    assert not kept.flags.writeable and kept.dtype == np.int32 and mapped_from_a_file(kept)
    child = Background(lambda: int(kept[-1]), fork=True)
    assert child.forked and child.result() == 11_999_999
    empty = mapped(np.zeros((0, 3), dtype=np.float32))
    assert empty.shape == (0, 3) and empty.dtype == np.float32


def test_mapped_zeros_are_written_to_file_pages_not_this_processs_memory(mapped_from_a_file):
    """``mapped_zeros`` gives a writable array of zeros in file pages: 48 MB written and read back
    leave the process's anonymous memory as it was; pickled, it is an ordinary copy."""
    import pickle

    from postprocess.stages.spill import mapped_zeros

    before = _anonymous_kb()
    values = mapped_zeros(12_000_000, np.int32)
    assert values.flags.writeable and values.dtype == np.int32 and not values.any()
    values[:] = np.arange(12_000_000, dtype=np.int32)
    assert int(values[::1024].sum()) == sum(range(0, 12_000_000, 1024))
    assert _anonymous_kb() - before < 8_000 and mapped_from_a_file(values)
    copy = pickle.loads(pickle.dumps(values[:1000]))
    assert np.array_equal(copy, np.arange(1000)) and not mapped_from_a_file(copy)
    empty = mapped_zeros(0, np.float32)
    assert len(empty) == 0 and empty.dtype == np.float32


def test_the_loaded_link_tables_columns_are_mapped_from_files(tmp_path, mapped_from_a_file):
    """The link table's columns, read by every stage and written by none (15 bytes a link: ~0.1 GB
    at 100k pages), and its targets by source, are mapped from files, not the process's memory."""
    crawl = load_crawl(_multi_part(tmp_path))
    table = crawl.links
    for name in ("source", "target", "anchor", "position", "nofollow", "internal"):
        column = getattr(table, name)
        assert len(column) and mapped_from_a_file(column), name
    linked = table.by_source()  # the finder's linked pages a source at a time, read to the anchoring's end
    assert mapped_from_a_file(linked.targets)
    assert linked.get(ESPRESSO) == {link.target_url for link in table if link.source_url == ESPRESSO} != set()


def test_in_sorted_looks_values_up_a_batch_at_a_time(monkeypatch):
    """``in_sorted`` (a confidence fold asks it about every link of the site) gives the same mask
    in batches of values as at once, across a batch's edge, and its transients stay a batch's:
    6M values traced at most ~6 bytes each (a mask byte and a batch's places), where all at once
    they took ~16."""
    from postprocess.stages import links

    rng = np.random.default_rng(0)
    keys = np.sort(rng.integers(0, 10**9, 50_000))
    wanted = rng.integers(0, 10**9, 6_000_000)
    wanted[::7] = keys[rng.integers(0, len(keys), len(wanted[::7]))]
    expected = np.isin(wanted, keys)
    found, peak = traced_peak(lambda: links.in_sorted(keys, wanted))
    assert np.array_equal(found, expected) and found.sum() >= len(wanted) // 7
    assert peak < 8 * len(wanted)
    monkeypatch.setattr(links, "IN_SORTED_BATCH", 5)
    assert np.array_equal(links.in_sorted(keys, wanted[:23]), expected[:23])
    assert not links.in_sorted(np.zeros(0, dtype=np.int64), wanted[:3]).any()
    assert len(links.in_sorted(keys, wanted[:0])) == 0


def test_mapped_zeros_reserve_their_files_space_when_made():
    """The file under ``mapped_zeros`` has its space reserved when the array is made, not sparse: a
    full ``TMPDIR`` is then an OSError there, where writing a page of a sparse file that the disk
    has no room for kills the process with SIGBUS (tried on a 1 MB tmpfs: ENOSPC, and rc 135
    before)."""
    from postprocess.stages.spill import mapped_zeros

    values = mapped_zeros(3_000_001, np.float32)  # 12,000,004 bytes: no other file here has them
    files = []
    for fd in os.listdir("/proc/self/fd"):
        try:
            found = os.stat(f"/proc/self/fd/{fd}")
        except OSError:
            continue
        if found.st_size == values.nbytes:
            files.append(found)
    assert files and all(f.st_blocks * 512 >= values.nbytes for f in files)


def test_the_pairs_a_table_links_are_found_a_step_of_links_at_a_time(monkeypatch):
    """``LinkTable.linked_among`` (a confidence fold's hidden pairs that the site links) gives what
    every link's key at once gives, across a step's edge, with pairs it does not link, twice linked
    pairs and no links; a step's keys at a time, not every link's (8 bytes a link)."""
    from postprocess.stages import links

    rng = random.Random(4)
    urls = [f"https://example.com/p{i}" for i in range(300)]
    rows = [links.Link(rng.choice(urls), rng.choice(urls), "a") for _ in range(2_000)]
    table = links.LinkTable.from_links(rows)
    n = len(table.urls)
    every = table.pair_keys()
    asked = np.sort(np.concatenate([every[::5], np.array([n * n + 3, 7 * n + 7], dtype=np.int64)]))
    expected = links.distinct(every[np.isin(every, asked)])
    assert np.array_equal(table.linked_among(asked), expected) and len(expected)
    monkeypatch.setattr(links, "KEY_STEP", 7)
    assert np.array_equal(table.linked_among(asked), expected)
    assert len(table.linked_among(np.zeros(0, dtype=np.int64))) == 0
    big = links.LinkTable.from_links(
        links.Link(urls[i % 300], urls[(i // 300) % 300], "a") for i in range(400_000))
    monkeypatch.setattr(links, "KEY_STEP", 1 << 14)
    wanted = np.sort(big.pair_keys()[:100])
    found, peak = traced_peak(lambda: big.linked_among(wanted))
    assert np.array_equal(found, links.distinct(wanted)) and peak < 8 * len(big)


@pytest.mark.parametrize("sizes", [[], [0], [1], [7], [1000, 0, 300, 1]])
def test_joined_pieces_distinct_keys_are_numpys_unique_and_the_pieces_let_go(sizes):
    """``distinct_joined``: the distinct values of sorted pieces that overlap (a step of links per
    piece), sorted in place once joined; the list is emptied."""
    rng = np.random.default_rng(len(sizes))
    pieces = [np.sort(rng.integers(0, 500, size)) for size in sizes]
    given = [piece.copy() for piece in pieces]
    expected = np.unique(np.concatenate(given)) if given else np.zeros(0, dtype=np.int64)
    got = distinct_joined(pieces)
    assert np.array_equal(got, expected) and got.dtype == np.int64 and pieces == []


def test_a_single_piece_is_not_sorted_in_place():
    piece = np.array([5, 3, 3, 1], dtype=np.int64)
    assert list(distinct_joined([piece])) == [1, 3, 5] and list(piece) == [5, 3, 3, 1]


def test_anchor_groups_make_one_key_array_of_8_bytes_a_link(monkeypatch):
    """The (anchor, target) groups of the in-content links: each link's key made in place (one array
    of 8 bytes a link, not the three a product and a sum make) and sorted a range at a time (the
    finder's build and its last steps, a million pages' ~38M links: ~1 GB at the peak, where ~0.5);
    the groups are those of a loop over the links."""
    monkeypatch.setattr(links_module, "FIRST_SEEN_BLOCK", 1 << 17)
    rng = np.random.default_rng(5)
    n, pages, texts = 1_000_000, 5_000, 2_000
    source = rng.integers(0, pages, n)
    target = rng.integers(0, pages, n) % 400  # ~2,000 groups a target text: many links a group
    anchor = rng.integers(0, texts, n) % 50
    position = rng.integers(0, 2, n)
    table = LinkTable([f"u{k}" for k in range(pages)], source, target, [f"a{k}" for k in range(texts)],
                      anchor,
                      ["content", "nav"], position, np.zeros(n, dtype=bool), np.ones(n, dtype=bool))
    groups, peak = traced_peak(lambda: table.anchor_groups(skip_self=True))
    counted = Counter((int(a), int(t)) for s, t, a, p in zip(source, target, anchor, position, strict=True)
                      if p == 0 and s != t)
    assert list(zip(groups[0], groups[1], strict=True)) == list(counted)  # in the order of their first link
    assert groups[2] == list(counted.values())
    content = int((position == 0).sum())
    assert peak < 20 * content, peak / content  # a product and a sum, one sort of them all: ~30


@pytest.mark.parametrize("content_only", [False, True])
def test_the_linked_pairs_as_csr_arrays_are_their_sorted_keys(monkeypatch, content_only):
    """The report's link graph from CSR arrays merged a range of sources at a time: the same edges
    as the sorted distinct keys give (every source's targets ascending, each pair once, no self
    link, pages outside the items left out), with ~15–18 bytes a linked pair at the peak, where the
    keys sorted whole and then made arrays took ~22–25 (a million pages' ~68M links: ~1.5 GB)."""
    from postprocess.apps.report.graph import Edges
    from postprocess.stages.links import linked_csr, linked_keys

    monkeypatch.setattr(links_module, "KEY_STEP", 1 << 16)
    rng = np.random.default_rng(7)
    n, pages = 1_000_000, 20_000
    source = np.sort(rng.integers(0, pages, n))  # a source's links together, the sources not in order
    blocks = np.flatnonzero(np.diff(source)) + 1
    order = np.concatenate([np.arange(a, b) for a, b in zip([0, *blocks], [*blocks, n], strict=True)][::-1])
    source = source[order]
    target = np.where(rng.random(n) < 0.3, source, rng.integers(0, pages + 5, n))  # self links, unknown pages
    urls = [f"u{k}" for k in range(pages + 5)]
    table = LinkTable(urls, source, target, ["a"], np.zeros(n, dtype=np.int32), ["nav", "content"],
                      rng.integers(0, 2, n), np.zeros(n, dtype=bool), np.ones(n, dtype=bool))
    items = urls[:pages]
    keys = linked_keys(table, items, content_only)
    expected = Edges(items, keys)
    del keys
    (indptr, targets), peak = traced_peak(lambda: linked_csr(table, items, content_only, block=1 << 17))
    assert indptr.dtype == np.int64 and targets.dtype == np.int32
    assert np.array_equal(indptr, expected.indptr) and np.array_equal(targets, expected.targets)
    assert peak < 20 * len(targets), peak / len(targets)
    got = Edges.from_csr(items, indptr, targets)
    assert dict(got.inbound()) == dict(expected.inbound()) and np.array_equal(got.keys, expected.keys)
