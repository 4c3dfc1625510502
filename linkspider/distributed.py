"""One crawl shared by several processes or machines through Redis (scrapy-redis).

Set ``LINKSPIDER_REDIS_URL`` (``-s`` on the command line, ``-d setting=`` on
Scrapyd) and every ``site`` crawl started with it joins one shared frontier:

- :class:`SharedCrawl`, a Scrapy add-on (listed in ``ADDONS``), switches the
  scheduler to :class:`SharedScheduler` and the duplicate filter to
  scrapy-redis's, and keys both by a crawl name
  (``linkspider:<crawl>:requests`` / ``:dupefilter``) so two sites never share
  a frontier. The crawl name is ``LINKSPIDER_REDIS_CRAWL`` or, by default, the
  spider name and the start URL's host and port.
- :class:`SharedScheduler` is scrapy-redis's scheduler with a worker
  registry. ``SCHEDULER_PERSIST`` is always on: with it off, the first worker
  to finish would wipe the queue and seen-set under the others. Instead, a
  worker that opens with no live worker registered and an empty queue starts
  a new crawl (the previous crawl's seen-set is deleted), and the last worker
  to close with an empty queue, or after a page cap, deletes the crawl's keys.
  After a shutdown (Ctrl-C, Scrapyd's cancel) the queue stays: the next worker
  with no live worker around resumes where the crawl stopped.
- Stopping: a plain Scrapy spider on the Redis scheduler closes as soon as
  its own view is idle, although another worker may be about to add links.
  Each worker records a heartbeat in Redis while it has requests in flight;
  an idle worker keeps waiting (``DontCloseSpider``) while the shared queue is
  empty but another worker was busy within ``LINKSPIDER_REDIS_IDLE_CLOSE``
  seconds, and closes once everything has been quiet that long (at once when
  it is the only live worker).
"""

from __future__ import annotations

import logging
import os
import socket
import sys
import time
import uuid
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

import redis
from scrapy import signals
from scrapy.exceptions import DontCloseSpider, NotConfigured
from scrapy.settings import SETTINGS_PRIORITIES
from scrapy_redis.scheduler import Scheduler
from twisted.internet import task

if TYPE_CHECKING:
    from scrapy import Request, Spider
    from scrapy.crawler import Crawler
    from scrapy.settings import BaseSettings

logger = logging.getLogger(__name__)

KEY_ROOT = "linkspider"
HEARTBEAT_SECONDS = 1.0

# Register a worker atomically: drop workers whose heartbeat is stale; when no
# live worker is left and the queue is empty, the seen-set belongs to a crawl
# that is over, so delete it. Returns {state, stale fingerprints deleted}.
_JOIN = """
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', ARGV[2])
local state = 'join'
local deleted = 0
if redis.call('ZCARD', KEYS[1]) == 0 then
  if redis.call('EXISTS', KEYS[2]) == 1 then
    state = 'resume'
  else
    state = 'new'
    deleted = redis.call('SCARD', KEYS[3])
    redis.call('DEL', KEYS[3], KEYS[4])
  end
end
redis.call('ZADD', KEYS[1], ARGV[1], ARGV[3])
return {state, deleted}
"""

# Unregister a worker; the last one out deletes the crawl's keys when the queue is
# empty, or when the crawl is over anyway (ARGV[4] = '1': a page cap was reached).
_LEAVE = """
redis.call('ZREM', KEYS[1], ARGV[3])
redis.call('ZREM', KEYS[4], ARGV[3])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', ARGV[2])
if redis.call('ZCARD', KEYS[1]) == 0 and (ARGV[4] == '1' or redis.call('EXISTS', KEYS[2]) == 0) then
  return redis.call('DEL', KEYS[1], KEYS[2], KEYS[3], KEYS[4])
end
return -1
"""
#: Close reasons after which the crawl is over even with requests left in the queue;
#: after any other reason (shutdown, a crash) the queue is kept so the crawl can resume.
OVER_REASONS = ("finished", "max_pages", "closespider_pagecount", "closespider_itemcount",
                "closespider_timeout", "closespider_errorcount")


def crawl_name(spider_name: str, start_url: str | None) -> str:
    """The default crawl name: ``<spider>:<host>[:<port>]`` of the start URL (``site:example.com``)."""
    if not start_url:
        return spider_name
    parts = urlsplit(start_url.strip())
    host = (parts.hostname or "").lower()
    port = f":{parts.port}" if parts.port else ""
    return f"{spider_name}:{host}{port}" if host else spider_name


def crawl_keys(crawl: str) -> dict[str, str]:
    """The Redis keys of one shared crawl: requests, dupefilter, workers, busy."""
    prefix = f"{KEY_ROOT}:{crawl}"
    return {name: f"{prefix}:{name}" for name in ("requests", "dupefilter", "workers", "busy")}


