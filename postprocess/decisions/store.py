"""The decisions database: one SQLite file (WAL mode) that outlives every run.

A suggestion is a (source page, target page) pair. With no row it is *pending*;
an editor makes it ``approved`` (optionally with other anchor words) or
``rejected`` (optionally with a reason); a crawl that finds the approved link on
the source page makes it ``live``. Every change is also appended to ``history``.
The next run holds back every decided pair: a rejected pair is never proposed
again, an approved one waits to go live, a live one is a link already.

Each call opens its own short connection, so the store is safe to use from the
review app's threads and from several processes (WAL: readers never block the
writer; a writer waits up to ``BUSY_TIMEOUT_MS`` for another).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from postprocess.errors import InputError

#: The states a decided pair can be in (a pair without a row is pending).
STATES = ("approved", "rejected", "live")
#: What editors choose in the review app (``live`` is recorded by a crawl).
EDITOR_STATES = ("approved", "rejected")
#: The default file name, placed next to the output folder (not inside it).
DB_FILE = "decisions.sqlite"
#: Bumped when the tables change; an older file is upgraded, a newer one refused.
SCHEMA_VERSION = 1
BUSY_TIMEOUT_MS = 10_000

_SCHEMA = """
CREATE TABLE IF NOT EXISTS decisions (
    source_url   TEXT NOT NULL,
    target_url   TEXT NOT NULL,
    state        TEXT NOT NULL CHECK (state IN ('approved', 'rejected', 'live')),
    anchor       TEXT,
    context      TEXT,
    reason       TEXT,
    source_title TEXT,
    target_title TEXT,
    confidence   REAL,
    decided_at   TEXT NOT NULL,
    live_at      TEXT,
    PRIMARY KEY (source_url, target_url)
);
CREATE INDEX IF NOT EXISTS decisions_state ON decisions (state);
CREATE TABLE IF NOT EXISTS history (
    id         INTEGER PRIMARY KEY AUTOINCREMENT,
    source_url TEXT NOT NULL,
    target_url TEXT NOT NULL,
    state      TEXT NOT NULL,
    anchor     TEXT,
    reason     TEXT,
    at         TEXT NOT NULL
);
"""


def now() -> str:
    """The current time in UTC, ISO 8601 to the second."""
    return datetime.now(UTC).replace(microsecond=0).isoformat()


def default_path(out: Path | str) -> Path:
    """Where a run writing into ``out`` keeps decisions: beside the folder, so no new run loses them."""
    out = Path(out).resolve()
    return out.parent / DB_FILE


@dataclass(frozen=True)
class Decision:
    """One editor's decision on one suggested link."""

    source_url: str
    target_url: str
    state: str
    anchor: str | None = None
    context: str | None = None
    reason: str | None = None
    source_title: str | None = None
    target_title: str | None = None
    confidence: float | None = None
    decided_at: str = ""
    live_at: str | None = None

    @property
    def pair(self) -> tuple[str, str]:
        return (self.source_url, self.target_url)


_COLUMNS = ("source_url", "target_url", "state", "anchor", "context", "reason", "source_title",
            "target_title", "confidence", "decided_at", "live_at")


