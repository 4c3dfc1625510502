"""Who may talk to the server, and that changes come from its own pages.

* **Bind address.** Loopback needs no token; any other ``--host`` needs one (``--token`` or
  ``LINKSPIDER_REVIEW_TOKEN``, at least ``MIN_TOKEN_CHARS`` characters) or the server refuses
  to start. With a token every request must carry it: ``Authorization: Bearer <token>``, or
  the session cookie set by opening any page once with ``?token=<token>`` (the answer
  redirects to the same address without it). On loopback without a token the ``Host`` header
  must name loopback, so a web page cannot reach the server through DNS rebinding.
* **Cross-site requests.** Every request that is not GET/HEAD must come from the server's
  own origin (``Origin``, or ``Referer`` when a browser sends no Origin, must name the
  ``Host``; ``Sec-Fetch-Site``, when sent, must be same-origin) and carry the CSRF token:
  a random nonce signed with a secret kept in the decisions database (so a restart keeps
  open pages working), set as an HttpOnly SameSite=Strict cookie and repeated in the form
  field ``csrf_token`` or the ``X-CSRF-Token`` header; the two are compared with
  ``hmac.compare_digest``.
"""

from __future__ import annotations

import hashlib
import hmac
import ipaddress
import os
import secrets
from urllib.parse import urlencode, urlsplit

from starlette.middleware.base import BaseHTTPMiddleware, RequestResponseEndpoint
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, RedirectResponse, Response
from starlette.routing import Match

from postprocess.decisions.store import DecisionStore
from postprocess.errors import InputError

TOKEN_ENV = "LINKSPIDER_REVIEW_TOKEN"
MIN_TOKEN_CHARS = 16
SESSION_COOKIE = "linkspider_review_session"
CSRF_COOKIE = "linkspider_review_csrf"
CSRF_FIELD = "csrf_token"
CSRF_HEADER = "x-csrf-token"
SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
LOOPBACK_NAMES = frozenset({"localhost", "127.0.0.1", "::1"})
#: Headers on every answer: no MIME sniffing, no framing (clickjacking), referrers only to itself.
COMMON_HEADERS = {"X-Content-Type-Options": "nosniff", "X-Frame-Options": "DENY",
                  "Referrer-Policy": "same-origin"}
_SECRET_TABLE = """CREATE TABLE IF NOT EXISTS review_secret (
    id INTEGER PRIMARY KEY CHECK (id = 1), secret BLOB NOT NULL)"""


def is_loopback(host: str) -> bool:
    """True for localhost and loopback addresses (127.0.0.0/8, ::1)."""
    host = host.strip("[]").lower()
    if host in LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def access_token(host: str, given: str | None) -> str | None:
    """The token the server requires (``given``, else the environment); InputError when a non-loopback
    ``host`` has none or the token is too short."""
    token = given if given is not None else os.environ.get(TOKEN_ENV)
    token = (token or "").strip() or None
    if token is None and not is_loopback(host):
        raise InputError(f"serve: --host {host} is not loopback: give an access token with --token or "
                         f"{TOKEN_ENV} (at least {MIN_TOKEN_CHARS} characters)")
    if token is not None and len(token) < MIN_TOKEN_CHARS:
        raise InputError(f"serve: the access token is shorter than {MIN_TOKEN_CHARS} characters")
    return token


def load_secret(store: DecisionStore) -> bytes:
    """The CSRF signing secret kept in the decisions database (made on first use)."""
    with store.connect() as conn:
        conn.execute(_SECRET_TABLE)
        conn.execute("INSERT OR IGNORE INTO review_secret (id, secret) VALUES (1, ?)",
                     (secrets.token_bytes(32),))
        return bytes(conn.execute("SELECT secret FROM review_secret WHERE id = 1").fetchone()[0])


def _sign(key: bytes, message: str) -> str:
    return hmac.new(key, message.encode(), hashlib.sha256).hexdigest()


class Guard:
    """The access token and CSRF checks of one server."""

    def __init__(self, secret: bytes, token: str | None = None, loopback: bool = True) -> None:
        self.secret = secret
        self.token = token
        self.loopback = loopback
        self.session = _sign(token.encode(), "linkspider review session") if token else ""

    # -- access token --------------------------------------------------------------------

    def authorised(self, request: Request) -> bool:
        if self.token is None:
            return True
        scheme, _, given = request.headers.get("authorization", "").partition(" ")
        if scheme.lower() == "bearer" and hmac.compare_digest(given.strip().encode(), self.token.encode()):
            return True
        cookie = request.cookies.get(SESSION_COOKIE, "")
        return hmac.compare_digest(cookie.encode(), self.session.encode())

    def host_allowed(self, request: Request) -> bool:
        """Off loopback every Host is allowed (the token guards); on loopback only loopback names."""
        if not self.loopback:
            return True
        host = request.headers.get("host", "")
        name = urlsplit(f"//{host}").hostname if host else None
        return name is not None and is_loopback(name)

    # -- cross-site requests -------------------------------------------------------------

    def new_csrf(self) -> str:
        nonce = secrets.token_urlsafe(24)
        return f"{nonce}.{_sign(self.secret, nonce)}"

    def csrf_cookie_valid(self, value: str) -> bool:
        nonce, _, signature = value.partition(".")
        return bool(nonce) and hmac.compare_digest(signature.encode(), _sign(self.secret, nonce).encode())

    def csrf_matches(self, request: Request, given: str) -> bool:
        """The request's CSRF cookie is one of ours and ``given`` (form field or header) repeats it."""
        cookie = request.cookies.get(CSRF_COOKIE, "")
        return bool(given) and self.csrf_cookie_valid(cookie) and hmac.compare_digest(
            given.encode(), cookie.encode())


