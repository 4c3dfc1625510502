"""The scheduled-run recipe (deploy/scheduled_run.sh) end to end: real scrapyd, sample site, postprocess."""

from __future__ import annotations

import csv
import fcntl
import os
import subprocess
import sys
from pathlib import Path

import pytest
from local_servers import REPO, deployed_scrapyd

from linkspider.testserver import serve

SCRIPT = REPO / "deploy" / "scheduled_run.sh"
SAMPLE_SITE = REPO / "sample_site"


@pytest.fixture(scope="module")
def scrapyd_url(tmp_path_factory: pytest.TempPathFactory):
    with deployed_scrapyd(tmp_path_factory.mktemp("scrapyd")) as url:
        yield url


def scheduled_run(scrapyd_url: str, data: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    environment = {**os.environ, "PYTHON": sys.executable, "SCRAPYD_URL": scrapyd_url,
                   "LINKSPIDER_DATA": str(data), "WAIT_TIMEOUT": "240", "WAIT_POLL": "0.5", **env}
    return subprocess.run([str(SCRIPT), *args], cwd="/", env=environment, capture_output=True, text=True,
                          timeout=600)


@pytest.mark.slow
def test_scheduled_run_crawls_waits_and_builds_the_queue(scrapyd_url: str, tmp_path: Path) -> None:
    data = tmp_path / "data"
    with serve(SAMPLE_SITE) as base:
        # POSTPROCESS_ARGS reaches postprocess: one chunk per page keeps the embedding step short.
        done = scheduled_run(scrapyd_url, data, base, "setting=AUTOTHROTTLE_ENABLED=False",
                             POSTPROCESS_ARGS="--max-chunks 1 --trees 10")
    assert done.returncode == 0, done.stderr + done.stdout
    site = base.removeprefix("http://").rstrip("/").replace(":", "_")  # 127.0.0.1_PORT
    crawl, out = data / "crawl" / site, data / "out" / site
    [job] = [line.split()[3] for line in done.stdout.splitlines() if " scheduled; crawl directory " in line]
    parts = list((crawl / "pages").glob("part-*.parquet"))
    assert parts and all(p.name.startswith(f"part-{job}-") for p in parts)
    with open(out / "suggestions.csv", newline="", encoding="utf-8") as file:
        rows = list(csv.DictReader(file))
    assert rows, "the review queue is empty"
    assert all(row["source_url"].startswith(base) and row["target_url"].startswith(base) for row in rows)
    assert f"review queue for job {job}: {out}/suggestions.csv" in done.stdout


@pytest.mark.slow
def test_a_failed_crawl_stops_the_run_and_keeps_the_old_queue(scrapyd_url: str, tmp_path: Path) -> None:
    data = tmp_path / "data"
    out = data / "out" / "127.0.0.1_9"
    out.mkdir(parents=True)
    (out / "suggestions.csv").write_text("last week's queue\n")
    # max_pages=x makes the spider refuse its arguments: scrapyd still lists the job as finished.
    done = scheduled_run(scrapyd_url, data, "http://127.0.0.1:9/", "max_pages=x")
    assert done.returncode != 0
    assert "finished but wrote no page parts" in done.stderr
    assert "did not produce a usable crawl" in done.stderr.splitlines()[-1]
    assert (out / "suggestions.csv").read_text() == "last week's queue\n"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ((), "usage: deploy/scheduled_run.sh START_URL"),
        (("example.com",), "START_URL must be an http(s) URL"),
        (("https://example.com/", "max_pages"), "extra arguments must be NAME=VALUE"),
    ],
)
def test_bad_arguments_are_one_line(args: tuple[str, ...], message: str, tmp_path: Path) -> None:
    done = subprocess.run([str(SCRIPT), *args], env={**os.environ, "LINKSPIDER_DATA": str(tmp_path)},
                          capture_output=True, text=True, timeout=30)
    assert done.returncode == 1
    assert len(done.stderr.strip().splitlines()) == 1 and message in done.stderr


def test_unreachable_scrapyd_is_an_error(tmp_path: Path) -> None:
    done = scheduled_run("http://127.0.0.1:9/", tmp_path, "https://example.com/")
    assert done.returncode != 0
    assert "schedule.json failed" in done.stderr.splitlines()[-1]


def test_two_runs_for_one_site_never_overlap(tmp_path: Path) -> None:
    out = tmp_path / "out" / "example.com"
    out.mkdir(parents=True)
    with open(out / ".scheduled_run.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)  # a run that is still going
        done = scheduled_run("http://127.0.0.1:9/", tmp_path, "https://example.com/")
    assert done.returncode == 1
    assert "another scheduled run for example.com is still going" in done.stderr
