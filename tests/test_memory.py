"""Freed memory handed back to the system between passes (``postprocess.memory``)."""

from __future__ import annotations

import gc
import sys
from pathlib import Path

import pytest

from postprocess.memory import _trim, give_back


def resident_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS"):
            return int(line.split()[1]) / 1024
    raise AssertionError("no VmRSS")


@pytest.mark.skipif(not sys.platform.startswith("linux") or _trim() is None, reason="glibc's malloc_trim")
def test_memory_freed_below_live_objects_goes_back_to_the_system():
    """Texts of a few KB (the C heap, not Python's small-object arenas), a few kept among them: freeing
    the rest leaves the process as large until ``give_back``."""
    gc.collect()  # earlier tests' garbage, collected now rather than by the collection below
    give_back()  # and what they freed: the texts below are then new memory, not reused free space
    before = resident_mb()
    dropped = [("x" * 3000) + str(i) for i in range(60_000)]
    kept = dropped[::500]  # one text in 500 stays, spread through the heap: free() can trim none of it
    made = resident_mb() - before
    del dropped
    gc.collect()
    freed = resident_mb() - before
    give_back()
    after = resident_mb() - before
    assert made > 150 and freed > 150  # ~180 MB made; freeing alone gives nothing back
    assert after < 50, (made, freed, after)
    assert len(kept) == 120


