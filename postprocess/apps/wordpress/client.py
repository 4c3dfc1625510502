"""A small client for the WordPress REST API (standard library only: urllib, json, base64).

:func:`connect` finds the API of a site (the ``Link: <…>; rel="https://api.w.org/"`` header
of its home page, else ``/wp-json/``, else ``?rest_route=/``) and checks the credentials
(an application password, HTTP Basic) with ``/wp/v2/users/me``; every way this can go
wrong — an unreachable site, not a WordPress, the REST API switched off, wrong
credentials — is an :class:`~postprocess.errors.InputError` of one line. After that, an
HTTP error on one request is a :class:`WordPressError`, which the caller reports for
that post and goes on.
"""

from __future__ import annotations

import base64
import json
import re
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass
from typing import Any

from postprocess.errors import InputError

API_REL = "https://api.w.org/"
#: What ``/wp/v2/<base>`` lists: posts and pages, each up to 100 per request (the API's maximum).
POST_TYPES = ("posts", "pages")
PER_PAGE = 100
USER_AGENT = "linkspider-apply/1 (+https://github.com/linkspider)"


class WordPressError(Exception):
    """One failed API request: HTTP status, WordPress's error code and message, in one line."""

    def __init__(self, status: int, code: str, message: str) -> None:
        self.status, self.code = status, code
        super().__init__(" ".join(f"HTTP {status} {code}: {message}".split()) if status else message)


@dataclass(frozen=True)
class Post:
    """A post or page as the API gives it with ``context=edit``."""

    id: int
    type_base: str  # "posts" or "pages": where to read and update it
    link: str
    modified_gmt: str
    raw: str


class WordPress:
    """An authenticated connection to one site's REST API (``api`` ends with ``/``)."""

    def __init__(self, site: str, api: str, user: str, password: str, timeout: float = 30.0) -> None:
        self.site, self.api, self.timeout = site, api, timeout
        token = base64.b64encode(f"{user}:{password}".encode()).decode("ascii")
        self._auth = f"Basic {token}"

    def url(self, route: str, params: dict[str, Any] | None = None) -> str:
        """The full URL of ``route`` (``wp/v2/posts``) with query ``params``, for either API style."""
        query = urllib.parse.urlencode(params or {})
        if "rest_route=" in self.api:
            return f"{self.api.rstrip('/')}/{route}" + (f"&{query}" if query else "")
        return urllib.parse.urljoin(self.api, route) + (f"?{query}" if query else "")

    def request(self, method: str, route: str, params: dict[str, Any] | None = None,
                body: dict[str, Any] | None = None) -> tuple[Any, dict[str, str]]:
        """The decoded JSON answer and headers; a :class:`WordPressError` on any failure."""
        data = json.dumps(body).encode() if body is not None else None
        req = urllib.request.Request(self.url(route, params), data=data, method=method)
        req.add_header("Authorization", self._auth)
        req.add_header("Accept", "application/json")
        req.add_header("User-Agent", USER_AGENT)
        if data is not None:
            req.add_header("Content-Type", "application/json; charset=utf-8")
        try:
            with urllib.request.urlopen(req, timeout=self.timeout) as resp:
                payload = resp.read()
                headers = {k.lower(): v for k, v in resp.headers.items()}
        except urllib.error.HTTPError as exc:
            raise _error(exc) from None
        except (urllib.error.URLError, OSError) as exc:
            reason = getattr(exc, "reason", exc)
            raise WordPressError(0, "unreachable", f"{self.site} cannot be reached: {reason}") from None
        try:
            return json.loads(payload), headers
        except ValueError:
            raise WordPressError(200, "not_json", f"{route} did not answer JSON") from None

    # -- posts -----------------------------------------------------------------------------------

    def post(self, type_base: str, post_id: int) -> Post:
        """One post's stored markup (``content.raw``) and permalink."""
        data, _ = self.request("GET", f"wp/v2/{type_base}/{post_id}", {"context": "edit"})
        return _post(data, type_base)

    def update(self, type_base: str, post_id: int, content: str) -> Post:
        """Replace the post's content; the post as stored afterwards."""
        data, _ = self.request("POST", f"wp/v2/{type_base}/{post_id}", {"context": "edit"},
                               {"content": content})
        return _post(data, type_base)

    def find(self, type_base: str, params: dict[str, Any]) -> list[dict[str, Any]]:
        """Every item of ``type_base`` matching ``params`` (id, link, modified_gmt), all pages of them."""
        found: list[dict[str, Any]] = []
        page = 1
        while True:
            query = {**params, "per_page": PER_PAGE, "page": page, "_fields": "id,link,modified_gmt"}
            data, headers = self.request("GET", f"wp/v2/{type_base}", query)
            if not isinstance(data, list):
                raise WordPressError(200, "not_a_list", f"wp/v2/{type_base} did not answer a list")
            found += data
            if page >= int(headers.get("x-wp-totalpages", "1") or 1):
                return found
            page += 1


