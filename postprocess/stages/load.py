"""Load a crawl directory: merge part files, keep the newest fetch per URL, resolve aliases.

postprocess imports nothing of ``linkspider`` but its schema module
(``linkspider.items``, free of Scrapy): every part file's schema version is checked
against it and the columns postprocess needs are checked by name, so a crawl
written by another version fails with one line saying what to do.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from linkspider.items import READABLE_VERSIONS, TABLES
from postprocess.errors import InputError

PAGE_COLUMNS = ("url", "status", "title", "h1", "headings", "text", "lang", "noindex", "thin",
                "content_hash", "kind", "blocks", "fetched_at")
PAGE_OPTIONAL = ("word_count", "published", "modified", "depth", "meta_description", "job")
LINK_COLUMNS = ("source_url", "target_url", "anchor_text", "position", "fetched_at")
LINK_OPTIONAL = ("nofollow", "internal", "job")
SKIP_COLUMNS = ("url", "reason", "alias_of")
SKIP_OPTIONAL = ("fetched_at", "job")
ALIAS_REASONS = ("redirect", "canonicalised")
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


@dataclass(frozen=True, slots=True)
class Block:
    """One block of a page's main content (``linkspider.items.BLOCK_TYPE``)."""

    kind: str
    text: str
    code: tuple[tuple[int, int], ...] = ()  # inline code spans in ``text``
    links: tuple[tuple[int, int, str | None], ...] = ()  # existing links: start, end, target URL


@dataclass(frozen=True, slots=True)
class Page:
    """One page of the crawl (newest fetch of its canonical URL)."""

    url: str
    title: str = ""
    h1: str = ""
    headings: tuple[str, ...] = ()
    text: str = ""
    status: int = 200
    lang: str | None = None
    noindex: bool = False
    thin: bool = False
    content_hash: str = ""
    word_count: int = 0
    published: str | None = None
    modified: str | None = None
    depth: int | None = None
    meta_description: str = ""
    fetched_at: datetime = _EPOCH
    job: str | None = None
    kind: str = "content"  # content | listing | navigation | code | other
    blocks: tuple[Block, ...] = ()


@dataclass(frozen=True, slots=True)
class Link:
    """One link of a page's newest fetch, its target rewritten through the alias map."""

    source_url: str
    target_url: str
    anchor_text: str = ""
    position: str = "content"
    nofollow: bool = False
    internal: bool = True


@dataclass(frozen=True)
class Crawl:
    """A loaded crawl: pages, links and the alias map (alias URL → page URL)."""

    pages: list[Page]
    links: list[Link]
    aliases: dict[str, str] = field(default_factory=dict)
    directory: str = ""

    def page_index(self) -> dict[str, int]:
        """URL → position in ``pages``."""
        return {p.url: i for i, p in enumerate(self.pages)}


def _part_files(directory: Path, table: str) -> list[Path]:
    return sorted((directory / table).glob("part-*.parquet"))


@dataclass
class BadParts:
    """Part files skipped with ``--skip-bad-parts``: (path, rows it held or None when unknown, why)."""

    parts: list[tuple[Path, int | None, str]] = field(default_factory=list)

    @property
    def rows(self) -> int:
        return sum(n or 0 for _, n, _ in self.parts)

    def describe(self) -> str:
        unknown = sum(1 for _, n, _ in self.parts if n is None)
        rows = f"{self.rows} rows"
        if unknown:
            rows += f" (and the rows of {unknown} part(s) whose footer is lost)"
        return f"skipped {len(self.parts)} unreadable part file(s), {rows}: " + ", ".join(
            str(path) for path, _, _ in self.parts[:3]) + (" …" if len(self.parts) > 3 else "")


def _first_line(exc: Exception) -> str:
    return str(exc).splitlines()[0] if str(exc) else type(exc).__name__


def _rows_in(path: Path) -> int | None:
    try:
        return pq.ParquetFile(path).metadata.num_rows
    except (OSError, pa.ArrowException):
        return None


def _read_part(path: Path, table: str, required: tuple[str, ...], optional: tuple[str, ...]) -> pa.Table:
    """One part file's columns, checked against the crawl contract (InputError); an unreadable
    file raises what pyarrow raises."""
    schema = pq.read_schema(path)
    check_version(path, schema)
    missing = [c for c in required if c not in schema.names]
    if missing:
        raise InputError(f"{table} part {path.name} has no column '{missing[0]}'")
    columns = list(required) + [c for c in optional if c in schema.names]
    check_types(path, table, schema, columns)
    return pq.read_table(path, columns=columns)