def _start_url(spider: Spider | None) -> str | None:
    """The spider's start URL, wherever the spider keeps it (arguments, start_urls, -a start=)."""
    if spider is None:
        return None
    arguments = getattr(spider, "arguments", None)
    if arguments is not None and isinstance(getattr(arguments, "start", None), str):
        return arguments.start
    for name in ("start_url", "start"):
        value = spider.__dict__.get(name)
        if isinstance(value, str):
            return value
    urls = getattr(spider, "start_urls", None)
    if urls:
        return str(list(urls)[0])
    return None


def redis_problem(url: str, timeout: float = 5.0) -> str | None:
    """Why ``url`` cannot serve as the shared frontier (one line), or None when Redis answers PING."""
    if urlsplit(url).scheme not in ("redis", "rediss", "unix"):
        return f"expected redis://host:port/db, got {url!r}"
    try:
        client = redis.Redis.from_url(url, socket_timeout=timeout, socket_connect_timeout=timeout)
        client.ping()
    except (redis.RedisError, ValueError, OSError) as exc:
        return f"cannot reach Redis at {url}: {' '.join(str(exc).split())}"
    return None


class SharedCrawl:
    """Scrapy add-on: share the crawl frontier through Redis when ``LINKSPIDER_REDIS_URL`` is set."""

    def __init__(self, crawler: Crawler) -> None:
        self.crawler = crawler

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> SharedCrawl:
        return cls(crawler)

    def __repr__(self) -> str:
        return "SharedCrawl(LINKSPIDER_REDIS_URL)"

    @classmethod
    def update_pre_crawler_settings(cls, settings: BaseSettings) -> None:
        """Before Scrapy starts: a bad or unreachable LINKSPIDER_REDIS_URL is one line and exit 2."""
        url = (settings.get("LINKSPIDER_REDIS_URL") or "").strip()
        if not url:
            return
        problem = redis_problem(url)
        if problem:
            print(f"linkspider: error: LINKSPIDER_REDIS_URL: {problem}", file=sys.stderr)
            raise SystemExit(2)

    def update_settings(self, settings: BaseSettings) -> None:
        url = (settings.get("LINKSPIDER_REDIS_URL") or "").strip()
        if not url:
            raise NotConfigured  # silently off: one process, Scrapy's own scheduler
        if urlsplit(url).scheme not in ("redis", "rediss", "unix"):
            raise ValueError(f"LINKSPIDER_REDIS_URL must be redis://host:port/db, got {url!r}")
        spider = self.crawler.spider
        crawl = (settings.get("LINKSPIDER_REDIS_CRAWL") or "").strip()
        if not crawl:
            crawl = crawl_name(spider.name if spider else "crawl", _start_url(spider))
        keys = crawl_keys(crawl)
        escaped = {name: key.replace("%", "%%") for name, key in keys.items()}  # scrapy-redis %-formats keys
        for name, value in {
            "SCHEDULER": "linkspider.distributed.SharedScheduler",
            "DUPEFILTER_CLASS": "scrapy_redis.dupefilter.RFPDupeFilter",
            "REDIS_URL": url,
            "SCHEDULER_PERSIST": True,
            "SCHEDULER_QUEUE_KEY": escaped["requests"],
            "SCHEDULER_DUPEFILTER_KEY": escaped["dupefilter"],
            "LINKSPIDER_REDIS_CRAWL": crawl,
        }.items():
            # At least "addon" priority, and above settings.py's defaults (e.g. LINKSPIDER_REDIS_CRAWL = "").
            priority = max(SETTINGS_PRIORITIES["addon"], settings.getpriority(name) or 0)
            settings.set(name, value, priority=priority)
        logger.info("Shared crawl %r through Redis at %s", crawl, url)


