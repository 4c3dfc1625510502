"""How a crawl ends: a short summary, and exit status 1 with one line when the start URL fails."""

from __future__ import annotations

import socket
import subprocess
from pathlib import Path

import pytest
from conftest import REPO, SAMPLE_SITE, scrapy_crawl_command

from linkspider.testserver import serve

pytestmark = pytest.mark.slow


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]  # nothing listens once the socket is closed


def crawl(start: str, out: Path, **settings: object) -> subprocess.CompletedProcess[str]:
    command = scrapy_crawl_command(start, out, settings={"RETRY_TIMES": 0, **settings})
    return subprocess.run(command, cwd=REPO, capture_output=True, text=True, timeout=120, check=False)


def test_an_unreachable_start_url_exits_1_and_says_why(tmp_path: Path) -> None:
    done = crawl(f"http://127.0.0.1:{closed_port()}/", tmp_path / "crawl")
    assert done.returncode == 1
    last = done.stderr.strip().splitlines()[-1]
    assert last.startswith("scrapy crawl site: error: the start URL") and "connection refused" in last
    assert "pages stored     0" in done.stderr


def test_a_start_url_answering_404_exits_1(tmp_path: Path) -> None:
    with serve(SAMPLE_SITE) as base:
        done = crawl(base + "no-such-page/", tmp_path / "crawl", LINKSPIDER_SITEMAPS=False)
    assert done.returncode == 1
    assert done.stderr.strip().splitlines()[-1].endswith("answered HTTP 404")


def test_a_good_crawl_ends_with_its_summary(tmp_path: Path) -> None:
    with serve(SAMPLE_SITE) as base:
        done = crawl(base, tmp_path / "crawl", LOG_LEVEL="WARNING")
    assert done.returncode == 0, done.stderr[-2000:]
    summary = done.stderr[done.stderr.index("linkspider: crawl finished"):]
    assert "pages stored     31" in summary and "skipped          " in summary and "pagination" in summary
    assert "error:" not in summary
