"""Deploy to a real Scrapyd, schedule crawls of the sample site, wait for them, read their Parquet."""

from __future__ import annotations

import configparser
import subprocess
import sys
import time
import zipfile
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from local_servers import REPO, command, copy_project, deploy, get_json, post_form, scrapyd_server

from deploy.scrapyd import Scrapyd, check_job, finish_reason, job_parts, job_state, wait_for_job
from linkspider.testserver import serve
from postprocess.errors import InputError
from postprocess.stages.load import load_crawl

SAMPLE_SITE = REPO / "sample_site"


def schedule(scrapyd_url: str, *fields: tuple[str, str]) -> str:
    fields = (("project", "linkspider"), ("spider", "site"), *fields)
    answer = post_form(scrapyd_url + "schedule.json", list(fields))
    assert answer["status"] == "ok", answer
    return answer["jobid"]


@pytest.fixture(scope="module")
def deployed(tmp_path_factory: pytest.TempPathFactory):
    """A real scrapyd with the project deployed by scrapyd-deploy; yields (url, folder)."""
    folder = tmp_path_factory.mktemp("scrapyd")
    with scrapyd_server(folder / "server") as url:
        done = deploy(copy_project(folder / "project"), url)
        assert done.returncode == 0, done.stderr + done.stdout
        assert '"status": "ok"' in done.stdout and '"spiders": 2' in done.stdout, done.stdout
        yield url, folder


@pytest.mark.parametrize(
    ("log", "reason"),
    [
        ("... 'finish_reason': 'finished',\n 'item_scraped_count': 3}", "finished"),
        ("'finish_reason': 'shutdown'", "shutdown"),
        ("{'finish_reason': 'max_pages'} ... {'finish_reason': 'finished'}", "finished"),
        ('"finish_reason": "closespider_timeout"', "closespider_timeout"),
        ("Traceback (most recent call last): ... SystemExit: 2", None),
        ("", None),
    ],
)
def test_finish_reason(log: str, reason: str | None) -> None:
    assert finish_reason(log) == reason


@pytest.mark.parametrize(
    ("jobs", "job", "state"),
    [
        ({"pending": [{"id": "a"}], "running": [], "finished": []}, "a", "pending"),
        ({"pending": [], "running": [{"id": "a"}], "finished": [{"id": "b"}]}, "a", "running"),
        ({"pending": [], "running": [], "finished": [{"id": "b"}, {"id": "a"}]}, "a", "finished"),
        ({"pending": [], "running": [], "finished": [{"id": "b"}]}, "a", None),
        ({}, "a", None),
    ],
)
def test_job_state(jobs: dict, job: str, state: str | None) -> None:
    found = job_state(jobs, job)
    assert (found[0] if found else None) == state


def test_unreachable_scrapyd_is_one_line() -> None:
    with pytest.raises(InputError, match=r"^cannot reach scrapyd at http://127.0.0.1:9/: "):
        wait_for_job(Scrapyd("http://127.0.0.1:9/"), "abc", timeout=1, poll=0.1)


def test_the_egg_contains_every_file_of_the_packages(tmp_path: Path) -> None:
    """``scrapyd-deploy`` packs every tracked file of linkspider/ (code and data) and the entry point."""
    project = copy_project(tmp_path / "project")
    egg = tmp_path / "linkspider.egg"
    done = subprocess.run([command("scrapyd-deploy"), "--build-egg", str(egg)], cwd=project,
                          capture_output=True, text=True, timeout=180)
    assert done.returncode == 0, done.stderr
    tracked = subprocess.run(["git", "ls-files", "linkspider"], cwd=REPO, capture_output=True, text=True,
                             check=True).stdout.split()
    with zipfile.ZipFile(egg) as archive:
        names = set(archive.namelist())
        entry_points = archive.read("EGG-INFO/entry_points.txt").decode()
    missing = [name for name in tracked if name not in names]
    assert not missing, f"not in the egg: {missing}"
    assert "settings = linkspider.settings" in entry_points


@pytest.mark.slow
def test_deploy_schedule_wait_and_read_one_job_or_all(deployed, tmp_path: Path) -> None:
    url, _ = deployed
    server = Scrapyd(url)
    data = tmp_path / "data"
    with serve(SAMPLE_SITE) as base:
        # Spider argument out= chooses the data directory.
        job = schedule(url, ("start", base), ("out", str(data)), ("setting", "AUTOTHROTTLE_ENABLED=False"))
        finished = wait_for_job(server, job, timeout=180, poll=0.5)
        parts = check_job(server, finished, data)
        # The setting LINKSPIDER_OUTPUT does too; a second, capped job writes into the same directory.
        job2 = schedule(url, ("start", base), ("max_pages", "5"), ("setting", f"LINKSPIDER_OUTPUT={data}"),
                        ("setting", "AUTOTHROTTLE_ENABLED=False"))
        check_job(server, wait_for_job(server, job2, timeout=180, poll=0.5), data)

    assert finished.log_url and finished.log_url.startswith(url)
    for table in ("pages", "links", "skipped"):
        names = [p.name for p in (data / table).glob("part-*.parquet")]
        assert names, f"no {table} parts"
        assert all(n.startswith((f"part-{job}-", f"part-{job2}-")) for n in names), names
    assert parts == job_parts(data, job)
    first = pq.read_table(parts).to_pylist()
    assert {row["job"] for row in first} == {job}
    urls = {row["url"] for row in first}
    assert base in urls and f"{base}guides/" in urls
    assert len(urls) >= 20

    one = load_crawl(data, job)
    capped = load_crawl(data, job2)
    every = load_crawl(data)
    assert {p.url for p in one.pages} == urls
    assert len(capped.pages) == 5 and {p.job for p in capped.pages} == {job2}
    assert {p.url for p in every.pages} == urls  # merged: newest row per URL
    assert {p.job for p in every.pages} == {job, job2}


