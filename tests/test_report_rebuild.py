"""``python -m postprocess report`` rebuilds the report from a finished output folder, without embedding."""

from __future__ import annotations

import json

from crawlkit import SITE, write_site
from test_postprocess_cli import assert_one_line_error, postprocess

from postprocess.apps.report import write_parquet
from postprocess.decisions.store import DecisionStore, default_path
from postprocess.stages.candidates import Suggestion


def test_report_is_rebuilt_from_the_stage_file_alone(tmp_path):
    crawl, out = write_site(tmp_path / "crawl"), tmp_path / "out"
    orphan = SITE[-1]["url"]
    rows = [Suggestion(SITE[0]["url"], orphan, 1.5, {"similarity": 0.7}, 1, "tyre pressure", "text",
                       "Check the tyre pressure weekly.", "title", "", 0.8)]
    write_parquet(out / "anchored.parquet", rows)
    DecisionStore(default_path(out)).decide(SITE[1]["url"], orphan, "approved")
    result = postprocess("report", "--crawl", str(crawl), "--out", str(out))
    assert result.returncode == 0, result.stderr
    assert "click depth" in result.stdout
    assert sorted(p.name for p in out.iterdir()) == [
        "anchored.parquet", "pages.parquet", "report.html", "suggestions.csv", "suggestions.parquet",
        "summary.json"]  # no vectors, index or embedding cache: nothing was embedded
    summary = json.loads((out / "summary.json").read_text())
    assert set(summary["seconds"]) == {"load", "report"}
    assert summary["decisions"]["approved"] == 1
    assert set(summary["depth"]["content"]) == {"now", "after", "approved"}
    assert summary["content_orphans"]["after"] <= summary["content_orphans"]["now"]
    html = (out / "report.html").read_text()
    assert "after approved links only" in html and "tyre pressure" in html


def test_report_without_the_stage_file_says_what_to_run(tmp_path):
    crawl, out = write_site(tmp_path / "crawl"), tmp_path / "out"
    assert_one_line_error(postprocess("report", "--crawl", str(crawl), "--out", str(out)),
                          "anchored.parquet not found", out)
    assert not (out / "report.html").exists()
