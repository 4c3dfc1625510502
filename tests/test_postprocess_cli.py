"""``python3 -m postprocess`` as a user runs it: bad input, whole runs, stages one at a time."""

from __future__ import annotations

import csv
import json
import os
import subprocess
import sys
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from crawlkit import SITE, SITE_LINKS, later, page, url, write_crawl, write_site

from postprocess.errors import PREFIX

REPO = Path(__file__).resolve().parents[1]
#: The sample pages are short and few: a lower similarity floor than the default.
LOW = ["--min-score", "0.2", "--min-confidence", "0"]


def postprocess(*args: str, timeout: int = 600) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, PYTHONPATH=str(REPO))
    return subprocess.run([sys.executable, "-m", "postprocess", *args], cwd=REPO, env=env, text=True,
                          capture_output=True, timeout=timeout)


def assert_one_line_error(result: subprocess.CompletedProcess[str], words: str, out: Path) -> None:
    assert result.returncode == 2, result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith(PREFIX) and words in lines[0], lines[0]
    assert not (out / "suggestions.csv").exists()


def _drop_text_column(d: Path) -> None:
    write_site(d)
    part = d / "pages" / "part-job1-0001.parquet"
    pq.write_table(pq.read_table(part).drop_columns(["text"]), part)


def _schema_1_crawl(d: Path) -> None:
    """A crawl written before content blocks and page kinds (schema version 1)."""
    write_site(d)
    part = d / "pages" / "part-job1-0001.parquet"
    table = pq.read_table(part).drop_columns(["kind", "blocks"])
    pq.write_table(table.replace_schema_metadata({b"linkspider_schema_version": b"1"}), part)


BAD_CRAWLS = [
    ("no directory", lambda d: None, "crawl directory not found"),
    ("older crawl", _schema_1_crawl, "crawl schema version 1; postprocess needs version 2"),
    ("empty crawl", lambda d: (d / "pages").mkdir(parents=True), "no pages"),
    ("no rows", lambda d: write_crawl(d, []), "no pages"),
    ("missing column", _drop_text_column, "no column 'text'"),
    ("no text", lambda d: write_crawl(d, [dict(p, text="") for p in SITE]), "has main text"),
    ("one page", lambda d: write_crawl(d, SITE[:1]), "nothing to link"),
]


@pytest.mark.parametrize(("case", "setup", "words"), BAD_CRAWLS, ids=[c[0] for c in BAD_CRAWLS])
def test_bad_crawl_is_one_line_and_no_csv(tmp_path, case, setup, words):
    crawl, out = tmp_path / "crawl", tmp_path / "out"
    setup(crawl)
    assert_one_line_error(postprocess("--crawl", str(crawl), "--out", str(out)), words, out)


@pytest.mark.parametrize(
    ("args", "words"),
    [(["--per-source", "0"], "--per-source must be at least 1"),
     (["--job", "nope"], "for job nope"),
     (["--model", "/nonexistent/model-folder"], "model folder not found")],
)
def test_bad_options_are_one_line(tmp_path, args, words):
    write_site(tmp_path / "crawl")
    out = tmp_path / "out"
    result = postprocess("--crawl", str(tmp_path / "crawl"), "--out", str(out), *args)
    assert_one_line_error(result, words, out)


@pytest.mark.slow
def test_model_not_in_the_cache_fails_without_download(tmp_path):
    write_site(tmp_path / "crawl")
    out = tmp_path / "out"
    result = postprocess("--crawl", str(tmp_path / "crawl"), "--out", str(out),
                         "--model", "BAAI/bge-small-en-v1.5", timeout=300)
    assert_one_line_error(result, "cannot be loaded offline", out)


def test_a_later_stage_before_the_earlier_ones_says_what_to_run(tmp_path):
    write_site(tmp_path / "crawl")
    out = tmp_path / "out"
    result = postprocess("index", "--crawl", str(tmp_path / "crawl"), "--out", str(out))
    assert_one_line_error(result, "run the embed stage first", out)


