"""Pure parts of the crawl stage: header and content-type rules, URL policy from settings, rows."""

from __future__ import annotations

import re
from datetime import UTC, datetime
from types import SimpleNamespace

import pytest
from scrapy.settings import Settings

from linkspider import settings as project_settings
from linkspider.arguments import ArgumentError
from linkspider.extract import OutLink, PageContent
from linkspider.items import CrawledPage
from linkspider.pipelines import page_rows
from linkspider.spiders.site import (
    SiteSpider,
    is_html,
    new_job_id,
    robots_directives,
    skip_in_browser,
    url_policy,
)
from linkspider.urls import canonical_url


@pytest.mark.parametrize(
    ("content_type", "expected"),
    [
        ("text/html", True),
        ("text/html; charset=utf-8", True),
        ("TEXT/HTML;charset=ISO-8859-1", True),
        ("application/xhtml+xml", True),
        ("application/pdf", False),
        ("text/plain", False),
        ("image/svg+xml", False),
        ("application/json", False),
        ("text/htmlx", False),
    ],
)
def test_is_html(content_type: str, expected: bool) -> None:
    assert is_html(content_type) is expected


@pytest.mark.parametrize(
    ("headers", "expected"),
    [
        ([], set()),
        ([b"noindex"], {"noindex"}),
        ([b"noindex, nofollow"], {"noindex", "nofollow"}),
        ([b"NONE"], {"none"}),
        ([b"googlebot: noindex"], set()),  # for one named bot only
        ([b"noarchive", b"nofollow"], {"noarchive", "nofollow"}),
    ],
)
def test_robots_directives(headers: list[bytes], expected: set[str]) -> None:
    assert robots_directives(headers) == expected


@pytest.mark.parametrize(("resource_type", "skipped"), [("image", True), ("font", True), ("media", True),
                                                         ("script", False), ("document", False)])
def test_skip_in_browser(resource_type: str, skipped: bool) -> None:
    assert skip_in_browser(SimpleNamespace(resource_type=resource_type)) is skipped


def test_job_ids_are_unique_and_file_safe() -> None:
    ids = {new_job_id() for _ in range(20)}
    assert len(ids) == 20
    assert all(re.fullmatch(r"\d{8}T\d{6}Z-[0-9a-f]{6}", i) for i in ids)


def settings(**values: object) -> Settings:
    s = Settings()
    s.setmodule(project_settings)
    s.setdict(values, priority="cmdline")
    return s


def test_url_policy_from_settings() -> None:
    policy = url_policy(settings(LINKSPIDER_KEEP_PARAMS="lang", LINKSPIDER_INDEX_PAGES=["index.html"]))
    assert policy.keep_params == frozenset({"lang"})
    assert canonical_url("https://example.com/docs/index.html", policy) == "https://example.com/docs/"
    # a page named default.html is a page of its own unless configured (the Django docs have one)
    assert canonical_url("https://example.com/a/default.html", policy) == "https://example.com/a/default.html"


@pytest.mark.parametrize(
    ("values", "message"),
    [
        ({"LINKSPIDER_TRAILING_SLASH": "both"}, "bad URL policy setting"),
        ({"LINKSPIDER_PAGINATION_PATTERNS": ["(unclosed"]}, "bad URL policy setting"),
        ({"LINKSPIDER_CHROMIUM_PATH": "/nonexistent/chromium"}, "render=all needs Chromium"),
    ],
)
def test_check_arguments_rejects_bad_settings(values: dict[str, object], message: str) -> None:
    with pytest.raises(ArgumentError, match=re.escape(message)):
        SiteSpider.check_arguments({"start": "https://example.com/", "render": "1"}, settings(**values))


def crawled(words: int, targets: list[str | None]) -> CrawledPage:
    links = [OutLink(url=t or "mailto:x@example.com", anchor_text=f"a{i}", position="content")
             for i, t in enumerate(targets)]
    text = " ".join(["word"] * words)
    return CrawledPage(
        url="https://example.com/",
        fetched_url="https://example.com/",
        status=200,
        content=PageContent(title="T", text=text, word_count=words, links=links),
        targets=targets,
        internal=[t is not None and t.startswith("https://example.com/") for t in targets],
        depth=0,
        found_by="start",
        fetched_at=datetime(2026, 1, 1, tzinfo=UTC),
    )


@pytest.mark.parametrize(("words", "thin"), [(0, True), (199, True), (200, False), (1000, False)])
def test_thin_flag(words: int, thin: bool) -> None:
    assert page_rows(crawled(words, []), thin_words=200).page["thin"] is thin


def test_link_rows() -> None:
    rows = page_rows(crawled(10, ["https://example.com/a/", None, "https://other.example/"]), thin_words=200)
    assert [(r["target_url"], r["internal"], r["anchor_text"]) for r in rows.links] == [
        ("https://example.com/a/", True, "a0"),
        ("https://other.example/", False, "a2"),
    ]
    assert rows.page["content_hash"] and rows.page["found_by"] == "start"
