"""``python -m postprocess serve``: a real server on 127.0.0.1 answering from a real output directory."""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import sys
from collections.abc import Iterator
from email.message import Message
from pathlib import Path
from urllib.error import HTTPError
from urllib.parse import quote, urlencode
from urllib.request import Request, urlopen

import numpy as np
import pytest
from crawlkit import CHAIN, COMPOST, ESPRESSO, GRINDER, POUR_OVER, ROSES, SITE, TOMATOES, TYRES, write_site

from postprocess.apps import report
from postprocess.apps.review.api import to_json
from postprocess.apps.review.app import create_app
from postprocess.apps.review.queue import load_queue, normalise, spellings
from postprocess.apps.review.server import bind, serving
from postprocess.decisions.store import DecisionStore
from postprocess.errors import PREFIX
from postprocess.stages.candidates import Suggestion
from postprocess.stages.index import build_index, save_index
from postprocess.stages.load import load_crawl

REPO = Path(__file__).resolve().parents[1]


def suggestion(source: str, target: str, score: float, rank: int, anchor: str,
               anchor_type: str = "text") -> Suggestion:
    parts = {"similarity": score, "date_factor": 1.0}
    return Suggestion(source, target, score, parts, rank, anchor, anchor_type, f"A sentence with {anchor}.")


#: Written out of order: the server must sort each page's suggestions by score.
ROWS = [
    suggestion(ESPRESSO, TOMATOES, 0.31, 3, "tomatoes", "title"),
    suggestion(COMPOST, ROSES, 0.42, 1, "roses"),
    suggestion(ESPRESSO, POUR_OVER, 0.62, 1, "grams of coffee"),
    suggestion(ESPRESSO, GRINDER, 0.55, 2, "grinder"),
]


def write_output(out: Path, crawl_dir: Path, rows: list[Suggestion] = ROWS) -> Path:
    """An output directory as ``python -m postprocess`` leaves it, written by the real writers."""
    crawl = load_crawl(write_site(crawl_dir))
    report.write_suggestions(out, rows, crawl)
    report.write_html(out, crawl, rows, report.summary(crawl, rows, 0, {}, out))
    urls = [p.url for p in crawl.pages]
    vectors = np.random.default_rng(0).normal(size=(len(urls), 8)).astype("float32")
    save_index(build_index(urls, vectors, trees=2), out)
    return out


@pytest.fixture(scope="module")
def out_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    base = tmp_path_factory.mktemp("serve")
    return write_output(base / "out", base / "crawl")


def app_for(out: Path):  # noqa: ANN201 - a Starlette app
    """The app serving ``out`` with a decisions database beside it (what serve does by default)."""
    return create_app(load_queue(out), DecisionStore(out.parent / "decisions.sqlite"))


@pytest.fixture(scope="module")
def base_url(out_dir: Path) -> Iterator[str]:
    """The server (uvicorn) on a free port of 127.0.0.1, serving in a thread for this module."""
    with serving(app_for(out_dir)) as base:
        yield base


def fetch(url: str, method: str = "GET") -> tuple[int, Message, bytes]:
    """Status, headers (names in any case: HTTP's are case-insensitive) and body."""
    try:
        with urlopen(Request(url, method=method), timeout=10) as response:
            return response.status, response.headers, response.read()
    except HTTPError as error:
        with error:
            return error.code, error.headers, error.read()


def get_json(url: str) -> tuple[int, dict]:
    status, headers, body = fetch(url)
    assert headers["Content-Type"] == "application/json; charset=utf-8", headers
    return status, json.loads(body)


def recommend(base: str, **params: str) -> tuple[int, dict]:
    return get_json(f"{base}/recommend?{urlencode(params)}")


# --- pure functions -------------------------------------------------------------------------------

@pytest.mark.parametrize(("given", "expected"), [
    ("https://example.test/a/", "https://example.test/a/"),
    ("HTTPS://Example.TEST/a/", "https://example.test/a/"),
    ("https://example.test/a/#part", "https://example.test/a/"),
    ("https://example.test:443/a/", "https://example.test/a/"),
    ("http://example.test:80/a", "http://example.test/a"),
    ("http://example.test:8080/a", "http://example.test:8080/a"),
    ("https://example.test", "https://example.test/"),
    ("  https://example.test/a/  ", "https://example.test/a/"),
    ("https://example.test/A/?q=B", "https://example.test/A/?q=B"),  # path and query keep their case
    ("http://[::1]:8000/a", "http://[::1]:8000/a"),
    ("https://example.test:99999/a", "https://example.test:99999/a"),  # bad port: left as given
    ("mailto:a@example.test#x", "mailto:a@example.test"),
])
def test_normalise(given, expected):
    assert normalise(given) == expected