def _read_parts(files: Iterable[Path], table: str, required: tuple[str, ...],
                optional: tuple[str, ...], job: str | None, bad: BadParts | None = None) -> list[dict]:
    """Rows of every part file as dicts; a missing required column is an InputError. An unreadable
    part is an InputError naming it — or, with ``bad``, is skipped and recorded there."""
    rows: list[dict] = []
    for path in files:
        try:
            part = _read_part(path, table, required, optional)
        except (OSError, pa.ArrowException) as exc:
            if bad is None:
                raise InputError(f"cannot read {path}: {exc} "
                                 "(--skip-bad-parts reads the other parts)") from exc
            bad.parts.append((path, _rows_in(path), _first_line(exc)))
            continue
        if job is not None:
            if "job" not in part.column_names:
                raise InputError(f"{table} part {path.name} has no column 'job' (needed by --job)")
            part = part.filter(pc.equal(part["job"], job))
        rows.extend(part.to_pylist())
    return rows


def check_version(path: Path, schema: pa.Schema) -> None:
    """One-line InputError when a part was written by another version of the crawl dataset."""
    version = (schema.metadata or {}).get(b"linkspider_schema_version", b"").decode() or "unknown"
    if version in READABLE_VERSIONS:
        return
    if version.isdigit() and int(version) < int(READABLE_VERSIONS[0]):
        raise InputError(f"{path} is crawl schema version {version}; postprocess needs version "
                         f"{READABLE_VERSIONS[0]} or later (content blocks and page kinds): "
                         "crawl the site again")
    raise InputError(f"{path} is crawl schema version {version}; this postprocess reads versions "
                     f"{' and '.join(READABLE_VERSIONS)}: use the linkspider that wrote it")


def check_types(path: Path, table: str, schema: pa.Schema, columns: Iterable[str]) -> None:
    """One-line InputError when a column has another type than the crawl contract's
    (``linkspider.items.TABLES``)."""
    contract = TABLES[table]
    for name in columns:
        if name in contract.names and not schema.field(name).type.equals(contract.field(name).type):
            raise InputError(f"{table} part {path.name}: column '{name}' is {schema.field(name).type}, "
                             f"the crawl dataset says {contract.field(name).type}")


def _blocks(rows: list[dict] | None) -> tuple[Block, ...]:
    return tuple(
        Block(b.get("kind") or "other", b.get("text") or "",
              tuple((c["start"], c["end"]) for c in b.get("code") or ()),
              tuple((k["start"], k["end"], k.get("url")) for k in b.get("links") or ()))
        for b in rows or ())


def _when(value: datetime | None) -> datetime:
    return value if value is not None else _EPOCH


def merge_pages(rows: Iterable[dict]) -> dict[str, dict]:
    """Newest row per URL (by fetched_at; a later part wins a tie)."""
    newest: dict[str, dict] = {}
    for row in rows:
        url = row.get("url")
        if not url:
            continue
        old = newest.get(url)
        if old is None or _when(row.get("fetched_at")) >= _when(old.get("fetched_at")):
            newest[url] = row
    return newest


def alias_map(rows: Iterable[dict]) -> dict[str, str]:
    """Alias URL → the URL it stands for, from redirect and canonicalised skips (newest wins)."""
    newest: dict[str, dict] = {}
    for row in rows:
        if row.get("reason") in ALIAS_REASONS and row.get("alias_of") and row.get("url"):
            if row["alias_of"] == row["url"]:
                continue
            old = newest.get(row["url"])
            if old is None or _when(row.get("fetched_at")) >= _when(old.get("fetched_at")):
                newest[row["url"]] = row
    return {url: row["alias_of"] for url, row in newest.items()}


def resolve(url: str, aliases: dict[str, str]) -> str:
    """Follow alias chains to the end; a cycle leaves the URL where the cycle starts."""
    seen = {url}
    while url in aliases:
        nxt = aliases[url]
        if nxt in seen:
            return url
        seen.add(nxt)
        url = nxt
    return url