class SharedScheduler(Scheduler):
    """scrapy-redis's scheduler plus a worker registry, heartbeats and a shared idle close."""

    crawler: Crawler
    keys: dict[str, str]

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> SharedScheduler:
        settings = crawler.settings
        if not settings.getbool("SCHEDULER_PERSIST"):
            raise NotConfigured("SCHEDULER_PERSIST must stay True with several workers")
        instance = cls.from_settings(settings)
        instance.stats = crawler.stats
        instance.crawler = crawler
        instance.keys = crawl_keys(settings["LINKSPIDER_REDIS_CRAWL"])
        instance.idle_close = settings.getfloat("LINKSPIDER_REDIS_IDLE_CLOSE", 10.0)
        instance.worker_ttl = settings.getfloat("LINKSPIDER_REDIS_WORKER_TTL", 30.0)
        instance.worker = f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"
        instance.idle_since = None
        instance.heartbeat = None
        crawler.signals.connect(instance.spider_idle, signal=signals.spider_idle)
        return instance

    # --- lifecycle --------------------------------------------------------------
    def open(self, spider: Spider) -> None:
        self.spider = spider
        self.queue = self._make_queue(spider)
        if not self.df:
            from scrapy_redis.dupefilter import RFPDupeFilter

            self.df = RFPDupeFilter.from_spider(spider)
        k = self.keys
        now = time.time()
        state, deleted = self.server.eval(
            _JOIN, 4, k["workers"], k["requests"], k["dupefilter"], k["busy"],
            now, now - self.worker_ttl, self.worker,
        )
        state = state.decode() if isinstance(state, bytes) else state
        if state == "new":
            logger.info("Shared crawl %s: new crawl (%d old fingerprints cleared)", k["requests"], deleted)
        elif state == "resume":
            logger.info("Shared crawl %s: resuming, %d requests queued", k["requests"], len(self.queue))
        else:
            logger.info("Shared crawl %s: joining running workers", k["requests"])
        self.crawler.stats.set_value("linkspider/redis/join", state)
        self.heartbeat = task.LoopingCall(self._beat)
        self.heartbeat.start(HEARTBEAT_SECONDS, now=True)

    def close(self, reason: str) -> None:
        if self.heartbeat is not None and self.heartbeat.running:
            self.heartbeat.stop()
        k = self.keys
        now = time.time()
        over = "1" if reason in OVER_REASONS else "0"
        deleted = self.server.eval(
            _LEAVE, 4, k["workers"], k["requests"], k["dupefilter"], k["busy"],
            now, now - self.worker_ttl, self.worker, over,
        )
        if deleted >= 0:
            logger.info("Shared crawl %s: last worker out, crawl keys deleted", k["requests"])
        elif over == "0":
            logger.info("Shared crawl %s: stopped (%s), queue kept for a resume", k["requests"], reason)

    def _make_queue(self, spider: Spider) -> Any:
        from scrapy.utils.misc import load_object

        return load_object(self.queue_cls)(
            server=self.server, spider=spider, key=self.queue_key, serializer=self.serializer
        )

    # --- scheduling -------------------------------------------------------------
    def enqueue_request(self, request: Request) -> bool:
        if not request.dont_filter and self.df.request_seen(request):
            self.df.log(request, self.spider)
            return False
        self.crawler.stats.inc_value("scheduler/enqueued/redis")
        self.queue.push(request)
        return True

    def next_request(self) -> Request | None:
        request = self.queue.pop(self.idle_before_close)
        if request is not None:
            self.idle_since = None
            self.crawler.stats.inc_value("scheduler/dequeued/redis")
        return request

    # --- stopping together --------------------------------------------------------
    def _beat(self) -> None:
        """Every second: I am alive; and, with requests in flight, I am busy."""
        now = time.time()
        try:
            self.server.zadd(self.keys["workers"], {self.worker: now})
            if self._busy():
                self.server.zadd(self.keys["busy"], {self.worker: now})
        except Exception as exc:  # Redis gone: the scheduler's own calls will fail loudly
            logger.warning("Shared crawl heartbeat failed: %s", exc)

    def _busy(self) -> bool:
        """Whether this worker has work in hand (or is still starting up)."""
        engine = self.crawler.engine
        try:
            return engine is not None and not engine.spider_is_idle()
        except AttributeError:  # the engine is still opening: count as busy
            return True

    def others_busy(self, now: float) -> int:
        """How many other workers had requests in flight within the last ``idle_close`` seconds."""
        busy = self.server.zrangebyscore(self.keys["busy"], now - self.idle_close, "+inf")
        mine = self.worker.encode()
        return sum(1 for member in busy if member not in (mine, self.worker))

    def crawl_busy(self) -> bool:
        """True while the shared crawl may still produce work: requests queued or another worker busy.

        The spider can ask this before end-of-crawl work (e.g. sitemap seeding) that must
        wait until every worker has drained: ``engine.scheduler.crawl_busy()``.
        """
        return bool(len(self.queue)) or self.others_busy(time.time()) > 0

    def spider_idle(self) -> None:
        """Keep an idle worker open while the shared crawl may still produce work."""
        now = time.time()
        if self.idle_since is None:
            self.idle_since = now
        if self.crawl_busy():
            raise DontCloseSpider
        if now - self.idle_since < self.idle_close and not self.alone(now):
            raise DontCloseSpider

    def alone(self, now: float) -> bool:
        """True when no other live worker is registered: nobody else can add work, stop at once."""
        live = self.server.zrangebyscore(self.keys["workers"], now - self.worker_ttl, "+inf")
        return all(member in (self.worker.encode(), self.worker) for member in live)
