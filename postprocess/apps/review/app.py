"""The Starlette application: the read-only API, the review pages and their guard, in one app.

| route | what |
| --- | --- |
| ``GET /`` | what the server offers |
| ``GET /recommend?url=…&limit=N``, ``GET /health`` | JSON (``api``) |
| ``GET /report`` | the run's report.html |
| ``GET /review`` | the review page (``pages``) |
| ``POST /review/decide`` | approve, reject (reason), change the anchor, reset |
| ``GET /review/approved.csv`` | every approved row |
| ``GET /review/static/…`` | the page's script and style sheet |

Unknown paths answer 404 and wrong methods 405 (with ``Allow``), as JSON. Every request
passes ``security.GuardMiddleware`` first.
"""

from __future__ import annotations

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from postprocess.apps.review import api, pages
from postprocess.apps.review.listing import PAGE_SIZE, ordered, queue_rows
from postprocess.apps.review.queue import Queue
from postprocess.apps.review.security import Guard, GuardMiddleware, load_secret
from postprocess.decisions.store import DecisionStore


def _not_found(request: Request, exc: Exception) -> Response:
    if isinstance(exc, HTTPException) and exc.detail and exc.detail != "Not Found":
        return api.json_response({"error": exc.detail}, 404)
    return api.json_response({"error": f"no such path {request.url.path}: try /recommend?url=<page URL> "
                                       "or /review"}, 404)


def _not_allowed(request: Request, exc: Exception) -> Response:
    allowed = (getattr(exc, "headers", None) or {}).get("Allow", "")
    allow = ", ".join(sorted(m.strip() for m in allowed.split(",") if m.strip()))
    message = f"{request.method} is not allowed: only {allow.replace(', ', ' and ')}"
    return api.json_response({"error": message}, 405, headers={"Allow": allow})


def create_app(queue: Queue, store: DecisionStore, token: str | None = None,
               loopback: bool = True, page_size: int = PAGE_SIZE) -> Starlette:
    """The app serving ``queue`` with decisions in ``store``; ``token``: required on every request when set;
    ``loopback``: the server listens on loopback only (then the Host header must name loopback);
    ``page_size``: rows per review page."""
    routes = [
        Route("/", api.root),
        Route("/recommend", api.recommend),
        Route("/health", api.health),
        Route("/report", api.report),
        Route("/review", pages.review),
        Route("/review/decide", pages.decide, methods=["POST"]),
        Route("/review/approved.csv", pages.approved_csv),
        Mount("/review/static", StaticFiles(directory=pages.STATIC), name="static"),
    ]
    app = Starlette(routes=routes, middleware=[Middleware(GuardMiddleware)],
                    exception_handlers={404: _not_found, 405: _not_allowed})
    app.state.queue = queue
    app.state.store = store
    app.state.guard = Guard(load_secret(store), token, loopback)
    app.state.templates = pages.templates()
    app.state.page_size = page_size
    app.state.pending = ordered(queue_rows(queue))  # the queue's rows, built and sorted once
    return app