def test_a_failed_run_leaves_the_old_csv_as_it_was(tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    (out / "suggestions.csv").write_text("old,complete\n")
    result = postprocess("--crawl", str(tmp_path / "missing"), "--out", str(out))
    assert result.returncode == 2
    assert (out / "suggestions.csv").read_text() == "old,complete\n"
    assert [p.name for p in out.iterdir()] == ["suggestions.csv"]  # no temporary file left


def _can_mount() -> bool:
    """Whether this machine lets a test mount a small file system of its own (a user and mount
    namespace: nothing outside the test sees it)."""
    try:
        return subprocess.run(["unshare", "-rm", "mount", "-t", "tmpfs", "none", "/mnt"],
                              capture_output=True, timeout=30).returncode == 0
    except (OSError, subprocess.SubprocessError):
        return False


DISK_CASES = [("full", "size=256k", "no space left on device"), ("read-only", "ro", "read-only file system")]


@pytest.mark.skipif(not _can_mount(), reason="needs unshare and a tmpfs mount in a namespace")
@pytest.mark.parametrize(("case", "mount", "words"), DISK_CASES, ids=[c[0] for c in DISK_CASES])
def test_a_full_or_read_only_disk_is_one_line_and_keeps_the_old_queue(tmp_path, case, mount, words):
    """The output folder's disk fills during the run (or cannot be written): one line naming the
    problem (and the free space where it matters), exit 74, no traceback; the old suggestions.csv as
    it was, and no temporary file left."""
    crawl, disk = write_site(tmp_path / "crawl"), tmp_path / "disk"
    disk.mkdir()
    out = disk / "out"
    old = "" if mount == "ro" else f"mkdir {out} && echo old,complete > {out}/suggestions.csv && "
    script = (f"mount -t tmpfs -o {mount} none {disk} && {old}"
              f"{sys.executable} -m postprocess --crawl {crawl} --out {out} {' '.join(LOW)}; code=$?; "
              f"echo; ls -a {out} 2>/dev/null; cat {out}/suggestions.csv 2>/dev/null; exit $code")
    env = dict(os.environ, PYTHONPATH=str(REPO))
    result = subprocess.run(["unshare", "-rm", "sh", "-c", script], cwd=REPO, env=env, text=True,
                            capture_output=True, timeout=600)
    assert result.returncode == 74, result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(PREFIX) and words in lines[0], result.stderr
    if case == "full":
        assert "output folder" in lines[0] and "0 B free" in lines[0], lines[0]
        listing = result.stdout.split()
        assert "suggestions.csv" in listing and not [n for n in listing if "tmp" in n], listing
        assert result.stdout.rstrip().endswith("old,complete")
    else:
        assert str(out) in lines[0]


def test_only_the_machines_os_errors_are_one_line(tmp_path):
    """A full disk names both folders' free space (an output folder not made yet: its disk's); a
    refused file is named; an error that is not the machine's (a file the code expected) is None:
    its traceback is wanted."""
    import errno
    import tempfile

    from postprocess.errors import environment_problem

    line = environment_problem(OSError(errno.ENOSPC, "No space left on device"), [tmp_path / "out" / "new"])
    assert line.startswith(f"no space left on device (output folder {tmp_path / 'out' / 'new'} has ")
    assert f"TMPDIR {tempfile.gettempdir()} has " in line and "?" not in line
    assert line.endswith("larger disk)")
    refused = OSError(errno.EACCES, "Permission denied", "/x/y")
    assert environment_problem(refused) == "permission denied: /x/y"
    assert environment_problem(OSError(errno.ENOENT, "No such file or directory", "/x")) is None


def read_csv(path: Path) -> list[dict[str, str]]:
    with open(path, newline="", encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


def check_queue(rows: list[dict[str, str]], pages: dict[str, str], linked: set[tuple[str, str]],
                per_source: int) -> None:
    """The issue's invariants on a written queue."""
    sources: dict[str, int] = {}
    for row in rows:
        sources[row["source_url"]] = sources.get(row["source_url"], 0) + 1
        assert row["source_url"] != row["target_url"]
        assert (row["source_url"], row["target_url"]) not in linked
        assert row["anchor_type"] in ("text", "title")
        if row["anchor_type"] == "text":
            assert row["anchor"] in pages[row["source_url"]]
            assert 1 <= len(row["anchor"].split()) <= 6
    assert all(n <= per_source for n in sources.values())
    order = [(float(r["confidence"]), float(r["score"])) for r in rows]
    assert order == sorted(order, reverse=True)  # most confident first, then by score
    for source in sources:
        anchors = [r["anchor"].lower() for r in rows if r["source_url"] == source]
        assert len(anchors) == len(set(anchors))


@pytest.mark.slow
def test_run_then_stages_one_at_a_time(tmp_path):
    crawl, out = write_site(tmp_path / "crawl"), tmp_path / "out"
    result = postprocess("--crawl", str(crawl), "--out", str(out), *LOW)
    assert result.returncode == 0, result.stderr
    assert str(out / "suggestions.csv") in result.stdout and "orphan pages" in result.stdout
    for name in ("suggestions.csv", "suggestions.parquet", "cannibalisation.csv", "report.html",
                 "summary.json", "index.ann", "index-ids.parquet", "vectors.parquet"):
        assert (out / name).is_file(), name
    assert list(out.glob(".*tmp*")) == []
    rows = read_csv(out / "suggestions.csv")
    assert rows, result.stdout
    assert list(rows[0])[:8] == ["source_url", "target_url", "anchor", "anchor_type", "context", "confidence",
                                 "score", "evidence"]
    assert {"similarity", "date_factor", "source_title", "target_title", "target_inbound"} <= set(rows[0])
    pages = {p["url"]: p["text"] for p in SITE}
    linked = {(lk["source_url"], lk["target_url"]) for lk in SITE_LINKS}
    check_queue(rows, pages, linked, per_source=5)
    assert pq.read_table(out / "suggestions.parquet").num_rows == len(rows)
    summary = json.loads((out / "summary.json").read_text())
    assert summary["suggestions"] == len(rows) and summary["pages"] == len(SITE)
    assert summary["embedding"]["embedded_pages"] == len(SITE)
    html = (out / "report.html").read_text()
    assert "Orphan pages" in html and 'id="queue-data"' in html
    assert f"<dt>page kinds</dt><dd>content {len(SITE)}</dd>" in html and "<dt>confidence</dt>" in html
    assert summary["page_kinds"] == {"content": len(SITE)} and summary["confidence"]["model"] == "prior"
    # The queue reads as the editor acts: in the source, link to the target, with the anchor.
    header = ('<th data-sort="source">source</th><th data-sort="target">target</th>'
              '<th data-sort="anchor">anchor</th><th>context</th>')
    assert header in html

    # One page changes: a rerun embeds only that page.
    changed = later(SITE[0], text=SITE[0]["text"] + " Descale the machine monthly.")
    write_crawl(crawl, [changed], [], part="job2-1")
    rerun = postprocess("--crawl", str(crawl), "--out", str(out), *LOW)
    assert rerun.returncode == 0, rerun.stderr
    assert json.loads((out / "summary.json").read_text())["embedding"] == {
        "embedded_pages": 1, "cached_pages": len(SITE) - 1, "texts": 2}

    # Nothing changed: every page from the cache, and the model is not even loaded.
    same = postprocess("--crawl", str(crawl), "--out", str(out), *LOW)
    assert same.returncode == 0, same.stderr
    summary = json.loads((out / "summary.json").read_text())
    assert summary["embedding"]["embedded_pages"] == 0 and "model" not in summary["seconds"]

    # The anchors stage alone reads the pool back from candidates.parquet (as columns) and makes the
    # anchored rows the whole run made.
    whole = (out / "anchored.parquet").read_bytes()
    (out / "anchored.parquet").unlink()
    alone = postprocess("anchors", "--crawl", str(crawl), "--out", str(out), *LOW)
    assert alone.returncode == 0, alone.stderr
    assert (out / "anchored.parquet").read_bytes() == whole

    # The report stage alone reads the anchored rows back with every score part (the paragraph's
    # ``passage`` score too): the queue it writes is the whole run's.
    queue = pq.read_table(out / "suggestions.parquet")
    assert "passage" in queue.column_names
    (out / "suggestions.parquet").unlink()
    report = postprocess("report", "--crawl", str(crawl), "--out", str(out), *LOW)
    assert report.returncode == 0, report.stderr
    assert pq.read_table(out / "suggestions.parquet").equals(queue)

    # Stages one at a time, with a tighter cap: no model is loaded after embed.
    for stage in ("index", "rank", "anchors", "report"):
        step = postprocess(stage, "--crawl", str(crawl), "--out", str(out), *LOW, "--per-source", "1")
        assert step.returncode == 0, (stage, step.stderr)
    capped = read_csv(out / "suggestions.csv")
    check_queue(capped, pages, linked, per_source=1)
    assert 0 < len(capped) <= len(rows)
    assert len({r["source_url"] for r in capped}) == len(capped)  # one row per source


@pytest.mark.slow
def test_the_summary_counts_the_near_duplicate_pairs_of_a_run_and_of_the_report_alone(tmp_path):
    """The run lets the near-duplicate rows go once cannibalisation.csv is written and keeps their
    number; the report stage alone counts the file's rows."""
    copy = page(url("/coffee/espresso-copy/"), "How to pull a good espresso shot | Example Kitchen",
                SITE[0]["text"])
    crawl, out = write_crawl(tmp_path / "crawl", [*SITE, copy], SITE_LINKS), tmp_path / "out"
    result = postprocess("--crawl", str(crawl), "--out", str(out), *LOW)
    assert result.returncode == 0, result.stderr
    assert "near duplicates  1 pairs" in result.stdout
    with open(out / "cannibalisation.csv", newline="", encoding="utf-8") as handle:
        assert len(list(csv.reader(handle))) == 2  # the header and the pair
    assert json.loads((out / "summary.json").read_text())["near_duplicate_pairs"] == 1
    (out / "summary.json").unlink()
    report = postprocess("report", "--crawl", str(crawl), "--out", str(out), *LOW)
    assert report.returncode == 0, report.stderr
    assert json.loads((out / "summary.json").read_text())["near_duplicate_pairs"] == 1


@pytest.mark.slow
def test_html_report_escapes_page_text(tmp_path):
    evil = page(url("/evil/"), "<script>alert(1)</script> Espresso tips | Example Kitchen",
                SITE[0]["text"].replace("espresso", "<b>espresso</b>"))
    crawl = write_crawl(tmp_path / "crawl", [*SITE, evil], SITE_LINKS)
    result = postprocess("--crawl", str(crawl), "--out", str(tmp_path / "out"), *LOW)
    assert result.returncode == 0, result.stderr
    html = (tmp_path / "out" / "report.html").read_text()
    assert "<script>alert" not in html and "&lt;script&gt;alert(1)" in html


def test_skip_bad_parts_runs_on_the_readable_parts_and_says_what_it_lost(tmp_path):
    crawl, out = tmp_path / "crawl", tmp_path / "out"
    write_crawl(crawl, SITE[:5], SITE_LINKS, part="job1-0001")
    write_crawl(crawl, SITE[5:], [], part="job1-0002")
    bad = crawl / "pages" / "part-job1-0002.parquet"
    bad.write_bytes(bad.read_bytes()[:-30])
    stopped = postprocess("--crawl", str(crawl), "--out", str(out), *LOW)
    assert_one_line_error(stopped, "part-job1-0002.parquet", out)
    result = postprocess("--crawl", str(crawl), "--out", str(out), "--skip-bad-parts", *LOW)
    assert result.returncode == 0, result.stderr
    warnings = [line for line in result.stderr.splitlines() if "unreadable part file" in line]
    assert len(warnings) == 1 and str(bad) in warnings[0]
    assert json.loads((out / "summary.json").read_text())["pages"] == 5
