"""The decisions store, and decisions carried across runs: decided pairs never come back."""

from __future__ import annotations

import json
import sqlite3
from datetime import timedelta
from pathlib import Path

import pytest
from crawlkit import SITE, SITE_LINKS, later, link, write_crawl, write_site
from test_postprocess_cli import LOW, postprocess, read_csv

from postprocess.decisions.store import DB_FILE, SCHEMA_VERSION, DecisionStore, default_path
from postprocess.errors import PREFIX, InputError


def test_a_decision_is_stored_replaced_forgotten_and_kept_in_history(tmp_path):
    store = DecisionStore(tmp_path / "db" / DB_FILE)
    assert store.get("a", "b") is None and store.counts() == {"approved": 0, "rejected": 0, "live": 0}
    store.decide("a", "b", "rejected", reason="wrong sense")
    store.decide("a", "b", "approved", anchor="pour-over", context="Try a pour-over at home.")
    store.decide("a", "c", "rejected")
    again = DecisionStore(tmp_path / "db" / DB_FILE)  # another process, another day
    decision = again.get("a", "b")
    assert decision is not None and decision.state == "approved" and decision.anchor == "pour-over"
    assert decision.reason is None and decision.decided_at
    assert again.counts() == {"approved": 1, "rejected": 1, "live": 0}
    assert again.held_back() == {("a", "b"), ("a", "c")}
    assert again.forget("a", "c") and not again.forget("a", "c")
    assert [h["state"] for h in again.history("a", "b")] == ["rejected", "approved"]
    assert [h["state"] for h in again.history("a", "c")] == ["rejected", "pending"]
    with sqlite3.connect(tmp_path / "db" / DB_FILE) as conn:
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"


def test_only_approved_pairs_found_linked_become_live(tmp_path):
    store = DecisionStore(tmp_path / DB_FILE)
    store.decide("a", "b", "approved")
    store.decide("a", "c", "rejected")
    store.decide("a", "d", "approved")
    assert store.record_live([("a", "b"), ("a", "c"), ("x", "y"), ("a", "b")]) == [("a", "b")]
    assert store.get("a", "b").state == "live" and store.get("a", "b").live_at
    assert store.get("a", "c").state == "rejected" and store.get("a", "d").state == "approved"
    assert store.record_live([("a", "b")]) == []


@pytest.mark.parametrize("state", ["pending", "maybe", ""])
def test_an_unknown_state_is_refused(tmp_path, state):
    with pytest.raises(InputError, match="unknown decision state"):
        DecisionStore(tmp_path / DB_FILE).decide("a", "b", state)


def test_bad_database_files_are_named(tmp_path):
    junk = tmp_path / "junk.sqlite"
    junk.write_text("not a database " * 100)
    with pytest.raises(InputError, match="is not a SQLite database"):
        DecisionStore(junk)
    assert junk.read_text().startswith("not a database")  # never overwritten
    with pytest.raises(InputError, match="is a folder"):
        DecisionStore(tmp_path)
    with pytest.raises(InputError, match="does not exist"):
        DecisionStore(tmp_path / "missing.sqlite", create=False)
    newer = tmp_path / "newer.sqlite"
    with sqlite3.connect(newer) as conn:
        conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    with pytest.raises(InputError, match="newer linkspider"):
        DecisionStore(newer)


def test_the_default_database_is_beside_the_output_folder(tmp_path):
    assert default_path(tmp_path / "out") == tmp_path / DB_FILE
    assert default_path(tmp_path / "runs" / "2026-11-30") == tmp_path / "runs" / DB_FILE


def queue_pairs(out: Path) -> list[tuple[str, str]]:
    """(source, target) of each row of the run's suggestions.csv, in order."""
    return [(r["source_url"], r["target_url"]) for r in read_csv(out / "suggestions.csv")]


@pytest.mark.slow
def test_decided_pairs_stay_out_of_the_next_run_until_the_link_is_live(tmp_path):
    crawl, out = write_site(tmp_path / "crawl"), tmp_path / "out"
    first = postprocess("--crawl", str(crawl), "--out", str(out), *LOW)
    assert first.returncode == 0, first.stderr
    assert not (tmp_path / DB_FILE).exists()  # no decisions, no database
    assert "decisions" not in json.loads((out / "summary.json").read_text())
    pairs = queue_pairs(out)
    assert len(pairs) >= 2, pairs
    rejected, approved = pairs[0], pairs[1]
    store = DecisionStore(default_path(out))
    store.decide(*rejected, "rejected", reason="not about it")
    store.decide(*approved, "approved")

    second = postprocess("--crawl", str(crawl), "--out", str(out), *LOW)
    assert second.returncode == 0, second.stderr
    now = queue_pairs(out)
    assert rejected not in now and approved not in now
    assert set(now) >= set(pairs[2:])  # the others stay
    summary = json.loads((out / "summary.json").read_text())
    assert summary["decisions"] == {"approved": 1, "rejected": 1, "live": 0, "held_back": 2, "became_live": 0}
    assert summary["rejected"]["decided_rejected"] == 1 and summary["rejected"]["decided_approved"] == 1

    # The approved link is published: the next crawl of its source page sees it.
    source = next(p for p in SITE if p["url"] == approved[0])
    old_links = [lk for lk in SITE_LINKS if lk["source_url"] == source["url"]]
    fetched = source["fetched_at"] + timedelta(days=1)
    new_links = [dict(lk, fetched_at=fetched, job="job2") for lk in old_links]
    new_links.append(link(*approved, anchor="the words", fetched_at=fetched, job="job2"))
    write_crawl(crawl, [later(source, job="job2")], new_links, part="job2-1")
    third = postprocess("--crawl", str(crawl), "--out", str(out), *LOW)
    assert third.returncode == 0, third.stderr
    assert store.get(*approved).state == "live" and store.get(*rejected).state == "rejected"
    summary = json.loads((out / "summary.json").read_text())
    assert summary["decisions"] == {"approved": 0, "rejected": 1, "live": 1, "held_back": 2, "became_live": 1}
    assert rejected not in queue_pairs(out)

    # --db chooses another database: there, nothing is decided, and the pairs come back.
    empty = tmp_path / "empty.sqlite"
    other = postprocess("--crawl", str(crawl), "--out", str(out), *LOW, "--db", str(empty))
    assert other.returncode == 0, other.stderr
    assert rejected in queue_pairs(out)


def test_a_database_that_is_not_sqlite_stops_the_run_with_one_line(tmp_path):
    crawl, out = write_site(tmp_path / "crawl"), tmp_path / "out"
    junk = tmp_path / "junk.sqlite"
    junk.write_bytes(b"\x00garbage" * 200)
    result = postprocess("--crawl", str(crawl), "--out", str(out), "--db", str(junk))
    assert result.returncode == 2 and not out.exists()  # checked before any work
    assert result.stderr.strip().splitlines() == [f"{PREFIX}decisions database {junk} "
                                                  "is not a SQLite database"]
