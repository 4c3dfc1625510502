"""The apply log, in the decisions database: every post an ``apply --write`` changed, before and after.

Two tables next to the decisions (created through ``DecisionStore.connect``):
``apply_runs`` (one row per ``apply --write``: site, times and counts) and
``apply_changes`` (one row per post written: its id, REST base, permalink, the stored
markup before and after, the time, the decisions applied as JSON, and when it was
undone). A change is recorded right after its post was written, so a run that stops
half-way still knows what it wrote.
"""

from __future__ import annotations

import json
import secrets
from dataclasses import dataclass
from datetime import UTC, datetime

from postprocess.decisions.store import DecisionStore, now

_SCHEMA = """
CREATE TABLE IF NOT EXISTS apply_runs (
    run_id      TEXT PRIMARY KEY,
    site        TEXT NOT NULL,
    started_at  TEXT NOT NULL,
    finished_at TEXT,
    posts       INTEGER NOT NULL DEFAULT 0,
    links       INTEGER NOT NULL DEFAULT 0,
    skipped     INTEGER NOT NULL DEFAULT 0,
    failed      INTEGER NOT NULL DEFAULT 0,
    undone_at   TEXT
);
CREATE TABLE IF NOT EXISTS apply_changes (
    id         INTEGER PRIMARY KEY AUTOINCREMENT,
    run_id     TEXT NOT NULL REFERENCES apply_runs (run_id),
    post_id    INTEGER NOT NULL,
    post_type  TEXT NOT NULL,
    url        TEXT NOT NULL,
    before     TEXT NOT NULL,
    after      TEXT NOT NULL,
    at         TEXT NOT NULL,
    rows       TEXT NOT NULL,
    undone_at  TEXT
);
CREATE INDEX IF NOT EXISTS apply_changes_run ON apply_changes (run_id);
"""


@dataclass(frozen=True)
class Change:
    """One post written by one apply run."""

    id: int
    run_id: str
    post_id: int
    post_type: str
    url: str
    before: str
    after: str
    at: str
    rows: list[dict[str, str]]
    undone_at: str | None


class ChangeLog:
    """The apply runs and changes kept in ``store``'s database."""

    def __init__(self, store: DecisionStore) -> None:
        self.store = store
        with store.connect() as conn:
            conn.executescript(_SCHEMA)

    def start(self, site: str) -> str:
        """A new run's id (``YYYYMMDDTHHMMSSZ-xxxx``), recorded as started."""
        run_id = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ") + "-" + secrets.token_hex(2)
        with self.store.connect() as conn:
            conn.execute("INSERT INTO apply_runs (run_id, site, started_at) VALUES (?, ?, ?)",
                         (run_id, site, now()))
        return run_id

    def record(self, run_id: str, post_id: int, post_type: str, url: str, before: str, after: str,
               rows: list[dict[str, str]]) -> None:
        """Log one written post."""
        with self.store.connect() as conn:
            conn.execute("INSERT INTO apply_changes (run_id, post_id, post_type, url, before, after, at, "
                         "rows) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                         (run_id, post_id, post_type, url, before, after, now(), json.dumps(rows)))

    def finish(self, run_id: str, posts: int, links: int, skipped: int, failed: int) -> None:
        with self.store.connect() as conn:
            conn.execute("UPDATE apply_runs SET finished_at = ?, posts = ?, links = ?, skipped = ?, "
                         "failed = ? WHERE run_id = ?", (now(), posts, links, skipped, failed, run_id))

    def runs(self) -> list[dict[str, object]]:
        """Every apply run, newest first."""
        with self.store.connect() as conn:
            return [dict(r) for r in conn.execute("SELECT * FROM apply_runs ORDER BY started_at DESC, "
                                                  "rowid DESC")]

    def run(self, run_id: str) -> dict[str, object] | None:
        with self.store.connect() as conn:
            row = conn.execute("SELECT * FROM apply_runs WHERE run_id = ?", (run_id,)).fetchone()
        return dict(row) if row else None

    def changes(self, run_id: str) -> list[Change]:
        """The posts ``run_id`` wrote, last written first (the order to undo them in)."""
        with self.store.connect() as conn:
            rows = conn.execute("SELECT * FROM apply_changes WHERE run_id = ? ORDER BY id DESC", (run_id,))
            return [Change(r["id"], r["run_id"], r["post_id"], r["post_type"], r["url"], r["before"],
                           r["after"], r["at"], json.loads(r["rows"]), r["undone_at"]) for r in rows]

    def last_written(self, site: str, post_id: int) -> str | None:
        """The content an apply run last left in the post (what it wrote, or restored on undo), if any."""
        with self.store.connect() as conn:
            row = conn.execute("SELECT c.before, c.after, c.undone_at FROM apply_changes c JOIN apply_runs r "
                               "USING (run_id) WHERE r.site = ? AND c.post_id = ? ORDER BY c.id DESC LIMIT 1",
                               (site, post_id)).fetchone()
        if row is None:
            return None
        return row["before"] if row["undone_at"] else row["after"]

    def undone(self, change: Change) -> None:
        """Mark one change restored; the run is undone once all its changes are."""
        at = now()
        with self.store.connect() as conn:
            conn.execute("UPDATE apply_changes SET undone_at = ? WHERE id = ?", (at, change.id))
            left = conn.execute("SELECT COUNT(*) FROM apply_changes WHERE run_id = ? AND undone_at IS NULL",
                                (change.run_id,)).fetchone()[0]
            if not left:
                conn.execute("UPDATE apply_runs SET undone_at = ? WHERE run_id = ?", (at, change.run_id))
