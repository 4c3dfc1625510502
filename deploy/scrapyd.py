"""Wait for a Scrapyd crawl job to finish, then check that it really wrote a crawl.

Scheduled runs (``deploy/scheduled_run.sh``) schedule a crawl through
Scrapyd's ``schedule.json`` and call ``python3 -m postprocess wait`` before
postprocess reads the crawl. :func:`wait_for_job` polls ``listjobs.json``
until the job is listed under ``finished``. Scrapyd lists a job that failed
(exit status 1, a bad argument, a crash) under ``finished`` too, so
:func:`check_job` then looks at what the job left behind: its Parquet page
parts (``pages/part-<job>-*.parquet``) and, when Scrapyd keeps logs, the
``finish_reason`` in its log. Every problem is one line (:class:`InputError`).
"""

from __future__ import annotations

import argparse
import base64
import json
import os
import re
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from postprocess.errors import InputError

DEFAULT_PROJECT = "linkspider"
#: Finish reasons of a crawl that ended normally (the page cap and CLOSESPIDER_* limits included).
OK_REASONS = (
    "finished", "max_pages", "closespider_pagecount", "closespider_itemcount", "closespider_timeout"
)
_REASON_RE = re.compile(r"""['"]finish_reason['"]:\s*['"]([A-Za-z0-9_]+)['"]""")
_JOB_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,99}$")


@dataclass(frozen=True)
class FinishedJob:
    """A job that Scrapyd lists as finished."""

    job: str
    spider: str
    start_time: str
    end_time: str
    log_url: str | None  # absolute URL of the job's log, None when Scrapyd keeps no logs


@dataclass(frozen=True)
class Scrapyd:
    """A Scrapyd server: base URL (``http://127.0.0.1:6800/``) and optional basic-auth credentials."""

    url: str
    username: str = ""
    password: str = ""

    def endpoint(self, name: str, **query: str) -> str:
        """The absolute URL of ``name`` (``listjobs.json``) with ``query`` parameters."""
        base = self.url if self.url.endswith("/") else self.url + "/"
        url = urllib.parse.urljoin(base, name)
        return f"{url}?{urllib.parse.urlencode(query)}" if query else url

    def get(self, url: str, timeout: float = 30.0, missing_ok: bool = False) -> bytes | None:
        """GET ``url`` (basic auth when set); None for a 404 if ``missing_ok``; else one-line InputError."""
        request = urllib.request.Request(url)
        if self.username:
            token = base64.b64encode(f"{self.username}:{self.password}".encode()).decode()
            request.add_header("Authorization", f"Basic {token}")
        try:
            with urllib.request.urlopen(request, timeout=timeout) as response:
                return response.read()
        except urllib.error.HTTPError as exc:
            if exc.code == 404 and missing_ok:
                return None
            if exc.code == 401:
                raise InputError(f"scrapyd at {self.url} refused the credentials (HTTP 401)") from None
            raise InputError(f"scrapyd at {self.url} answered HTTP {exc.code} for {url}") from None
        except (urllib.error.URLError, OSError) as exc:
            reason = getattr(exc, "reason", exc)
            raise InputError(f"cannot reach scrapyd at {self.url}: {reason}") from None

    def list_jobs(self, project: str) -> dict[str, Any]:
        """``listjobs.json`` for ``project`` as a dict (pending, running, finished)."""
        raw = self.get(self.endpoint("listjobs.json", project=project))
        try:
            data = json.loads(raw or b"")
        except ValueError:
            raise InputError(f"scrapyd at {self.url} did not answer JSON from listjobs.json") from None
        if data.get("status") != "ok":
            message = " ".join(str(data.get("message", data)).split())
            raise InputError(f"scrapyd listjobs.json failed for project {project!r}: {message}")
        return data


def job_state(jobs: dict[str, Any], job: str) -> tuple[str, dict[str, Any]] | None:
    """``("pending" | "running" | "finished", entry)`` for ``job`` in a listjobs.json answer, else None."""
    for state in ("finished", "running", "pending"):
        for entry in jobs.get(state, []):
            if entry.get("id") == job:
                return state, entry
    return None


