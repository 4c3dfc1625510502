"""Anchor words inside their sentence: find them as whole words, highlight them, validate an edit.

An editor may replace a suggestion's anchor with other words of the same sentence. The new
words must stand in the row's context sentence as whole words (not part of a longer word);
runs of white space match any white space, and what is stored is the sentence's own text.
"""

from __future__ import annotations

import re

#: Longest anchor an editor may choose, in characters.
MAX_ANCHOR_CHARS = 200


class AnchorError(ValueError):
    """Words that cannot be the anchor of this row: the message says why, in one line."""


def _pattern(words: str) -> re.Pattern[str]:
    parts = [re.escape(w) for w in words.split()]
    left = r"(?<!\w)" if re.match(r"\w", words) else ""
    right = r"(?!\w)" if re.search(r"\w$", words) else ""
    return re.compile(left + r"\s+".join(parts) + right)


def find_anchor(context: str, words: str) -> tuple[int, int] | None:
    """Start and end of the first whole-word occurrence of ``words`` in ``context``; None if absent."""
    words = words.strip()
    if not words or not context:
        return None
    match = _pattern(words).search(context)
    return match.span() if match else None


def split_context(context: str, anchor: str) -> tuple[str, str, str]:
    """(before, anchor, after) for highlighting; ``(context, "", "")`` when the anchor is not in it."""
    span = find_anchor(context, anchor)
    if span is None:
        return context, "", ""
    return context[:span[0]], context[span[0]:span[1]], context[span[1]:]


def validate_anchor(context: str, words: str) -> str:
    """``words`` as they stand in ``context`` (whole words); AnchorError naming the problem otherwise."""
    words = words.strip()
    if not words:
        raise AnchorError("the anchor is empty: give some words of the sentence")
    if len(words) > MAX_ANCHOR_CHARS:
        raise AnchorError(f"the anchor is longer than {MAX_ANCHOR_CHARS} characters")
    if not re.search(r"\w", words):
        raise AnchorError(f"the anchor {words!r} has no word in it")
    if not context:
        raise AnchorError("this suggestion has no sentence (a title anchor): its anchor cannot be changed")
    span = find_anchor(context, words)
    if span is None:
        raise AnchorError(f"{words!r} is not a whole-word part of the sentence {context!r}")
    return context[span[0]:span[1]]
