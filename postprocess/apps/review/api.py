"""The read-only endpoints: ``GET /recommend?url=<page URL>[&limit=N]``, ``/health``, ``/`` and ``/report``.

``/recommend`` answers one source page's suggestions, best first, as JSON; a page URL is
found through its simple other spellings (``queue.spellings``); a crawled page without
suggestions answers an empty list, an unknown one 404, a malformed query 400 naming the
problem. ``/health`` says what is loaded. These answers do not depend on decisions.
"""

from __future__ import annotations

import html
import json
from urllib.parse import parse_qs

from starlette.requests import Request
from starlette.responses import HTMLResponse, Response

from postprocess.apps.review.queue import REPORT_FILE, Queue

JSON = "application/json; charset=utf-8"
PARAMETERS = ("url", "limit")


class BadRequest(Exception):
    """A request the client must change: answered 400 with the message."""


def to_json(value: object) -> bytes:
    """UTF-8 JSON; NaN is refused (the queue turns it into null when it loads)."""
    return json.dumps(value, ensure_ascii=False, allow_nan=False).encode("utf-8")


def json_response(value: object, status: int = 200, headers: dict[str, str] | None = None) -> Response:
    return Response(to_json(value), status, headers=headers, media_type=JSON)


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
        "<title>Internal-link suggestions</title></head><body>",
        "<h1>Internal-link suggestions</h1>",
        f"<p>{len(queue.by_page)} pages with {queue.suggestions} suggestions, from "
        f"{html.escape(str(queue.out))}.</p>",
        '<ul><li><a href="/review">/review</a>: review the queue (approve, reject, change anchors)</li>',
        "<li><code>GET /recommend?url=&lt;page URL&gt;[&amp;limit=N]</code>: suggestions for one page, "
        "best first (JSON)</li>",
        '<li><a href="/health">/health</a>: status and counts (JSON)</li>', report, "</ul>",
        '<form action="/recommend" method="get"><label>Page URL <input name="url" size="60"></label> '
        '<label>limit <input name="limit" size="3" value="5"></label> <button>Suggest links</button></form>',
        "</body></html>",
    ])


def root(request: Request) -> Response:
    return HTMLResponse(index_page(request.app.state.queue))


def health(request: Request) -> Response:
    q: Queue = request.app.state.queue
    return json_response({"status": "ok", "pages": len(q.by_page), "suggestions": q.suggestions,
                          "known_pages": len(q.pages)})


def report(request: Request) -> Response:
    q: Queue = request.app.state.queue
    if q.report is None:
        return json_response({"error": f"no {REPORT_FILE} in {q.out}"}, 404)
    return HTMLResponse(q.report)


def recommend(request: Request) -> Response:
    q: Queue = request.app.state.queue
    try:
        url, limit = parse_recommend_query(request.url.query)
    except BadRequest as exc:
        return json_response({"error": str(exc)}, 400)
    page = q.find(url)
    if page is None:
        return json_response({"error": f"no page {url} in this crawl's review queue", "url": url}, 404)
    return json_response({"url": url, "page_url": page, "title": q.titles.get(page, ""),
                          "total": len(q.by_page.get(page, [])), "suggestions": q.recommend(page, limit)})
