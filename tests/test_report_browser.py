"""report.html in headless Chromium: every chart and the queue table render, sorting, filtering and paging
work, and the page makes no network request (it is one self-contained file).

The report is rebuilt by ``python -m postprocess report`` from an output folder that holds only the
stage file anchored.parquet (no vectors, no model), beside a decisions database.
"""

from __future__ import annotations

import re
from datetime import timedelta
from pathlib import Path

import pytest
from crawlkit import SITE, SITE_LINKS, link, skip, url, write_crawl
from test_postprocess_cli import postprocess

from linkspider.settings import LINKSPIDER_CHROMIUM_PATH
from postprocess.apps.report import write_parquet
from postprocess.decisions.store import DecisionStore, default_path
from postprocess.stages.candidates import Suggestion

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not Path(LINKSPIDER_CHROMIUM_PATH).is_file(),
                       reason="chromium missing: run scripts/setup.sh"),
]

ROWS = 130
CHARTS = {"depth-content", "depth-all", "inbound", "proposed", "kinds", "langs", "statuses", "skipped",
          "trend", "decisions"}


def queue() -> list[Suggestion]:
    """ROWS rows between the SITE pages: confidence and score spread, every fifth a title anchor."""
    urls = [p["url"] for p in SITE]
    rows = []
    for i in range(ROWS):
        source, target = urls[i % len(urls)], urls[(i * 3 + 1) % len(urls)]
        if source == target:
            target = urls[(i + 1) % len(urls)]
        kind = "title" if i % 5 == 0 else "text"
        anchor = f"anchor {i}"
        context = "" if kind == "title" else f"Before the words {anchor} and after them."
        rows.append(Suggestion(source, target, round(2 - i / ROWS, 4), {"similarity": 0.5}, 1, anchor, kind,
                               context, "link", "", round(1 - i / (2 * ROWS), 4)))
    return rows


@pytest.fixture(scope="module")
def report(tmp_path_factory) -> tuple[Path, list[Suggestion]]:
    """A finished output folder for two crawls of SITE, and its report rebuilt by the CLI."""
    root = tmp_path_factory.mktemp("report")
    crawl, out = root / "crawl", root / "out"
    write_crawl(crawl, SITE, SITE_LINKS, [skip(url("/gone/"), "http_error", detail="404")])
    when = SITE[0]["fetched_at"] + timedelta(days=7)
    week = [dict(p, fetched_at=when, job="job2") for p in SITE]
    added = link(SITE[0]["url"], SITE[-1]["url"], fetched_at=when, job="job2")
    write_crawl(crawl, week, [dict(lk, fetched_at=when, job="job2") for lk in SITE_LINKS] + [added],
                part="job2-0001")
    rows = queue()
    write_parquet(out / "anchored.parquet", rows)
    store = DecisionStore(default_path(out))
    store.decide(rows[1].source_url, rows[1].target_url, "approved")
    store.decide(rows[2].source_url, rows[2].target_url, "rejected")
    result = postprocess("report", "--crawl", str(crawl), "--out", str(out))
    assert result.returncode == 0, result.stderr
    return out / "report.html", rows


@pytest.fixture(scope="module")
def browser():
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        chromium = p.chromium.launch(executable_path=LINKSPIDER_CHROMIUM_PATH, args=[
            "--no-sandbox", "--disable-background-networking", "--disable-component-update"])
        yield chromium
        chromium.close()


@pytest.fixture
def page(browser, report):
    """The report opened from its file; every request it makes is recorded, any but the file refused."""
    context = browser.new_context()
    tab = context.new_page()
    requests: list[str] = []
    tab.on("request", lambda r: requests.append(r.url))
    context.route("**/*", lambda route: route.continue_() if route.request.url.startswith("file://")
                  else route.abort())
    tab.goto(report[0].as_uri())
    tab.wait_for_selector("html[data-queue-ready]")
    tab.requests = requests
    yield tab
    context.close()


