"""The ``site`` spider: crawl one site breadth-first and record its pages, links and skips.

``scrapy crawl site -a start=URL [-a out=DIR] [-a max_pages=N] [-a scope=host|path]
[-a render=0|1|auto] [-a incremental=0|1] [-a job=ID]``

- Requests are made for canonical URLs (``urls.canonical_url``); parameter and
  pagination URLs are recorded in ``skipped`` once and never fetched.
- Scope is the start URL's origin (scheme, host, port), or its path with
  ``scope=path``; ``allowed_domains`` is not used (it ignores ports).
- Redirects are handled here, not by Scrapy's middleware, so that the old URL is
  recorded as a ``redirect`` alias of the new one and the new one is fetched
  once, through the dupefilter, like any other URL. Redirects to another host
  are recorded as ``offsite`` and not followed.
- A page declaring another canonical URL is recorded as ``canonicalised``, its
  links are followed and the canonical URL is scheduled.
- When the link crawl drains, robots.txt Sitemap lines and /sitemap.xml seed
  the pages no link reached (``found_by='sitemap'``, ``depth`` null).
- ``incremental=1`` (a scheduled recrawl into the same ``out``): the newest earlier job
  there (``linkspider.previous``) gives each request ``If-None-Match`` /
  ``If-Modified-Since``; a 304 page is not parsed, its previous links are followed
  and its previous rows are carried into the new job when the crawl closes. The
  sitemap is read first, and entries whose ``lastmod`` is newer than the previous
  fetch (or that are new) are fetched before the rest.
"""

from __future__ import annotations

import logging
import secrets
from collections.abc import AsyncIterator, Iterable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from scrapy import Request, Spider, signals
from scrapy.exceptions import (
    CloseSpider,
    DontCloseSpider,
    DownloadCancelledError,
    IgnoreRequest,
    StopDownload,
)
from scrapy.http import HtmlResponse
from scrapy.utils.gz import gunzip
from scrapy.utils.sitemap import Sitemap, sitemap_urls_from_robots
from twisted.internet.defer import CancelledError
from w3lib.html import get_meta_refresh

from linkspider.arguments import ArgumentError, CrawlArguments, parse_arguments
from linkspider.extract import content_hash, extract_page
from linkspider.items import CarriedPage, CrawledPage, SkipRecord
from linkspider.previous import PreviousCrawl
from linkspider.recovery import RUNNING_MARKER, killed_before, stored_job
from linkspider.rendering import PLAIN_DOCUMENT, RENDER_FAILED, RenderPolicy
from linkspider.traps import RepeatingPatterns
from linkspider.urls import (
    INDEX_PAGES,
    UrlPolicy,
    canonical_url,
    in_scope,
    same_origin,
    skip_reason,
    trap_reason,
)

if TYPE_CHECKING:
    from scrapy.crawler import Crawler
    from scrapy.http import Response
    from scrapy.settings import BaseSettings
    from twisted.python.failure import Failure

    from linkspider.extract import PageContent

logger = logging.getLogger(__name__)

META = "linkspider"  # request.meta key of the spider's own bookkeeping
#: By name, so that render requests stay serialisable in a JOBDIR queue.
SERVE_PLAIN_DOCUMENT = "linkspider.rendering.serve_plain_document"
PLAYWRIGHT_HANDLER = "scrapy_playwright.handler.ScrapyPlaywrightDownloadHandler"
CHROMIUM_ARGS = ["--no-sandbox", "--disable-background-networking", "--disable-component-update"]
MAX_SITEMAPS_FIRST = 50  # sitemaps an incremental crawl reads before it starts (index + children)
MAX_SPELLING_HOPS = 2  # redirects between spellings of one canonical URL before giving up
_HTML_TYPES = ("text/html", "application/xhtml+xml")


def url_policy(settings: BaseSettings) -> UrlPolicy:
    """The URL policy from the LINKSPIDER_* settings."""
    return UrlPolicy(
        keep_params=frozenset(settings.getlist("LINKSPIDER_KEEP_PARAMS")),
        tracking_params=frozenset(settings.getlist("LINKSPIDER_TRACKING_PARAMS")),
        pagination_patterns=tuple(settings.getlist("LINKSPIDER_PAGINATION_PATTERNS")),
        trailing_slash=settings.get("LINKSPIDER_TRAILING_SLASH"),
        index_pages=frozenset(settings.getlist("LINKSPIDER_INDEX_PAGES", sorted(INDEX_PAGES))),
        trap_repeats=settings.getint("LINKSPIDER_TRAP_REPEATS", 3),
        trap_max_path=settings.getint("LINKSPIDER_TRAP_MAX_PATH", 400),
        trap_max_query=settings.getint("LINKSPIDER_TRAP_MAX_QUERY", 300),
        trap_max_segments=settings.getint("LINKSPIDER_TRAP_MAX_SEGMENTS", 25),
    )


