"""Canonical URLs and the parameter/pagination policy: pure functions, no Scrapy.

The canonical URL is a page's identity in the crawl: two URLs that show the
same page should give the same canonical URL, and ``canonical_url`` is
idempotent (``canonical_url(canonical_url(u)) == canonical_url(u)``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache
from urllib.parse import unquote_plus, urlsplit, urlunsplit

#: Query parameters that only track a visit (matched case-insensitively).
TRACKING_PARAMS = frozenset(
    {
        "gclid", "gclsrc", "dclid", "fbclid", "msclkid", "yclid", "twclid", "ttclid", "igshid",
        "mc_cid", "mc_eid", "_ga", "_gl", "_hsenc", "_hsmi", "mkt_tok",
    }
)
#: Prefixes of tracking parameters (``utm_source``, ``utm_medium`` …).
TRACKING_PREFIXES = ("utm_",)
#: Session-id parameters (query ``?sid=`` and path ``;jsessionid=``).
SESSION_PARAMS = frozenset({"jsessionid", "phpsessid", "sid", "sessionid", "session_id", "cfid", "cftoken"})
#: Prefixes of session-id parameters (IIS ``ASPSESSIONIDQQGGGNCG``).
SESSION_PREFIXES = ("aspsessionid",)

#: Last path segments that are the directory's default document: ``/docs/index.html`` is
#: ``/docs/``. Only index.html/htm by default: ``default.html`` or ``index.php`` can be real,
#: distinct pages (Django's docs have ``topics/auth/default.html``); add them with the
#: LINKSPIDER_INDEX_PAGES setting on sites that serve them for the bare directory.
INDEX_PAGES = frozenset({"index.html", "index.htm"})

#: Query parameters whose numeric value is a page number or a list offset.
PAGINATION_PARAMS = frozenset({"page", "p", "paged", "pg", "pagenum", "page_num", "start", "offset"})
_PAGINATION_PATH = re.compile(r"/(?:page/|comment-page-)\d+/?$", re.IGNORECASE)
_DIGITS = re.compile(r"\d+")

TRAILING_SLASH_POLICIES = ("add", "strip", "keep")
SCOPES = ("host", "path")

_DEFAULT_PORTS = {"http": 80, "https": 443}
_UNRESERVED = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")
_SUB_DELIMS = "!$&'()*+,;="
# Characters left as they are in each component; everything else is percent-encoded.
_PATH_SAFE = frozenset(_UNRESERVED | set(_SUB_DELIMS) | set(":@/"))
_QUERY_PART_SAFE = frozenset((_UNRESERVED | set(_SUB_DELIMS) | set(":@/?")) - set("&="))
_HEX = "0123456789ABCDEFabcdef"


@dataclass(frozen=True)
class UrlPolicy:
    """Site-specific URL rules, built from the LINKSPIDER_* settings."""

    keep_params: frozenset[str] = frozenset()  # query parameters that make a distinct page
    tracking_params: frozenset[str] = frozenset()  # extra parameters to strip ("name" or "prefix*")
    pagination_patterns: tuple[str, ...] = field(default_factory=tuple)  # extra regexes
    trailing_slash: str = "add"  # add | strip | keep
    index_pages: frozenset[str] = INDEX_PAGES  # default documents collapsed to their directory
    trap_repeats: int = 3  # a path segment (or run of segments) this many times in a row is a trap
    trap_max_path: int = 400  # characters of path beyond which a URL is a trap
    trap_max_query: int = 300  # characters of query string beyond which a URL is a trap
    trap_max_segments: int = 25  # path segments beyond which a URL is a trap

    def __post_init__(self) -> None:
        if self.trailing_slash not in TRAILING_SLASH_POLICIES:
            raise ValueError(
                f"trailing_slash must be one of {', '.join(TRAILING_SLASH_POLICIES)}, "
                f"not {self.trailing_slash!r}"
            )
        for pattern in self.pagination_patterns:
            try:
                re.compile(pattern)
            except re.error as exc:
                raise ValueError(f"bad pagination pattern {pattern!r}: {exc}") from None
        # normalise names once so lookups are plain set membership
        object.__setattr__(self, "keep_params", frozenset(p.lower() for p in self.keep_params))
        object.__setattr__(self, "tracking_params", frozenset(p.lower() for p in self.tracking_params))
        object.__setattr__(self, "index_pages", frozenset(p.lower() for p in self.index_pages))


DEFAULT_POLICY = UrlPolicy()


def _normalise_escapes(text: str, safe: frozenset[str]) -> str:
    """Percent-encoding in one canonical form: unreserved escapes decoded, others upper-case.

    Characters outside ``safe`` (spaces, non-ASCII, a stray ``%``) are encoded as UTF-8.
    Reserved characters keep their escaped or unescaped form, so meaning never changes.
    """
    if text.isascii() and "%" not in text and all(c in safe for c in text):
        return text
    out: list[str] = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c == "%" and i + 2 < n and text[i + 1] in _HEX and text[i + 2] in _HEX:
            char = chr(int(text[i + 1 : i + 3], 16))
            out.append(char if char in _UNRESERVED else "%" + text[i + 1 : i + 3].upper())
            i += 3
            continue
        if c in safe:
            out.append(c)
        else:
            out.extend(f"%{b:02X}" for b in c.encode("utf-8", "surrogatepass"))
        i += 1
    return "".join(out)


def _param_name(raw: str) -> str:
    """The decoded, lower-case name of a ``name=value`` query part."""
    return unquote_plus(raw.partition("=")[0]).strip().lower()


def _is_tracking(name: str, policy: UrlPolicy) -> bool:
    """True for tracking and session-id parameters (built-in or from the policy)."""
    if name in TRACKING_PARAMS or name in SESSION_PARAMS or name in policy.tracking_params:
        return True
    if name.startswith(TRACKING_PREFIXES) or name.startswith(SESSION_PREFIXES):
        return True
    return any(p.endswith("*") and name.startswith(p[:-1]) for p in policy.tracking_params)


def remove_dot_segments(path: str) -> str:
    """RFC 3986 §5.2.4: resolve ``.`` and ``..`` segments."""
    if "/." not in path:
        return path
    out: list[str] = []
    segments = path.split("/")
    for seg in segments[1:]:
        if seg == ".":
            continue
        if seg == "..":
            if out:
                out.pop()
            continue
        out.append(seg)
    if segments[-1] in (".", ".."):
        out.append("")
    return "/" + "/".join(out)


def _strip_path_sessions(path: str) -> str:
    """Drop ``;jsessionid=…`` style session ids from path segments."""
    if ";" not in path:
        return path
    segments = []
    for seg in path.split("/"):
        if ";" in seg:
            head, *params = seg.split(";")
            kept = [p for p in params if not _is_session(_param_name(p))]
            seg = ";".join([head, *kept])
        segments.append(seg)
    return "/".join(segments)


def _is_session(name: str) -> bool:
    return name in SESSION_PARAMS or name.startswith(SESSION_PREFIXES)


def _host(netloc: str, scheme: str) -> str:
    """Lower-case host (IDNA-encoded), without default port or trailing dot."""
    userinfo, _, hostport = netloc.rpartition("@")
    hostport = hostport.lower()
    if hostport.startswith("["):  # IPv6 literal
        host, _, rest = hostport[1:].partition("]")
        host, port = f"[{host}]", rest[1:] if rest.startswith(":") else ""
    else:
        host, _, port = hostport.partition(":")
        host = host.rstrip(".")
        if not host.isascii():
            try:
                host = host.encode("idna").decode("ascii")
            except UnicodeError:
                host = _normalise_escapes(host, _PATH_SAFE)
    if port == "" or (port.isdigit() and int(port) == _DEFAULT_PORTS.get(scheme)):
        netloc = host
    else:
        netloc = f"{host}:{int(port) if port.isdigit() else port}"
    return f"{userinfo}@{netloc}" if userinfo else netloc


@lru_cache(maxsize=65536)
def canonical_url(url: str, policy: UrlPolicy = DEFAULT_POLICY) -> str:
    """The page identity of ``url`` (absolute http(s) URL in, canonical URL out).

    Other schemes, and URLs without a host, come back stripped of whitespace but
    otherwise unchanged.
    """
    url = url.strip()
    try:
        parts = urlsplit(url)
    except ValueError:
        return url
    scheme = parts.scheme.lower()
    if scheme not in _DEFAULT_PORTS or not parts.netloc:
        return url
    netloc = _host(parts.netloc, scheme)

    path = _strip_path_sessions(parts.path or "/")
    path = remove_dot_segments(_normalise_escapes(path, _PATH_SAFE))
    if not path.startswith("/"):
        path = "/" + path
    head, _, last = path.rpartition("/")
    if last.lower() in policy.index_pages:
        path, last = head + "/", ""
    if policy.trailing_slash == "add":
        if last and "." not in last:
            path += "/"
    elif policy.trailing_slash == "strip" and path != "/":
        path = path.rstrip("/") or "/"

    query = ""
    if parts.query:
        kept = []
        for part in parts.query.split("&"):
            if not part or _is_tracking(_param_name(part), policy):
                continue
            name, eq, value = part.partition("=")
            kept.append(
                _normalise_escapes(name, _QUERY_PART_SAFE) + eq + _normalise_escapes(value, _QUERY_PART_SAFE)
            )
        query = "&".join(sorted(kept))
    return urlunsplit((scheme, netloc, path, query, ""))


def _query_params(url: str, policy: UrlPolicy) -> list[tuple[str, str]]:
    """(lower-case name, decoded value) of the query parameters that are not tracking ones."""
    query = urlsplit(url).query
    params = []
    for part in query.split("&"):
        if not part:
            continue
        name = _param_name(part)
        if not _is_tracking(name, policy):
            params.append((name, unquote_plus(part.partition("=")[2]).strip()))
    return params


@lru_cache(maxsize=256)
def _compiled(patterns: tuple[str, ...]) -> tuple[re.Pattern[str], ...]:
    return tuple(re.compile(p) for p in patterns)


def trap_reason(url: str, policy: UrlPolicy = DEFAULT_POLICY) -> str | None:
    """Why ``url`` looks like a crawl trap (a few words), or None.

    A trap keeps producing new URLs without new pages: a segment or a run of segments that
    repeats (``/loop/a/b/a/b/a/b/``, relative links resolved against themselves), a
    path or query string past a length, or too many segments.
    """
    parts = urlsplit(url)
    if len(parts.path) > policy.trap_max_path:
        return f"path longer than {policy.trap_max_path} characters"
    if len(parts.query) > policy.trap_max_query:
        return f"query string longer than {policy.trap_max_query} characters"
    segments = [s for s in parts.path.split("/") if s]
    if len(segments) > policy.trap_max_segments:
        return f"more than {policy.trap_max_segments} path segments"
    repeats = max(2, policy.trap_repeats)
    for size in range(1, len(segments) // 2 + 1):
        need = repeats if size == 1 else 2  # /a/a/a/ for one segment; /a/b/a/b/ for a run
        for start in range(0, len(segments) - size * need + 1):
            block = segments[start:start + size]
            if all(segments[start + k * size:start + (k + 1) * size] == block for k in range(1, need)):
                return f"'{'/'.join(block)}' repeats in the path"
    return None


def skip_reason(url: str, policy: UrlPolicy = DEFAULT_POLICY) -> str | None:
    """'pagination' or 'parameter' when ``url`` (canonical) must not be fetched, else None.

    Pagination: ``/page/2/``, ``/comment-page-2/``, a numeric ``page``, ``p``, ``paged``,
    ``pg``, ``pagenum``, ``start`` or ``offset`` parameter (page 1 included), or a match of
    one of the policy's patterns. Parameter: any other query string, unless every
    parameter is one of the policy's ``keep_params``. Tracking parameters never count.
    """
    path = urlsplit(url).path
    if _PAGINATION_PATH.search(path):
        return "pagination"
    params = _query_params(url, policy)
    if any(name in PAGINATION_PARAMS and _DIGITS.fullmatch(value) for name, value in params):
        return "pagination"
    if any(p.search(url) for p in _compiled(policy.pagination_patterns)):
        return "pagination"
    if any(name not in policy.keep_params for name, _ in params):
        return "parameter"
    return None


def origin(url: str) -> tuple[str, str, int | None]:
    """(scheme, host, port) of ``url``, the default port filled in."""
    parts = urlsplit(url.strip())
    scheme = parts.scheme.lower()
    host = (parts.hostname or "").rstrip(".")
    if host and not host.isascii():
        try:
            host = host.encode("idna").decode("ascii")
        except UnicodeError:
            pass
    try:
        port = parts.port
    except ValueError:
        port = None
    return scheme, host, port if port is not None else _DEFAULT_PORTS.get(scheme)


def same_origin(a: str, b: str) -> bool:
    """True when both URLs share scheme, host and port (after canonicalisation)."""
    oa = origin(a)
    return bool(oa[1]) and oa == origin(b)


def scope_path(start: str) -> str:
    """The directory of the start URL's path: ``/docs/intro.html`` → ``/docs/``."""
    path = urlsplit(canonical_url(start)).path
    return path[: path.rfind("/") + 1] or "/"


def in_scope(url: str, start: str, scope: str = "host") -> bool:
    """True when ``url`` is on the start URL's origin ('host') or under its path ('path').

    With 'path', the start URL's directory counts (``/docs/intro.html`` → ``/docs/``),
    and the directory without its trailing slash (``/docs``) is in scope too.
    """
    if scope not in SCOPES:
        raise ValueError(f"scope must be one of {', '.join(SCOPES)}, not {scope!r}")
    if not same_origin(url, start):
        return False
    if scope == "host":
        return True
    base = scope_path(start)
    path = urlsplit(canonical_url(url)).path
    return path.startswith(base) or path == base.rstrip("/")
