"""Crawl health and the trend over crawl jobs, on small crawls written with the linkspider schemas."""

from __future__ import annotations

import tracemalloc
from datetime import timedelta

from crawlkit import FETCHED, link, page, skip, url, write_crawl

from postprocess.apps.report.depth import click_depths
from postprocess.apps.report.graph import link_graph
from postprocess.apps.report.health import crawl_health, redirect_chains
from postprocess.apps.report.trend import crawl_trend
from postprocess.stages.load import load_crawl

HOME, GUIDE, TIPS, DEEP, MAP_ONLY = url("/"), url("/guide/"), url("/tips/"), url("/deep/"), url("/map-only/")


def health_crawl(directory):
    pages = [page(HOME, "Home", "welcome " * 300, depth=0, found_by="start"),
             page(GUIDE, "Guide", "guide " * 300),
             page(TIPS, "Astuces", "astuces " * 50, lang="fr", thin=True),
             page(DEEP, "Deep", "deep " * 300, noindex=True, depth=2, kind="listing"),
             page(MAP_ONLY, "Map only", "map " * 300, depth=None, found_by="sitemap")]
    links = [link(HOME, GUIDE), link(HOME, TIPS, position="nav"), link(GUIDE, DEEP)]
    skipped = [skip(url("/old/"), "redirect", url("/older/"), detail=f"301 to {url('/older/')}"),
               skip(url("/older/"), "redirect", GUIDE, detail=f"302 to {GUIDE}"),
               skip(url("/moved/"), "redirect", TIPS, detail=f"301 to {TIPS}"),
               skip(url("/missing/"), "http_error", from_url=GUIDE, detail="404"),
               skip(url("/broken/"), "http_error", from_url=GUIDE, detail="500"),
               *(skip(url(f"/blog/page/{n}/"), "pagination", from_url=HOME) for n in range(2, 9))]
    return write_crawl(directory, pages, links, skipped)


def test_health_counts_kinds_languages_statuses_and_lists_thin_noindex_pages(tmp_path):
    crawl = load_crawl(health_crawl(tmp_path))
    graph = link_graph(crawl)
    health = crawl_health(crawl, set(click_depths(graph.every, graph.start)))
    assert health.kinds == {"content": 4, "listing": 1}
    assert health.langs == {"en": 4, "fr": 1}
    assert health.thin == [TIPS] and health.noindex == [DEEP]
    assert health.statuses == {"200": 5, "301": 2, "302": 1, "404": 1, "500": 1}
    assert health.sitemap_only == [MAP_ONLY]


def test_skipped_urls_by_reason_with_a_few_examples_and_redirect_chains(tmp_path):
    crawl = load_crawl(health_crawl(tmp_path))
    health = crawl_health(crawl, set())
    reasons = {s.reason: s for s in health.skipped}
    assert [s.reason for s in health.skipped] == ["pagination", "redirect", "http_error"]  # most first
    assert reasons["pagination"].count == 7 and len(reasons["pagination"].examples) == 5
    assert reasons["http_error"].examples[0] == (url("/broken/"), GUIDE, "500")
    assert health.redirects == 3
    assert health.chains == [(url("/old/"), url("/older/"), GUIDE)]  # /moved/ is one hop: no chain
    assert health.to_json()["skipped"] == {"pagination": 7, "redirect": 3, "http_error": 2}


def test_redirect_chains_stop_at_a_loop():
    assert redirect_chains({"a": "b", "b": "c", "c": "d", "x": "y"}) == [("a", "b", "c", "d")]
    assert redirect_chains({"a": "b", "b": "c", "c": "b"}) == [("a", "b", "c")]


def test_a_crawl_directory_with_one_job_has_one_snapshot(tmp_path):
    snapshots = crawl_trend(str(health_crawl(tmp_path)))
    assert len(snapshots) == 1 and snapshots[0].pages == 5 and snapshots[0].links_added is None


def trend_crawl(directory):
    """job1: HOME -> GUIDE -> TIPS -> DEEP in running content. A week later job2 adds HOME -> DEEP, and a
    second worker of the same crawl (job2b, same hours) writes MAP_ONLY, linked from GUIDE."""
    week = timedelta(days=7)
    chain = [(HOME, GUIDE), (GUIDE, TIPS), (TIPS, DEEP)]
    depth = {HOME: 0, GUIDE: 1, TIPS: 2, DEEP: 3}
    write_crawl(directory, [page(u, u, "words " * 300, depth=d) for u, d in depth.items()],
                [link(s, t) for s, t in chain], part="job1-0001")
    at = {u: FETCHED + week + timedelta(minutes=20 * i) for i, u in enumerate(depth)}  # an hour long
    write_crawl(directory, [page(u, u, "words " * 300, depth=min(d, 1), fetched_at=at[u], job="job2")
                            for u, d in depth.items()],
                [link(s, t, fetched_at=at[s], job="job2") for s, t in [*chain, (HOME, DEEP)]],
                part="job2-0001")
    worker = dict(fetched_at=FETCHED + week + timedelta(minutes=50), job="job2b")  # GUIDE again, newer
    write_crawl(directory, [page(MAP_ONLY, "Map", "words " * 300, depth=2, **worker),
                            page(GUIDE, GUIDE, "words " * 300, depth=1, **worker)],
                [link(GUIDE, MAP_ONLY, **worker), link(GUIDE, TIPS, **worker)], part="job2b-0001")
    return directory