@pytest.mark.parametrize(("given", "expected"), [
    ("https://example.test/a/", ["https://example.test/a/", "https://example.test/a"]),
    ("https://Example.test/a", ["https://Example.test/a", "https://example.test/a", "https://example.test/a/"]),
    ("https://example.test/", ["https://example.test/"]),
    ("https://example.test/a?x=1", ["https://example.test/a?x=1", "https://example.test/a/?x=1"]),
])
def test_spellings(given, expected):
    assert spellings(given) == expected


def test_nan_parts_become_null(tmp_path):
    rows = [Suggestion(ESPRESSO, GRINDER, 0.5, {"similarity": float("nan")}, 1, "grinder", "text", "x")]
    queue = load_queue(write_output(tmp_path / "out", tmp_path / "crawl", rows))
    assert json.loads(to_json(queue.recommend(ESPRESSO)))[0]["similarity"] is None


def test_a_run_without_suggestions_still_knows_its_pages(tmp_path):
    queue = load_queue(write_output(tmp_path / "out", tmp_path / "crawl", []))
    assert queue.by_page == {} and queue.suggestions == 0
    assert queue.find(CHAIN.rstrip("/")) == CHAIN and queue.recommend(CHAIN) == []
    assert queue.find("https://example.test/elsewhere/") is None


# --- the endpoints --------------------------------------------------------------------------------

def test_recommend_gives_the_page_suggestions_best_first(base_url):
    status, body = recommend(base_url, url=ESPRESSO)
    assert status == 200
    assert body["url"] == ESPRESSO and body["page_url"] == ESPRESSO
    assert body["title"] == "How to pull a good espresso shot" and body["total"] == 3
    assert [s["target_url"] for s in body["suggestions"]] == [POUR_OVER, GRINDER, TOMATOES]
    assert [s["score"] for s in body["suggestions"]] == [0.62, 0.55, 0.31]
    first = body["suggestions"][0]
    assert first == {"target_url": POUR_OVER, "anchor": "grams of coffee", "anchor_type": "text",
                     "context": "A sentence with grams of coffee.", "confidence": 0.0, "score": 0.62,
                     "evidence": "", "rank": 1,
                     "similarity": 0.62, "date_factor": 1.0, "target_title": "Pour-over coffee brewing guide",
                     "target_inbound": 0}
    assert body["suggestions"][2]["anchor_type"] == "title"


@pytest.mark.parametrize("spelling", [
    ESPRESSO.upper().replace("/COFFEE/ESPRESSO/", "/coffee/espresso/"),  # scheme and host case
    ESPRESSO.rstrip("/"),
    ESPRESSO + "#dial-in",
    ESPRESSO.rstrip("/") + "#dial-in",
    ESPRESSO.replace("example.test", "example.test:443"),
    f"  {ESPRESSO} ",
])
def test_recommend_accepts_simple_other_spellings(base_url, spelling):
    status, body = recommend(base_url, url=spelling)
    assert status == 200, body
    assert body["url"] == spelling.strip() and body["page_url"] == ESPRESSO and body["total"] == 3


@pytest.mark.parametrize("other", [
    "https://example.test/coffee/unknown/",
    "https://other.test/coffee/espresso/",  # another host
    "http://example.test/coffee/espresso/",  # another scheme is another URL
    "https://example.test/Coffee/Espresso/",  # paths are case-sensitive
    "https://example.test/coffee/espresso/?page=2",
    "not a url",
])
def test_recommend_unknown_page_is_404(base_url, other):
    status, body = recommend(base_url, url=other)
    assert status == 404
    assert other in body["error"] and body["url"] == other


def test_crawled_page_without_suggestions_is_an_empty_list(base_url):
    for page in (CHAIN, TYRES):
        status, body = recommend(base_url, url=page)
        assert status == 200 and body["suggestions"] == [] and body["total"] == 0


@pytest.mark.parametrize(("limit", "targets"), [("1", [POUR_OVER]), ("2", [POUR_OVER, GRINDER]),
                                                ("99", [POUR_OVER, GRINDER, TOMATOES])])