def wait_for_job(
    server: Scrapyd,
    job: str,
    *,
    project: str = DEFAULT_PROJECT,
    timeout: float = 6 * 3600,
    poll: float = 5.0,
    clock: Callable[[], float] = time.monotonic,
    sleep: Callable[[float], None] = time.sleep,
) -> FinishedJob:
    """Poll listjobs.json until ``job`` is finished; InputError if it is unknown or ``timeout`` passes."""
    if not _JOB_RE.match(job):
        raise InputError(f"--job must be a Scrapyd job id (letters, digits, '_', '-', '.'), got {job!r}")
    deadline = clock() + timeout
    while True:
        found = job_state(server.list_jobs(project), job)
        if found is None:
            raise InputError(
                f"job {job} is not pending, running or finished on scrapyd {server.url} "
                f"(project {project}; scrapyd forgets jobs when it restarts)"
            )
        state, entry = found
        if state == "finished":
            log_url = entry.get("log_url")
            return FinishedJob(
                job=job,
                spider=str(entry.get("spider", "")),
                start_time=str(entry.get("start_time", "")),
                end_time=str(entry.get("end_time", "")),
                log_url=server.endpoint(log_url.lstrip("/")) if log_url else None,
            )
        if clock() >= deadline:
            raise InputError(f"job {job} still {state} on scrapyd {server.url} after {timeout:g} s")
        sleep(min(poll, max(0.0, deadline - clock())))


def finish_reason(log_text: str) -> str | None:
    """The crawl's ``finish_reason`` from a Scrapy log (its final stats dump), or None."""
    reasons = _REASON_RE.findall(log_text)
    return reasons[-1] if reasons else None


def job_parts(crawl_dir: str | Path, job: str, table: str = "pages") -> list[Path]:
    """The Parquet parts of ``table`` written by ``job`` (``part-<job>-*.parquet``)."""
    return sorted(Path(crawl_dir, table).glob(f"part-{job}-*.parquet"))


def check_job(server: Scrapyd, finished: FinishedJob, crawl_dir: str | Path) -> list[Path]:
    """The job's page parts; InputError when the job failed or left no pages in ``crawl_dir``."""
    where = f" (log: {finished.log_url})" if finished.log_url else ""
    if finished.log_url:
        log = server.get(finished.log_url, missing_ok=True)
        if log is None:
            raise InputError(f"job {finished.job} left no log: it failed before the crawl started{where}")
        reason = finish_reason(log.decode("utf-8", "replace"))
        if reason is None:
            raise InputError(f"job {finished.job} ended without finishing its crawl{where}")
        if reason not in OK_REASONS:
            raise InputError(f"job {finished.job} ended with finish_reason {reason!r}{where}")
    parts = job_parts(crawl_dir, finished.job)
    if not parts:
        raise InputError(
            f"job {finished.job} finished but wrote no page parts in {Path(crawl_dir, 'pages')}"
            f" (wrong out directory, or the job failed){where}"
        )
    return parts


def add_wait_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of ``python3 -m postprocess wait``."""
    parser.add_argument("--scrapyd", default="http://127.0.0.1:6800/", help="Scrapyd base URL")
    parser.add_argument("--job", required=True, help="the job id that schedule.json returned (jobid)")
    parser.add_argument("--crawl", required=True, help="the crawl directory the job writes to (-a out=)")
    parser.add_argument("--project", default=DEFAULT_PROJECT, help="Scrapyd project (default %(default)s)")
    parser.add_argument("--timeout", type=float, default=6 * 3600, help="seconds to wait (default 6 h)")
    parser.add_argument("--poll", type=float, default=5.0, help="seconds between listjobs.json polls")
    parser.add_argument("--username", default="", help="Scrapyd username (or SCRAPYD_USERNAME)")
    parser.add_argument("--password", default="", help="Scrapyd password (or SCRAPYD_PASSWORD)")


def run_wait(args: argparse.Namespace) -> int:
    """``wait``: block until the job finished and wrote pages; print one summary line."""
    if args.timeout <= 0 or args.poll <= 0:
        raise InputError("--timeout and --poll must be positive numbers of seconds")
    server = Scrapyd(
        url=args.scrapyd,
        username=args.username or os.environ.get("SCRAPYD_USERNAME", ""),
        password=args.password or os.environ.get("SCRAPYD_PASSWORD", ""),
    )
    started = time.monotonic()
    finished = wait_for_job(server, args.job, project=args.project, timeout=args.timeout, poll=args.poll)
    parts = check_job(server, finished, args.crawl)
    waited = time.monotonic() - started
    print(
        f"job {finished.job} finished ({finished.spider}, {finished.start_time} to {finished.end_time}); "
        f"{len(parts)} page part(s) in {Path(args.crawl, 'pages')}; waited {waited:.0f} s",
        flush=True,
    )
    return 0