def test_trend_across_jobs_counts_links_added_and_the_depth_of_pages_that_gained_links(tmp_path):
    first, second = crawl_trend(str(trend_crawl(tmp_path)))
    assert first.jobs == ("job1",) and second.jobs == ("job2", "job2b")  # overlapping jobs: one crawl
    assert (first.pages, second.pages) == (4, 5)
    assert (first.orphans, second.orphans) == (0, 0)
    assert first.mean_depth == 1.5 and second.mean_depth == (0 + 1 + 2 + 1 + 2) / 5
    assert (second.links_added, second.links_removed) == (2, 0)  # HOME -> DEEP, GUIDE -> MAP_ONLY
    assert [(g.url, g.links_before, g.links_after, g.depth_before, g.depth_after) for g in second.gained] == [
        (DEEP, 1, 2, 3, 1)]
    figures = second.to_json()
    assert figures["pages_gaining_links"] == 1
    assert (figures["their_depth_before"], figures["their_depth_after"]) == (3, 1)


def test_a_job_with_a_few_changed_pages_is_laid_over_the_crawl_before_it(tmp_path):
    """A part written for two changed pages (one now also links DEEP) is not a crawl of two pages."""
    directory = trend_crawl(tmp_path)
    update = dict(fetched_at=FETCHED + timedelta(days=14), job="fix")
    write_crawl(directory, [page(GUIDE, GUIDE, "new words " * 300, depth=1, **update),
                            page(TIPS, TIPS, "new words " * 300, depth=2, **update)],
                [link(GUIDE, TIPS, **update), link(GUIDE, MAP_ONLY, **update), link(GUIDE, DEEP, **update),
                 link(TIPS, DEEP, **update)], part="fix-0001")
    *_, second, fix = crawl_trend(str(directory))
    assert fix.partial and not second.partial
    assert fix.pages == second.pages == 5
    assert (fix.links_added, fix.links_removed) == (1, 0)
    assert [(g.url, g.links_before, g.links_after) for g in fix.gained] == [(DEEP, 2, 3)]


def test_health_of_one_job_reads_that_jobs_rows(tmp_path):
    """``--job``: the sitemap-only pages and skipped URLs are that job's (the rows were all left out
    when the columns read did not include the job's)."""
    directory = health_crawl(tmp_path)
    later = dict(fetched_at=FETCHED + timedelta(days=7), job="job2")
    write_crawl(directory, [page(HOME, "Home", "welcome " * 300, depth=0, **later)], [],
                [skip(url("/gone/"), "http_error", from_url=HOME, detail="410", **later)], part="job2-0001")
    crawl = load_crawl(directory, "job1")
    graph = link_graph(crawl)
    health = crawl_health(crawl, set(click_depths(graph.every, graph.start)), "job1")
    assert health.sitemap_only == [MAP_ONLY]
    assert health.to_json()["skipped"] == {"pagination": 7, "redirect": 3, "http_error": 2}


def test_the_trend_holds_columns_not_a_python_row_per_link(tmp_path):
    """Two weekly crawls of 200 pages and 20,000 links each: each snapshot is read by the loader as
    columns, not as a dictionary per link row (~1 KB a link, 10k synthetic pages: 1.5 GB)."""
    pages = [url(f"/p{i}/") for i in range(200)]
    links = [(s, pages[(i + k) % 200]) for i, s in enumerate(pages) for k in range(1, 101)]
    for week in range(2):
        when = dict(fetched_at=FETCHED + timedelta(days=7 * week), job=f"week{week}")
        rows = [page(u, u, "words " * 20, depth=min(i, 1), **when) for i, u in enumerate(pages)]
        write_crawl(tmp_path, rows, [link(s, t, **when) for s, t in links[:len(links) - 500 * week]],
                    part=f"week{week}-0001")
    tracemalloc.start()
    try:
        first, second = crawl_trend(str(tmp_path))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert (first.content_links, second.content_links) == (20_000, 19_500)
    assert (second.links_added, second.links_removed) == (0, 500)
    assert peak < 150 * 2 * len(links), peak  # ~70 bytes a link row now, ~650 before
