"""A large crawl's links are read by a fresh second process while this one makes the pages: the same
crawl as read by one process, its columns mapped from files, its errors and skipped parts as they are."""

from __future__ import annotations

import mmap

import pytest
from crawlkit import SITE, SITE_LINKS, link, write_crawl

from postprocess.background import available_workers
from postprocess.errors import InputError
from postprocess.stages import load
from postprocess.stages.load import BadParts, load_crawl

pytestmark = pytest.mark.skipif(available_workers() < 2, reason="a second process needs a second core")


@pytest.fixture
def apart(monkeypatch):
    """Every crawl's links read by the second process; never by this one's ``_load_links``."""
    monkeypatch.setattr(load, "LINKS_APART_MIN_PAGES", 1)

    def here(*_: object) -> None:
        raise AssertionError("links read in this process")

    monkeypatch.setattr(load, "_load_links", here)


def in_a_file(array) -> bool:
    """Whether ``array``'s values are a file's mapped pages (``spill.mapped``), not this process's heap."""
    while array is not None and not isinstance(array, mmap.mmap):
        array = array.obj if isinstance(array, memoryview) else getattr(array, "base", None)
    return array is not None


def two_parts(tmp_path):
    crawl = write_crawl(tmp_path / "crawl", SITE, SITE_LINKS, part="job1-0001")
    extra = [link(SITE[i % len(SITE)]["url"], f"https://example.test/x{i}/", f"text {i}") for i in range(40)]
    write_crawl(crawl, [], extra, part="job1-0002")
    return crawl, crawl / "links" / "part-job1-0002.parquet"


def test_links_read_apart_are_the_links_read_here(tmp_path, monkeypatch):
    crawl, _ = two_parts(tmp_path)
    here = load_crawl(crawl)
    outline_here = load_crawl(crawl, outline=True)
    monkeypatch.setattr(load, "LINKS_APART_MIN_PAGES", 1)
    monkeypatch.setattr(load, "_load_links", lambda *_: pytest.fail("links read in this process"))
    there = load_crawl(crawl)
    assert [p.url for p in there.pages] == [p.url for p in here.pages]
    assert list(there.links) == list(here.links) and len(there.links) > 40
    assert there.links.urls == here.links.urls and there.links.anchors == here.links.anchors
    for column in ("source", "target", "anchor", "position", "nofollow", "internal"):
        assert in_a_file(getattr(here.links, column)) and in_a_file(getattr(there.links, column)), column
    assert list(load_crawl(crawl, outline=True).links) == list(outline_here.links)


def test_a_bad_links_part_read_apart_is_named_or_recorded(tmp_path, apart):
    crawl, part = two_parts(tmp_path)
    part.write_bytes(part.read_bytes()[:-30])  # the footer is gone
    with pytest.raises(InputError, match=r"cannot read .*part-job1-0002\.parquet.*--skip-bad-parts"):
        load_crawl(crawl)
    bad = BadParts()
    loaded = load_crawl(crawl, bad=bad)
    assert [path for path, _, _ in bad.parts] == [part]
    assert len(loaded.links) == len(SITE_LINKS)