class DecisionStore:
    """Decisions in the SQLite file at ``path`` (created with its folder when missing)."""

    def __init__(self, path: Path | str, *, create: bool = True) -> None:
        self.path = Path(path)
        if not self.path.exists():
            if not create:
                raise InputError(f"decisions database {self.path} does not exist")
            if self.path.parent.exists() and not self.path.parent.is_dir():
                raise InputError(f"decisions database folder {self.path.parent} is a file")
            self.path.parent.mkdir(parents=True, exist_ok=True)
        elif self.path.is_dir():
            raise InputError(f"decisions database {self.path} is a folder, not a file")
        self._prepare()

    @contextmanager
    def connect(self) -> Iterator[sqlite3.Connection]:
        """A connection in WAL mode; commits when the block ends, rolls back on an error."""
        try:
            conn = sqlite3.connect(self.path, timeout=BUSY_TIMEOUT_MS / 1000)
        except sqlite3.Error as exc:
            raise InputError(f"decisions database {self.path} cannot be opened: {exc}") from None
        conn.row_factory = sqlite3.Row
        try:
            with conn:
                yield conn
        except sqlite3.DatabaseError as exc:
            if "not a database" in str(exc) or "malformed" in str(exc):
                raise InputError(f"decisions database {self.path} is not a SQLite database") from None
            raise
        finally:
            conn.close()

    def _prepare(self) -> None:
        with self.connect() as conn:
            version = conn.execute("PRAGMA user_version").fetchone()[0]
            if version > SCHEMA_VERSION:
                raise InputError(f"decisions database {self.path} is from a newer linkspider "
                                 f"(version {version}, this one reads {SCHEMA_VERSION})")
            conn.execute("PRAGMA journal_mode=WAL")
            conn.executescript(_SCHEMA)
            conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")

    # -- reading -------------------------------------------------------------------------

    def get(self, source_url: str, target_url: str) -> Decision | None:
        """The decision on one pair, or None when it is pending."""
        with self.connect() as conn:
            row = conn.execute("SELECT * FROM decisions WHERE source_url = ? AND target_url = ?",
                               (source_url, target_url)).fetchone()
        return _decision(row) if row else None

    def decisions(self, state: str | None = None) -> list[Decision]:
        """Every decision (or those in ``state``), most recent first."""
        if state is not None and state not in STATES:
            raise InputError(f"unknown decision state {state!r}: use one of {', '.join(STATES)}")
        query = "SELECT * FROM decisions"
        params: tuple[str, ...] = ()
        if state is not None:
            query += " WHERE state = ?"
            params = (state,)
        with self.connect() as conn:
            rows = conn.execute(query + " ORDER BY decided_at DESC, source_url, target_url", params)
            return [_decision(r) for r in rows]

    def states(self) -> dict[tuple[str, str], str]:
        """(source, target) -> state of every decided pair."""
        with self.connect() as conn:
            return {(r[0], r[1]): r[2] for r in conn.execute(
                "SELECT source_url, target_url, state FROM decisions")}

    def counts(self) -> dict[str, int]:
        """How many pairs are in each state (every state present, zero when none)."""
        found = dict.fromkeys(STATES, 0)
        with self.connect() as conn:
            for state, n in conn.execute("SELECT state, COUNT(*) FROM decisions GROUP BY state"):
                found[state] = n
        return found

    def held_back(self) -> frozenset[tuple[str, str]]:
        """Pairs a new queue must not propose: every decided pair (rejected, approved, live)."""
        return frozenset(self.states())

    def history(self, source_url: str, target_url: str) -> list[dict[str, str | None]]:
        """Every change to one pair, oldest first."""
        with self.connect() as conn:
            rows = conn.execute("SELECT state, anchor, reason, at FROM history WHERE source_url = ? "
                                "AND target_url = ? ORDER BY id", (source_url, target_url))
            return [dict(r) for r in rows]

    # -- writing -------------------------------------------------------------------------

    def decide(self, source_url: str, target_url: str, state: str, *, anchor: str | None = None,
               context: str | None = None, reason: str | None = None, source_title: str | None = None,
               target_title: str | None = None, confidence: float | None = None) -> Decision:
        """Record ``state`` for the pair (replacing an earlier decision) and return it."""
        if state not in STATES:
            raise InputError(f"unknown decision state {state!r}: use one of {', '.join(STATES)}")
        at = now()
        decision = Decision(source_url, target_url, state, anchor, context, reason or None, source_title,
                            target_title, confidence, at, at if state == "live" else None)
        with self.connect() as conn:
            conn.execute(f"INSERT OR REPLACE INTO decisions ({', '.join(_COLUMNS)}) "
                         f"VALUES ({', '.join('?' * len(_COLUMNS))})",
                         tuple(getattr(decision, c) for c in _COLUMNS))
            _log(conn, source_url, target_url, state, anchor, reason, at)
        return decision

    def forget(self, source_url: str, target_url: str) -> bool:
        """Make the pair pending again (an editor's undo); False when it was not decided."""
        at = now()
        with self.connect() as conn:
            gone = conn.execute("DELETE FROM decisions WHERE source_url = ? AND target_url = ?",
                                (source_url, target_url)).rowcount
            if gone:
                _log(conn, source_url, target_url, "pending", None, None, at)
        return bool(gone)

    def record_live(self, linked: Iterable[tuple[str, str]]) -> list[tuple[str, str]]:
        """Mark approved pairs that a crawl found linked as ``live``; the pairs that changed."""
        approved = {d.pair for d in self.decisions("approved")}
        changed = [pair for pair in dict.fromkeys(linked) if pair in approved]
        if not changed:
            return []
        at = now()
        with self.connect() as conn:
            for source, target in changed:
                conn.execute("UPDATE decisions SET state = 'live', live_at = ? WHERE source_url = ? "
                             "AND target_url = ? AND state = 'approved'", (at, source, target))
                _log(conn, source, target, "live", None, None, at)
        return changed


def _log(conn: sqlite3.Connection, source: str, target: str, state: str, anchor: str | None,
         reason: str | None, at: str) -> None:
    conn.execute("INSERT INTO history (source_url, target_url, state, anchor, reason, at) "
                 "VALUES (?, ?, ?, ?, ?, ?)", (source, target, state, anchor, reason, at))


def _decision(row: sqlite3.Row) -> Decision:
    return Decision(**{c: row[c] for c in _COLUMNS})
