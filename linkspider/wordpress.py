"""The ``wordpress`` spider's pure parts: its arguments, REST API URLs and answers, a post as a page.

Arguments arrive as strings (``scrapy crawl wordpress -a api=… | -a site=…``, Scrapyd alike):
:func:`parse_wordpress_arguments` checks them in one place and raises
:class:`~linkspider.arguments.ArgumentError` with one line. A post read through the REST API
becomes a small HTML document (:func:`post_document`) so that the ``site`` spider's extraction
(text, blocks, links, headings) reads it exactly as it reads a crawled page.
"""

from __future__ import annotations

import html
import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any
from urllib.parse import urlencode, urlsplit

from linkspider.arguments import ArgumentError, _flag, _job, _one_line, _out_dir

#: Every argument the ``wordpress`` spider accepts (``_job`` is passed by Scrapyd).
KNOWN_ARGUMENTS = ("api", "site", "out", "since", "incremental", "job", "_job")
#: The link relation of a WordPress REST API root (``Link: <…/wp-json/>; rel="https://api.w.org/"``).
API_REL = "https://api.w.org/"
PER_PAGE = 100  # the REST API's maximum
#: Post types read: REST collection route -> WordPress post type.
COLLECTIONS = ("wp/v2/posts", "wp/v2/pages")
#: Fields asked for (``_embedded`` carries the category and tag names, ``_links`` is needed for it).
FIELDS = ("id", "link", "date_gmt", "modified_gmt", "slug", "type", "title", "content", "excerpt",
          "_links", "_embedded")
_LINK_RE = re.compile(r"<([^>]*)>\s*((?:;\s*[^;,]*)*)")


@dataclass(frozen=True)
class WordPressArguments:
    """The validated arguments of one ``wordpress`` crawl."""

    api: str | None  # the REST API root (…/wp-json/ or …/?rest_route=/), when given
    site: str | None  # the site's home page, whose Link header names the API root
    out: str  # crawl directory (pages/, links/, skipped/)
    since: str | None  # read only posts modified after this (UTC, ``YYYY-MM-DDTHH:MM:SSZ``)
    incremental: bool  # without since: since = the newest ``modified`` of the previous job in out
    job: str | None  # job id from -a job= or Scrapyd's _job; None = generate one


def parse_wordpress_arguments(args: Mapping[str, object], *, default_out: str = "data/crawl",
                              default_incremental: bool = False) -> WordPressArguments:
    """Validate the spider arguments ``args`` (strings); raises ArgumentError (one line)."""
    unknown = sorted(set(args) - set(KNOWN_ARGUMENTS))
    if unknown:
        raise ArgumentError(
            f"unknown argument {unknown[0]!r} (expected one of: {', '.join(KNOWN_ARGUMENTS[:-1])})"
        )
    api, site = args.get("api"), args.get("site")
    if (api is None) == (site is None):
        raise ArgumentError("pass the REST API root (-a api=https://example.com/wp-json/) "
                            "or the site (-a site=https://example.com/), one of them")
    since = args.get("since")
    return WordPressArguments(
        api=http_url("api", api) if api is not None else None,
        site=http_url("site", site) if site is not None else None,
        out=_out_dir(args.get("out"), default_out),
        since=parse_since(str(since)) if since is not None else None,
        incremental=_flag("incremental", args.get("incremental"), default_incremental),
        job=_job(args.get("job") or args.get("_job")),
    )


def http_url(name: str, value: object) -> str:
    """An absolute http(s) URL, or ArgumentError naming the argument."""
    url = str(value).strip()
    if not url:
        raise ArgumentError(f"{name} must be an http(s) URL, got an empty value")
    if any(c.isspace() or ord(c) < 32 for c in url):
        raise ArgumentError(f"{name} URL must not contain spaces or line breaks: {_one_line(url)}")
    parts = urlsplit(url)
    if parts.scheme.lower() not in ("http", "https") or not parts.hostname:
        raise ArgumentError(f"{name} must be an absolute http(s) URL, got {_one_line(url)}")
    try:
        parts.port  # noqa: B018 - raises ValueError on a bad port
    except ValueError:
        raise ArgumentError(f"{name} URL has an invalid port: {_one_line(url)}") from None
    return url


def parse_since(value: str) -> str:
    """An ISO 8601 date or date-time as the REST API's ``modified_after`` (UTC; no zone = UTC)."""
    text = value.strip()
    try:
        when = datetime.fromisoformat(text.replace("Z", "+00:00").replace("z", "+00:00"))
    except ValueError:
        raise ArgumentError(
            f"since must be an ISO 8601 date or date-time (2026-11-30 or 2026-11-30T08:00:00Z), "
            f"got {_one_line(text)!r}"
        ) from None
    return utc_timestamp(when)