def test_limit(base_url, limit, targets):
    status, body = recommend(base_url, url=ESPRESSO, limit=limit)
    assert status == 200
    assert [s["target_url"] for s in body["suggestions"]] == targets and body["total"] == 3


@pytest.mark.parametrize(("query", "words"), [
    ("", "missing url"),
    ("url=", "missing url"),
    ("limit=2", "missing url"),
    (f"url={quote(ESPRESSO)}&limit=0", "limit must be"),
    (f"url={quote(ESPRESSO)}&limit=-1", "limit must be"),
    (f"url={quote(ESPRESSO)}&limit=ten", "limit must be"),
    (f"url={quote(ESPRESSO)}&limit=1.5", "limit must be"),
    (f"url={quote(ESPRESSO)}&limit=%C2%B2", "limit must be"),  # a superscript digit
    (f"url={quote(ESPRESSO)}&limit=", "limit must be"),
    (f"url={quote(ESPRESSO)}&limit=1&limit=2", "give limit once"),
    (f"url={quote(ESPRESSO)}&url={quote(GRINDER)}", "give url once"),
    (f"url={quote(ESPRESSO)}&lmit=2", "unknown parameter 'lmit'"),
    ("url=https://example.test/search?q=coffee&page=2", "percent-encode"),
    ("&".join(f"url={i}" for i in range(50)), "too many query parameters"),
])
def test_bad_recommend_requests_are_400(base_url, query, words):
    status, body = get_json(f"{base_url}/recommend?{query}")
    assert status == 400
    assert words in body["error"], body


def test_health(base_url):
    status, body = get_json(f"{base_url}/health")
    assert status == 200
    assert body == {"status": "ok", "pages": 2, "suggestions": len(ROWS), "known_pages": len(SITE)}


def test_root_points_to_the_endpoints_and_report(base_url, out_dir):
    status, headers, body = fetch(base_url + "/")
    assert status == 200 and headers["Content-Type"] == "text/html; charset=utf-8"
    page = body.decode()
    assert "/recommend?url=" in page and 'href="/report"' in page and 'action="/recommend"' in page
    status, headers, body = fetch(base_url + "/report")
    assert status == 200 and headers["Content-Type"] == "text/html; charset=utf-8"
    assert body == (out_dir / "report.html").read_bytes()


def test_other_paths_and_methods(base_url):
    status, body = get_json(f"{base_url}/recommendations?url=x")
    assert status == 404 and "/recommendations" in body["error"]
    status, headers, body = fetch(f"{base_url}/health", method="POST")
    assert status == 405 and headers["Allow"] == "GET, HEAD" and b"POST" in body
    status, headers, body = fetch(f"{base_url}/recommend?url={quote(ESPRESSO)}", method="HEAD")
    assert status == 200 and body == b"" and int(headers["Content-Length"]) > 100
    assert "Python" not in headers["Server"]


def test_report_is_404_when_the_run_left_none(tmp_path):
    out = write_output(tmp_path / "out", tmp_path / "crawl")
    (out / "report.html").unlink()
    with serving(app_for(out)) as base:
        status, body = get_json(base + "/report")
        assert status == 404 and "report.html" in body["error"]
        assert b'href="/report"' not in fetch(base + "/")[2]


def test_a_burst_of_connections_waits_in_the_listen_queue(out_dir):
    """40 clients connect while the server is busy (not accepting): none is dropped to retry 1 s later."""
    listening = bind("127.0.0.1", 0)
    clients = []
    try:
        for _ in range(40):
            client = socket.socket()
            clients.append(client)
            client.settimeout(2)
            client.connect(listening.getsockname())
    finally:
        for client in clients:
            client.close()
        listening.close()


# --- the command line -----------------------------------------------------------------------------

