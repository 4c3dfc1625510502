"""Shared fixtures: the sample site on 127.0.0.1 and a runner for the real ``scrapy crawl``.

Keep fixtures generic and in clearly named functions; several test modules use them.
"""

from __future__ import annotations

import mmap
import os
import subprocess
import sys
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path

import numpy as np
import pytest
from wordpress_site import WordPressSite, missing, wordpress_site

from linkspider.testserver import SiteServer, running

REPO = Path(__file__).resolve().parents[1]
SAMPLE_SITE = REPO / "sample_site"

#: Settings for crawls in tests: fast on loopback (the project's defaults stay polite).
TEST_CRAWL_SETTINGS = {
    "AUTOTHROTTLE_ENABLED": "False",
    "CONCURRENT_REQUESTS": "16",
    "CONCURRENT_REQUESTS_PER_DOMAIN": "16",
    "LOG_LEVEL": "WARNING",
}


@pytest.fixture(scope="session")
def sample_site_server() -> Iterator[SiteServer]:
    """The sample site (``sample_site/``) served on a free port for the whole session."""
    with running(SAMPLE_SITE) as server:
        yield server


@pytest.fixture(scope="session")
def sample_site(sample_site_server: SiteServer) -> str:
    """Base URL of the sample site, ``http://127.0.0.1:PORT/``."""
    return sample_site_server.url


def scrapy_crawl_command(
    start: str, out: str | os.PathLike[str], *args: str, settings: Mapping[str, object] | None = None
) -> list[str]:
    """The ``python3 -m scrapy crawl site`` command line with test settings."""
    merged = {**TEST_CRAWL_SETTINGS, **(settings or {})}
    cmd = [sys.executable, "-m", "scrapy", "crawl", "site", "-a", f"start={start}", "-a", f"out={out}"]
    cmd += list(args)
    for name, value in merged.items():
        cmd += ["-s", f"{name}={value}"]
    return cmd


def run_scrapy_crawl(
    start: str,
    out: str | os.PathLike[str],
    *args: str,
    settings: Mapping[str, object] | None = None,
    timeout: float = 120,
) -> subprocess.CompletedProcess[str]:
    """Run ``scrapy crawl site`` in the repository root; fails the test on a non-zero exit."""
    cmd = scrapy_crawl_command(start, out, *args, settings=settings)
    proc = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True, timeout=timeout, check=False)
    assert proc.returncode == 0, f"crawl failed ({proc.returncode}):\n{proc.stderr[-4000:]}"
    return proc


@pytest.fixture(scope="session")
def scrapy_crawl() -> Callable[..., subprocess.CompletedProcess[str]]:
    """``scrapy_crawl(start, out, *extra_args, settings={...})`` runs the real crawl command."""
    return run_scrapy_crawl


@pytest.fixture(scope="session")
def wordpress(tmp_path_factory: pytest.TempPathFactory) -> Iterator[WordPressSite]:
    """A real WordPress (Debian's package, private MariaDB, PHP's built-in server) on 127.0.0.1 with
    The Kitchen Ledger's posts and pages, for the whole session (tests/wordpress_site.py)."""
    problem = missing()
    if problem:
        pytest.skip(f"WordPress cannot run here: {problem}")
    with wordpress_site(tmp_path_factory.mktemp("wordpress")) as site:
        yield site


def _mapped_from_a_file(values: np.ndarray) -> bool:
    base = values
    while isinstance(base, np.ndarray) and base.base is not None:
        base = base.base
    return isinstance(base, memoryview) and isinstance(base.obj, mmap.mmap)


@pytest.fixture
def mapped_from_a_file() -> Callable[[np.ndarray], bool]:
    """Whether an array is read from a memory-mapped file (``spill.mapped``)."""
    return _mapped_from_a_file
