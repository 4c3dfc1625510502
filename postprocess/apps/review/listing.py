"""What the review page lists: the queue joined with the editors' decisions, filtered, grouped, paged.

A row is one suggested link (source page, target page). Its state is the decision's
(``approved``, ``rejected``, ``live``) or ``pending``; a decided pair that this run no
longer proposes (a new run holds every decided pair back) is listed from the decision
itself, so nothing an editor decided disappears from view. Sources are ordered by their
most confident row, rows within a source by confidence.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace

from postprocess.apps.review.queue import Queue
from postprocess.decisions.store import STATES, Decision

PENDING = "pending"
#: Every state a row can be in, in the order the page shows them.
ROW_STATES = (PENDING, *STATES)
#: The state filter's values: one state, or every row.
STATE_FILTERS = (*ROW_STATES, "all")
PAGE_SIZE = 50
#: Longest text accepted in the source and target filters.
MAX_FILTER_CHARS = 500


class BadFilter(ValueError):
    """A filter value the page cannot use: the message names it."""


def row_id(source_url: str, target_url: str) -> str:
    """A short stable id for a pair (HTML ids, keyboard focus)."""
    return "r" + hashlib.sha1(f"{source_url}\n{target_url}".encode()).hexdigest()[:12]


@dataclass(frozen=True)
class Row:
    """One suggested link as the editor sees it."""

    source_url: str
    target_url: str
    anchor: str
    anchor_type: str
    context: str
    confidence: float | None
    source_title: str
    target_title: str
    target_opening: str
    state: str = PENDING
    reason: str | None = None
    decided_at: str | None = None
    #: the anchor this run proposed (None when the pair is not in this run's queue)
    suggested_anchor: str | None = None

    @property
    def id(self) -> str:
        return row_id(self.source_url, self.target_url)

    @property
    def pair(self) -> tuple[str, str]:
        return (self.source_url, self.target_url)


def _confidence(value: object) -> float | None:
    return float(value) if isinstance(value, int | float) and math.isfinite(value) else None


def queue_row(queue: Queue, source_url: str, suggestion: dict) -> Row:
    """One suggestion of the run, pending."""
    s, target = suggestion, suggestion["target_url"]
    return Row(source_url, target, s.get("anchor") or "", s.get("anchor_type") or "text",
               s.get("context") or "", _confidence(s.get("confidence")), queue.titles.get(source_url, ""),
               s.get("target_title") or queue.titles.get(target, ""), queue.openings.get(target, ""),
               suggested_anchor=s.get("anchor") or "")


def queue_rows(queue: Queue) -> list[Row]:
    """Every suggestion of the run, pending."""
    return [queue_row(queue, source, s) for source, suggestions in queue.by_page.items() for s in suggestions]


def with_decision(row: Row, decision: Decision) -> Row:
    """``row`` in the decision's state, with the editor's anchor and reason."""
    return replace(row, state=decision.state, anchor=decision.anchor or row.anchor, reason=decision.reason,
                   decided_at=decision.decided_at)


def decision_row(decision: Decision, queue: Queue) -> Row:
    """A decided pair this run does not propose, as the decision recorded it."""
    return Row(decision.source_url, decision.target_url, decision.anchor or "",
               "text" if decision.context else "title", decision.context or "",
               _confidence(decision.confidence),
               decision.source_title or queue.titles.get(decision.source_url, ""),
               decision.target_title or queue.titles.get(decision.target_url, ""),
               queue.openings.get(decision.target_url, ""), decision.state, decision.reason,
               decision.decided_at)


def ordered(rows: list[Row]) -> list[Row]:
    """``rows`` in review order: sources by their most confident row, rows within a source by confidence."""
    best: dict[str, float] = {}
    for row in rows:
        best[row.source_url] = max(best.get(row.source_url, -1.0), _sort_value(row))
    rows.sort(key=lambda r: (-best[r.source_url], r.source_url, -_sort_value(r), r.target_url))
    return rows


def review_rows(queue: Queue, decisions: Iterable[Decision],
                pending: Sequence[Row] | None = None) -> list[Row]:
    """The queue joined with ``decisions``, plus decided pairs outside the queue; in review order.

    ``pending``: ``ordered(queue_rows(queue))`` when the caller keeps it (the app computes it once).
    """
    decided = {d.pair: d for d in decisions}
    base = pending if pending is not None else ordered(queue_rows(queue))
    rows = [with_decision(r, decided.pop(r.pair)) if r.pair in decided else r for r in base]
    if decided:  # a decision keeps its row's confidence: only rows from outside the queue move the order
        rows = ordered(rows + [decision_row(d, queue) for d in decided.values()])
    return rows


def _sort_value(row: Row) -> float:
    return row.confidence if row.confidence is not None else -1.0


def count_states(rows: Iterable[Row]) -> dict[str, int]:
    """Rows per state, every state present."""
    counts = dict.fromkeys(ROW_STATES, 0)
    for row in rows:
        counts[row.state] = counts.get(row.state, 0) + 1
    return counts


def state_counts(queue: Queue, states: Mapping[tuple[str, str], str]) -> dict[str, int]:
    """``count_states(review_rows(...))`` from the decided pairs' states alone (cheaper)."""
    counts = dict.fromkeys(ROW_STATES, 0)
    in_queue = 0
    for (source, target), state in states.items():
        counts[state] = counts.get(state, 0) + 1
        in_queue += queue.suggestion(source, target) is not None
    counts[PENDING] = sum(len(rows) for rows in queue.by_page.values()) - in_queue
    return counts


