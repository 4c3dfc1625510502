"""The ``wordpress`` spider: read a WordPress site's posts and pages through its REST API.

``scrapy crawl wordpress -a api=https://example.com/wp-json/ [-a out=DIR] [-a since=ISO8601]
[-a incremental=0|1] [-a job=ID]``, or ``-a site=https://example.com/`` to find the API root in
the home page's ``Link: <…>; rel="https://api.w.org/"`` header.

Writes the same crawl dataset as the ``site`` spider (same pipelines and schema): one ``pages`` row
per published post and page — the permalink (canonical) as url, the title, the rendered content as
main text and blocks, published and modified dates, categories and tags, the site's language, kind
``content``, ``found_by`` ``api`` — and the ``links`` of its content (position ``content``). Each
collection is read 100 posts a request, all pages of ``X-WP-TotalPages``. ``since`` (or, with
``incremental=1``, the newest ``modified`` of the previous job in ``out``) asks only for posts
modified after it (``modified_after``): the crawl directory's loader keeps the newest row per URL,
so the new job's rows replace the changed posts' old ones.

A site that cannot be reached, has no REST API (no Link header, HTTP 404, not JSON) or has it
switched off (``rest_disabled`` and other REST errors) ends the crawl with one line and exit 1
(``start_failure``), before anything is written.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from scrapy import Request, Spider
from scrapy.http import HtmlResponse

from linkspider.arguments import ArgumentError
from linkspider.extract import extract_page
from linkspider.items import CrawledPage
from linkspider.parquet import part_files, read_part
from linkspider.previous import newest_job
from linkspider.spiders.site import new_job_id, url_policy, why_failed
from linkspider.urls import UrlPolicy, canonical_url, same_origin
from linkspider.wordpress import (
    COLLECTIONS,
    WordPressArguments,
    api_root_from_links,
    json_body,
    list_params,
    parse_wordpress_arguments,
    post_document,
    rest_error,
    route_url,
    terms,
    utc_timestamp,
)

if TYPE_CHECKING:
    from scrapy.crawler import Crawler
    from scrapy.http import Response
    from scrapy.settings import BaseSettings
    from twisted.python.failure import Failure

logger = logging.getLogger(__name__)

_JSON = {"Accept": "application/json"}


def previous_newest_modified(out: str, current_job: str) -> str | None:
    """The newest ``modified`` of the previous job's pages under ``out`` (UTC), or None."""
    job = newest_job(Path(out), current_job)
    if job is None:
        return None
    newest: datetime | None = None
    for path in part_files(Path(out) / "pages"):
        table = read_part(path, ["job", "modified"])
        if table is None or "modified" not in table.column_names:
            continue
        for row_job, value in zip(table["job"].to_pylist(), table["modified"].to_pylist(), strict=True):
            if row_job != job or not value:
                continue
            try:
                when = datetime.fromisoformat(value.replace("Z", "+00:00"))
            except ValueError:
                continue
            when = when if when.tzinfo else when.replace(tzinfo=UTC)
            newest = when if newest is None or when > newest else newest
    return utc_timestamp(newest) if newest is not None else None


