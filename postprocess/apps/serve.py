"""``python -m postprocess serve``: the review queue over HTTP, read-only, from a finished ``--out``.

``GET /recommend?url=<page URL>[&limit=N]`` answers the suggestions for one source page,
best first; ``GET /health`` says what is loaded; ``GET /`` is a short page with a form;
``GET /report`` is report.html. suggestions.parquet is read once at start (restart the
server after a new run). The server is the standard library's ``ThreadingHTTPServer``: it
answers GETs from memory and binds 127.0.0.1 by default; put a reverse proxy with TLS in
front before exposing it to anyone else.
"""

from __future__ import annotations

import argparse
import html
import json
import math
import socket
import sys
from collections.abc import Iterable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, urlsplit, urlunsplit

import pyarrow as pa
import pyarrow.parquet as pq

from postprocess.errors import InputError
from postprocess.stages.index import IDS_FILE
from postprocess.stages.output import PAGES_FILE

SUGGESTIONS_FILE = "suggestions.parquet"
REPORT_FILE = "report.html"
#: Columns that describe the source page; every other column belongs to one suggestion.
PAGE_COLUMNS = ("source_url", "source_title")
REQUIRED_COLUMNS = ("source_url", "target_url", "score")
DEFAULT_PORTS = {"http": 80, "https": 443}
PARAMETERS = ("url", "limit")
#: Seconds a connection may stay silent before the server closes it.
IDLE_TIMEOUT = 30
JSON = "application/json"
#: Connections the kernel queues before accept (socketserver's 5 drops bursts: clients wait 1 s to retry).
LISTEN_BACKLOG = 128


def normalise(url: str) -> str:
    """``url`` with lower-case scheme and host, no default port, no fragment, ``/`` for an empty path.

    Only spellings that cannot name another page are folded; the path and query stay as given.
    """
    url = url.strip()
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:
        return url
    scheme = parts.scheme.lower()
    if scheme not in DEFAULT_PORTS or not parts.hostname:
        return url.partition("#")[0]
    host = parts.hostname.lower()
    if ":" in host:  # IPv6 literal
        host = f"[{host}]"
    if port is not None and port != DEFAULT_PORTS[scheme]:
        host = f"{host}:{port}"
    userinfo = parts.netloc.rpartition("@")[0]
    netloc = f"{userinfo}@{host}" if userinfo else host
    return urlunsplit((scheme, netloc, parts.path or "/", parts.query, ""))


def spellings(url: str) -> list[str]:
    """The URLs to try for ``url``, in order: as given, normalised, with the trailing slash toggled."""
    tried = [url, normalise(url)]
    parts = urlsplit(tried[1])
    if parts.path not in ("", "/"):
        path = parts.path[:-1] if parts.path.endswith("/") else parts.path + "/"
        tried.append(urlunsplit(parts._replace(path=path)))
    return list(dict.fromkeys(tried))


