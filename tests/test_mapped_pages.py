"""Mapped files' pages taken out of the process's resident set (``memory.drop_file_pages``): by the
loader's packing, by each chunk a process takes, and before the caps' sort."""

from __future__ import annotations

import dataclasses
import sys
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest

from postprocess.memory import drop_file_pages, shared_file_mappings
from postprocess.stages.spill import BatchFile, mapped

linux = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux's /proc/self/smaps")

MB = 1 << 20


def resident_of(values: np.ndarray) -> int:
    """Bytes of ``values``' mapping that are in this process's resident set (``/proc/self/smaps``)."""
    address = values.__array_interface__["data"][0]
    inside = False
    for line in Path("/proc/self/smaps").read_text().splitlines():
        fields = line.split()
        if "-" in fields[0] and not fields[0].endswith(":"):
            start, end = (int(x, 16) for x in fields[0].split("-"))
            inside = start <= address < end
        elif inside and fields[0] == "Rss:":
            return int(fields[1]) * 1024
    raise AssertionError("no mapping holds the array")


def test_only_shared_mappings_of_files_are_dropped():
    """A private mapping's written pages (a library's relocated data) would be lost; an anonymous
    mapping is the process's own memory: neither is listed."""
    maps = "\n".join([
        "7f0000000000-7f0000100000 r--s 00000000 fe:00 2146448   /tmp/#2146448 (deleted)",
        "7f0000200000-7f0000300000 rw-s 00000000 fe:00 99        /work/out/page-vectors.f32",
        "7f0000400000-7f0000500000 r--p 00000000 fe:00 12        /usr/lib/libc.so.6",
        "7f0000600000-7f0000700000 rw-p 00000000 00:00 0",
        "7f0000800000-7f0000900000 rw-s 00000000 00:01 5         /dev/zero (deleted)",
        "55d000000000-55d000100000 rw-p 00000000 00:00 0         [heap]",
    ])
    assert shared_file_mappings(maps) == [(0x7F0000000000, 0x7F0000100000), (0x7F0000200000, 0x7F0000300000),
                                          (0x7F0000800000, 0x7F0000900000)]


