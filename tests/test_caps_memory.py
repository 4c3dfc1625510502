"""What the caps' sort, the rank stage's largest step, runs beside: not the evidence or the filters,
which only the ranking reads (together ~1.1 GB at a million pages)."""

from __future__ import annotations

import contextlib
import gc
import weakref

import pytest

from postprocess import cli
from postprocess.stages import candidates, lexical


@pytest.fixture
def alive_at_caps(monkeypatch):
    """For each call of the caps' sort in this process: whether a site evidence (``SiteEvidence``)
    and a ``PairFilter`` made in this run are still alive (after a full collection)."""
    made: dict[str, list[weakref.ref]] = {"evidence": [], "filters": []}
    seen: list[dict[str, bool]] = []
    for name, cls in (("evidence", lexical.SiteEvidence), ("filters", candidates.PairFilter)):
        def init(self, *args, _init=cls.__init__, _name=name, **kwargs):  # noqa: ANN001, ANN002, ANN003, ANN202
            made[_name].append(weakref.ref(self))
            _init(self, *args, **kwargs)
        monkeypatch.setattr(cls, "__init__", init)
    capped = candidates._PairColumns.capped

    def noted(self, *args):  # noqa: ANN001, ANN202 - the caps' sort, what is alive noted
        gc.collect()
        seen.append({name: any(ref() is not None for ref in refs) for name, refs in made.items()})
        return capped(self, *args)

    monkeypatch.setattr(candidates._PairColumns, "capped", noted)
    return seen


@pytest.mark.slow
def test_a_run_sorts_the_caps_without_the_evidence_and_filters(tmp_path, alive_at_caps):
    """Two processes (the confidence model learned beside the ranking, with its own copy of the
    evidence): the run's process lets the evidence go before the caps, not after."""
    from crawlkit import SITE, SITE_LINKS, write_crawl

    crawl = write_crawl(tmp_path / "crawl", SITE, SITE_LINKS)
    assert cli.main(["run", "--crawl", str(crawl), "--out", str(tmp_path / "out"), "--workers", "2"]) == 0
    assert alive_at_caps == [{"evidence": False, "filters": False}]


@pytest.mark.slow
def test_one_process_keeps_the_evidence_for_its_confidence_model(tmp_path, alive_at_caps):
    """One process learns the confidence model after the anchors, from the same evidence: it stays."""
    from crawlkit import SITE, SITE_LINKS, write_crawl

    crawl = write_crawl(tmp_path / "crawl", SITE, SITE_LINKS)
    assert cli.main(["run", "--crawl", str(crawl), "--out", str(tmp_path / "out"), "--workers", "1"]) == 0
    assert alive_at_caps[0] == {"evidence": True, "filters": False}


@pytest.mark.slow
def test_a_large_site_ranks_without_the_finders_tables(tmp_path, monkeypatch):
    """A site that learns its confidence model in the run's process (past ``LEARN_BESIDE_MAX_PAGES``)
    ranks — each confidence fold and the site — with the anchor finder's tables in a file, not in
    memory, and its queue is the one a run that keeps them makes."""
    from crawlkit import write_linked_ring

    from postprocess import pipeline
    from postprocess.stages import anchors, confidence

    made: list[weakref.ref] = []
    held: list[bool] = []

    def init(self, *args, _init=anchors.AnchorFinder.__init__, **kwargs):  # noqa: ANN001, ANN002, ANN003, ANN202
        made.append(weakref.ref(self))
        _init(self, *args, **kwargs)

    capped = candidates._PairColumns.capped

    def noted(self, *args):  # noqa: ANN001, ANN202 - the caps' sort, whether a finder holds its tables
        finders = [ref() for ref in made if ref() is not None]
        held.append(any(name in f.__dict__ for f in finders for name in anchors.AnchorFinder.TABLES))
        return capped(self, *args)

    crawl = write_linked_ring(tmp_path / "crawl")  # links enough for the folds
    monkeypatch.setattr(pipeline, "LEARN_BESIDE_MAX_PAGES", 0)
    monkeypatch.setattr(anchors.AnchorFinder, "__init__", init)
    monkeypatch.setattr(candidates._PairColumns, "capped", noted)
    assert cli.main(["run", "--crawl", str(crawl), "--out", str(tmp_path / "aside"), "--workers", "2"]) == 0
    assert made and len(held) == confidence.FOLDS + 1 and not any(held)  # each fold's ranking, the site's
    monkeypatch.setattr(anchors.AnchorFinder, "tables_aside", lambda self: contextlib.nullcontext())
    assert cli.main(["run", "--crawl", str(crawl), "--out", str(tmp_path / "kept"), "--workers", "2"]) == 0
    for name in ("suggestions.csv", "anchored.parquet", "candidates.parquet", "confidence.json"):
        assert (tmp_path / "aside" / name).read_bytes() == (tmp_path / "kept" / name).read_bytes(), name