def serve(*args: str) -> subprocess.Popen[str]:
    env = dict(os.environ, PYTHONPATH=str(REPO))
    return subprocess.Popen([sys.executable, "-m", "postprocess", "serve", *args], cwd=REPO, env=env,
                            text=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def serve_fails(*args: str) -> str:
    """Run serve expecting bad input: exit 2 and one line on stderr, which is returned."""
    process = serve(*args)
    try:
        _, stderr = process.communicate(timeout=60)
    finally:
        process.kill()
    assert process.returncode == 2, stderr
    lines = stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(PREFIX), stderr
    return lines[0]


def _no_file(out: Path) -> None:
    out.mkdir()
    (out / "suggestions.csv").write_text("source_url\n")


def _not_parquet(out: Path) -> None:
    out.mkdir()
    (out / "suggestions.parquet").write_text("source_url,target_url\n")


def _other_table(out: Path) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    out.mkdir()
    pq.write_table(pa.table({"url": ["https://example.test/"]}), out / "suggestions.parquet")


def _bad_page_list(out: Path) -> None:
    write_output(out, out.parent / "crawl")
    (out / "index-ids.parquet").write_bytes(b"PAR1 not really")


@pytest.mark.parametrize(("setup", "words"), [
    (lambda out: None, "output directory"),
    (_no_file, "suggestions.parquet not found"),
    (_not_parquet, "cannot read suggestions file"),
    (_other_table, "has no column 'source_url'"),
    (_bad_page_list, "cannot read page list"),
], ids=["no directory", "no suggestions.parquet", "not parquet", "other table", "bad index-ids"])
def test_bad_output_directory_is_one_line_exit_2(tmp_path, setup, words):
    out = tmp_path / "out"
    setup(out)
    line = serve_fails("--out", str(out), "--port", "0")
    assert words in line and str(out) in line


def test_busy_port_and_bad_port_are_one_line(out_dir):
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        assert f"cannot listen on 127.0.0.1:{port}" in serve_fails("--out", str(out_dir), "--port", str(port))
    assert "--port must be between 0 and 65535" in serve_fails("--out", str(out_dir), "--port", "70000")


def start_cli_server(out: Path) -> tuple[subprocess.Popen[str], str]:
    """``serve --port 0`` in a subprocess; the base URL from the line it prints."""
    process = serve("--out", str(out), "--port", "0")
    line = process.stdout.readline()
    match = re.search(r"on (http://\S+)/ ", line)
    if not match:
        process.kill()
        pytest.fail(f"no address in {line!r}: {process.stderr.read()}")
    return process, match.group(1)


def test_cli_serves_on_127_0_0_1_until_stopped(out_dir):
    process, base = start_cli_server(out_dir)
    try:
        assert base.startswith("http://127.0.0.1:")
        assert get_json(base + "/health") == (200, {"status": "ok", "pages": 2, "suggestions": len(ROWS),
                                                    "known_pages": len(SITE)})
        status, body = recommend(base, url=COMPOST, limit="1")
        assert status == 200 and [s["target_url"] for s in body["suggestions"]] == [ROSES]
    finally:
        process.terminate()
        process.communicate(timeout=30)


@pytest.mark.slow
def test_serves_what_a_real_run_wrote(tmp_path):
    """The whole way: postprocess run on the sample crawl, then every source page over HTTP."""
    crawl, out = write_site(tmp_path / "crawl"), tmp_path / "out"
    env = dict(os.environ, PYTHONPATH=str(REPO))
    result = subprocess.run([sys.executable, "-m", "postprocess", "--crawl", str(crawl), "--out", str(out),
                             "--min-score", "0.2"], cwd=REPO, env=env, text=True, capture_output=True,
                            timeout=600)
    assert result.returncode == 0, result.stderr
    import pyarrow.parquet as pq

    rows = pq.read_table(out / "suggestions.parquet").to_pylist()
    assert rows
    process, base = start_cli_server(out)
    try:
        for source in {r["source_url"] for r in rows}:
            expected = sorted((r for r in rows if r["source_url"] == source), key=lambda r: -r["score"])
            status, body = recommend(base, url=source)
            assert status == 200 and body["total"] == len(expected)
            assert [s["target_url"] for s in body["suggestions"]] == [r["target_url"] for r in expected]
            assert [s["anchor"] for s in body["suggestions"]] == [r["anchor"] for r in expected]
            assert body["title"] == expected[0]["source_title"]
        quiet = [p for p in SITE if p["url"] not in {r["source_url"] for r in rows}]
        assert quiet  # pages with no suggestion still answer with their title
        for page in quiet:
            status, body = recommend(base, url=page["url"])
            assert status == 200 and body["total"] == 0
            assert body["title"] and body["title"][:12] == page["title"][:12]  # the clean title
        status, body = get_json(base + "/health")
        assert body["suggestions"] == len(rows) and body["known_pages"] == len(SITE)
    finally:
        process.terminate()
        process.communicate(timeout=30)
