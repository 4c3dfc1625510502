"""The review queue of a finished run, loaded once from ``--out``.

suggestions.parquet (required) gives the suggestions per source page, best first;
pages.parquet and index-ids.parquet (optional) name every crawled page, with its clean
title and, when the run wrote them, its opening words; report.html is served as is.
Page URLs are looked up tolerantly (``spellings``): scheme and host case, default port,
fragment, trailing slash.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import pyarrow as pa
import pyarrow.parquet as pq

from postprocess.errors import InputError
from postprocess.stages.index import IDS_FILE
from postprocess.stages.openings import OPENING_COLUMN
from postprocess.stages.output import PAGES_FILE

SUGGESTIONS_FILE = "suggestions.parquet"
REPORT_FILE = "report.html"
#: Columns that describe the source page; every other column belongs to one suggestion.
PAGE_COLUMNS = ("source_url", "source_title")
REQUIRED_COLUMNS = ("source_url", "target_url", "score")
DEFAULT_PORTS = {"http": 80, "https": 443}


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


def json_value(value: object) -> object:
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
    #: page URL → the first words of its main text (empty when the run did not write them)
    openings: dict[str, str] = field(default_factory=dict)
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

    def suggestion(self, source_url: str, target_url: str) -> dict | None:
        """The queue's row for one pair, or None when this run did not propose it."""
        for row in self.by_page.get(source_url, ()):
            if row["target_url"] == target_url:
                return row
        return None


def _read_table(path: Path, what: str, columns: Iterable[str] | None = None) -> pa.Table:
    try:
        return pq.read_table(path, columns=list(columns) if columns is not None else None)
    except (OSError, pa.ArrowException) as exc:
        raise InputError(f"serve: cannot read {what} {path}: {exc}") from exc


def _read_pages(queue: Queue, path: Path) -> list[str]:
    """Titles and opening words from pages.parquet; the URLs it lists."""
    try:
        names = pq.read_schema(path).names
    except (OSError, pa.ArrowException) as exc:
        raise InputError(f"serve: cannot read page list {path}: {exc}") from exc
    columns = ["url", "title"] + ([OPENING_COLUMN] if OPENING_COLUMN in names else [])
    table = _read_table(path, "page list", columns)
    urls = table["url"].to_pylist()
    for page, title in zip(urls, table["title"].to_pylist(), strict=True):
        if page and title:
            queue.titles.setdefault(page, title)
    if OPENING_COLUMN in columns:
        for page, opening in zip(urls, table[OPENING_COLUMN].to_pylist(), strict=True):
            if page and opening:
                queue.openings[page] = opening
    return urls


def load_queue(out: str | Path) -> Queue:
    """Read ``out``/suggestions.parquet (required), index-ids.parquet, pages.parquet, report.html."""
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
            {k: json_value(v) for k, v in row.items() if k not in PAGE_COLUMNS})
    for rows in queue.by_page.values():
        rows.sort(key=lambda r: (-r["score"], r.get("rank") or 0, r["target_url"]))
    ids = out / IDS_FILE
    known = _read_table(ids, "page list", ["url"])["url"].to_pylist() if ids.is_file() else []
    pages = out / PAGES_FILE
    if pages.is_file():  # every crawled page with its title, suggestions or not
        known += _read_pages(queue, pages)
    for page in [*known, *queue.by_page]:
        if page:
            queue.pages.setdefault(normalise(page), page)
    report = out / REPORT_FILE
    if report.is_file():
        queue.report = report.read_bytes()
    return queue