def same_origin(request: Request) -> str | None:
    """Why the request is not from the server's own pages, or None when it is."""
    host = request.headers.get("host", "").lower()
    site = request.headers.get("sec-fetch-site")
    if site is not None and site not in ("same-origin", "none"):
        return f"a {site} request"
    origin = request.headers.get("origin")
    if origin is not None:
        seen, what = origin, "Origin"
    else:
        seen, what = request.headers.get("referer", ""), "Referer"
        if not seen:
            return "no Origin or Referer header"
    try:
        netloc = urlsplit(seen).netloc.lower()
    except ValueError:
        netloc = ""
    if not host or netloc != host:
        return f"{what} {seen!r} is not this server ({host})"
    return None


def require_csrf(request: Request, form_value: str | None) -> None:
    """Raise Forbidden unless the form field (or the X-CSRF-Token header) repeats the CSRF cookie."""
    guard: Guard = request.app.state.guard
    given = form_value or request.headers.get(CSRF_HEADER, "")
    if not guard.csrf_matches(request, given):
        raise Forbidden("missing or wrong CSRF token: reload the page and try again")


class Forbidden(Exception):
    """A request refused with 403: the message says why."""


def refused(request: Request, status: int, message: str, headers: dict[str, str] | None = None) -> Response:
    """A JSON error for API clients and scripts, plain text for a browser's page."""
    headers = {**COMMON_HEADERS, **(headers or {})}
    if "text/html" in request.headers.get("accept", ""):
        return PlainTextResponse(message + "\n", status, headers=headers)
    return JSONResponse({"error": message}, status, headers=headers,
                        media_type="application/json; charset=utf-8")


def _routed(request: Request) -> bool:
    """A route takes this method on this path (otherwise the answer is 404 or 405 and nothing changes)."""
    return any(route.matches(request.scope)[0] == Match.FULL for route in request.app.router.routes)


class GuardMiddleware(BaseHTTPMiddleware):
    """Host, access token, same-origin (for changes) and the CSRF cookie, before any route runs."""

    async def dispatch(self, request: Request, call_next: RequestResponseEndpoint) -> Response:
        guard: Guard = request.app.state.guard
        if not guard.host_allowed(request):
            return refused(request, 400, f"Host {request.headers.get('host', '')!r} is not allowed: "
                                         "open the server as 127.0.0.1 or localhost")
        if guard.token is not None and "token" in request.query_params:
            return self._login(request, guard)
        if not guard.authorised(request):
            return refused(request, 401, "this server needs its access token: open any page once with "
                                         "?token=<token>, or send Authorization: Bearer <token>",
                           {"WWW-Authenticate": 'Bearer realm="linkspider review"'})
        if request.method not in SAFE_METHODS and _routed(request):
            why = same_origin(request)
            if why is not None:
                return refused(request, 403, f"cross-site request refused: {why}")
        cookie = request.cookies.get(CSRF_COOKIE, "")
        fresh = not guard.csrf_cookie_valid(cookie)
        request.state.csrf = guard.new_csrf() if fresh else cookie
        response = await call_next(request)
        for name, value in COMMON_HEADERS.items():
            response.headers.setdefault(name, value)
        if fresh and request.method in SAFE_METHODS:
            response.set_cookie(CSRF_COOKIE, request.state.csrf, httponly=True, samesite="strict", path="/",
                                secure=request.url.scheme == "https")
        return response

    @staticmethod
    def _login(request: Request, guard: Guard) -> Response:
        given = request.query_params["token"]
        if not hmac.compare_digest(given.encode(), (guard.token or "").encode()):
            return refused(request, 401, "wrong access token")
        rest = urlencode([(k, v) for k, v in request.query_params.multi_items() if k != "token"])
        response = RedirectResponse(request.url.path + (f"?{rest}" if rest else ""), 303,
                                    headers=COMMON_HEADERS)
        response.set_cookie(SESSION_COOKIE, guard.session, httponly=True, samesite="lax", path="/",
                            secure=request.url.scheme == "https")  # behind a TLS proxy on this host
        return response
