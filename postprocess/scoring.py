"""The score of a (source, target) pair: its parts, and how they combine.

A part is a number in a named column of suggestions.csv. To add one (lexical
overlap, best chunk, …) compute it in ``score_parts`` and use it in ``combine``;
nothing else changes.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime

from postprocess.load import Crawl, Page
from postprocess.options import Options

#: Parts always present, in CSV column order (``score_parts`` may add more).
PART_COLUMNS = ("similarity", "date_factor")


@dataclass
class ScoringContext:
    """What the parts may need beyond the two pages (filled once per run)."""

    crawl: Crawl
    options: Options
    reference: datetime  # "now" for date decay: the newest fetch in the crawl
    extra: dict[str, object] = field(default_factory=dict)


def crawl_reference_date(crawl: Crawl) -> datetime:
    """The newest fetched_at of the crawl (decay is reproducible for one crawl)."""
    dates = [p.fetched_at for p in crawl.pages if p.fetched_at is not None]
    return max(dates) if dates else datetime.now(UTC)


def parse_date(value: str | None) -> datetime | None:
    """An ISO 8601 date or datetime (naive = UTC); None when absent or unreadable."""
    if not value:
        return None
    try:
        when = datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
    except ValueError:
        return None
    return when if when.tzinfo else when.replace(tzinfo=UTC)


def date_factor(published: str | None, reference: datetime, half_life_days: float) -> float:
    """0.5 ** (age / half-life) for a dated page; 1.0 for undated pages or when decay is off."""
    if half_life_days <= 0:
        return 1.0
    when = parse_date(published)
    if when is None:
        return 1.0
    age_days = max(0.0, (reference - when).total_seconds() / 86400.0)
    return 0.5 ** (age_days / half_life_days)


def score_parts(source: Page, target: Page, similarity: float, context: ScoringContext) -> dict[str, float]:
    """The parts of one pair's score.

    Date decay applies to the SOURCE's published date: a link from an old news post
    brings an evergreen target few readers, so such sources sink in the queue.
    """
    return {
        "similarity": round(float(similarity), 6),
        "date_factor": round(date_factor(source.published, context.reference,
                                         context.options.date_decay_days), 6),
    }


def combine(parts: dict[str, float], options: Options) -> float:
    """The ranking score: similarity, lowered by the source's date decay."""
    return round(parts["similarity"] * parts.get("date_factor", 1.0), 6)
