"""``python -m postprocess serve``: the review app and the suggestions API, from a finished ``--out``.

``GET /review`` is the review page (approve, reject, change anchors; decisions kept in
``--db``, by default ``decisions.sqlite`` beside the output folder); ``GET /recommend?url=
<page URL>[&limit=N]`` answers one page's suggestions as JSON; ``GET /health`` says what is
loaded; ``GET /report`` is report.html. suggestions.parquet is read once at start (restart
after a new run). It listens on 127.0.0.1 by default; any other ``--host`` needs an access
token (``--token`` or ``LINKSPIDER_REVIEW_TOKEN``) and should sit behind a TLS proxy. The
app is ``postprocess.apps.review`` (Starlette under uvicorn).
"""

from __future__ import annotations

import argparse

from postprocess.apps.review.app import create_app
from postprocess.apps.review.queue import load_queue
from postprocess.apps.review.security import TOKEN_ENV, access_token, is_loopback
from postprocess.apps.review.server import address, bind, serve_forever
from postprocess.decisions.store import DecisionStore, default_path


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--out", default="data/out",
                        help="finished postprocess output directory (default %(default)s)")
    parser.add_argument("--db", default=None,
                        help="decisions database (default: decisions.sqlite beside --out, as run uses)")
    parser.add_argument("--host", default="127.0.0.1",
                        help="address to listen on (default %(default)s; any other address needs a token; "
                             "expose it only behind a reverse proxy with TLS)")
    parser.add_argument("--port", type=int, default=8000,
                        help="port (default %(default)s; 0 = any free port)")
    parser.add_argument("--token", default=None,
                        help=f"access token every request must carry (default: ${TOKEN_ENV}; required "
                             "off loopback; prefer the environment variable, the command line is visible "
                             "to other users)")


def run(args: argparse.Namespace) -> int:
    """Check the token, load the queue, open the database, bind, print where it listens, serve."""
    token = access_token(args.host, args.token)
    queue = load_queue(args.out)
    store = DecisionStore(args.db or default_path(args.out))
    app = create_app(queue, store, token=token, loopback=is_loopback(args.host))
    sock = bind(args.host, args.port)
    login = "?token=<token>" if token else ""
    print(f"serving {len(queue.by_page)} pages, {queue.suggestions} suggestions from {queue.out} "
          f"on {address(sock)}/ (review: {address(sock)}/review{login}, decisions in {store.path}; "
          "Ctrl+C stops)", flush=True)
    try:
        serve_forever(app, sock)
    except KeyboardInterrupt:
        print("stopped", flush=True)
    return 0