def robots_directives(values: Iterable[bytes]) -> set[str]:
    """Directives of X-Robots-Tag headers that apply to every crawler (``googlebot: …`` ignored)."""
    directives: set[str] = set()
    for raw in values:
        value = raw.decode("latin-1").strip().lower()
        head, sep, rest = value.partition(":")
        if sep and "," not in head and head.strip() not in ("unavailable_after",):
            continue  # addressed to one named bot
        directives.update(part.strip() for part in value.split(","))
    return directives


def skip_in_browser(request: Any) -> bool:
    """Playwright: do not load images, media and fonts while rendering (links need none)."""
    return request.resource_type in ("image", "media", "font")


class BrowserRequests:
    """What the browser may load while rendering: the site's own documents, scripts and data —
    never images, media or fonts, and nothing from another host (trackers, ads, CDNs' beacons)."""

    def __init__(self, spider: SiteSpider) -> None:
        self.spider = spider

    def __call__(self, request: Any) -> bool:
        """True: abort this request."""
        if skip_in_browser(request):
            return True
        aborted = not same_origin(request.url, self.spider.start_url)
        if aborted and self.spider.crawler is not None:
            self.spider.crawler.stats.inc_value("linkspider/browser_offsite_aborted")
        return aborted


def new_job_id() -> str:
    """A job id for a crawl started without one: UTC time and a random suffix."""
    return datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ") + "-" + secrets.token_hex(3)


def _header(response: Response, name: bytes) -> str | None:
    value = response.headers.get(name)
    return value.decode("latin-1") if value else None


def why_failed(failure: Failure) -> str:
    """A download failure in a few words: DNS, refused, timed out, TLS, robots.txt, or the error."""
    value = failure.value
    text = str(value)
    names = " ".join(type(e).__name__ for e in (value, value.__cause__) if e is not None)
    if failure.check(IgnoreRequest) and "robots.txt" in text:
        return "robots.txt disallows it"
    if "DNSLookup" in names or "No address" in text or "not known" in text:
        return "DNS lookup failed (no such host)"
    if "ConnectionRefused" in names:
        return "connection refused (nothing listens on that port)"
    if "Timeout" in names or "TimedOut" in names:
        return "timed out"
    if "SSL" in names or "TLS" in names or "SSL" in text or "certificate" in text.lower():
        return f"TLS error ({text[:120]})"
    return f"{type(value).__name__}: {text[:160]}"


def is_html(content_type: str) -> bool:
    """True for an HTML or XHTML Content-Type header value."""
    return content_type.split(";", 1)[0].strip().lower() in _HTML_TYPES


