"""The review endpoints: ``GET /review`` (the page), ``POST /review/decide``, ``GET /review/approved.csv``.

``/review`` lists the queue by source page with filters (``source``, ``target``: parts of a
URL or title; ``min_confidence``; ``state``: pending, approved, rejected, live or all;
``page``) and the count of rows in each state. ``/review/decide`` takes a form
(``source_url``, ``target_url``, ``action`` = approve | reject | reset, ``anchor``, ``reason``,
``csrf_token``, ``next``): a browser's plain form gets a 303 back to ``next``; a ``fetch()``
asking for JSON gets the row after the change, its state before (for undo) and the counts.
"""

from __future__ import annotations

import csv
import io
from pathlib import Path
from urllib.parse import urlencode

from jinja2 import Environment, FileSystemLoader, select_autoescape
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.templating import Jinja2Templates

from postprocess.apps.review.actions import ActionError, act
from postprocess.apps.review.anchors import split_context
from postprocess.apps.review.api import json_response
from postprocess.apps.review.listing import (
    ROW_STATES,
    STATE_FILTERS,
    BadFilter,
    Row,
    count_states,
    parse_filters,
    review_rows,
    screen,
    state_counts,
)
from postprocess.apps.review.queue import Queue
from postprocess.apps.review.security import CSRF_FIELD, Forbidden, refused, require_csrf
from postprocess.decisions.store import DecisionStore

HERE = Path(__file__).resolve().parent
TEMPLATES = HERE / "templates"
STATIC = HERE / "static"
#: The review pages load only their own script and style sheet, and post only to themselves.
CSP = ("default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; "
       "form-action 'self'; frame-ancestors 'none'; base-uri 'none'")
PAGE_HEADERS = {"Content-Security-Policy": CSP, "Cache-Control": "no-store"}
CSV_COLUMNS = ("source_url", "target_url", "anchor", "context", "confidence", "source_title", "target_title",
               "decided_at")
FORM_FIELDS = ("source_url", "target_url", "action", "anchor", "reason", CSRF_FIELD, "next")
MAX_FIELD_CHARS = 4000


def templates() -> Jinja2Templates:
    """The Jinja2 templates, HTML-escaped."""
    env = Environment(loader=FileSystemLoader(TEMPLATES), autoescape=select_autoescape(default=True),
                      trim_blocks=True, lstrip_blocks=True)
    return Jinja2Templates(env=env)


def _state(request: Request) -> tuple[Queue, DecisionStore]:
    return request.app.state.queue, request.app.state.store


def review(request: Request) -> Response:
    """The review page for the filters in the query string."""
    queue, store = _state(request)
    try:
        filters = parse_filters(request.query_params)
    except BadFilter as exc:
        return refused(request, 400, str(exc))
    rows = review_rows(queue, store.decisions(), request.app.state.pending)
    shown = screen(rows, filters, request.app.state.page_size)

    def link(**changes: object) -> str:
        query = urlencode(filters.query(**changes))
        return "/review" + (f"?{query}" if query else "")

    here = link(page=shown.page)
    return request.app.state.templates.TemplateResponse(request, "review.html", {
        "filters": filters, "screen": shown, "counts": count_states(rows), "states": ROW_STATES,
        "state_filters": STATE_FILTERS, "csrf": request.state.csrf, "link": link, "here": here,
        "split_context": split_context, "out": queue.out, "db": store.path,
    }, headers=PAGE_HEADERS)


def row_json(row: Row) -> dict[str, object]:
    before, anchor, after = split_context(row.context, row.anchor)
    return {"id": row.id, "source_url": row.source_url, "target_url": row.target_url, "state": row.state,
            "anchor": row.anchor, "reason": row.reason, "context": [before, anchor, after],
            "confidence": row.confidence}


def _next(value: str) -> str:
    """Where a plain form returns to: a review page of this server, nothing else."""
    return value if value.startswith("/review") and "\\" not in value and "\n" not in value else "/review"


async def decide(request: Request) -> Response:
    """Approve, reject or reset one row."""
    queue, store = _state(request)
    wants_json = "application/json" in request.headers.get("accept", "")
    async with request.form(max_files=0, max_fields=len(FORM_FIELDS) + 4) as form:
        fields = {name: str(form.get(name) or "")[:MAX_FIELD_CHARS] for name in FORM_FIELDS}
    try:
        require_csrf(request, fields[CSRF_FIELD])
    except Forbidden as exc:
        return refused(request, 403, str(exc))
    if not fields["source_url"] or not fields["target_url"]:
        return refused(request, 400, "give source_url and target_url")
    try:
        outcome = await run_in_threadpool(act, queue, store, fields["source_url"], fields["target_url"],
                                          fields["action"], fields["anchor"], fields["reason"])
    except ActionError as exc:
        return refused(request, exc.status, str(exc))
    if not wants_json:
        return RedirectResponse(f"{_next(fields['next'])}#{outcome.row.id}", 303)
    counts = await run_in_threadpool(state_counts, queue, store.states())
    return json_response({"row": row_json(outcome.row), "before": outcome.before, "counts": counts})


def approved_csv(request: Request) -> Response:
    """Every approved row (this run's or earlier), with the editor's anchor, as CSV."""
    _, store = _state(request)
    decisions = sorted(store.decisions("approved"), key=lambda d: (d.source_url, d.target_url))
    buffer = io.StringIO()
    writer = csv.writer(buffer)
    writer.writerow(CSV_COLUMNS)
    writer.writerows([getattr(d, c) for c in CSV_COLUMNS] for d in decisions)
    return Response(buffer.getvalue(), media_type="text/csv; charset=utf-8",
                    headers={"Content-Disposition": 'attachment; filename="approved.csv"',
                             "Cache-Control": "no-store"})