@pytest.mark.slow
def test_a_failed_job_is_listed_finished_but_wait_says_it_failed(deployed, tmp_path: Path) -> None:
    url, _ = deployed
    job = schedule(url, ("start", "ftp://example.com/"), ("out", str(tmp_path / "data")))
    wait_for_job(Scrapyd(url), job, timeout=120, poll=0.5)
    listed = job_state(get_json(url + "listjobs.json?project=linkspider"), job)
    assert listed is not None and listed[0] == "finished"  # Scrapyd's view: finished
    done = subprocess.run(
        [sys.executable, "-m", "postprocess", "wait", "--scrapyd", url, "--job", job,
         "--crawl", str(tmp_path / "data"), "--timeout", "30", "--poll", "0.5"],
        cwd=REPO, capture_output=True, text=True, timeout=120,
    )
    assert done.returncode == 2
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert f"job {job} finished but wrote no page parts in {tmp_path / 'data' / 'pages'}" in lines[0]


@pytest.mark.slow
def test_a_cancelled_crawl_is_not_taken_for_a_finished_one(deployed, tmp_path: Path) -> None:
    """A crawl stopped half-way wrote parts, but its log says finish_reason 'shutdown'."""
    url, _ = deployed
    server = Scrapyd(url)
    data = tmp_path / "data"
    with serve(SAMPLE_SITE, delay=0.5) as base:
        job = schedule(url, ("start", base), ("out", str(data)), ("setting", "LINKSPIDER_FLUSH_ROWS=1"),
                       ("setting", "CONCURRENT_REQUESTS=1"))
        deadline = time.monotonic() + 60
        while not job_parts(data, job) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert job_parts(data, job), "the crawl wrote no part before it was cancelled"
        assert post_form(url + "cancel.json", [("project", "linkspider"), ("job", job)])["status"] == "ok"
        finished = wait_for_job(server, job, timeout=60, poll=0.5)
    with pytest.raises(InputError, match=rf"^job {job} ended with finish_reason 'shutdown' \(log: "):
        check_job(server, finished, data)


@pytest.mark.slow
def test_wait_gives_up_after_its_timeout(deployed, tmp_path: Path) -> None:
    url, _ = deployed
    with serve(SAMPLE_SITE, delay=1.0) as base:
        job = schedule(url, ("start", base), ("out", str(tmp_path / "data")),
                       ("setting", "CONCURRENT_REQUESTS=1"))
        gave_up = rf"^job {job} still (pending|running) on scrapyd .* after 2 s$"
        try:
            with pytest.raises(InputError, match=gave_up):
                wait_for_job(Scrapyd(url), job, timeout=2, poll=0.5)
        finally:
            post_form(url + "cancel.json", [("project", "linkspider"), ("job", job)])
            wait_for_job(Scrapyd(url), job, timeout=60, poll=0.5)


@pytest.mark.slow
def test_a_password_protected_scrapyd_as_the_readme_sets_it_up(tmp_path: Path) -> None:
    """username/password in scrapyd.conf; the deploy target's password from the environment."""
    with scrapyd_server(tmp_path / "server", "username = editor\npassword = s3cret\n") as url:
        target = "username = editor\npassword = $SCRAPYD_PASSWORD\n"
        refused = deploy(copy_project(tmp_path / "refused"), url, target, SCRAPYD_PASSWORD="wrong")
        assert refused.returncode != 0 and "401" in refused.stderr + refused.stdout
        done = deploy(copy_project(tmp_path / "project"), url, target, SCRAPYD_PASSWORD="s3cret")
        assert done.returncode == 0 and '"status": "ok"' in done.stdout, done.stderr + done.stdout
        fields = [("project", "linkspider"), ("spider", "site"), ("start", "ftp://example.com/")]
        answer = post_form(url + "schedule.json", fields, auth=("editor", "s3cret"))
        job = answer["jobid"]
        with pytest.raises(InputError, match=r"^scrapyd at .* refused the credentials \(HTTP 401\)$"):
            wait_for_job(Scrapyd(url), job, timeout=5)
        finished = wait_for_job(Scrapyd(url, "editor", "s3cret"), job, timeout=120, poll=0.5)
        assert finished.job == job


def test_every_shipped_scrapyd_config_binds_to_loopback() -> None:
    """scrapyd runs any egg uploaded to it: no shipped config may listen beyond 127.0.0.1."""
    tracked = subprocess.run(["git", "ls-files", "*.conf", "*.cfg", "**/*.conf", "**/*.cfg"], cwd=REPO,
                             capture_output=True, text=True, check=True).stdout.split()
    configs = []
    for name in sorted(set(tracked)):
        parser = configparser.ConfigParser(interpolation=None)
        parser.read(REPO / name, encoding="utf-8")
        if parser.has_section("scrapyd"):
            configs.append(name)
            assert parser.get("scrapyd", "bind_address", fallback="") == "127.0.0.1", name
    assert "scrapyd.conf" in configs
