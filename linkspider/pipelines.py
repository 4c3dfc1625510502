"""Item pipelines: crawled pages become rows, rows become Parquet part files.

``PageRowsPipeline`` turns each :class:`~linkspider.items.CrawledPage` the
spider yields into one ``pages`` row and its ``links`` rows (thin flag, content
hash, counts in ``crawler.stats``). ``PartWriterPipeline`` writes rows of the
three tables through one :class:`~linkspider.parquet.PartWriter` each, under
``LINKSPIDER_OUTPUT`` (``-a out=``).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from linkspider.extract import content_hash
from linkspider.items import TABLES, CarriedPage, CrawledPage, LinkRecord, PageRecord, SkipRecord
from linkspider.parquet import PartWriter, part_files, read_part

if TYPE_CHECKING:
    from scrapy.crawler import Crawler
    from scrapy.statscollectors import StatsCollector

logger = logging.getLogger(__name__)


@dataclass
class PageRows:
    """The rows one crawled page adds: its ``pages`` row and its ``links`` rows."""

    page: PageRecord
    links: list[LinkRecord]


class PageRowsPipeline:
    """CrawledPage -> PageRows; counts pages, links and skipped URLs in the stats."""

    def __init__(self, stats: StatsCollector, thin_words: int) -> None:
        self.stats = stats
        self.thin_words = thin_words

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> PageRowsPipeline:
        return cls(crawler.stats, crawler.settings.getint("LINKSPIDER_THIN_WORDS"))

    def process_item(self, item: Any) -> Any:
        if isinstance(item, CrawledPage):
            rows = page_rows(item, self.thin_words)
            self.stats.inc_value("linkspider/pages")
            self.stats.inc_value("linkspider/links", len(rows.links))
            return rows
        if isinstance(item, SkipRecord):
            self.stats.inc_value(f"linkspider/skipped/{item['reason']}")
        return item


def page_rows(page: CrawledPage, thin_words: int) -> PageRows:
    """The ``pages`` row and ``links`` rows of one crawled page (without the job column)."""
    c = page.content
    canonical = {link.url: target for link, target in zip(c.links, page.targets, strict=True)}
    row = PageRecord(
        url=page.url,
        fetched_url=page.fetched_url,
        status=page.status,
        title=c.title,
        meta_description=c.meta_description,
        h1=c.h1,
        headings=c.headings,
        text=c.text,
        word_count=c.word_count,
        lang=c.lang,
        canonical=c.canonical,
        published=c.published,
        modified=c.modified,
        noindex=c.noindex,
        nofollow=c.nofollow,
        thin=c.word_count < thin_words,
        depth=page.depth,
        found_by=page.found_by,
        content_hash=content_hash(c.text),
        kind=c.kind,
        blocks=[block.as_row(canonical.get) for block in c.blocks],
        fetched_at=page.fetched_at,
        etag=page.etag,
        last_modified=page.last_modified,
        rendered=page.rendered,
        categories=page.categories,
        tags=page.tags,
    )
    links = []
    internal = page.internal
    for i, (link, target) in enumerate(zip(c.links, page.targets, strict=True)):
        if target is None:
            continue
        links.append(
            LinkRecord(
                source_url=page.url,
                target_url=target,
                anchor_text=link.anchor_text,
                position=link.position,
                nofollow=link.nofollow,
                internal=internal[i] if internal else None,
                fetched_at=page.fetched_at,
            )
        )
    return PageRows(row, links)


class PartWriterPipeline:
    """Writes pages, links and skipped rows as Parquet part files (one writer per table)."""

    def __init__(self, crawler: Crawler, out: str, flush_rows: int, flush_bytes: int = 0,
                 flush_seconds: float = 0.0) -> None:
        self.crawler = crawler
        self.out = Path(out)
        self.flush_rows = flush_rows
        self.flush_bytes = flush_bytes
        self.flush_seconds = flush_seconds
        self.writers: dict[str, PartWriter] = {}
        self._timer: Any = None
        self.carried: set[str] = set()  # pages answered 304: their previous rows are copied at close
        self.resuming = bool(crawler.settings.get("JOBDIR"))
        self._stored: set[str] | None = None  # URLs this job already wrote (a resumed crawl)

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> PartWriterPipeline:
        settings = crawler.settings
        flush_rows = settings.getint("LINKSPIDER_FLUSH_ROWS")
        flush_bytes = settings.getint("LINKSPIDER_FLUSH_BYTES")
        flush_seconds = settings.getfloat("LINKSPIDER_FLUSH_SECONDS")
        if flush_rows < 1:
            raise ValueError(f"LINKSPIDER_FLUSH_ROWS must be >= 1, got {flush_rows}")
        if flush_bytes < 0 or flush_seconds < 0:
            raise ValueError("LINKSPIDER_FLUSH_BYTES and LINKSPIDER_FLUSH_SECONDS must not be negative")
        return cls(crawler, settings.get("LINKSPIDER_OUTPUT"), flush_rows, flush_bytes, flush_seconds)

    def open_spider(self) -> None:
        """Start the flush timer: parts are written at least every ``LINKSPIDER_FLUSH_SECONDS``."""
        if self.flush_seconds:
            from twisted.internet import task

            self._timer = task.LoopingCall(self._flush_due)
            self._timer.start(max(0.5, min(5.0, self.flush_seconds / 4)), now=False)

    def _flush_due(self) -> None:
        for writer in self.writers.values():
            if writer.due():
                writer.flush()

    def _writer(self, table: str) -> PartWriter:
        writer = self.writers.get(table)
        if writer is None:
            job = getattr(self.crawler.spider, "job", None) or "crawl"
            writer = PartWriter(self.out / table, TABLES[table], job, flush_rows=self.flush_rows,
                                flush_bytes=self.flush_bytes, flush_seconds=self.flush_seconds)
            self.writers[table] = writer
            if table == "pages":
                # A page row never reaches the disk before its link rows: after a kill -9 a
                # stored page has all its links (a crawl resumes from them, linkspider.recovery).
                writer.before_flush = lambda: self._writer("links").flush()
        return writer

    def already_stored(self, url: str, job: str) -> bool:
        """Whether a resumed crawl (JOBDIR) wrote ``url`` before it was stopped. After a kill -9
        the dupefilter may have lost its newest fingerprints and fetch a page again: its rows
        are then not written twice."""
        if not self.resuming:
            return False
        if self._stored is None:
            self._stored = set()
            for path in part_files(self.out / "pages"):
                table = read_part(path, ["url", "job"])
                if table is None:
                    continue
                self._stored.update(u for u, j in zip(table["url"].to_pylist(), table["job"].to_pylist(),
                                                      strict=True) if j == job)
        if url in self._stored:
            self.crawler.stats.inc_value("linkspider/refetched_after_resume")
            return True
        self._stored.add(url)
        return False

    def process_item(self, item: Any) -> Any:
        if isinstance(item, PageRows):
            pages = self._writer("pages")
            job = pages.job
            if self.already_stored(item.page["url"], job):
                return item
            item.page["job"] = job
            if item.links:
                links = self._writer("links")
                for link in item.links:
                    link["job"] = job
                links.add_many(item.links)
            pages.add(item.page)
        elif isinstance(item, SkipRecord):
            skipped = self._writer("skipped")
            item["job"] = skipped.job
            skipped.add(item)
        elif isinstance(item, CarriedPage):
            self.carried.add(item.url)
        return item

    def carry_over(self) -> None:
        """Copy the previous job's rows of the pages answered 304 into this job's parts."""
        previous = getattr(self.crawler.spider, "previous", None)
        if previous is None or not self.carried:
            return
        now = datetime.now(UTC)
        for table, key in (("pages", "url"), ("links", "source_url")):
            writer = self._writer(table)
            writer.flush()
            for rows in previous.carried_rows(table, self.carried, key, writer.job, now):
                writer.write_table(rows)
        self.crawler.stats.set_value("linkspider/carried_pages", len(self.carried))
        logger.info("linkspider: %d unchanged pages carried over from job %s", len(self.carried),
                    previous.job)

    def close_spider(self) -> None:
        if self._timer is not None and self._timer.running:
            self._timer.stop()
        self.carry_over()
        for table, writer in self.writers.items():
            writer.close()
            logger.info(
                "linkspider: %d %s rows in %d part files under %s",
                writer.rows_written,
                table,
                len(writer.parts),
                writer.directory,
            )
