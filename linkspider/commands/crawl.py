"""``scrapy crawl`` that checks a spider's arguments before Scrapy starts and ends with a summary.

A spider that defines ``check_arguments(spargs, settings)`` (a classmethod that
raises ``ArgumentError``) gets a bad argument answered with one line on stderr
and exit status 2, before any logging or Twisted start-up, instead of a
traceback. Scrapyd runs ``scrapy crawl`` through the same command line, so its
jobs get the same check.

When the crawl ends it prints a short summary on stderr (pages and links stored,
skipped URLs by reason, errors, time); a spider that sets ``start_failure`` (the
``site`` spider: its start URL could not be fetched and no page was stored) makes
the command exit 1 with one line saying why.
"""

from __future__ import annotations

import sys
import time
from typing import TYPE_CHECKING, Any

from scrapy.commands.crawl import Command as ScrapyCrawlCommand
from scrapy.spiderloader import get_spider_loader

from linkspider.arguments import ArgumentError

if TYPE_CHECKING:
    import argparse


class Command(ScrapyCrawlCommand):
    """Scrapy's crawl command with argument validation up front."""

    def process_options(self, args: list[str], opts: argparse.Namespace) -> None:
        super().process_options(args, opts)  # parses -a NAME=VALUE into opts.spargs
        if len(args) != 1 or self.settings is None:
            return
        try:
            spider_cls = get_spider_loader(self.settings).load(args[0])
        except KeyError:
            return  # Scrapy answers an unknown spider name itself
        check = getattr(spider_cls, "check_arguments", None)
        if check is None:
            return
        try:
            check(opts.spargs, self.settings)
        except ArgumentError as exc:
            print(f"scrapy crawl {args[0]}: error: {exc}", file=sys.stderr)
            raise SystemExit(2) from None

    def run(self, args: list[str], opts: argparse.Namespace) -> None:
        if len(args) != 1 or self.crawler_process is None:
            super().run(args, opts)
            return
        crawler = self._create_crawler(args[0])
        started = time.monotonic()
        self.crawler_process.crawl(crawler, **opts.spargs)
        self.crawler_process.start()
        if self.crawler_process.bootstrap_failed:
            self.exitcode = 1
            return
        stats = crawler.stats.get_stats() if crawler.stats else {}
        spider = crawler.spider
        print(summary(stats, time.monotonic() - started, getattr(spider, "arguments", None)), file=sys.stderr)
        failure = getattr(spider, "start_failure", None)
        incomplete = getattr(spider, "incomplete", None)
        if failure and not stats.get("linkspider/pages"):
            print(f"scrapy crawl {args[0]}: error: {failure}", file=sys.stderr)
            self.exitcode = 1
        elif incomplete:
            print(f"scrapy crawl {args[0]}: error: incomplete crawl: {incomplete}", file=sys.stderr)
            self.exitcode = 1


def summary(stats: dict[str, Any], seconds: float, arguments: Any = None) -> str:
    """The crawl in a few lines: what was stored, what was skipped and why, errors, time."""
    skipped = {k.rsplit("/", 1)[1]: v for k, v in stats.items() if k.startswith("linkspider/skipped/")}
    by_reason = ", ".join(f"{reason} {n}" for reason, n in sorted(skipped.items(), key=lambda kv: -kv[1]))
    error_keys = ("downloader/exception_type_count/", "spider_exceptions/")
    errors = sum(v for k, v in stats.items() if k.startswith(error_keys))
    carried = stats.get("linkspider/not_modified")
    lines = [
        f"linkspider: crawl {stats.get('finish_reason', 'ended')} in {seconds:.1f} s",
        f"  pages stored     {stats.get('linkspider/pages', 0)}"
        + (f" ({carried} unchanged, carried over)" if carried else ""),
        f"  links stored     {stats.get('linkspider/links', 0)}",
        f"  skipped          {sum(skipped.values())}" + (f": {by_reason}" if by_reason else ""),
        f"  errors           {errors}",
    ]
    if arguments is not None and getattr(arguments, "out", None):
        lines.append(f"  written to       {arguments.out}/ (pages/, links/, skipped/)")
    return "\n".join(lines)
