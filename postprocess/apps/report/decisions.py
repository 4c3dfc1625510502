"""The editors' decisions beside the output folder, when there are any (never created by the report)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from postprocess.decisions.store import DecisionStore, default_path

#: Decided pairs whose link is (or will be) on the site.
APPLIED_STATES = ("approved", "live")


@dataclass(frozen=True)
class Decisions:
    """Counts per state, and the pairs approved (or already live)."""

    path: Path
    counts: dict[str, int]
    approved: tuple[tuple[str, str], ...]


def read_decisions(out: Path | str, path: Path | str | None = None) -> Decisions | None:
    """The decisions in ``path`` (default: the database beside ``out``), or None when it does not exist."""
    path = Path(path) if path is not None else default_path(out)
    if not path.is_file():
        return None
    store = DecisionStore(path, create=False)
    approved = tuple(d.pair for d in store.decisions() if d.state in APPLIED_STATES)
    return Decisions(path, store.counts(), approved)
