"""The baseline of benchmarks/crawl.py: a bare CrawlSpider that only follows the site's links.

Run from the repository root (project settings apply, as for the ``site`` spider):
``python3 -m scrapy runspider benchmarks/bare_spider.py -a start=http://127.0.0.1:PORT/``
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

from scrapy.linkextractors import LinkExtractor
from scrapy.spiders import CrawlSpider, Rule


class BareSpider(CrawlSpider):
    """Follows every link on the start URL's host and port; extracts and stores nothing."""

    name = "bare"

    def __init__(self, start: str = "", **kwargs: Any) -> None:
        parts = urlsplit(start)
        self.start_urls = [start]
        self.allowed_domains = [parts.hostname or ""]
        self.origin = f"{parts.scheme}://{parts.netloc}/"
        self.rules = (Rule(LinkExtractor(), callback=None, follow=True, process_links="same_origin"),)
        super().__init__(**kwargs)

    def same_origin(self, links: list[Any]) -> list[Any]:
        return [link for link in links if link.url.startswith(self.origin)]
