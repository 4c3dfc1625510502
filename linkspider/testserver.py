"""A small static-file server on 127.0.0.1 for the sample site and the end-to-end tests.

It behaves like a real static host where that matters to a crawl:

- ``/dir/`` serves ``dir/index.html``; ``/dir`` (no slash) answers 301 to ``/dir/``;
- ``<root>/_redirects`` maps old paths to new ones: lines ``OLD NEW [STATUS]``
  (status 301 when omitted, ``#`` starts a comment);
- the query string and ``;`` path parameters are ignored when looking up a file
  (``/blog/?page=2`` and ``/blog/;jsessionid=X`` serve ``blog/index.html``);
- Content-Type from the file extension (``text/html; charset=utf-8`` …);
- unknown paths answer 404 with ``<root>/404.html`` when it exists;
- names starting with ``.``, and files starting with ``_`` in the top folder
  (``_redirects``), are never served (folders such as Sphinx's ``_static`` are);
- ``{{BASE}}`` in ``.html``, ``.xml`` and ``.txt`` files is replaced by the base
  URL without its trailing slash (``http://127.0.0.1:PORT``), so robots.txt,
  sitemaps and absolute links work on whatever port the server got;
- ``ETag`` (a hash of the body) and ``Last-Modified`` (the file's mtime) on every file,
  and ``304 Not Modified`` for ``If-None-Match`` / ``If-Modified-Since`` that still hold
  (``If-None-Match`` wins, as in RFC 9110), so recrawls can be conditional;
- an optional delay per request (argument, or ``LINKSPIDER_TESTSERVER_DELAY``
  seconds) slows a crawl down so that tests can interrupt it mid-way.

Use ``with serve("sample_site") as base_url: ...`` in tests, or
``python3 -m linkspider.testserver DIR [--port N] [--delay S]`` from a shell.
"""

from __future__ import annotations

import argparse
import hashlib
import mimetypes
import os
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from email.utils import formatdate, parsedate_to_datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import quote, unquote, urlsplit

HOST = "127.0.0.1"
DELAY_ENV = "LINKSPIDER_TESTSERVER_DELAY"
BASE_PLACEHOLDER = b"{{BASE}}"
TEMPLATED_SUFFIXES = frozenset({".html", ".htm", ".xml", ".txt"})
REDIRECT_STATUSES = frozenset({301, 302, 303, 307, 308})

CONTENT_TYPES = {
    ".html": "text/html; charset=utf-8",
    ".htm": "text/html; charset=utf-8",
    ".xml": "application/xml",
    ".txt": "text/plain; charset=utf-8",
    ".pdf": "application/pdf",
    ".css": "text/css; charset=utf-8",
    ".js": "text/javascript; charset=utf-8",
    ".json": "application/json",
}

DEFAULT_404 = b'<!doctype html><html lang="en"><title>Not found</title><h1>Not found</h1></html>\n'


def content_type(path: Path) -> str:
    """The Content-Type header for a file, from its extension."""
    suffix = path.suffix.lower()
    if suffix in CONTENT_TYPES:
        return CONTENT_TYPES[suffix]
    guessed, _ = mimetypes.guess_type(path.name)
    return guessed or "application/octet-stream"


def read_redirects(root: Path) -> dict[str, tuple[str, int]]:
    """The redirects map of ``root/_redirects``: old path -> (new location, status)."""
    file = root / "_redirects"
    redirects: dict[str, tuple[str, int]] = {}
    if not file.is_file():
        return redirects
    for number, raw in enumerate(file.read_text(encoding="utf-8").splitlines(), start=1):
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        parts = line.split()
        if len(parts) not in (2, 3) or not parts[0].startswith("/"):
            raise ValueError(f"{file}:{number}: expected 'OLD_PATH NEW_PATH [STATUS]', got {raw!r}")
        status = int(parts[2]) if len(parts) == 3 and parts[2].isdigit() else 0
        if len(parts) == 3 and status not in REDIRECT_STATUSES:
            raise ValueError(f"{file}:{number}: status must be one of {sorted(REDIRECT_STATUSES)}")
        redirects[parts[0]] = (parts[1], status or 301)
    return redirects


def parse_delay(value: str | None) -> float:
    """Seconds of delay from a string (the environment variable); 0 when unset."""
    if not value:
        return 0.0
    try:
        delay = float(value)
    except ValueError:
        raise ValueError(f"{DELAY_ENV} must be a number of seconds, got {value!r}") from None
    if delay < 0:
        raise ValueError(f"{DELAY_ENV} must not be negative, got {value!r}")
    return delay


def _strip_path_params(path: str) -> str:
    """``/a;jsessionid=X/b;v=1`` -> ``/a/b``: path parameters play no part in file lookup."""
    if ";" not in path:
        return path
    return "/".join(segment.split(";", 1)[0] for segment in path.split("/"))


def _toggle_slash(path: str) -> str:
    """``/a/`` -> ``/a`` and ``/a`` -> ``/a/`` (redirect sources match either form)."""
    return path[:-1] if path.endswith("/") and path != "/" else path + "/"


class SiteServer(ThreadingHTTPServer):
    """A threading HTTP server bound to 127.0.0.1 that serves one folder as a static site."""

    daemon_threads = True

    def __init__(self, root: str | os.PathLike[str], port: int = 0, delay: float | None = None) -> None:
        self.root = Path(root).resolve()
        if not self.root.is_dir():
            raise NotADirectoryError(f"site folder not found: {root}")
        self.redirects = read_redirects(self.root)
        self.delay = parse_delay(os.environ.get(DELAY_ENV)) if delay is None else delay
        self.requests: list[str] = []  # request paths (with query) in arrival order
        self.responses: list[tuple[str, int, int]] = []  # (path, status, body bytes) as answered
        self._lock = threading.Lock()
        super().__init__((HOST, port), SiteHandler)

    @property
    def url(self) -> str:
        """The base URL, ending in '/'."""
        return f"http://{HOST}:{self.server_address[1]}/"

    def record(self, path: str) -> None:
        """Remember one request path (tests count fetches with it)."""
        with self._lock:
            self.requests.append(path)