class SiteSpider(Spider):
    """Crawl the site of ``-a start=URL`` and record pages, links and skipped URLs."""

    name = "site"

    @classmethod
    def check_arguments(cls, spargs: dict[str, Any], settings: BaseSettings) -> CrawlArguments:
        """Validated arguments, defaults from settings; raises ArgumentError (one line)."""
        arguments = parse_arguments(
            spargs,
            default_out=settings.get("LINKSPIDER_OUTPUT") or "data/crawl",
            default_max_pages=settings.getint("LINKSPIDER_MAX_PAGES"),
            default_scope=settings.get("LINKSPIDER_SCOPE") or "host",
            default_render=settings.get("LINKSPIDER_RENDER_JS") or False,
            default_incremental=settings.getbool("LINKSPIDER_INCREMENTAL"),
        )
        try:
            url_policy(settings)
        except ValueError as exc:
            raise ArgumentError(f"bad URL policy setting: {exc}") from None
        chromium = settings.get("LINKSPIDER_CHROMIUM_PATH")
        if arguments.render != "off" and not Path(chromium).is_file():
            raise ArgumentError(
                f"render={arguments.render} needs Chromium at {chromium} "
                "(install it or set LINKSPIDER_CHROMIUM_PATH)"
            )
        return arguments

    @classmethod
    def from_crawler(cls, crawler: Crawler, *args: Any, **kwargs: Any) -> SiteSpider:
        arguments = cls.check_arguments(kwargs, crawler.settings)
        settings = crawler.settings
        settings.set("LINKSPIDER_OUTPUT", arguments.out, priority="cmdline")
        settings.set("LINKSPIDER_MAX_PAGES", arguments.max_pages, priority="cmdline")
        if arguments.render != "off":
            handlers = {"http": PLAYWRIGHT_HANDLER, "https": PLAYWRIGHT_HANDLER}
            settings.set("DOWNLOAD_HANDLERS", handlers, priority="spider")
            settings.set(
                "PLAYWRIGHT_LAUNCH_OPTIONS",
                {
                    "executable_path": settings.get("LINKSPIDER_CHROMIUM_PATH"),
                    "args": CHROMIUM_ARGS,
                    "headless": True,
                },
                priority="spider",
            )
            settings.set("PLAYWRIGHT_BROWSER_TYPE", "chromium", priority="spider")
            settings.set("PLAYWRIGHT_DEFAULT_NAVIGATION_TIMEOUT",
                         1000 * settings.getfloat("DOWNLOAD_TIMEOUT", 30), priority="spider")
        # DEPTH_LIMIT counts clicks from the start page, enforced here: Scrapy's own
        # depth also counts redirect hops and render=1's second request.
        depth_limit = settings.getint("DEPTH_LIMIT")
        settings.set("DEPTH_LIMIT", 0, priority=100)
        spider = cls(arguments, url_policy(settings), settings.getbool("LINKSPIDER_SITEMAPS"), depth_limit)
        spider._set_crawler(crawler)
        spider.recovering = killed_before(settings.get("JOBDIR"))  # before Scrapy opens the queue
        spider.repeating = RepeatingPatterns(settings.getint("LINKSPIDER_TRAP_PATTERN_PAGES", 20))
        spider.render_policy = RenderPolicy(share=settings.getfloat("LINKSPIDER_RENDER_AUTO_SHARE"),
                                            min_words=settings.getint("LINKSPIDER_RENDER_AUTO_MIN_WORDS"))
        if arguments.render != "off":
            settings.set("PLAYWRIGHT_ABORT_REQUEST", BrowserRequests(spider), priority="spider")
        if settings.getbool("METAREFRESH_ENABLED", True):
            spider.meta_refresh_maxdelay = settings.getfloat("METAREFRESH_MAXDELAY", 100)
        crawler.signals.connect(spider.on_idle, signal=signals.spider_idle)
        crawler.signals.connect(spider.on_headers, signal=signals.headers_received)
        return spider

    def __init__(
        self, arguments: CrawlArguments, policy: UrlPolicy, sitemaps: bool = True, depth_limit: int = 0
    ) -> None:
        # Spider arguments are not set as attributes: ``start`` would hide start().
        super().__init__()
        self.arguments = arguments
        self.policy = policy
        self.sitemaps = sitemaps
        self.start_url = canonical_url(arguments.start, policy)
        self.scope = arguments.scope
        self.max_pages = arguments.max_pages
        self.render = arguments.render  # off | all | auto
        self.render_policy = RenderPolicy()  # render=auto: which pages need the browser
        self.depth_limit = depth_limit  # clicks from the start page; 0 = no limit
        self.seen: set[str] = set()  # URLs scheduled by this process (the dupefilter has the rest)
        self._job: str | None = arguments.job
        self._restored = False
        self.skipped_seen: set[str] = set()  # URLs recorded in skipped before fetching
        self.page_count = 0  # pages recorded (persisted across resumes)
        self.sitemaps_seeded = False
        self.meta_refresh_maxdelay: float | None = None  # seconds; None = meta refresh ignored
        self.previous: PreviousCrawl | None = None  # the earlier job an incremental crawl builds on
        self.start_failure: str | None = None  # why the start URL could not be fetched, if it could not
        self.texts_seen: dict[str, tuple[str, int]] = {}  # main-text hash -> (first segment, segments)
        self.repeating = RepeatingPatterns()  # URL patterns that only ever repeat one page
        self.recovering = False  # resumed after a kill -9: the frontier comes from the stored rows
        self.stored: set[str] = set()  # recovering: pages this job had stored

    # --- job id and resume state ----------------------------------------------

    def _restore(self) -> dict[str, Any]:
        """Share counters with ``self.state`` (set by Scrapy's SpiderState with JOBDIR)."""
        state: dict[str, Any] = getattr(self, "state", None)
        if state is None:
            return {}
        if not self._restored:
            self._restored = True
            self.skipped_seen |= state.get("skipped_seen", set())
            state["skipped_seen"] = self.skipped_seen
            self.page_count = max(self.page_count, state.get("page_count", 0))
            self.start_url = state.get("start_url", self.start_url)
        state["page_count"] = self.page_count
        return state

    @property
    def job(self) -> str:
        """The job id: -a job= or Scrapyd's _job, else the one saved in JOBDIR, else a new one."""
        if self._job is None:
            state = self._restore()
            self._job = state.get("job") or self._job_in_jobdir() or new_job_id()
            self._save_job_in_jobdir(self._job)
        state = self._restore()
        if state is not None:
            state.setdefault("job", self._job)
        return self._job

    def _jobdir_file(self) -> Path | None:
        crawler = getattr(self, "crawler", None)
        jobdir = crawler.settings.get("JOBDIR") if crawler is not None else None
        return Path(jobdir) / "linkspider-job" if jobdir else None

    def _job_in_jobdir(self) -> str | None:
        """The job id a killed run of this JOBDIR wrote at once (spider.state is only saved on a
        clean stop, so after a kill -9 this is what keeps the job id)."""
        path = self._jobdir_file()
        if path is not None and path.is_file():
            return path.read_text(encoding="utf-8").strip() or None
        return None

    def _save_job_in_jobdir(self, job: str) -> None:
        path = self._jobdir_file()
        if path is not None and not path.is_file():
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(job + "\n", encoding="utf-8")

    # --- requests -------------------------------------------------------------

    async def start(self) -> AsyncIterator[Any]:
        self._restore()
        logger.info("linkspider: crawling %s (scope %s), job %s", self.start_url, self.scope, self.job)
        if self.arguments.incremental:
            self.previous = PreviousCrawl.load(self.arguments.out, self.job)
            if self.previous is None:
                logger.info("linkspider: incremental crawl, but no earlier job in %s: a full crawl",
                            self.arguments.out)
            else:
                logger.info("linkspider: incremental crawl on job %s (%d pages)", self.previous.job,
                            len(self.previous))
                async for request in self.changed_first():
                    yield request
        if self.recover_after_kill():
            for request in self.refollow_stored():
                yield request
            return
        self.seen.add(self.start_url)
        # Not dont_filter: a resumed crawl or a shared (Redis) dupefilter drops it when seen.
        yield self.page_request(self.start_url, found_by="start", depth=0, from_url=None)

    def recover_after_kill(self) -> bool:
        """With JOBDIR: marks this run as running (:meth:`closed` removes the marker); whether the
        last run of this job was killed (found in ``from_crawler``, see ``linkspider.recovery``)."""
        marker = self._jobdir_file()
        if marker is None:
            return False
        marker.parent.mkdir(parents=True, exist_ok=True)
        marker.with_name(RUNNING_MARKER).write_text(self.job + "\n", encoding="utf-8")
        return self.recovering

    def refollow_stored(self) -> Iterator[Any]:
        """Recovering: the start page if it was not stored, and every stored page's links to
        pages not stored (see ``linkspider.recovery``)."""
        job = stored_job(self.arguments.out, self.job)
        self.stored = set(job.pages)
        self.skipped_seen |= job.skipped
        self.page_count = max(self.page_count, len(job.pages))
        self._restore()
        logger.warning("linkspider: job %s did not stop cleanly: resuming from its %d stored pages "
                       "and their links", self.job, len(job.pages))
        self.crawler.stats.set_value("linkspider/recovered_pages", len(job.pages))
        if self.start_url not in self.stored:
            self.seen.add(self.start_url)
            yield self.page_request(self.start_url, found_by="start", depth=0, from_url=None)
        for source, target in job.links:
            depth = job.pages.get(source)
            nxt = self.consider(target, from_url=source, found_by="link",
                                depth=None if depth is None else depth + 1)
            if nxt is not None:
                yield nxt

    def closed(self, reason: str) -> None:
        """A clean stop (finished, Ctrl-C, a cap): JOBDIR's own state is whole again."""
        marker = self._jobdir_file()
        if marker is not None:
            marker.with_name(RUNNING_MARKER).unlink(missing_ok=True)

    def page_request(self, url: str, *, found_by: str, depth: int | None, from_url: str | None,
                     priority: int = 0) -> Request:
        """The request for one page (canonical URL) and the bookkeeping it carries; conditional
        (the previous job's validators) in an incremental crawl."""
        meta: dict[str, Any] = {
            META: {"url": url, "found_by": found_by, "depth": depth, "from": from_url},
            "dont_redirect": True,
        }
        headers = self.previous.validators(url) if self.previous is not None else None
        return Request(url, callback=self.parse_page, errback=self.on_error, meta=meta, headers=headers,
                       priority=priority)

    async def changed_first(self) -> AsyncIterator[Any]:
        """Before the link crawl starts: the sitemaps' pages that are new or have a newer ``lastmod``
        than their previous fetch, at a higher priority (read now, so they go out first)."""
        assert self.previous is not None
        parts = urlsplit(self.start_url)
        pending = [f"{parts.scheme}://{parts.netloc}/sitemap.xml"]
        read = 0
        while pending and read < MAX_SITEMAPS_FIRST:
            url = pending.pop(0)
            read += 1
            try:
                response = await self.crawler.engine.download_async(Request(url, dont_filter=True))
            except Exception as exc:  # noqa: BLE001 - no sitemap: the link crawl still finds the changes
                logger.info("linkspider: no sitemap at %s (%s)", url, exc)
                continue
            for entry, target in self.sitemap_entries(response):
                if target is None:
                    nested = response.urljoin(entry["loc"])
                    if same_origin(nested, self.start_url):
                        pending.append(nested)
                    continue
                lastmod = entry.get("lastmod")
                if target in self.previous and not (lastmod and self.previous.changed_since(target, lastmod)):
                    continue
                known = self.previous.pages.get(target)
                nxt = self.consider(target, from_url=response.url,
                                    found_by=(known.found_by if known and known.found_by else "sitemap"),
                                    depth=known.depth if known else None, priority=50)
                if nxt is not None:
                    self.crawler.stats.inc_value("linkspider/sitemap_changed_first")
                    yield nxt

    def render_request(self, response: Response, attempt: int = 1) -> Request:
        """The same page through the browser, once the plain fetch found HTML; the browser is
        handed the plain body for the page itself (the server sees one request)."""
        plain = {"status": response.status, "body": response.body,
                 "headers": {k.decode("latin-1"): b", ".join(v).decode("latin-1")
                             for k, v in response.headers.items()}}
        meta = {META: response.meta[META], "dont_redirect": True, "playwright": True,
                "playwright_page_init_callback": SERVE_PLAIN_DOCUMENT, PLAIN_DOCUMENT: plain,
                "linkspider_render_attempt": attempt}
        self.crawler.stats.inc_value("linkspider/render_requests")
        return Request(
            response.url, callback=self.parse_page, errback=self.on_error, meta=meta, dont_filter=True
        )

    def wants_browser(self, response: Response, content: PageContent | None) -> bool:
        """Whether this plain response must go through the browser (render=all, or auto's choice)."""
        if self.render == "off" or response.meta.get("playwright") or response.meta.get(RENDER_FAILED):
            return False
        if self.render == "all":
            return True
        assert content is not None
        links = sum(1 for link in content.links if link.position == "content")
        if self.render_policy.needs_browser(response.body, content.word_count, links):
            return True
        self.render_policy.learn(content.word_count, links)
        return False

    def render_failed(self, failure: Failure, request: Request) -> Iterator[Any]:
        """A browser that crashed or timed out: try once more (scrapy-playwright starts a new
        browser), then keep the page as its plain HTML said, rather than lose it."""
        plain = request.meta[PLAIN_DOCUMENT]
        self.crawler.stats.inc_value("linkspider/render_failed")
        self.logger.warning("rendering %s failed (%s)", request.url, why_failed(failure))
        meta = {META: request.meta[META]}
        stand_in = Request(request.url, meta=meta)
        response = HtmlResponse(request.url, status=plain["status"], headers=plain["headers"],
                                body=plain["body"], request=stand_in)
        if request.meta.get("linkspider_render_attempt", 1) < 2:
            yield self.render_request(response, attempt=2)
            return
        meta[RENDER_FAILED] = True
        yield from self.parse_page(response)

    def consider(
        self, url: str, *, from_url: str | None, found_by: str, depth: int | None, priority: int = 0
    ) -> Request | SkipRecord | None:
        """A request for ``url`` (canonical), a skip record, or None (seen, or another site)."""
        if url in self.seen or url in self.skipped_seen or url in self.stored:
            return None
        if not in_scope(url, self.start_url, self.scope):
            if self.scope == "path" and same_origin(url, self.start_url):
                return self.skip_once(url, "out_of_scope", from_url=from_url)
            return None
        reason = skip_reason(url, self.policy)
        if reason is not None:
            return self.skip_once(url, reason, from_url=from_url)
        trap = trap_reason(url, self.policy) or self.repeating.reason(url)
        if trap is not None:
            return self.skip_once(url, "trap", from_url=from_url, detail=trap)
        if self.depth_limit and depth is not None and depth > self.depth_limit:
            self.crawler.stats.inc_value("linkspider/depth_limit")
            return None  # not marked seen: a shorter path may still reach it
        self.seen.add(url)
        if from_url is not None:
            self.repeating.spawned(from_url, url)
        return self.page_request(url, found_by=found_by, depth=depth, from_url=from_url, priority=priority)

    def skip_once(
        self, url: str, reason: str, *, from_url: str | None, detail: str | None = None
    ) -> SkipRecord:
        """A skip record for a URL not fetched; later links to it are ignored."""
        self.skipped_seen.add(url)
        return self.skip(url, reason, from_url=from_url, detail=detail)

    @staticmethod
    def skip(
        url: str,
        reason: str,
        *,
        from_url: str | None = None,
        alias_of: str | None = None,
        detail: str | None = None,
    ) -> SkipRecord:
        return SkipRecord(
            url=url,
            reason=reason,
            from_url=from_url,
            alias_of=alias_of,
            detail=detail,
            fetched_at=datetime.now(UTC),
        )

    def canonical(self, url: str) -> str | None:
        """Canonical form of an absolute http(s) URL; None for other schemes."""
        if not url.startswith(("http://", "https://", "HTTP://", "HTTPS://")):
            return None
        return canonical_url(url, self.policy)

    # --- responses --------------------------------------------------------------

    def on_headers(self, headers: Any, body_length: int, request: Request, spider: Spider) -> None:
        """Stop downloading the body of a page request that is not HTML (PDFs, images …)."""
        if META not in request.meta:
            return
        ctype = headers.get(b"Content-Type")
        if ctype and not is_html(ctype.decode("latin-1")):
            raise StopDownload(fail=False)

    def parse_page(self, response: Response) -> Iterator[Any]:
        info = response.meta[META]
        url: str = info["url"]
        status = response.status
        if 300 <= status < 400 and b"Location" in response.headers:
            yield from self.redirected(response, info, response.urljoin(
                response.headers[b"Location"].decode("latin-1")
            ))
            return
        if status == 304 and self.previous is not None and url in self.previous:
            yield from self.not_modified(url, info)
            return
        if status >= 300:
            if info["found_by"] == "start":
                self.start_failure = f"the start URL {url} answered HTTP {status}"
            yield self.skip(url, "http_error", from_url=info["from"], detail=str(status))
            return
        ctype = response.headers.get(b"Content-Type", b"").decode("latin-1")
        if not (is_html(ctype) if ctype else isinstance(response, HtmlResponse)):
            yield self.skip(url, "not_html", from_url=info["from"], detail=ctype or "no Content-Type")
            return
        final = self.canonical(response.url)
        if final is not None and final != url:  # a browser (render=1) followed a redirect
            yield from self.redirected(response, info, response.url)
            return
        if self.meta_refresh_maxdelay is not None and b"refresh" in response.body[:8192].lower():
            delay, refresh_url = get_meta_refresh(response.text, response.url)
            if refresh_url and delay is not None and delay < self.meta_refresh_maxdelay:
                yield from self.redirected(response, info, refresh_url, how="meta refresh")
                return
        if self.over_cap():
            return
        # Status, redirects, type and size are settled by the plain fetch, so the
        # browser only ever loads pages of this site known to be HTML.
        content = None if self.render == "all" else extract_page(response.text, response.url)
        if self.wants_browser(response, content):
            yield self.render_request(response)
            return
        if content is None:
            content = extract_page(response.text, response.url)
        robots_header = robots_directives(response.headers.getlist(b"X-Robots-Tag"))
        content.noindex = content.noindex or "noindex" in robots_header or "none" in robots_header
        content.nofollow = content.nofollow or "nofollow" in robots_header or "none" in robots_header
        targets = [self.canonical(link.url) for link in content.links]
        depth = info["depth"]
        child_depth = None if depth is None else depth + 1
        declared = self.canonical(content.canonical) if content.canonical else None
        canonicalised = declared is not None and declared != url
        follow: list[Any] = []
        if self.copy_deeper_in_section(url, content.text):
            # The same text as a shallower page of the same section (/loop/ and /loop/a/b/): the
            # shape of a path trap. The page is kept; its links are not followed.
            self.crawler.stats.inc_value("linkspider/trap_copies")
        elif not content.nofollow:
            follow = self.follow(targets, url, child_depth)
        if canonicalised:
            yield self.skip(url, "canonicalised", from_url=info["from"], alias_of=declared)
            nxt = self.consider(declared, from_url=url, found_by=info["found_by"], depth=depth)
            if nxt is not None:
                yield nxt
            yield from follow
            return
        self.count_page()
        self.repeating.observe(url, content.text)
        yield CrawledPage(
            url=url,
            fetched_url=response.url,
            status=status,
            content=content,
            targets=targets,
            internal=[t is not None and same_origin(t, url) for t in targets],
            depth=depth,
            found_by=info["found_by"],
            fetched_at=datetime.now(UTC),
            etag=_header(response, b"ETag"),
            last_modified=_header(response, b"Last-Modified"),
            rendered=bool(response.meta.get("playwright")),
        )
        if self.cap_reached():
            raise CloseSpider("max_pages")
        yield from follow

    def cap_reached(self) -> bool:
        """Whether ``max_pages`` pages are recorded (this run's and, resumed, the earlier runs')."""
        self._restore()
        return bool(self.max_pages and self.page_count >= self.max_pages)

    def over_cap(self) -> bool:
        """``cap_reached``, counted in the stats: a page answered after the cap is not recorded."""
        if self.cap_reached():
            self.crawler.stats.inc_value("linkspider/over_cap")
            return True
        return False

    def count_page(self) -> None:
        """One more page recorded (kept in spider.state, so a resumed crawl keeps counting)."""
        self.page_count += 1
        self._restore()["page_count"] = self.page_count

    def follow(self, targets: Iterable[str | None], from_url: str, depth: int | None) -> list[Any]:
        """Requests (and skip records) for the link targets of ``from_url`` (None: not http)."""
        found = (self.consider(t, from_url=from_url, found_by="link", depth=depth) for t in targets if t)
        return [nxt for nxt in found if nxt is not None]

    def copy_deeper_in_section(self, url: str, text: str) -> bool:
        """Whether ``text`` is that of a page already seen in the same first path segment, at a
        shallower path (a trap's pages repeat their parent's text ever deeper)."""
        if not text.strip():
            return False
        segments = [s for s in urlsplit(url).path.split("/") if s]
        key = content_hash(text)
        section = segments[0] if segments else ""
        seen = self.texts_seen.get(key)
        if seen is None:
            self.texts_seen[key] = (section, len(segments))
            return False
        return seen[0] == section and len(segments) > seen[1]

    def not_modified(self, url: str, info: dict[str, Any]) -> Iterator[Any]:
        """A 304: the previous job's rows are carried over and its links followed, nothing parsed."""
        assert self.previous is not None
        if self.over_cap():
            return
        self.count_page()
        self.crawler.stats.inc_value("linkspider/not_modified")
        yield CarriedPage(url=url, previous_job=self.previous.job)
        depth = info["depth"]
        yield from self.follow(self.previous.links_of(url), url, None if depth is None else depth + 1)
        if self.cap_reached():
            raise CloseSpider("max_pages")

    def redirected(
        self, response: Response, info: dict[str, Any], location: str, how: str | None = None
    ) -> Iterable[Any]:
        """Record ``info['url']`` as an alias of where it redirects, and follow it on this site."""
        url = info["url"]
        target = self.canonical(location)
        detail = f"{how or response.status} to {location}"
        if target is not None and info["found_by"] == "start" and not same_origin(target, self.start_url):
            # The start URL moved (http -> https, example.com -> www.example.com): the site
            # is where it went. Kept in spider.state, so a resumed crawl keeps the new origin.
            logger.info("linkspider: start URL %s redirects to %s: crawling that site", url, target)
            self.start_url = target
            self._restore()["start_url"] = target
            self.crawler.stats.set_value("linkspider/start_moved_to", target)
        if target is None or not same_origin(target, self.start_url):
            yield self.skip(url, "offsite", from_url=info["from"], alias_of=target, detail=detail)
            return
        if target == url:
            # The server prefers another spelling of the same canonical URL (a site that
            # strips trailing slashes, say): fetch that spelling and record the page as url.
            hops = info.get("hops", 0)
            if hops >= MAX_SPELLING_HOPS:
                yield self.skip(url, "error", from_url=info["from"], detail=f"redirect loop: {detail}")
                return
            self.crawler.stats.inc_value("linkspider/spelling_redirects")
            meta = {META: {**info, "hops": hops + 1}, "dont_redirect": True}
            yield Request(
                location, callback=self.parse_page, errback=self.on_error, meta=meta, dont_filter=True
            )
            return
        yield self.skip(url, "redirect", from_url=info["from"], alias_of=target, detail=detail)
        # Fetched like any other URL: the dupefilter makes sure it is recorded once.
        nxt = self.consider(target, from_url=url, found_by=info["found_by"], depth=info["depth"])
        if nxt is not None:
            yield nxt

    def on_error(self, failure: Failure) -> Iterator[Any]:
        """Record a page request that failed: robots.txt, size limit or download error."""
        request: Request = failure.request  # type: ignore[attr-defined]
        info = request.meta.get(META)
        if info is None:
            return
        if request.meta.get(PLAIN_DOCUMENT):
            yield from self.render_failed(failure, request)
            return
        message = str(failure.value)
        if failure.check(IgnoreRequest) and "robots.txt" in message:
            reason = "robots"
        elif failure.check(DownloadCancelledError, CancelledError):
            # the size limit, hit from the Content-Length header or while reading the body
            reason = "too_large"
            limit = self.crawler.settings.getint("DOWNLOAD_MAXSIZE")
            message = message or f"body larger than download max size ({limit})"
        else:
            reason = "error"
        detail = f"{type(failure.value).__name__}: {message}"[:300]
        if info.get("found_by") == "start":
            self.start_failure = f"the start URL {info['url']} could not be fetched: {why_failed(failure)}"
        yield self.skip(info["url"], reason, from_url=info["from"], detail=detail)

    # --- sitemaps -------------------------------------------------------------------

    def on_idle(self) -> None:
        """When the link crawl has drained, seed from robots.txt Sitemap lines and /sitemap.xml."""
        if not self.sitemaps or self.sitemaps_seeded:
            return
        scheduler = self.crawler.engine.scheduler
        crawl_busy = getattr(scheduler, "crawl_busy", None)
        if crawl_busy is not None and crawl_busy():
            # A shared (Redis) crawl: other workers are still following links, so a page the
            # sitemap lists may yet be reached by a click path. Seed only once it has drained.
            raise DontCloseSpider
        self.sitemaps_seeded = True
        parts = urlsplit(self.start_url)
        root = f"{parts.scheme}://{parts.netloc}"
        engine = self.crawler.engine
        errback = self.on_sitemap_error
        meta = {"dont_obey_robotstxt": True}
        engine.crawl(Request(f"{root}/robots.txt", callback=self.parse_robots, errback=errback, meta=meta))
        engine.crawl(Request(f"{root}/sitemap.xml", callback=self.parse_sitemap, errback=errback))
        raise DontCloseSpider

    def parse_robots(self, response: Response) -> Iterator[Request]:
        if response.status != 200:
            return
        for url in sitemap_urls_from_robots(response.body, base_url=response.url):
            yield from self.sitemap_request(url)

    def sitemap_request(self, url: str) -> Iterator[Request]:
        if same_origin(url, self.start_url):
            yield Request(url, callback=self.parse_sitemap, errback=self.on_sitemap_error)

    def sitemap_entries(self, response: Response) -> Iterator[tuple[dict[str, Any], str | None]]:
        """(entry, canonical page URL) of a sitemap; URL None for an entry of a sitemap index."""
        if response.status != 200:
            return
        body = response.body
        if body[:2] == b"\x1f\x8b":
            try:
                body = gunzip(body, max_size=self.crawler.settings.getint("DOWNLOAD_MAXSIZE"))
            except (OSError, ValueError) as exc:
                logger.warning("linkspider: unreadable gzip sitemap %s: %s", response.url, exc)
                return
        try:
            sitemap = Sitemap(body)
        except Exception as exc:  # lxml raises several kinds on broken XML
            logger.warning("linkspider: unreadable sitemap %s: %s", response.url, exc)
            return
        self.crawler.stats.inc_value("linkspider/sitemaps")
        for entry in sitemap:
            loc = entry.get("loc")
            if not loc:
                continue
            if sitemap.type == "sitemapindex":
                yield entry, None
            elif sitemap.type == "urlset":
                target = self.canonical(response.urljoin(loc))
                if target is not None:
                    yield entry, target

    def parse_sitemap(self, response: Response) -> Iterator[Any]:
        for entry, target in self.sitemap_entries(response):
            if target is None:
                yield from self.sitemap_request(response.urljoin(entry["loc"]))
                continue
            nxt = self.consider(target, from_url=response.url, found_by="sitemap", depth=None)
            if nxt is not None:
                yield nxt

    def on_sitemap_error(self, failure: Failure) -> None:
        logger.info("linkspider: no sitemap at %s (%s)", failure.request.url, failure.value)  # type: ignore[attr-defined]
