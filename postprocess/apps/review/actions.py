"""An editor's action on one row, recorded in the decisions store.

``approve`` (with the row's anchor, or other whole words of its sentence: changing the
anchor is approving with other words), ``reject`` (with an optional reason) and ``reset``
(back to pending; a pair decided in an earlier run and absent from this run's queue then
leaves the list until a run proposes it again). Only pairs that this run proposes or that
were decided before can be acted on; a ``live`` pair (the link is on the page) is not
changed by hand.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from postprocess.apps.review.anchors import AnchorError, validate_anchor
from postprocess.apps.review.listing import PENDING, Row, decision_row, queue_row, with_decision
from postprocess.apps.review.queue import Queue
from postprocess.decisions.store import DecisionStore

ACTIONS = ("approve", "reject", "reset")
MAX_REASON_CHARS = 500


class ActionError(Exception):
    """An action that cannot be done: HTTP ``status`` and a one-line message."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


@dataclass(frozen=True)
class Outcome:
    """The row after the action, and its state, anchor and reason before it (what undo restores)."""

    row: Row
    before: dict[str, str | None]


def current_row(queue: Queue, store: DecisionStore, source_url: str, target_url: str) -> Row:
    """The row for a pair as it stands now; ActionError 404 when the pair is unknown."""
    decision = store.get(source_url, target_url)
    suggestion = queue.suggestion(source_url, target_url)
    if suggestion is not None:
        row = queue_row(queue, source_url, suggestion)
        return with_decision(row, decision) if decision else row
    if decision is not None:
        return decision_row(decision, queue)
    raise ActionError(404, f"no suggestion from {source_url} to {target_url} in this queue")


def act(queue: Queue, store: DecisionStore, source_url: str, target_url: str, action: str,
        anchor: str = "", reason: str = "") -> Outcome:
    """Do ``action`` on the pair and return the outcome; ActionError for anything that is refused."""
    if action not in ACTIONS:
        raise ActionError(400, f"unknown action {action!r}: use one of {', '.join(ACTIONS)}")
    row = current_row(queue, store, source_url, target_url)
    if row.state == "live":
        raise ActionError(409, "this link is live on the page already: there is nothing to decide")
    before = {"state": row.state, "anchor": row.anchor, "reason": row.reason}
    if action == "reset":
        store.forget(source_url, target_url)
        if queue.suggestion(source_url, target_url) is None:  # decided in an earlier run: pending, unlisted
            return Outcome(replace(row, state=PENDING, reason=None, decided_at=None), before)
        return Outcome(current_row(queue, store, source_url, target_url), before)
    reason = " ".join(reason.split())
    if len(reason) > MAX_REASON_CHARS:
        raise ActionError(400, f"the reason is longer than {MAX_REASON_CHARS} characters")
    words = " ".join(anchor.split()) or row.anchor
    if action == "approve" and words not in (row.anchor, row.suggested_anchor):
        try:
            words = validate_anchor(row.context, words)
        except AnchorError as exc:
            raise ActionError(400, str(exc)) from None
    elif words not in (row.anchor, row.suggested_anchor):
        words = row.anchor  # a reject keeps the row's anchor; other words only matter to an approval
    state = "approved" if action == "approve" else "rejected"
    store.decide(source_url, target_url, state, anchor=words or None, context=row.context or None,
                 reason=reason if state == "rejected" else None, source_title=row.source_title or None,
                 target_title=row.target_title or None, confidence=row.confidence)
    return Outcome(current_row(queue, store, source_url, target_url), before)