def peak_mb_since_reset() -> float:
    """The process's peak resident memory since the last reset (``clear_refs`` 5)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM"):
            return int(line.split()[1]) / 1024
    raise AssertionError("no VmHWM")


@pytest.mark.skipif(not Path("/proc/self/clear_refs").exists(), reason="Linux's peak-memory reset")
def test_a_cache_part_written_whole_is_read_a_little_at_a_time(tmp_path):
    """A paragraph-cache part of one row group (~100 MB of vectors, as caches were written before
    row groups of BATCH_ROWS): looking up a few keys reads it through a small buffer, not the whole
    column chunk at once before decoding it (Arrow still decodes a row group's list column whole)."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.parquet as pq

    from postprocess.stages.vector_cache import VectorParts

    rows, dim = 100_000, 256
    vectors = np.random.default_rng(0).random((rows, dim), dtype=np.float32)
    table = pa.table({"key": pa.array([f"k{i:06d}" for i in range(rows)]),
                      "vector": pa.ListArray.from_arrays(np.arange(0, rows * dim + 1, dim, dtype=np.int32),
                                                         pa.array(vectors.ravel()))})
    folder = tmp_path / "passages-m"
    folder.mkdir()
    pq.write_table(table, folder / "part-1-0001.parquet", row_group_size=rows, compression="none")
    del table
    gc.collect()
    give_back()
    Path("/proc/self/clear_refs").write_text("5")
    before = peak_mb_since_reset()
    found: dict[int, np.ndarray] = {}
    hit = VectorParts(folder).stream(["k000007", "k099999", "absent"],
                                     lambda at, values: found.update(zip(at.tolist(), values, strict=True)))
    grew = peak_mb_since_reset() - before
    assert hit.tolist() == [True, True, False]
    assert np.array_equal(found[0], vectors[7]) and np.array_equal(found[1], vectors[99_999])
    assert grew < 140, grew  # read whole first: ~175 MB; through the buffer: ~100 MB


def test_the_objects_made_per_name_and_mention_carry_no_dict():
    """A page's names (anchor finder), the site's names (name index) and a source's mentions are made
    by the hundred thousand: slotted, each is ~100 bytes smaller than with a ``__dict__``."""
    from postprocess.stages.anchors import Name
    from postprocess.stages.lexical import Mention, _Name

    for made in (Name(("query", "set"), "title", 1.2), Mention("QuerySet", 0.5, "anchor"),
                 _Name(3, "QuerySet", "anchor", 0.5)):
        assert not hasattr(made, "__dict__")


def _full_collections(work) -> int:  # noqa: ANN001 - a function of no arguments
    """How many collections of the oldest generation start while ``work`` runs."""
    started: list[int] = []

    def seen(phase: str, info: dict) -> None:
        if phase == "start" and info["generation"] == 2:
            started.append(1)

    gc.callbacks.append(seen)
    try:
        work()
    finally:
        gc.callbacks.remove(seen)
    return len(started)


def _grow_a_heap() -> list[list[int]]:
    """Two million small tracked objects kept: a heap that grows as a run's does."""
    return [[i] for i in range(2_000_000)]


def test_between_stages_the_whole_heap_is_collected_only_at_a_stages_end():
    """A heap growing by millions of objects makes CPython walk all of it again and again; inside
    ``full_collections_between_stages`` it never starts a full collection by itself, only
    ``end_of_stage`` does, and the collector's thresholds are as they were afterwards."""
    from postprocess.memory import end_of_stage, full_collections_between_stages

    gc.collect()
    before = gc.get_threshold()
    assert _full_collections(_grow_a_heap) > 0  # CPython's own thresholds
    with full_collections_between_stages():
        assert _full_collections(_grow_a_heap) == 0
        assert _full_collections(end_of_stage) == 1
    assert gc.get_threshold() == before


def test_a_run_collects_the_whole_heap_once_at_each_stages_end(tmp_path, monkeypatch):
    """``python -m postprocess run``: a full collection at the end of each of its stages, none
    started by CPython itself in between."""
    from crawlkit import SITE, SITE_LINKS, write_crawl

    from postprocess import cli

    crawl = write_crawl(tmp_path / "crawl", SITE, SITE_LINKS)
    ending = [False]
    started = {True: 0, False: 0}  # full collections started at a stage's end, and elsewhere
    real = cli.end_of_stage

    def end_of_stage() -> None:
        ending[0] = True
        try:
            real()
        finally:
            ending[0] = False

    def seen(phase: str, info: dict) -> None:
        if phase == "start" and info["generation"] == 2:
            started[ending[0]] += 1

    monkeypatch.setattr(cli, "end_of_stage", end_of_stage)
    gc.collect()
    gc.callbacks.append(seen)
    try:
        assert cli.main(["run", "--crawl", str(crawl), "--out", str(tmp_path / "out"), "--workers", "1"]) == 0
    finally:
        gc.callbacks.remove(seen)
    assert started == {True: len(cli.RUNNERS["run"]), False: 0}


@pytest.mark.skipif(not sys.platform.startswith("linux") or _trim() is None, reason="glibc's malloc_trim")
def test_the_anchor_finders_passes_hand_back_what_each_freed(tmp_path):
    """The finder's build hands back what each pass over the site freed before the next: its last
    steps (the names tabled, the links indexed: its largest transients) start with nothing freed
    and kept (a synthetic site of 4,000 pages kept ~21 MB there; 100k pages ~140, whose each pass
    kept 40–220)."""
    import subprocess

    from postprocess.stages.anchors import AnchorFinder
    from postprocess.stages.load import load_crawl

    root = Path(__file__).resolve().parents[1]
    subprocess.run([sys.executable, str(root / "benchmarks" / "synthetic_site.py"), "crawl",
                    "--pages", "4000", "--out", str(tmp_path / "crawl")], check=True, capture_output=True)
    crawl = load_crawl(tmp_path / "crawl")
    gc.collect()
    give_back()
    kept: list[float] = []

    def at_the_last_steps() -> None:
        before = resident_anon_mb()
        give_back()
        kept.append(before - resident_anon_mb())

    AnchorFinder(crawl, workers=1, before_last_steps=at_the_last_steps)
    assert kept and kept[0] < 1.5, kept


def resident_anon_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("RssAnon"):
            return int(line.split()[1]) / 1024
    raise AssertionError("no RssAnon")
