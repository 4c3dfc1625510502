"""Page titles without their site-wide part ("Models | Django documentation" -> "Models")."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence

#: Separators that set off a site-wide part of a title, " / " included (for anchors and reports).
SEPARATORS = re.compile(r"\s+[|–—·:»/-]+\s+")


def site_title_parts(titles: Sequence[str], share: float = 0.2,
                     separators: re.Pattern[str] = SEPARATORS) -> set[str]:
    """Title segments (lower case) found in more than ``share`` of the titles: the site name and the like."""
    counts: Counter[str] = Counter()
    for title in titles:
        counts.update({p.strip().lower() for p in separators.split(title or "") if p.strip()})
    limit = max(2.0, share * len(titles))
    return {part for part, n in counts.items() if n > limit}


def clean_title(title: str, site_parts: set[str], separators: re.Pattern[str] = SEPARATORS) -> str:
    """``title`` without its site-wide segments (the whole title when every segment is one)."""
    parts = [p.strip() for p in separators.split(title or "") if p.strip()]
    kept = [p for p in parts if p.lower() not in site_parts]
    return " - ".join(kept) if kept else (title or "").strip()