@linux
def test_a_mapped_arrays_pages_leave_the_resident_set_and_its_values_stay():
    values = mapped(np.arange(8 * MB // 8, dtype=np.int64))
    total = int(values.sum())  # every page read
    assert resident_of(values) >= 8 * MB
    assert drop_file_pages() >= 8 * MB
    assert resident_of(values) < MB
    assert int(values.sum()) == total == (MB - 1) * MB // 2


def _texts_batch(rows: int, seed: int) -> pa.RecordBatch:
    rng = np.random.default_rng(seed)
    texts = ["".join(chr(97 + c) for c in rng.integers(0, 26, 40)) * 50 for _ in range(rows)]  # 2 KB each
    return pa.record_batch([pa.array(texts)], names=["text"])


@linux
def test_the_loaders_batches_are_mapped_so_that_their_pages_can_leave():
    """Arrow maps a file privately, and a private mapping is never dropped: the batch file is mapped
    shared, so what the packing has read of it leaves the resident set."""
    batches = BatchFile()
    written = [_texts_batch(2000, seed) for seed in range(4)]  # ~16 MB
    for batch in written:
        batches.write(batch)
    read = batches.read()
    data = [np.frombuffer(batch.column(0).buffers()[2], dtype=np.uint8) for batch in read]
    assert sum(int(d.sum()) > 0 for d in data) == 4  # every page read
    assert sum(resident_of(d) for d in data[:1]) > 4 * MB
    drop_file_pages()
    assert resident_of(data[0]) < MB
    assert [b.column(0).to_pylist() for b in read] == [b.column(0).to_pylist() for b in written]


@linux
def test_the_loaders_packing_drops_what_each_step_read(monkeypatch):
    """Each step of the packing takes its rows from every batch (the pages are packed in URL order, the
    batches are in crawl order): without a drop after each step, the batch file's pages pile up in
    the resident set (13 GB at a million pages)."""
    from postprocess.stages import load

    batches = BatchFile()
    for seed in range(4):
        batches.write(_texts_batch(2000, seed))
    chunks = [batch.column(0) for batch in batches.read()]
    data = [np.frombuffer(chunk.buffers()[2], dtype=np.uint8) for chunk in chunks]
    order = np.random.default_rng(0).permutation(8000)
    at_each_step: list[int] = []
    made_groups = load._groups

    def groups(chunks, starts, rows):  # noqa: ANN001, ANN202 - load._groups, its resident pages noted
        at_each_step.append(sum(resident_of(d) for d in data))
        yield from made_groups(chunks, starts, rows)

    monkeypatch.setattr(load, "_groups", groups)
    monkeypatch.setattr(load, "PACK_BLOCK_ROWS", 1024)
    drop_file_pages()
    packed = load._packed(chunks, order)
    assert len(at_each_step) == 8
    assert max(at_each_step) < 2 * MB, at_each_step  # each step reads ~all of the 16 MB
    first = load._decompressed(packed[0]).to_pylist()
    everything = pa.chunked_array(chunks).to_pylist()
    assert first == [everything[i] for i in order[:load.GROUP_PAGES].tolist()]


@linux
def test_each_chunk_a_process_takes_starts_without_the_last_ones_file_pages():
    """``in_chunks``: a chunk's reads of mapped files leave the resident set before the next chunk, in
    both processes (a million pages' chunks of the ranking read several GB of them)."""
    from postprocess.background import in_chunks

    values = mapped(np.arange(8 * MB // 8, dtype=np.int64))
    drop_file_pages()

    def work(part: list[int]) -> tuple[int, int]:
        before = resident_of(values)
        return before, int(values.sum())  # every page read

    results = list(in_chunks(work, list(range(12)), chunk=1))
    assert all(total == (MB - 1) * MB // 2 for _, total in results)
    assert max(before for before, _ in results) < MB, results


@pytest.fixture(scope="module")
def mapped_site():
    """The sample site, its page vectors mapped from a file (as a run maps them) and its page index."""
    from crawlkit import SITE, SITE_LINKS, bundled_model

    from postprocess.options import Options
    from postprocess.stages.embed import embed_pages
    from postprocess.stages.index import build_index
    from postprocess.stages.load import build_crawl

    options = Options(min_score=0.2, min_confidence=0.0)
    crawl = build_crawl(SITE, SITE_LINKS, [])
    made = embed_pages(crawl, bundled_model(), options)
    embeddings = dataclasses.replace(made, vectors=mapped(made.vectors))
    return crawl, embeddings, build_index(embeddings.urls, embeddings.vectors, options.trees), options


@pytest.mark.slow
@linux
def test_the_rankings_file_pages_are_dropped_before_the_caps(mapped_site, monkeypatch):
    """The page vectors that the ranking read are out of the resident set when the caps' sort starts,
    the run's largest step."""
    from postprocess.pipeline import candidate_pool
    from postprocess.stages import candidates

    crawl, embeddings, index, options = mapped_site
    at_caps: list[int] = []
    capped = candidates._PairColumns.capped

    def noted(self, *args):  # noqa: ANN001, ANN202 - the caps, the vectors' resident pages noted
        at_caps.append(resident_of(embeddings.vectors))
        return capped(self, *args)

    monkeypatch.setattr(candidates._PairColumns, "capped", noted)
    drop_file_pages()
    rows, _, _ = candidate_pool(crawl, embeddings, index, options)
    assert len(rows) and at_caps == [0]


@pytest.mark.slow
@linux
def test_the_ranking_drops_the_file_pages_every_so_many_sources(mapped_site, monkeypatch):
    """Within one process's share of the sources (a million pages' chunk is 15,625 of them), the
    mapped files' pages are dropped every ``RANK_DROP_SOURCES`` sources: here every source."""
    from postprocess.pipeline import candidate_pool
    from postprocess.stages import candidates
    from postprocess.stages.index import PageIndex

    crawl, embeddings, index, options = mapped_site
    at_each_source: list[int] = []
    neighbours = PageIndex.neighbour_columns

    def noted(self, *args):  # noqa: ANN001, ANN202 - a source's neighbours, the vectors' pages noted
        at_each_source.append(resident_of(embeddings.vectors))
        return neighbours(self, *args)

    monkeypatch.setattr(PageIndex, "neighbour_columns", noted)
    monkeypatch.setattr(candidates, "RANK_BLOCK", 1)
    monkeypatch.setattr(candidates, "RANK_DROP_SOURCES", 1)
    drop_file_pages()
    candidate_pool(crawl, embeddings, index, options)
    assert len(at_each_source) > 3 and set(at_each_source) == {0}, at_each_source


@linux
@pytest.mark.parametrize("content_links_only", [True, False])
def test_the_pair_filters_linked_pairs_are_file_pages_a_drop_takes_out(content_links_only):
    """The site's filters wait through every confidence fold's anchoring (kept for the next fold's
    ranking): their linked pairs' keys (8 bytes a link) leave the resident set with a drop, and
    read the same after it."""
    from crawlkit import SITE, SITE_LINKS

    from postprocess.options import Options
    from postprocess.stages.candidates import PairFilter
    from postprocess.stages.links import linked_keys
    from postprocess.stages.load import build_crawl

    crawl = build_crawl(SITE, SITE_LINKS, [])
    urls = sorted(p.url for p in crawl.pages)
    filters = PairFilter(crawl, urls, Options(content_links_only=content_links_only))
    assert len(filters.linked) and len(filters.all_linked)
    drop_file_pages()
    assert resident_of(filters.linked) == 0 and resident_of(filters.all_linked) == 0
    assert np.array_equal(filters.linked, linked_keys(crawl.links, urls, content_links_only))
    assert np.array_equal(filters.all_linked, linked_keys(crawl.links, urls))