def _post(data: Any, type_base: str) -> Post:
    content = data.get("content") if isinstance(data, dict) else None
    if not isinstance(content, dict) or "raw" not in content:
        raise WordPressError(200, "no_raw_content", "the API gave no content.raw (is the user an editor?)")
    return Post(int(data["id"]), type_base, str(data.get("link", "")), str(data.get("modified_gmt", "")),
                str(content["raw"]))


def _error(exc: urllib.error.HTTPError) -> WordPressError:
    code, message = "http_error", exc.reason
    try:
        body = json.loads(exc.read() or b"{}")
        if isinstance(body, dict):
            code = str(body.get("code") or code)
            message = str(body.get("message") or message)
    except (ValueError, OSError):
        pass
    return WordPressError(exc.code, code, re.sub(r"<[^>]+>", "", str(message)))


def _api_root(site: str, timeout: float) -> str:
    """The REST API root of ``site``; InputError when unreachable or not a WordPress with the API on."""
    req = urllib.request.Request(site, headers={"User-Agent": USER_AGENT})
    links = ""
    try:
        with urllib.request.urlopen(req, timeout=timeout) as resp:
            links = resp.headers.get("Link", "") or ""
            final = resp.geturl()
    except urllib.error.HTTPError as exc:
        links = exc.headers.get("Link", "") or ""
        final = site
    except (urllib.error.URLError, OSError, ValueError) as exc:
        raise InputError(f"WordPress site {site} cannot be reached: {getattr(exc, 'reason', exc)}") from None
    found = re.search(r'<([^>]+)>\s*;\s*rel="?' + re.escape(API_REL), links)
    candidates = [found.group(1)] if found else []
    base = site if site.endswith("/") else site + "/"  # a WordPress in a folder has its API there
    candidates += [urllib.parse.urljoin(base, "wp-json/"), urllib.parse.urljoin(base, "?rest_route=/"),
                   urllib.parse.urljoin(final, "/wp-json/"), urllib.parse.urljoin(final, "/?rest_route=/")]
    for root in dict.fromkeys(candidates):
        answer = _get_json(root, timeout)
        if isinstance(answer, dict) and "routes" in answer and "namespaces" in answer:
            if "wp/v2" not in answer.get("namespaces", []):
                raise InputError(f"{site}: the WordPress REST API has no wp/v2 routes (switched off?)")
            return root if root.endswith("/") else root + "/"
        if isinstance(answer, dict) and answer.get("code"):
            raise InputError(f"{site}: the WordPress REST API is switched off ({answer.get('code')}: "
                             f"{answer.get('message', '')})")
    if found:
        raise InputError(f"{site}: the WordPress REST API at {found.group(1)} does not answer "
                         "(switched off?)")
    raise InputError(f"{site} is not a WordPress site with its REST API on (no api.w.org link, "
                     "no /wp-json/)")


def _get_json(url: str, timeout: float) -> Any:
    req = urllib.request.Request(url, headers={"User-Agent": USER_AGENT, "Accept": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=timeout) as resp:
            payload = resp.read()
    except urllib.error.HTTPError as exc:
        try:
            payload = exc.read()
        except OSError:
            return None
    except (urllib.error.URLError, OSError, ValueError):
        return None
    try:
        return json.loads(payload)
    except ValueError:
        return None


def connect(site: str, user: str, password: str, timeout: float = 30.0) -> WordPress:
    """The API of ``site`` with these credentials, checked; InputError (one line) for every bad input."""
    if not re.match(r"https?://[^/]+", site or ""):
        raise InputError(f"--wordpress {site!r} is not an http(s) URL of a site")
    api = _api_root(site, timeout)
    wp = WordPress(site, api, user, password, timeout)
    try:
        me, _ = wp.request("GET", "wp/v2/users/me", {"context": "edit"})
    except WordPressError as exc:
        if exc.status in (401, 403):
            raise InputError(f"{site}: WordPress refused the credentials in LINKSPIDER_WP_USER / "
                             f"LINKSPIDER_WP_APP_PASSWORD ({exc})") from None
        raise InputError(f"{site}: the REST API failed to answer users/me ({exc})") from None
    caps = me.get("capabilities", {}) if isinstance(me, dict) else {}
    if isinstance(caps, dict) and caps and not caps.get("edit_posts"):
        raise InputError(f"{site}: user {user!r} may not edit posts")
    return wp