class WordPressSpider(Spider):
    """Read the posts and pages of a WordPress site through its REST API."""

    name = "wordpress"

    @classmethod
    def check_arguments(cls, spargs: dict[str, Any], settings: BaseSettings) -> WordPressArguments:
        """Validated arguments, defaults from settings; raises ArgumentError (one line)."""
        arguments = parse_wordpress_arguments(
            spargs,
            default_out=settings.get("LINKSPIDER_OUTPUT") or "data/crawl",
            default_incremental=settings.getbool("LINKSPIDER_INCREMENTAL"),
        )
        try:
            url_policy(settings)
        except ValueError as exc:
            raise ArgumentError(f"bad URL policy setting: {exc}") from None
        return arguments

    @classmethod
    def from_crawler(cls, crawler: Crawler, *args: Any, **kwargs: Any) -> WordPressSpider:
        arguments = cls.check_arguments(kwargs, crawler.settings)
        crawler.settings.set("LINKSPIDER_OUTPUT", arguments.out, priority="cmdline")
        spider = cls(arguments, url_policy(crawler.settings))
        spider._set_crawler(crawler)
        return spider

    def __init__(self, arguments: WordPressArguments, policy: UrlPolicy) -> None:
        super().__init__()
        self.arguments = arguments
        self.policy = policy
        self.job = arguments.job or new_job_id()
        self.api = arguments.api  # the REST API root, once known
        self.home: str | None = None  # the site's home URL (from the API index)
        self.lang: str | None = None  # from the home page's <html lang>
        self.since = arguments.since
        self.start_failure: str | None = None  # why the site could not be read, if it could not
        self.incomplete: str | None = None  # why some posts could not be read (a later listing page)

    # --- discovery --------------------------------------------------------------

    async def start(self) -> AsyncIterator[Any]:
        if self.since is None and self.arguments.incremental:
            self.since = previous_newest_modified(self.arguments.out, self.job)
            logger.info("linkspider: incremental: posts modified after %s", self.since or "(no earlier job)")
        logger.info("linkspider: reading WordPress %s, job %s", self.api or self.arguments.site, self.job)
        if self.api is None:
            assert self.arguments.site is not None
            yield Request(self.arguments.site, callback=self.parse_site, errback=self.failed,
                          cb_kwargs={"what": "the site"}, dont_filter=True)
        else:
            yield self.index_request()

    def index_request(self) -> Request:
        assert self.api is not None
        return Request(self.api, callback=self.parse_index, errback=self.failed, headers=_JSON,
                       cb_kwargs={"what": "the REST API root"}, dont_filter=True)

    def parse_site(self, response: Response, what: str) -> Iterator[Any]:
        """The home page: the API root from its Link header, the language from <html lang>."""
        if response.status >= 400:
            self.start_failure = f"the site {response.url} answered HTTP {response.status}"
            return
        root = api_root_from_links(response.headers.getlist(b"Link"))
        if root is None:
            self.start_failure = (f"no WordPress REST API at {response.url}: its home page has no "
                                  'Link: <…>; rel="https://api.w.org/" header')
            return
        self.api = response.urljoin(root)
        self.lang = self.page_lang(response)
        yield self.index_request()

    def parse_index(self, response: Response, what: str) -> Iterator[Any]:
        """The API root's index: a WordPress REST API with wp/v2, and the site's home URL."""
        problem = self.rest_problem(response, what)
        if problem:
            self.start_failure = problem
            return
        index = json_body(response.body)
        if not isinstance(index, dict) or "wp/v2" not in (index.get("namespaces") or []):
            self.start_failure = f"{response.url} is not a WordPress REST API (no wp/v2 namespace)"
            return
        self.home = str(index.get("home") or index.get("url") or response.url)
        if self.lang is None and self.arguments.site is None:
            yield Request(self.home, callback=self.parse_home_lang, errback=self.home_failed,
                          dont_filter=True)
            return
        yield from self.first_pages()

    def parse_home_lang(self, response: Response) -> Iterator[Request]:
        self.lang = self.page_lang(response) if response.status < 400 else None
        yield from self.first_pages()

    def home_failed(self, failure: Failure) -> Iterator[Request]:
        logger.info("linkspider: home page not read (%s): language from the text", why_failed(failure))
        yield from self.first_pages()

    @staticmethod
    def page_lang(response: Response) -> str | None:
        if not isinstance(response, HtmlResponse):
            return None
        lang = (response.xpath("/html/@lang").get() or "").strip()
        return lang or None

    # --- the collections ------------------------------------------------------------

    def first_pages(self) -> Iterator[Request]:
        for collection in COLLECTIONS:
            yield self.list_request(collection, 1)

    def list_request(self, collection: str, page: int) -> Request:
        assert self.api is not None
        url = route_url(self.api, collection, list_params(page, self.since))
        what = f"{collection} page {page}"
        return Request(url, callback=self.parse_list, errback=self.failed, headers=_JSON,
                       cb_kwargs={"collection": collection, "page": page, "what": what})

    def parse_list(self, response: Response, collection: str, page: int, what: str) -> Iterator[Any]:
        """One page of up to 100 posts: a CrawledPage each; page 1 schedules the others."""
        problem = self.rest_problem(response, what)
        if problem:
            if page == 1:
                self.start_failure = problem
            else:
                self.incomplete = self.incomplete or problem
            logger.error("linkspider: %s", problem)
            return
        posts = json_body(response.body)
        if not isinstance(posts, list):
            self.start_failure = f"{response.url} did not answer a list of posts"
            return
        if page == 1:
            total = int(response.headers.get(b"X-WP-TotalPages", b"1") or 1)
            self.crawler.stats.set_value(f"linkspider/wordpress/{collection.rsplit('/', 1)[1]}",
                                         int(response.headers.get(b"X-WP-Total", b"0") or 0))
            for number in range(2, total + 1):
                yield self.list_request(collection, number)
        for post in posts:
            item = self.post_page(post, response)
            if item is not None:
                yield item

    def post_page(self, post: dict[str, Any], response: Response) -> CrawledPage | None:
        """One post or page as the ``site`` spider's CrawledPage (extracted from its rendered HTML)."""
        link = post.get("link")
        if not isinstance(link, str) or not link.startswith(("http://", "https://")):
            return None
        url = canonical_url(link, self.policy)
        content = extract_page(post_document(post, self.lang), link)
        content.kind = "content"
        for out in content.links:
            out.position = "content"
        targets = [canonical_url(out.url, self.policy) for out in content.links]
        home = self.home or url
        self_links = (post.get("_links") or {}).get("self") or [{}]
        return CrawledPage(
            url=url,
            fetched_url=str(self_links[0].get("href") or response.url),
            status=200,
            content=content,
            targets=targets,
            internal=[same_origin(t, home) for t in targets],
            depth=None,
            found_by="api",
            fetched_at=datetime.now(UTC),
            categories=terms(post, "category"),
            tags=terms(post, "post_tag"),
        )

    # --- failures ---------------------------------------------------------------------

    def rest_problem(self, response: Response, what: str) -> str | None:
        """Why a REST answer is not usable, in one line, or None."""
        error = rest_error(response.body)
        if response.status >= 400 or (error and response.status != 200):
            if error and error[0] in ("rest_disabled", "rest_not_logged_in", "rest_cannot_access",
                                      "rest_forbidden", "rest_login_required"):
                return f"the REST API at {self.api} is switched off ({error[0]}: {error[1]})"
            if error and error[0] == "rest_invalid_param":
                return f"the REST API refused {what}: {error[1]}"
            if error:
                return f"{what} at {response.url} answered HTTP {response.status} ({error[0]}: {error[1]})"
            return f"no WordPress REST API at {response.url} (HTTP {response.status})"
        if json_body(response.body) is None:
            return f"no WordPress REST API at {response.url} (the answer is not JSON)"
        return None

    def failed(self, failure: Failure) -> None:
        request = failure.request  # type: ignore[attr-defined]
        what = request.cb_kwargs.get("what", request.url)
        problem = f"{what} ({request.url}) could not be fetched: {why_failed(failure)}"
        logger.error("linkspider: %s", problem)
        if request.cb_kwargs.get("page", 1) > 1:
            self.incomplete = self.incomplete or problem
        elif self.start_failure is None:
            self.start_failure = problem
