"""linkspider.recovery: a JOBDIR left by a kill -9 is recognised and its stale state removed."""

from __future__ import annotations

from crawlkit import link, page, skip, url, write_crawl

from linkspider.recovery import RUNNING_MARKER, killed_before, stored_job


def test_only_a_jobdir_with_the_running_marker_was_killed(tmp_path):
    jobdir = tmp_path / "job"
    (jobdir / "requests.queue").mkdir(parents=True)
    (jobdir / "requests.queue" / "q00000").write_bytes(b"stale")
    (jobdir / "requests.seen").write_text("0123abcd\n")
    (jobdir / "linkspider-job").write_text("job1\n")
    assert not killed_before(jobdir) and not killed_before(None)  # a clean stop: kept as it is
    assert (jobdir / "requests.seen").exists() and (jobdir / "requests.queue").is_dir()
    (jobdir / RUNNING_MARKER).write_text("job1\n")
    assert killed_before(jobdir)
    assert not (jobdir / "requests.seen").exists() and not (jobdir / "requests.queue").exists()
    assert (jobdir / "linkspider-job").read_text() == "job1\n"  # the job id stays


def test_stored_job_reads_only_that_jobs_rows(tmp_path):
    home, guide, other = url("/"), url("/guides/"), url("/other/")
    write_crawl(tmp_path, [page(home, "Home", "Home text", depth=0, job="job1"),
                           page(other, "Other", "Other text", depth=1, job="job0")],
                [link(home, guide, job="job1"), link(other, home, job="job0")],
                skipped=[skip(url("/old/"), "redirect", alias_of=guide, job="job1")], part="mixed")
    stored = stored_job(tmp_path, "job1")
    assert stored.pages == {home: 0}
    assert stored.links == [(home, guide)]
    assert stored.skipped == {url("/old/")}
