"""Scrapy settings for linkspider: polite defaults and every LINKSPIDER_* option."""

from __future__ import annotations

BOT_NAME = "linkspider"
SPIDER_MODULES = ["linkspider.spiders"]
NEWSPIDER_MODULE = "linkspider.spiders"
# `scrapy crawl` that answers a bad spider argument with one line and exit status 2.
COMMANDS_MODULE = "linkspider.commands"
ITEM_PIPELINES = {
    "linkspider.pipelines.PageRowsPipeline": 300,  # crawled page -> pages row + links rows
    "linkspider.pipelines.PartWriterPipeline": 800,  # rows -> Parquet part files
}

# --- linkspider options -----------------------------------------------------
LINKSPIDER_OUTPUT = "data/crawl"  # crawl directory (pages/, links/, skipped/); -a out= overrides
LINKSPIDER_FLUSH_ROWS = 50_000  # rows buffered per table before a part file is written
LINKSPIDER_FLUSH_BYTES = 64 * 1024 * 1024  # or about this many bytes of text (0 = no byte limit)
LINKSPIDER_FLUSH_SECONDS = 60.0  # or when the oldest buffered row is this old (0 = off): what a kill -9 loses
LINKSPIDER_MAX_PAGES = 0  # page cap (0 = no cap); -a max_pages= overrides
LINKSPIDER_THIN_WORDS = 200  # pages with fewer main-text words are flagged thin
LINKSPIDER_KEEP_PARAMS: list[str] = []  # query parameters that make a distinct page (e.g. "lang")
LINKSPIDER_TRACKING_PARAMS: list[str] = []  # extra tracking parameters to strip (utm_* etc. built in)
LINKSPIDER_PAGINATION_PATTERNS: list[str] = []  # extra regexes; a matching URL is pagination
LINKSPIDER_INDEX_PAGES = ["index.html", "index.htm"]  # default documents collapsed to their directory
LINKSPIDER_TRAP_REPEATS = 3  # one path segment this many times in a row (a run of several: twice) is a trap
LINKSPIDER_TRAP_MAX_PATH = 400  # characters of path beyond which a URL is skipped as a trap
LINKSPIDER_TRAP_MAX_QUERY = 300  # characters of query string beyond which a URL is skipped as a trap
# pages of one numbered URL pattern (/calendar/N/N/) that all read the same, numbers and month
# names aside, after which its further URLs are traps (0 = off)
LINKSPIDER_TRAP_PATTERN_PAGES = 20
LINKSPIDER_TRAP_MAX_SEGMENTS = 25  # path segments beyond which a URL is skipped as a trap
LINKSPIDER_TRAILING_SLASH = "add"  # "add": extensionless paths end in /; "strip"; "keep"
LINKSPIDER_SCOPE = "host"  # "host": the start URL's origin; "path": under the start path
LINKSPIDER_SITEMAPS = True  # also seed from robots.txt Sitemap lines and /sitemap.xml
LINKSPIDER_INCREMENTAL = False  # conditional requests + carry-over from the previous job (-a incremental=1)
LINKSPIDER_RENDER_JS = False  # render pages in a browser: False/"off", True/"all", "auto" (-a render=)
# render=auto renders a page with scripts whose plain HTML has fewer words (or content links)
# than this share of the site's typical page; before 5 pages are known, fewer than MIN_WORDS.
LINKSPIDER_RENDER_AUTO_SHARE = 0.25
LINKSPIDER_RENDER_AUTO_MIN_WORDS = 50
LINKSPIDER_CHROMIUM_PATH = "/usr/bin/chromium"  # browser used when rendering

# --- one crawl on several workers (linkspider/distributed.py) -------------------
# Set LINKSPIDER_REDIS_URL (-s, or Scrapyd's -d setting=) and every crawl started
# with it shares one frontier and seen-set in Redis (scrapy-redis); off when empty.
ADDONS = {"linkspider.distributed.SharedCrawl": 100}
LINKSPIDER_REDIS_URL = ""  # e.g. redis://10.0.0.5:6379/0
LINKSPIDER_REDIS_CRAWL = ""  # name of the shared crawl; "" = "<spider>:<host>[:port]" of the start URL
LINKSPIDER_REDIS_IDLE_CLOSE = 10.0  # seconds all workers must be idle with an empty queue before they stop
LINKSPIDER_REDIS_WORKER_TTL = 30.0  # seconds without a heartbeat after which a worker counts as gone

# --- politeness and safety ----------------------------------------------------
USER_AGENT = "linkspider/0.1 (+https://github.com/linkspider/linkspider; internal-link audit)"
ROBOTSTXT_OBEY = True
AUTOTHROTTLE_ENABLED = True
AUTOTHROTTLE_START_DELAY = 0.5
AUTOTHROTTLE_MAX_DELAY = 30.0
AUTOTHROTTLE_TARGET_CONCURRENCY = 4.0
CONCURRENT_REQUESTS = 16
CONCURRENT_REQUESTS_PER_DOMAIN = 8
DOWNLOAD_DELAY = 0
DOWNLOAD_MAXSIZE = 10 * 1024 * 1024  # bytes; larger responses are skipped as too_large
DOWNLOAD_WARNSIZE = 0
DOWNLOAD_TIMEOUT = 30
DEPTH_LIMIT = 50  # clicks from the start page
# Breadth-first, so the first time a page is reached is by its shortest click path.
DEPTH_PRIORITY = 1
SCHEDULER_DISK_QUEUE = "scrapy.squeues.PickleFifoDiskQueue"
SCHEDULER_MEMORY_QUEUE = "scrapy.squeues.FifoMemoryQueue"
COOKIES_ENABLED = False
TELNETCONSOLE_ENABLED = False
REMOTE_CONTROL_ENABLED = False
HTTPERROR_ALLOW_ALL = True  # the spider records 4xx/5xx itself as skipped http_error
REDIRECT_ENABLED = True
REQUEST_FINGERPRINTER_IMPLEMENTATION = "2.7"
FEED_EXPORT_ENCODING = "utf-8"
LOG_LEVEL = "INFO"