@dataclass(frozen=True)
class Filters:
    """What the editor asked to see: substrings of source and target (URL or title), a confidence floor,
    a state, a page number."""

    source: str = ""
    target: str = ""
    min_confidence: float | None = None
    state: str = PENDING
    page: int = 1

    def matches(self, row: Row) -> bool:
        if self.state != "all" and row.state != self.state:
            return False
        floor = self.min_confidence
        if floor is not None and (row.confidence is None or row.confidence < floor):
            return False
        return _contains(self.source, row.source_url, row.source_title) and \
            _contains(self.target, row.target_url, row.target_title)

    def query(self, **changes: object) -> dict[str, str]:
        """The query parameters that show these filters (with ``changes``), defaults left out."""
        f = replace(self, **changes)
        params = {"source": f.source, "target": f.target,
                  "min_confidence": "" if f.min_confidence is None else f"{f.min_confidence:g}",
                  "state": "" if f.state == PENDING else f.state, "page": "" if f.page == 1 else str(f.page)}
        return {k: v for k, v in params.items() if v}


def _contains(needle: str, *haystacks: str) -> bool:
    needle = needle.casefold()
    return not needle or any(needle in h.casefold() for h in haystacks)


def parse_filters(params: Mapping[str, str]) -> Filters:
    """Filters from query parameters (missing or empty: no filter); BadFilter naming a bad value."""
    source, target = (params.get(k, "").strip() for k in ("source", "target"))
    if len(source) > MAX_FILTER_CHARS or len(target) > MAX_FILTER_CHARS:
        raise BadFilter(f"source and target filters are at most {MAX_FILTER_CHARS} characters")
    state = params.get("state", "").strip() or PENDING
    if state not in STATE_FILTERS:
        raise BadFilter(f"unknown state {state!r}: use one of {', '.join(STATE_FILTERS)}")
    floor = params.get("min_confidence", "").strip()
    minimum = None
    if floor:
        try:
            minimum = float(floor)
        except ValueError:
            raise BadFilter(f"min_confidence must be a number between 0 and 1, not {floor!r}") from None
        if not 0 <= minimum <= 1:
            raise BadFilter(f"min_confidence must be a number between 0 and 1, not {floor!r}")
    text = params.get("page", "").strip() or "1"
    if not (text.isascii() and text.isdigit()) or len(text) > 9 or int(text) < 1:
        raise BadFilter(f"page must be a whole number of at least 1, not {text!r}")
    return Filters(source, target, minimum, state, int(text))


@dataclass
class Group:
    """The rows of one source page on one screen."""

    source_url: str
    source_title: str
    rows: list[Row] = field(default_factory=list)


@dataclass
class Screen:
    """One page of the filtered rows, grouped by source."""

    groups: list[Group]
    total: int
    page: int
    pages: int
    first: int  # 1-based number of the first row shown (0 when none)
    last: int


def screen(rows: Sequence[Row], filters: Filters, size: int = PAGE_SIZE) -> Screen:
    """The rows that match ``filters``, cut to the requested page (the last one when it is past the end)."""
    chosen = [r for r in rows if filters.matches(r)]
    pages = max(1, math.ceil(len(chosen) / size))
    page = min(filters.page, pages)
    start = (page - 1) * size
    groups: list[Group] = []
    for row in chosen[start:start + size]:
        if not groups or groups[-1].source_url != row.source_url:
            groups.append(Group(row.source_url, row.source_title))
        groups[-1].rows.append(row)
    shown = sum(len(g.rows) for g in groups)
    return Screen(groups, len(chosen), page, pages, start + 1 if shown else 0, start + shown)
