"""``scrapy crawl`` that checks a spider's arguments before Scrapy starts.

A spider that defines ``check_arguments(spargs, settings)`` (a classmethod that
raises ``ArgumentError``) gets a bad argument answered with one line on stderr
and exit status 2, instead of a traceback from inside Twisted. Scrapyd runs
``scrapy crawl`` through the same command line, so its jobs get the same check.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

from scrapy.commands.crawl import Command as ScrapyCrawlCommand

from linkspider.arguments import ArgumentError

if TYPE_CHECKING:
    import argparse


class Command(ScrapyCrawlCommand):
    """Scrapy's crawl command with argument validation up front."""

    def run(self, args: list[str], opts: argparse.Namespace) -> None:
        if len(args) == 1 and self.crawler_process is not None:
            try:
                spider_cls = self.crawler_process.spider_loader.load(args[0])
            except KeyError:
                spider_cls = None
            check = getattr(spider_cls, "check_arguments", None)
            if check is not None:
                try:
                    check(opts.spargs, self.settings)
                except ArgumentError as exc:
                    print(f"scrapy crawl {args[0]}: error: {exc}", file=sys.stderr)
                    self.exitcode = 2
                    return
        super().run(args, opts)