def newest_links(rows: Iterable[dict]) -> list[dict]:
    """Keep each source's links from its newest fetch only."""
    rows = list(rows)
    latest: dict[str, datetime] = {}
    for row in rows:
        when = _when(row.get("fetched_at"))
        src = row["source_url"]
        if src not in latest or when > latest[src]:
            latest[src] = when
    return [r for r in rows if _when(r.get("fetched_at")) == latest[r["source_url"]]]


def _page(row: dict) -> Page:
    return Page(
        url=row["url"],
        title=row.get("title") or "",
        h1=row.get("h1") or "",
        headings=tuple(h for h in (row.get("headings") or ()) if h),
        text=row.get("text") or "",
        status=int(row["status"]) if row.get("status") is not None else 200,
        lang=row.get("lang") or None,
        noindex=bool(row.get("noindex")),
        thin=bool(row.get("thin")),
        content_hash=row.get("content_hash") or "",
        word_count=int(row.get("word_count") or 0),
        published=row.get("published") or None,
        modified=row.get("modified") or None,
        depth=row.get("depth"),
        meta_description=row.get("meta_description") or "",
        fetched_at=_when(row.get("fetched_at")),
        job=row.get("job"),
        kind=row.get("kind") or "content",
        blocks=_blocks(row.get("blocks")),
    )


def build_crawl(page_rows: Iterable[dict], link_rows: Iterable[dict], skip_rows: Iterable[dict],
                directory: str = "") -> Crawl:
    """Merge raw rows into a Crawl (pure: the loader's logic without the files)."""
    pages = merge_pages(page_rows)
    skip_rows = list(skip_rows)
    aliases = alias_map(skip_rows)
    # A URL recorded as a page and, later, as an alias (it now redirects): the alias wins.
    alias_when = {r["url"]: _when(r.get("fetched_at")) for r in skip_rows if r.get("url") in aliases}
    for url in list(pages):
        if url in aliases and alias_when.get(url, _EPOCH) > _when(pages[url].get("fetched_at")):
            del pages[url]
    aliases = {u: a for u, a in aliases.items() if u not in pages}
    links: list[Link] = []
    for row in newest_links(link_rows):
        source = resolve(row["source_url"], aliases)
        if source not in pages:
            continue
        links.append(Link(
            source_url=source,
            target_url=resolve(row["target_url"], aliases),
            anchor_text=row.get("anchor_text") or "",
            position=row.get("position") or "other",
            nofollow=bool(row.get("nofollow")),
            internal=True if row.get("internal") is None else bool(row["internal"]),
        ))
    ordered = sorted(pages.values(), key=lambda r: r["url"])
    return Crawl(pages=[_page(r) for r in ordered], links=links, aliases=aliases, directory=directory)


def load_crawl(directory: str | Path, job: str | None = None, bad: BadParts | None = None) -> Crawl:
    """Read ``pages/``, ``links/``, ``skipped/`` part files of a crawl directory (``bad``: skip
    unreadable parts and record them there, instead of stopping)."""
    directory = Path(directory)
    if not directory.is_dir():
        raise InputError(f"crawl directory not found: {directory}")
    page_files = _part_files(directory, "pages")
    if not page_files:
        raise InputError(f"no pages in {directory}: pages/ has no part-*.parquet files")
    page_rows = _read_parts(page_files, "pages", PAGE_COLUMNS, PAGE_OPTIONAL, job, bad)
    if not page_rows:
        where = f" for job {job}" if job is not None else ""
        raise InputError(f"no pages in {directory}{where}: the part files hold no rows")
    link_rows = _read_parts(_part_files(directory, "links"), "links", LINK_COLUMNS, LINK_OPTIONAL, job, bad)
    skip_rows = _read_parts(_part_files(directory, "skipped"), "skipped", SKIP_COLUMNS, SKIP_OPTIONAL, job,
                            bad)
    return build_crawl(page_rows, link_rows, skip_rows, directory=str(directory))


def require_linkable(crawl: Crawl) -> None:
    """Stop with one line when there is nothing to link: no text, or fewer than two pages."""
    with_text = [p for p in crawl.pages if p.text.strip()]
    if not with_text:
        raise InputError(f"no page in {crawl.directory or 'the crawl'} has main text "
                         f"({len(crawl.pages)} pages, all with an empty text column)")
    if len(with_text) < 2:
        raise InputError(f"only one page with text in {crawl.directory or 'the crawl'}: nothing to link")
