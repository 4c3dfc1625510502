"""Crawl traps found by what pages say, not by how URLs look: a URL pattern (the path with its
numbers blanked, ``/calendar/N/N/``) whose pages keep linking to new URLs of the same pattern
and all say the same once numbers and the names of months and weekdays are blanked too — an
endless calendar, a date archive with no posts, a numbered page that repeats. Numbered pages
that other pages list (products, release notes) never feed their own pattern this way.
Path-shape traps are in ``urls.trap_reason``.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field
from urllib.parse import urlsplit

_NUMBER = re.compile(r"\d+")
_CALENDAR_WORDS = re.compile(
    r"\b(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sep(?:t(?:ember)?)?"
    r"|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?|mon(?:day)?|tue(?:s(?:day)?)?|wed(?:nesday)?"
    r"|thu(?:rs(?:day)?)?|fri(?:day)?|sat(?:urday)?|sun(?:day)?)\b")


def url_pattern(url: str) -> str | None:
    """The URL's path with each run of digits as ``N``; None when the path has no number."""
    path = urlsplit(url).path
    return _NUMBER.sub("N", path) if _NUMBER.search(path) else None


def text_shape(text: str) -> str:
    """A fingerprint of ``text`` that ignores numbers, month and weekday names, case and spacing."""
    shape = _CALENDAR_WORDS.sub("D", _NUMBER.sub("N", text.lower()))
    return hashlib.sha1(" ".join(shape.split()).encode()).hexdigest()


@dataclass
class RepeatingPatterns:
    """Learns, page by page, which URL patterns only ever repeat one page.

    A pattern is a trap once ``pages`` of its pages are stored, they have at most
    ``pages // 10`` (at least 1) different text shapes, and its own pages have led to at least
    ``pages // 2`` new URLs of the pattern (:meth:`spawned`); later URLs of that pattern are
    skipped. A pattern whose pages differ is never a trap (its shapes stop being counted).
    """

    pages: int = 20
    seen: dict[str, int] = field(default_factory=dict)  # pattern -> pages stored
    fed: dict[str, int] = field(default_factory=dict)  # pattern -> new URLs its own pages linked to
    shapes: dict[str, set[str]] = field(default_factory=dict)  # pattern -> text shapes (bounded)
    traps: set[str] = field(default_factory=set)

    @property
    def most_shapes(self) -> int:
        return max(1, self.pages // 10)

    def observe(self, url: str, text: str) -> None:
        """One stored page of the crawl."""
        pattern = url_pattern(url)
        if pattern is None or pattern in self.traps or self.pages <= 0:
            return
        shapes = self.shapes.setdefault(pattern, set())
        if len(shapes) > self.most_shapes:
            return  # its pages differ: not a trap
        shapes.add(text_shape(text))
        self.seen[pattern] = self.seen.get(pattern, 0) + 1
        self._decide(pattern)

    def spawned(self, from_url: str, url: str) -> None:
        """A page linked to ``url``, a URL not seen before: counts when both share a pattern."""
        pattern = url_pattern(url)
        if pattern is not None and pattern == url_pattern(from_url) and self.pages > 0:
            self.fed[pattern] = self.fed.get(pattern, 0) + 1
            self._decide(pattern)

    def _decide(self, pattern: str) -> None:
        if (self.seen.get(pattern, 0) >= self.pages and self.fed.get(pattern, 0) >= self.pages // 2
                and len(self.shapes.get(pattern, ())) <= self.most_shapes):
            self.traps.add(pattern)

    def reason(self, url: str) -> str | None:
        """Why ``url`` is a trap (its pattern only repeats one page), or None."""
        pattern = url_pattern(url)
        if pattern is not None and pattern in self.traps:
            return f"'{pattern}' keeps giving the same page ({self.seen[pattern]} pages)"
        return None