def status(tab) -> str:
    return tab.inner_text("#queue-status")


def column(tab, n: int) -> list[str]:
    return tab.eval_on_selector_all(f"#queue tbody tr td:nth-child({n})",
                                    "cells => cells.map(c => c.innerText)")


def test_the_page_requests_nothing_but_its_own_file(page, report):
    page.mouse.wheel(0, 20000)  # scroll through every chart
    page.click("#q-next")
    assert page.requests == [report[0].as_uri()]


def test_every_chart_is_a_drawn_svg(page):
    charts = page.eval_on_selector_all("figure.chart", """figs => figs.map(f => {
        const svg = f.querySelector('svg'); const box = svg ? svg.getBoundingClientRect() : null;
        return [f.dataset.chart, box ? box.width : 0, box ? box.height : 0,
                svg ? svg.querySelectorAll('path, rect, use, text').length : 0]; })""")
    assert {name for name, *_ in charts} == CHARTS
    for name, width, height, marks in charts:
        assert width > 200 and height > 80 and marks > 10, (name, width, height, marks)


def test_the_queue_table_renders_a_page_with_the_anchor_marked_in_its_sentence(page, report):
    rows = report[1]
    assert status(page) == f"rows 1–50 of {ROWS}"
    assert len(column(page, 1)) == 50
    best = max(rows, key=lambda r: (r.confidence, r.score))
    assert column(page, 3)[0].startswith(best.anchor)
    first_text = next(r for r in rows if r.anchor_type == "text")
    mark = page.inner_text(f"#queue tbody tr:nth-child({rows.index(first_text) + 1}) mark")
    assert mark == first_text.anchor


def test_sorting_by_a_column_and_back(page, report):
    page.click('th[data-sort="score"]')
    scores = [float(s) for s in column(page, 6)]
    assert scores == sorted(scores, reverse=True) and scores[0] == max(r.score for r in report[1])
    page.click('th[data-sort="score"]')
    scores = [float(s) for s in column(page, 6)]
    assert scores == sorted(scores) and scores[0] == pytest.approx(min(r.score for r in report[1]), abs=1e-3)
    assert page.get_attribute('th[data-sort="score"]', "aria-sort") == "ascending"
    page.click('th[data-sort="source"]')
    sources = [s.lower() for s in column(page, 1)]
    assert sources == sorted(sources)


def test_filters_by_target_anchor_type_and_confidence(page, report):
    rows = report[1]
    target = SITE[3]
    page.fill("#f-target", target["url"].split("/")[-2])
    expected = sum(r.target_url == target["url"] for r in rows)
    assert status(page).startswith(f"rows 1–{min(50, expected)} of {expected} (filtered")
    page.fill("#f-target", "")
    page.select_option("#f-type", "title")
    assert status(page).startswith(f"rows 1–26 of {sum(r.anchor_type == 'title' for r in rows)} ")
    assert all(a.endswith("(title)") for a in column(page, 3))
    page.select_option("#f-type", "")
    page.fill("#f-confidence", "0.9")
    expected = sum(r.confidence >= 0.9 for r in rows)
    assert re.match(rf"rows 1–\d+ of {expected} ", status(page))
    assert min(float(c) for c in column(page, 5)) >= 0.9
    page.fill("#f-confidence", "")
    page.fill("#f-source", "no such page anywhere")
    assert status(page) == "no row matches"


def test_paging_through_the_queue(page):
    first = column(page, 3)
    page.click("#q-next")
    assert status(page) == f"rows 51–100 of {ROWS}" and column(page, 3) != first
    page.click("#q-last")
    assert status(page) == f"rows 101–{ROWS} of {ROWS}" and page.is_disabled("#q-next")
    page.select_option("#f-size", "500")
    assert status(page) == f"rows 1–{ROWS} of {ROWS}" and page.is_disabled("#q-prev")