def utc_timestamp(when: datetime) -> str:
    """``YYYY-MM-DDTHH:MM:SSZ`` of ``when`` (naive = UTC)."""
    when = when.replace(tzinfo=UTC) if when.tzinfo is None else when.astimezone(UTC)
    return when.strftime("%Y-%m-%dT%H:%M:%SZ")


def api_root_from_links(values: Iterable[bytes | str]) -> str | None:
    """The URL of the ``rel="https://api.w.org/"`` entry of ``Link`` header values, or None."""
    for raw in values:
        value = raw.decode("latin-1") if isinstance(raw, bytes) else raw
        for match in _LINK_RE.finditer(value):
            params = match.group(2)
            rels = re.findall(r'rel\s*=\s*"?([^";]+)"?', params, flags=re.IGNORECASE)
            if any(API_REL in rel.split() for rel in rels):
                return match.group(1).strip()
    return None


def route_url(api: str, route: str, params: Mapping[str, object] | None = None) -> str:
    """The URL of REST ``route`` (``wp/v2/posts``) under ``api``, pretty (…/wp-json/) or plain
    (…/?rest_route=/)."""
    query = urlencode({k: v for k, v in (params or {}).items() if v is not None})
    if "rest_route=" in api:
        base = api.split("rest_route=", 1)[0]
        return f"{base}rest_route=/{route}" + (f"&{query}" if query else "")
    return api.rstrip("/") + "/" + route + (f"?{query}" if query else "")


def list_params(page: int, since: str | None) -> dict[str, object]:
    """Query parameters of one page of a post collection, oldest id first (stable paging)."""
    return {"per_page": PER_PAGE, "page": page, "orderby": "id", "order": "asc", "modified_after": since,
            "_embed": "wp:term", "_fields": ",".join(FIELDS)}


def rest_error(body: bytes) -> tuple[str, str] | None:
    """``(code, message)`` of a REST API error answer, or None when the body is not one."""
    try:
        data = json.loads(body)
    except ValueError:
        return None
    if isinstance(data, dict) and isinstance(data.get("code"), str):
        return data["code"], str(data.get("message") or "")[:200]
    return None


def json_body(body: bytes) -> Any:
    """The JSON of a response body, or None when it is not JSON."""
    try:
        return json.loads(body)
    except ValueError:
        return None


def gmt(value: object) -> str | None:
    """A REST ``*_gmt`` field (``2025-03-14T08:00:00``) as ISO 8601 with its zone."""
    if not isinstance(value, str) or not value:
        return None
    return value + "+00:00" if not value.endswith(("Z", "+00:00")) else value


def terms(post: Mapping[str, Any], taxonomy: str) -> list[str]:
    """Names of the ``taxonomy`` terms (``category``, ``post_tag``) embedded in a post."""
    names: list[str] = []
    for group in (post.get("_embedded") or {}).get("wp:term") or []:
        for term in group or []:
            if isinstance(term, dict) and term.get("taxonomy") == taxonomy and term.get("name"):
                names.append(html.unescape(str(term["name"])))
    return names


def rendered(post: Mapping[str, Any], field: str) -> str:
    """The ``rendered`` HTML of a post field (title, content, excerpt); empty when missing."""
    value = post.get(field)
    if isinstance(value, dict):
        return str(value.get("rendered") or "")
    return ""


def post_document(post: Mapping[str, Any], lang: str | None) -> str:
    """A post as an HTML page: its title, excerpt as description, permalink as canonical, dates, and
    the rendered content as the page's main content (the ``site`` spider's extraction reads it)."""
    title = rendered(post, "title")
    excerpt = re.sub(r"<[^>]+>", " ", rendered(post, "excerpt"))
    lang_attr = f' lang="{html.escape(lang)}"' if lang else ""
    metas = [f'<meta name="description" content="{html.escape(" ".join(html.unescape(excerpt).split()))}">']
    for name, field in (("article:published_time", "date_gmt"), ("article:modified_time", "modified_gmt")):
        if (value := gmt(post.get(field))) is not None:
            metas.append(f'<meta property="{name}" content="{html.escape(value)}">')
    link = html.escape(str(post.get("link") or ""))
    return (
        f"<!DOCTYPE html><html{lang_attr}><head><meta charset=\"utf-8\"><title>{title}</title>"
        f'{"".join(metas)}<link rel="canonical" href="{link}"></head>'
        f'<body class="single"><main><article><h1>{title}</h1>'
        f'<div class="entry-content">{rendered(post, "content")}</div></article></main></body></html>'
    )