def _json_value(value: object) -> object:
    """NaN and infinities have no JSON spelling: they become null."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


@dataclass
class Queue:
    """The loaded review queue: suggestions per source page, best first."""

    out: Path
    by_page: dict[str, list[dict]] = field(default_factory=dict)
    titles: dict[str, str] = field(default_factory=dict)
    #: normalised URL → page URL, for every page the queue knows (with or without suggestions)
    pages: dict[str, str] = field(default_factory=dict)
    suggestions: int = 0
    report: bytes | None = None

    def find(self, url: str) -> str | None:
        """The page URL that ``url`` names, trying the simple spellings; None when unknown."""
        for candidate in spellings(url.strip()):
            page = self.pages.get(normalise(candidate))
            if page is not None:
                return page
        return None

    def recommend(self, page: str, limit: int | None = None) -> list[dict]:
        rows = self.by_page.get(page, [])
        return rows if limit is None else rows[:limit]


def _read_table(path: Path, what: str, columns: Iterable[str] | None = None) -> pa.Table:
    try:
        return pq.read_table(path, columns=list(columns) if columns is not None else None)
    except (OSError, pa.ArrowException) as exc:
        raise InputError(f"serve: cannot read {what} {path}: {exc}") from exc


def load_queue(out: str | Path) -> Queue:
    """Read ``out``/suggestions.parquet (required), index-ids.parquet and report.html (optional)."""
    out = Path(out)
    if not out.is_dir():
        raise InputError(f"serve: output directory {out} not found: run python -m postprocess first")
    path = out / SUGGESTIONS_FILE
    if not path.is_file():
        raise InputError(f"serve: {path} not found: run python -m postprocess --out {out} first")
    table = _read_table(path, "suggestions file")
    missing = [c for c in REQUIRED_COLUMNS if c not in table.column_names]
    if missing:
        raise InputError(f"serve: {path} has no column {missing[0]!r}: not a postprocess suggestions file")
    queue = Queue(out=out, suggestions=table.num_rows)
    for row in table.to_pylist():
        page = row["source_url"]
        if not page or not row["target_url"] or row["score"] is None:
            continue
        if row.get("source_title") and page not in queue.titles:
            queue.titles[page] = row["source_title"]
        queue.by_page.setdefault(page, []).append(
            {k: _json_value(v) for k, v in row.items() if k not in PAGE_COLUMNS})
    for rows in queue.by_page.values():
        rows.sort(key=lambda r: (-r["score"], r.get("rank") or 0, r["target_url"]))
    ids = out / IDS_FILE
    known = _read_table(ids, "page list", ["url"])["url"].to_pylist() if ids.is_file() else []
    pages = out / PAGES_FILE
    if pages.is_file():  # every crawled page with its title, suggestions or not
        table = _read_table(pages, "page list", ["url", "title"])
        for page, title in zip(table["url"].to_pylist(), table["title"].to_pylist(), strict=True):
            if page and title:
                queue.titles.setdefault(page, title)
            known.append(page)
    for page in [*known, *queue.by_page]:
        if page:
            queue.pages.setdefault(normalise(page), page)
    report = out / REPORT_FILE
    if report.is_file():
        queue.report = report.read_bytes()
    return queue


class BadRequest(Exception):
    """A request the client must change: answered 400 with the message."""


def parse_recommend_query(query: str) -> tuple[str, int | None]:
    """``url`` and ``limit`` from a /recommend query string; BadRequest naming the problem."""
    try:
        params = parse_qs(query, keep_blank_values=True, max_num_fields=len(PARAMETERS) * 2)
    except ValueError as exc:
        raise BadRequest("too many query parameters: give url and, optionally, limit") from exc
    unknown = sorted(set(params) - set(PARAMETERS))
    if unknown:
        raise BadRequest(f"unknown parameter {unknown[0]!r} (parameters: url, limit; "
                         "percent-encode the page URL when it has its own query string)")
    for name, values in params.items():
        if len(values) > 1:
            raise BadRequest(f"give {name} once")
    url = params.get("url", [""])[0].strip()
    if not url:
        raise BadRequest("missing url parameter: /recommend?url=<page URL>")
    limit = None
    if "limit" in params:
        text = params["limit"][0].strip()
        try:
            limit = int(text) if text.isascii() and text.isdigit() else 0
        except ValueError:  # more digits than Python converts
            limit = 0
        if limit < 1:
            raise BadRequest(f"limit must be a whole number of at least 1, not {params['limit'][0]!r}")
    return url, limit


def index_page(queue: Queue) -> str:
    """GET /: what the server offers, with a form for /recommend."""
    report = '<li><a href="/report">/report</a>: report.html of the same run</li>' if queue.report else ""
    return "\n".join([
        "<!doctype html>", '<html lang="en"><head><meta charset="utf-8">',
        "<title>Internal-link suggestions API</title></head><body>",
        "<h1>Internal-link suggestions API</h1>",
        f"<p>{len(queue.by_page)} pages with {queue.suggestions} suggestions, from "
        f"{html.escape(str(queue.out))}.</p>",
        "<ul><li><code>GET /recommend?url=&lt;page URL&gt;[&amp;limit=N]</code>: suggestions for one page, "
        "best first (JSON)</li>",
        '<li><a href="/health">/health</a>: status and counts (JSON)</li>', report, "</ul>",
        '<form action="/recommend" method="get"><label>Page URL <input name="url" size="60"></label> '
        '<label>limit <input name="limit" size="3" value="5"></label> <button>Suggest links</button></form>',
        "</body></html>",
    ])


class Handler(BaseHTTPRequestHandler):
    """GET and HEAD on /, /recommend, /health, /report; anything else is a JSON error."""

    server_version = "linkspider-postprocess"
    timeout = IDLE_TIMEOUT
    queue: Queue  # set on the subclass made by make_server

    def version_string(self) -> str:
        return self.server_version  # no Python version in the Server header

    def do_GET(self) -> None:  # noqa: N802 - http.server's naming
        self._answer(body=True)

    def do_HEAD(self) -> None:  # noqa: N802
        self._answer(body=False)

    def _not_allowed(self) -> None:
        self._send(405, _json({"error": f"{self.command} is not allowed: only GET and HEAD"}),
                   JSON, extra={"Allow": "GET, HEAD"})

    do_POST = do_PUT = do_DELETE = do_PATCH = do_OPTIONS = _not_allowed  # noqa: N815

    def _answer(self, body: bool) -> None:
        parts = urlsplit(self.path)
        route = {"/": self._root, "/recommend": self._recommend, "/health": self._health,
                 "/report": self._report}.get(parts.path)
        if route is None:
            error = {"error": f"no such path {parts.path}: try /recommend?url=<page URL>"}
            status, payload, kind = 404, _json(error), JSON
        else:
            status, payload, kind = route(parts.query)
        self._send(status, payload, kind, body=body)

    def _root(self, query: str) -> tuple[int, bytes, str]:
        return 200, index_page(self.queue).encode("utf-8"), "text/html; charset=utf-8"

    def _health(self, query: str) -> tuple[int, bytes, str]:
        q = self.queue
        return 200, _json({"status": "ok", "pages": len(q.by_page), "suggestions": q.suggestions,
                           "known_pages": len(q.pages)}), JSON

    def _report(self, query: str) -> tuple[int, bytes, str]:
        if self.queue.report is None:
            return 404, _json({"error": f"no {REPORT_FILE} in {self.queue.out}"}), JSON
        return 200, self.queue.report, "text/html; charset=utf-8"

    def _recommend(self, query: str) -> tuple[int, bytes, str]:
        try:
            url, limit = parse_recommend_query(query)
        except BadRequest as exc:
            return 400, _json({"error": str(exc)}), JSON
        page = self.queue.find(url)
        if page is None:
            return 404, _json({"error": f"no page {url} in this crawl's review queue", "url": url}), \
                JSON
        rows = self.queue.recommend(page, limit)
        return 200, _json({"url": url, "page_url": page, "title": self.queue.titles.get(page, ""),
                           "total": len(self.queue.by_page.get(page, [])), "suggestions": rows}), \
            JSON

    def _send(self, status: int, payload: bytes, kind: str, body: bool = True,
              extra: dict[str, str] | None = None) -> None:
        self.send_response(status)
        self.send_header("Content-Type", kind if "charset" in kind else kind + "; charset=utf-8")
        self.send_header("Content-Length", str(len(payload)))
        self.send_header("X-Content-Type-Options", "nosniff")
        for name, value in (extra or {}).items():
            self.send_header(name, value)
        self.end_headers()
        if body:
            self.wfile.write(payload)


def _json(value: object) -> bytes:
    return json.dumps(value, ensure_ascii=False, allow_nan=False).encode("utf-8")


def make_server(queue: Queue, host: str = "127.0.0.1", port: int = 8000) -> ThreadingHTTPServer:
    """A bound (not yet serving) server for ``queue``; InputError when it cannot listen."""
    if not 0 <= port <= 65535:
        raise InputError(f"serve: --port must be between 0 and 65535, not {port}")
    handler = type("QueueHandler", (Handler,), {"queue": queue})
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    server_class = type("QueueServer", (ThreadingHTTPServer,),
                        {"address_family": family, "request_queue_size": LISTEN_BACKLOG})
    try:
        server = server_class((host, port), handler)
    except (OSError, OverflowError) as exc:
        raise InputError(f"serve: cannot listen on {host}:{port}: {exc}") from exc
    server.daemon_threads = True
    return server


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--out", default="data/out",
                        help="finished postprocess output directory (default %(default)s)")
    parser.add_argument("--host", default="127.0.0.1",
                        help="address to listen on (default %(default)s; expose it only behind a reverse "
                             "proxy with TLS)")
    parser.add_argument("--port", type=int, default=8000,
                        help="port (default %(default)s; 0 = any free port)")


def run(args: argparse.Namespace) -> int:
    """Load the queue, bind, print where it listens, serve until Ctrl+C."""
    queue = load_queue(args.out)
    server = make_server(queue, args.host, args.port)
    host, port = server.server_address[:2]
    shown = f"[{host}]" if ":" in host else host
    print(f"serving {len(queue.by_page)} pages, {queue.suggestions} suggestions from {queue.out} "
          f"on http://{shown}:{port}/ (Ctrl+C stops)", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        print("stopped", file=sys.stderr, flush=True)
    finally:
        server.server_close()
    return 0
