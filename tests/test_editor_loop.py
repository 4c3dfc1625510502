"""The editor's loop end to end, against a real WordPress on 127.0.0.1:

read it through the REST API → postprocess → approve three rows and reject two in the review
page, in headless Chromium → ``apply --write`` → the three links are in the posts (stored
content, the REST API, an HTML crawl) → the next run proposes none of the five pairs and
records the approved ones as live → a second apply changes nothing → undo restores the posts.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest
from conftest import REPO, TEST_CRAWL_SETTINGS, run_scrapy_crawl
from local_servers import free_port
from test_decisions import queue_pairs
from wordpress_site import WordPressSite, missing, wordpress_site

from linkspider.parquet import read_table
from linkspider.settings import LINKSPIDER_CHROMIUM_PATH
from postprocess.decisions.store import DecisionStore, default_path

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(missing() is not None, reason=f"WordPress cannot run here: {missing()}"),
    pytest.mark.skipif(not Path(LINKSPIDER_CHROMIUM_PATH).is_file(), reason="chromium missing"),
]


def command(*args: str, env: dict[str, str] | None = None, timeout: int = 600) -> str:
    """Run a linkspider command as a user would; its stdout (the test fails on a non-zero exit)."""
    done = subprocess.run([sys.executable, *args], cwd=REPO, capture_output=True, text=True,
                          timeout=timeout, env={**os.environ, "PYTHONPATH": str(REPO), **(env or {})})
    assert done.returncode == 0, f"{args[:3]} exit {done.returncode}:\n{done.stderr[-3000:]}"
    return done.stdout


def crawl_wordpress(site: WordPressSite, out: Path, *args: str) -> None:
    settings = [f"{k}={v}" for k, v in TEST_CRAWL_SETTINGS.items()]
    command("-m", "scrapy", "crawl", "wordpress", "-a", f"api={site.api}", "-a", f"out={out}", *args,
            *(arg for s in settings for arg in ("-s", s)))


def post_ids(site: WordPressSite) -> dict[str, int]:
    """Permalink -> id of every published post and page, through the REST API."""
    ids: dict[str, int] = {}
    for kind in ("posts", "pages"):
        page = 1
        while True:
            url = f"{site.api}wp/v2/{kind}?per_page=100&page={page}&_fields=id,link"
            with urllib.request.urlopen(url, timeout=30) as response:
                ids.update({item["link"]: item["id"] for item in json.load(response)})
                if page >= int(response.headers["X-WP-TotalPages"]):
                    break
            page += 1
    return ids


def rendered(site: WordPressSite, post_id: int) -> str:
    for kind in ("posts", "pages"):
        try:
            with urllib.request.urlopen(f"{site.api}wp/v2/{kind}/{post_id}", timeout=30) as response:
                return json.load(response)["content"]["rendered"]
        except urllib.error.HTTPError:
            continue
    raise AssertionError(f"post {post_id} not found")


Pairs = list[tuple[str, str]]


def review(out: Path, db: Path, approve: int, reject: int) -> tuple[Pairs, Pairs]:
    """Start ``serve`` as a user does, and decide rows in its review page with Chromium."""
    from review_browser import review_in_browser

    port = free_port()
    serve = [sys.executable, "-m", "postprocess", "serve", "--out", str(out), "--db", str(db),
             "--port", str(port)]
    server = subprocess.Popen(serve, cwd=REPO, env={**os.environ, "PYTHONPATH": str(REPO)},
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=5).close()
                break
            except OSError:
                assert server.poll() is None and time.monotonic() < deadline, server.stderr.read()
                time.sleep(0.2)
        return review_in_browser(f"http://127.0.0.1:{port}/review", approve, reject, reason="not about it")
    finally:
        server.terminate()
        server.wait(30)


def test_read_review_apply_recrawl_and_undo(tmp_path: Path) -> None:
    with wordpress_site(tmp_path / "wp") as site:
        credentials = {"LINKSPIDER_WP_USER": site.user, "LINKSPIDER_WP_APP_PASSWORD": site.app_password}
        crawl, out = tmp_path / "crawl", tmp_path / "runs" / "out"
        db = default_path(out)
        crawl_wordpress(site, crawl)
        command("-m", "postprocess", "run", "--crawl", str(crawl), "--out", str(out))
        first = queue_pairs(out)
        assert len(first) >= 5, first

        approved, rejected = review(out, db, approve=3, reject=2)
        store = DecisionStore(db, create=False)
        assert {d.pair for d in store.decisions("approved")} == set(approved)
        assert {d.pair for d in store.decisions("rejected")} == set(rejected)
        assert all(d.reason == "not about it" for d in store.decisions("rejected"))

        ids = post_ids(site)
        sources = {source for source, _ in approved}
        before = {url: site.raw_content(ids[url]) for url in sources}
        apply = ("-m", "postprocess", "apply", "--wordpress", site.url, "--out", str(out))
        dry = command(*apply, env=credentials)
        assert "dry run: 3 links" in dry and "+++" in dry
        assert {url: site.raw_content(ids[url]) for url in sources} == before  # a dry run writes nothing

        written = command("-m", "postprocess", "apply", "--wordpress", site.url, "--out", str(out), "--write",
                          "--delay", "0", env=credentials)
        assert "3 links written" in written, written
        run_id = written.split("apply run ", 1)[1].split(":", 1)[0]
        for source, target in approved:
            assert f'href="{target}"' in site.raw_content(ids[source])  # stored
            assert f'href="{target}"' in rendered(site, ids[source])  # what the REST API gives
        for source, target in rejected:
            assert f'href="{target}"' not in site.raw_content(ids[source])

        # An HTML crawl of the site sees the three links in the posts' content.
        html_crawl = tmp_path / "html-crawl"
        run_scrapy_crawl(site.url, html_crawl, settings={"LINKSPIDER_SITEMAPS": False}, timeout=300)
        links = {(r["source_url"], r["target_url"]) for r in read_table(html_crawl / "links").to_pylist()
                 if r["position"] == "content"}
        assert set(approved) <= links

        # The next run: read what changed, rank again; decided pairs stay out, approved are live.
        crawl_wordpress(site, crawl, "-a", "incremental=1")
        command("-m", "postprocess", "run", "--crawl", str(crawl), "--out", str(out))
        second = set(queue_pairs(out))
        assert not second & (set(approved) | set(rejected))
        assert {d.pair for d in store.decisions("live")} == set(approved)
        summary = json.loads((out / "summary.json").read_text())
        assert summary["decisions"]["live"] == 3 and summary["decisions"]["rejected"] == 2

        again = command("-m", "postprocess", "apply", "--wordpress", site.url, "--out", str(out), "--write",
                        "--delay", "0", env=credentials)
        assert "no approved rows" in again or "nothing written" in again, again
        assert "apply run" not in again

        command("-m", "postprocess", "apply", "--wordpress", site.url, "--out", str(out), "--undo", run_id,
                env=credentials)
        assert {url: site.raw_content(ids[url]) for url in sources} == before
