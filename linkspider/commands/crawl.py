"""``scrapy crawl`` that checks a spider's arguments before Scrapy starts.

A spider that defines ``check_arguments(spargs, settings)`` (a classmethod that
raises ``ArgumentError``) gets a bad argument answered with one line on stderr
and exit status 2, before any logging or Twisted start-up, instead of a
traceback. Scrapyd runs ``scrapy crawl`` through the same command line, so its
jobs get the same check.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

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
