"""Spider arguments of the ``site`` spider, parsed and validated in one place.

Arguments arrive as strings, from ``scrapy crawl site -a NAME=VALUE`` and from
Scrapyd's ``schedule.json`` alike. :func:`parse_arguments` turns them into a
frozen :class:`CrawlArguments` or raises :class:`ArgumentError` whose message is
one line naming the bad argument.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from urllib.parse import urlsplit

#: Every argument the ``site`` spider accepts (``_job`` is passed by Scrapyd).
KNOWN_ARGUMENTS = ("start", "out", "max_pages", "scope", "render", "incremental", "job", "_job")
SCOPES = ("host", "path")
#: -a render=: off (0), all (1: every page through the browser), auto (only pages that need it).
RENDER_MODES = ("off", "all", "auto")
_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off", ""}
_JOB_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,99}$")


class ArgumentError(ValueError):
    """A spider argument is missing or invalid; the message is one line."""


@dataclass(frozen=True)
class CrawlArguments:
    """The validated arguments of one crawl."""

    start: str  # absolute http(s) start URL, as given
    out: str  # crawl directory (pages/, links/, skipped/)
    max_pages: int  # page cap, 0 = no cap
    scope: str  # host | path
    render: str  # one of RENDER_MODES: which pages a browser renders (scrapy-playwright)
    job: str | None  # job id from -a job= or Scrapyd's _job; None = generate one
    incremental: bool = False  # conditional requests and carry-over from the previous job in ``out``


def parse_arguments(
    args: Mapping[str, object],
    *,
    default_out: str = "data/crawl",
    default_max_pages: int = 0,
    default_scope: str = "host",
    default_render: bool | str = False,
    default_incremental: bool = False,
) -> CrawlArguments:
    """Validate the spider arguments ``args`` (strings) against the defaults from settings."""
    unknown = sorted(set(args) - set(KNOWN_ARGUMENTS))
    if unknown:
        raise ArgumentError(
            f"unknown argument {unknown[0]!r} (expected one of: {', '.join(KNOWN_ARGUMENTS[:-1])})"
        )
    return CrawlArguments(
        start=_start_url(args.get("start")),
        out=_out_dir(args.get("out"), default_out),
        max_pages=_max_pages(args.get("max_pages"), default_max_pages),
        scope=_scope(args.get("scope"), default_scope),
        render=render_mode(args.get("render"), default_render),
        job=_job(args.get("job") or args.get("_job")),
        incremental=_flag("incremental", args.get("incremental"), default_incremental),
    )


def _one_line(value: object) -> str:
    text = str(value)
    return text if len(text) <= 80 and "\n" not in text else repr(text[:77]) + "..."


def _start_url(value: object) -> str:
    if value is None or not str(value).strip():
        raise ArgumentError("missing start URL: pass -a start=https://example.com/")
    url = str(value).strip()
    if any(c.isspace() or ord(c) < 32 for c in url):
        raise ArgumentError(f"start URL must not contain spaces or line breaks: {_one_line(url)}")
    parts = urlsplit(url)
    if parts.scheme.lower() not in ("http", "https"):
        raise ArgumentError(f"start URL must be http or https, got {_one_line(url)!s}")
    if not parts.hostname:
        raise ArgumentError(f"start URL has no host: {_one_line(url)}")
    try:
        parts.port  # noqa: B018 - raises ValueError on a bad port
    except ValueError:
        raise ArgumentError(f"start URL has an invalid port: {_one_line(url)}") from None
    return url


def _out_dir(value: object, default: str) -> str:
    out = default if value is None else str(value).strip()
    if not out:
        raise ArgumentError("out must name a directory, got an empty value")
    return out


def _max_pages(value: object, default: int) -> int:
    if value is None:
        return int(default)
    text = str(value).strip()
    if not text.isdigit():
        raise ArgumentError(f"max_pages must be a whole number >= 0, got {_one_line(text)!r}")
    return int(text)


def _scope(value: object, default: str) -> str:
    scope = default if value is None else str(value).strip().lower()
    if scope not in SCOPES:
        raise ArgumentError(f"scope must be one of {', '.join(SCOPES)}, got {_one_line(scope)!r}")
    return scope


def render_mode(value: object, default: bool | str = False) -> str:
    """``auto``, or a yes/no flag as ``all``/``off``; ``default`` (a setting) when not given."""
    if value is None:
        value = default
    text = str(value).strip().lower()
    if text in RENDER_MODES:
        return text
    try:
        return "all" if _flag("render", value, False) else "off"
    except ArgumentError:
        raise ArgumentError(f"render must be 0, 1 or auto, got {_one_line(value)!r}") from None


def _flag(name: str, value: object, default: bool) -> bool:
    if value is None:
        return bool(default)
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text in _TRUE:
        return True
    if text in _FALSE:
        return False
    raise ArgumentError(f"{name} must be 0 or 1, got {_one_line(text)!r}")


def _job(value: object) -> str | None:
    if value is None:
        return None
    job = str(value).strip()
    if not _JOB_RE.match(job):
        raise ArgumentError(
            f"job must be 1-100 letters, digits, '_', '-' or '.', got {_one_line(job)!r}"
        )
    return job