class SiteHandler(BaseHTTPRequestHandler):
    """Answers GET and HEAD from the server's folder; see the module docstring."""

    server: SiteServer
    server_version = "linkspider-testserver/1"
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: object) -> None:
        """Quiet: no access log on stderr."""

    def do_HEAD(self) -> None:
        self._respond(send_body=False)

    def do_GET(self) -> None:
        self._respond(send_body=True)

    def _respond(self, send_body: bool) -> None:
        self.server.record(self.path)
        if self.server.delay:
            time.sleep(self.server.delay)
        parts = urlsplit(self.path)
        path = _strip_path_params(unquote(parts.path)) or "/"
        redirect = self.server.redirects.get(path) or self.server.redirects.get(_toggle_slash(path))
        if redirect is not None:
            location, status = redirect
            self._redirect(location, status, send_body)
            return
        file = self._resolve(path)
        if file is not None and file.is_dir():
            if not path.endswith("/"):
                query = f"?{parts.query}" if parts.query else ""
                self._redirect(f"{quote(path)}/{query}", 301, send_body)
                return
            file = file / "index.html"
        if file is None or not file.is_file():
            self._not_found(send_body)
            return
        body = self._body(file)
        etag = '"' + hashlib.sha1(body).hexdigest()[:16] + '"'
        modified = int(file.stat().st_mtime)
        validators = {"ETag": etag, "Last-Modified": formatdate(modified, usegmt=True)}
        if self._not_modified(etag, modified):
            self._send(304, content_type(file), b"", send_body, headers=validators)
            return
        self._send(200, content_type(file), body, send_body, headers=validators)

    def _not_modified(self, etag: str, modified: int) -> bool:
        match = self.headers.get("If-None-Match")
        if match is not None:
            return etag in [tag.strip() for tag in match.split(",")] or match.strip() == "*"
        since = self.headers.get("If-Modified-Since")
        if since:
            try:
                return modified <= int(parsedate_to_datetime(since).timestamp())
            except (TypeError, ValueError):
                return False
        return False

    def _resolve(self, path: str) -> Path | None:
        """The file or folder for a URL path, or None if it is missing, hidden or outside the root."""
        segments = [s for s in path.split("/") if s]
        if any(s.startswith(".") for s in segments):
            return None
        candidate = self.server.root.joinpath(*segments).resolve()
        if candidate.parent == self.server.root and candidate.name.startswith("_") and candidate.is_file():
            return None  # the site's own control files (_redirects, build scripts)
        if candidate != self.server.root and self.server.root not in candidate.parents:
            return None
        return candidate if candidate.exists() else None

    def _body(self, file: Path) -> bytes:
        data = file.read_bytes()
        if file.suffix.lower() in TEMPLATED_SUFFIXES and BASE_PLACEHOLDER in data:
            data = data.replace(BASE_PLACEHOLDER, self.server.url.rstrip("/").encode())
        return data

    def _redirect(self, location: str, status: int, send_body: bool) -> None:
        body = f'<!doctype html><title>Moved</title><a href="{location}">{location}</a>\n'.encode()
        self._send(status, "text/html; charset=utf-8", body, send_body, location=location)

    def _not_found(self, send_body: bool) -> None:
        page = self.server.root / "404.html"
        body = self._body(page) if page.is_file() else DEFAULT_404
        self._send(404, "text/html; charset=utf-8", body, send_body)

    def _send(self, status: int, ctype: str, body: bytes, send_body: bool, location: str = "",
              headers: dict[str, str] | None = None) -> None:
        with self.server._lock:
            self.server.responses.append((self.path, status, len(body) if send_body else 0))
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        if location:
            self.send_header("Location", location)
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        if send_body:
            self.wfile.write(body)


@contextmanager
def running(root: str | os.PathLike[str], port: int = 0, delay: float | None = None) -> Iterator[SiteServer]:
    """Start a :class:`SiteServer` in a background thread; shut it down on exit."""
    server = SiteServer(root, port=port, delay=delay)
    thread = threading.Thread(
        target=server.serve_forever, kwargs={"poll_interval": 0.05}, name="linkspider-testserver", daemon=True
    )
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


@contextmanager
def serve(directory: str | os.PathLike[str], port: int = 0, delay: float | None = None) -> Iterator[str]:
    """Serve ``directory`` on 127.0.0.1 in a background thread; yield the base URL ('http://…/')."""
    with running(directory, port=port, delay=delay) as server:
        yield server.url


def main(argv: list[str] | None = None) -> int:
    """CLI: serve a folder until killed, printing the base URL first."""
    parser = argparse.ArgumentParser(
        prog="python3 -m linkspider.testserver", description="Serve a folder of static files on 127.0.0.1."
    )
    parser.add_argument("directory", help="the site folder (e.g. sample_site)")
    parser.add_argument("--port", type=int, default=0, help="port to listen on (0 = a free port)")
    parser.add_argument("--delay", type=float, default=None, help=f"seconds per request (or ${DELAY_ENV})")
    args = parser.parse_args(argv)
    if args.delay is not None and args.delay < 0:
        parser.error("--delay must not be negative")
    try:
        server = SiteServer(args.directory, port=args.port, delay=args.delay)
    except (OSError, ValueError) as exc:
        print(f"testserver: {exc}", file=sys.stderr)
        return 2
    print(server.url, flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
