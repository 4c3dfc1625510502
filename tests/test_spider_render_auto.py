"""render=auto renders only the pages that need a browser, every page is fetched once, and a
browser killed mid-crawl is started again without losing a page."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from conftest import REPO, scrapy_crawl_command

from linkspider.parquet import read_table
from linkspider.rendering import RenderPolicy
from linkspider.settings import LINKSPIDER_CHROMIUM_PATH
from linkspider.testserver import running

NO_EXTRAS = {"LINKSPIDER_SITEMAPS": False, "ROBOTSTXT_OBEY": False}
ARTICLE = ("Grind the beans just before brewing and weigh both the coffee and the water, because "
           "a scale is more reliable than a scoop and the ratio decides most of the taste. ") * 6
TRACKER = "<script>window.visits = (window.visits || 0) + 1;</script>"
APP_SCRIPT = """document.getElementById("root").innerHTML =
  "<h1>Brew ratio calculator</h1><p>" + "Enter the dose and the calculator gives the water. ".repeat(12) +
  "</p><p>See <a href='/app-only/'>the calculator guide</a>.</p>";"""


def page(title: str, body: str, script: str = TRACKER) -> str:
    return (f"<!doctype html><html lang=en><head><title>{title}</title></head><body>"
            f"<nav><a href='/'>Home</a></nav><main>{body}</main>{script}</body></html>")


def stored_pages(crawl: Path, base: str) -> dict[str, dict]:
    """The crawl's pages by path (without the site's base URL)."""
    return {p["url"].removeprefix(base): p for p in read_table(crawl / "pages").to_pylist()}


def write_site(root: Path) -> None:
    articles = ["grind", "scales", "water", "storage"]
    for name in [*articles, "app-only", "app"]:
        (root / name).mkdir(parents=True)
    home_links = "".join(f"<li><a href='/{n}/'>{n}</a></li>" for n in [*articles, "app"])
    (root / "index.html").write_text(page("Home", f"<h1>Home</h1><p>{ARTICLE}</p><ul>{home_links}</ul>"))
    for i, name in enumerate(articles):
        nxt = articles[(i + 1) % len(articles)]
        (root / name / "index.html").write_text(page(
            name, f"<h1>{name}</h1><p>{ARTICLE}</p><p>Next: <a href='/{nxt}/'>{nxt}</a>, "
                  f"<a href='/grind/'>grinding</a>.</p>"))
    (root / "app-only" / "index.html").write_text(page("Guide", f"<h1>Guide</h1><p>{ARTICLE}</p>"))
    (root / "app" / "index.html").write_text(
        page("Calculator", "<div id=root>Loading…</div>", "<script src='/app.js'></script>"))
    (root / "app.js").write_text(APP_SCRIPT)


def test_the_policy_renders_a_script_shell_not_a_page_like_the_others():
    policy = RenderPolicy()
    shell = b"<html><div id=root></div><script src=app.js></script></html>"
    assert policy.needs_browser(shell, 2, 0)  # before the site is known: few words
    assert not policy.needs_browser(b"<html><p>no scripts at all</p></html>", 2, 0)  # nothing to run
    for words, links in [(300, 8), (250, 6), (400, 10), (320, 7), (280, 9)]:
        policy.learn(words, links)
    script = b"<p>text</p><script>track()</script>"
    assert not policy.needs_browser(script, 290, 7)  # a typical page of the site
    assert policy.needs_browser(script, 40, 7)  # far less text than usual
    assert policy.needs_browser(script, 300, 0)  # no content links where pages have eight


def site_requests(paths: list[str]) -> Counter[str]:
    """Requests for the site's pages and scripts: Chromium asks for /favicon.ico by itself, not through
    the page, and asks again when the 404 it got is not cached (seen once in CI: twice in one crawl)."""
    return Counter(path for path in paths if path != "/favicon.ico")


pytestmark_browser = pytest.mark.skipif(
    not Path(LINKSPIDER_CHROMIUM_PATH).is_file(), reason="chromium missing: run scripts/setup.sh")


@pytest.mark.slow
@pytestmark_browser
def test_auto_renders_only_the_javascript_page_and_fetches_each_page_once(
    scrapy_crawl: Callable[..., Any], tmp_path: Path
) -> None:
    write_site(tmp_path / "site")
    with running(tmp_path / "site") as server:
        scrapy_crawl(server.url, tmp_path / "crawl", "-a", "render=auto", settings=NO_EXTRAS)
    pages = stored_pages(tmp_path / "crawl", server.url)
    assert set(pages) == {"", "grind/", "scales/", "water/", "storage/", "app/", "app-only/"}
    assert {u for u, p in pages.items() if p["rendered"]} == {"app/"}
    assert "Enter the dose" in pages["app/"]["text"]  # the script's text, not "Loading…"
    fetched = site_requests(server.requests)
    assert all(n == 1 for n in fetched.values()), fetched
    assert fetched["/app.js"] == 1 and fetched["/app/"] == 1


@pytest.mark.slow
@pytestmark_browser
def test_render_all_fetches_each_page_once(scrapy_crawl: Callable[..., Any], tmp_path: Path) -> None:
    write_site(tmp_path / "site")
    with running(tmp_path / "site") as server:
        scrapy_crawl(server.url, tmp_path / "crawl", "-a", "render=1", settings=NO_EXTRAS)
    pages = read_table(tmp_path / "crawl" / "pages").to_pylist()
    assert len(pages) == 7 and all(p["rendered"] for p in pages)
    fetched = site_requests(server.requests)
    assert all(n == 1 for n in fetched.values()), fetched


def browser_processes(ancestor: int) -> list[int]:
    """Chromium's main processes among ``ancestor``'s descendants (its renderers die with it)."""
    parents: dict[int, int] = {}
    names: dict[int, str] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            names[int(entry.name)] = (entry / "cmdline").read_bytes().split(b"\0")[0].decode(errors="replace")
        except OSError:
            continue
        parents[int(entry.name)] = int(stat.rsplit(")", 1)[1].split()[1])

    def descends(pid: int) -> bool:
        while pid > 1:
            if pid == ancestor:
                return True
            pid = parents.get(pid, 0)
        return False

    chromium = {pid for pid, name in names.items() if "chrom" in Path(name).name}
    return [pid for pid in chromium if descends(pid) and parents.get(pid) not in chromium]


@pytest.mark.slow
@pytestmark_browser
def test_a_browser_killed_mid_crawl_is_started_again_and_no_page_is_lost(tmp_path: Path) -> None:
    root = tmp_path / "site"
    names = [f"tool-{i}" for i in range(8)]
    links = "".join(f"<li><a href='/{n}/'>{n}</a></li>" for n in names)
    root.mkdir()
    (root / "index.html").write_text(page("Home", f"<h1>Home</h1><p>{ARTICLE}</p><ul>{links}</ul>"))
    for name in names:
        (root / name).mkdir()
        body = f"<h1>{name}</h1><p>{ARTICLE}</p><div id=root></div>"
        (root / name / "index.html").write_text(page(name, body, "<script src='/app.js'></script>"))
    (root / "app-only").mkdir()
    (root / "app-only" / "index.html").write_text(page("Guide", f"<h1>Guide</h1><p>{ARTICLE}</p>"))
    (root / "app.js").write_text(APP_SCRIPT)
    settings = {**NO_EXTRAS, "CONCURRENT_REQUESTS": "1", "CONCURRENT_REQUESTS_PER_DOMAIN": "1"}
    with running(root, delay=0.3) as server:
        cmd = scrapy_crawl_command(server.url, tmp_path / "crawl", "-a", "render=1", settings=settings)
        proc = subprocess.Popen(cmd, cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        killed: list[int] = []
        deadline = time.monotonic() + 60
        while not killed and proc.poll() is None and time.monotonic() < deadline:
            if server.requests.count("/app.js") >= 2:
                killed = browser_processes(proc.pid)
                for pid in killed:
                    os.kill(pid, signal.SIGKILL)
            time.sleep(0.05)
        scripts_at_kill = server.requests.count("/app.js")
        _, stderr = proc.communicate(timeout=180)
    assert proc.returncode == 0, stderr[-3000:]
    assert killed, "the browser was never seen running"
    assert server.requests.count("/app.js") > scripts_at_kill  # a new browser rendered the rest
    pages = stored_pages(tmp_path / "crawl", server.url)
    assert set(pages) == {"", "app-only/", *(f"{n}/" for n in names)}
    rendered = [u for u in pages if u.startswith("tool-") and "Enter the dose" in pages[u]["text"]]
    kept_plain = [u for u in pages if u.startswith("tool-") and not pages[u]["rendered"]]
    assert len(rendered) + len(kept_plain) == len(names)  # none lost: rendered, or kept as plain HTML
    assert len(rendered) >= len(names) - 1
