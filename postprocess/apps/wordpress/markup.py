"""Where an anchor may carry a link in a post's stored markup, and the insertion itself.

WordPress stores a post as markup (``content.raw``): HTML, block comments
(``<!-- wp:paragraph -->``) and shortcodes (``[gallery ids="1,2"]``,
``[caption]…[/caption]``). :func:`insert_link` finds the anchor's first occurrence in
running text — a paragraph, list item, quote or definition, or the top-level text of a
classic post — as whole words, case-insensitively, never inside an existing link, a
heading, ``pre``/code, a caption, a shortcode, a comment or a tag's attributes; it
prefers the occurrence inside the row's context sentence. An anchor split by inline
markup (``<em>sour</em>dough starter``) is wrapped whole when the span can be made
balanced by taking in the inline tags at its edges (``<a><em>sour</em>dough starter</a>``);
otherwise the row is skipped as "anchor split by markup". Inline ``<code>`` is linked
only when the anchor is the whole code element (wrapped outside it). The only change
is the inserted ``<a href="…">`` and ``</a>``: every other byte stays as it was.
"""

from __future__ import annotations

import html
import re
from collections.abc import Iterator
from dataclasses import dataclass
from urllib.parse import urljoin, urlsplit, urlunsplit

#: Elements whose text is never an anchor (with everything inside them).
EXCLUDED = {
    "a": "inside a link", "h1": "in a heading", "h2": "in a heading", "h3": "in a heading",
    "h4": "in a heading", "h5": "in a heading", "h6": "in a heading", "pre": "in a code block",
    "script": "in a script", "style": "in a style sheet", "textarea": "in a form", "button": "in a form",
    "select": "in a form", "label": "in a form", "figcaption": "in a caption", "caption": "in a caption",
    "nav": "in navigation", "header": "in a header", "footer": "in a footer", "title": "in a title",
    "svg": "in an image", "math": "in a formula", "iframe": "in an embed", "object": "in an embed",
    "noscript": "in a script", "template": "in a template", "summary": "in a summary",
    "cite": "in a citation",
}
#: Elements whose text is running text an anchor may stand in.
CONTAINERS = frozenset({"p", "li", "blockquote", "dd", "dt"})
#: Inline elements: their tags join the text on both sides into one run (words may span them).
INLINE = frozenset({"a", "abbr", "b", "bdi", "bdo", "code", "data", "del", "dfn", "em", "i", "ins", "kbd",
                    "mark", "q", "s", "samp", "small", "span", "strong", "sub", "sup", "time", "u", "var",
                    "font", "tt", "strike", "big"})
#: Elements without a closing tag.
VOID = frozenset({"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "param",
                  "source", "track", "wbr"})
#: Elements whose content is raw text up to their closing tag.
RAW_TEXT = frozenset({"script", "style", "textarea", "title"})

_TAG = re.compile(r"""<(/?)([A-Za-z][A-Za-z0-9:-]*)(?:"[^"]*"|'[^']*'|[^'">])*>""")
_COMMENT = re.compile(r"<!--.*?(?:-->|\Z)|<![^>]*>|<\?[^>]*>", re.S)
_ENTITY = re.compile(r"&(?:#[0-9]+|#[xX][0-9a-fA-F]+|[A-Za-z][A-Za-z0-9]*);?")
#: A shortcode tag as WordPress writes it: ``[name attrs]``, ``[name/]``, ``[/name]``, ``[[escaped]]``.
_SHORTCODE = re.compile(r"\[(\[?)(/?)([A-Za-z0-9_-]+)(?![\w-])((?:[^\[\]]|\[[^\[\]]*\])*?)(/?)\](\]?)")
#: One character for one character, so positions keep: typographic quotes and spaces compare plain.
_FOLD = str.maketrans({"\u2019": "'", "\u2018": "'", "\u201c": '"', "\u201d": '"', "\u00a0": " ",
                       "\u2032": "'", "\u2033": '"', "\u202f": " "})
#: Between blocks: a character no anchor pattern matches, so a match never crosses blocks.
BREAK = "\x00"
WORD_BEFORE = r"(?<![\w\-/@.\\])"
WORD_AFTER = r"(?![\w@/\\])(?![\-.]\w)"


@dataclass(frozen=True)
class Result:
    """What inserting one link did: ``content`` changed (``linked``) or the reason it did not."""

    content: str
    linked: bool
    reason: str = ""
    start: int = -1
    end: int = -1


@dataclass
class _Char:
    start: int  # raw offset of the character (of its entity)
    end: int
    allowed: bool
    why: str  # why not allowed
    code: int | None  # the opening tag (index in tags) of the inline <code> element holding it


@dataclass
class _Tag:
    start: int
    end: int
    name: str
    closing: bool
    partner: int | None  # index of the matching tag in the tag list


def _shortcode_spans(raw: str, text_spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Raw spans covered by shortcodes (an enclosing one from its opening tag to its closing tag)."""
    found: list[tuple[int, int, str, bool, bool]] = []  # start, end, name, closing, self-closing/escaped
    for start, end in text_spans:
        for m in _SHORTCODE.finditer(raw, start, end):
            escaped = bool(m.group(1) and m.group(6))
            found.append((m.start(), m.end(), m.group(3).lower(), bool(m.group(2)),
                          escaped or bool(m.group(5))))
    spans: list[tuple[int, int]] = []
    for i, (start, end, name, closing, single) in enumerate(found):
        spans.append((start, end))
        if closing or single:
            continue
        for later in found[i + 1:]:
            if later[2] == name and later[3]:
                spans.append((start, later[1]))
                break
    return spans


def _tokens(raw: str) -> Iterator[tuple[str, int, int, re.Match[str] | None]]:
    """("comment" | "tag" | "text", start, end, tag match) over the markup, in order."""
    pos = 0
    n = len(raw)
    while pos < n:
        lt = raw.find("<", pos)
        if lt < 0:
            yield "text", pos, n, None
            return
        if lt > pos:
            yield "text", pos, lt, None
        comment = _COMMENT.match(raw, lt)
        if comment:
            yield "comment", lt, comment.end(), None
            pos = comment.end()
            continue
        tag = _TAG.match(raw, lt)
        if tag is None:  # a lone "<" is text
            yield "text", lt, lt + 1, None
            pos = lt + 1
            continue
        yield "tag", lt, tag.end(), tag
        pos = tag.end()
        name = tag.group(2).lower()
        if not tag.group(1) and name in RAW_TEXT:
            close = re.compile(rf"</{name}\s*>", re.I).search(raw, pos)
            stop = close.start() if close else n
            if stop > pos:
                yield "raw", pos, stop, None
            pos = stop


class Markup:
    """One post's markup read once: its visible text with every character's raw offsets and status."""

    def __init__(self, raw: str) -> None:
        self.raw = raw
        self.chars: list[_Char] = []
        self.text_parts: list[str] = []
        self.tags: list[_Tag] = []
        tokens = list(_tokens(raw))
        shortcodes = _shortcode_spans(raw, [(s, e) for kind, s, e, _ in tokens if kind == "text"])
        in_shortcode = _span_test(shortcodes)
        stack: list[tuple[str, int]] = []  # (element, tag index)
        for kind, start, end, match in tokens:
            if kind == "comment":
                self._break()
            elif kind == "raw":
                self._break()
            elif kind == "tag":
                assert match is not None
                self._tag(match, start, end, stack)
            else:
                self._text(start, end, stack, in_shortcode)
        self.text = "".join(self.text_parts).translate(_FOLD)

    def _break(self) -> None:
        if self.text_parts and self.text_parts[-1] != BREAK:
            self.text_parts.append(BREAK)
            self.chars.append(_Char(-1, -1, False, "", None))

    def _tag(self, match: re.Match[str], start: int, end: int, stack: list[tuple[str, int]]) -> None:
        name = match.group(2).lower()
        closing = bool(match.group(1))
        index = len(self.tags)
        partner = None
        if closing:
            for depth in range(len(stack) - 1, -1, -1):
                if stack[depth][0] == name:
                    partner = stack[depth][1]
                    self.tags[partner].partner = index
                    del stack[depth:]
                    break
        self.tags.append(_Tag(start, end, name, closing, partner))
        if not closing and name not in VOID and not match.group(0).endswith("/>"):
            stack.append((name, index))
        if name not in INLINE:
            self._break()

    def _text(self, start: int, end: int, stack: list[tuple[str, int]], in_shortcode) -> None:  # noqa: ANN001
        names = [name for name, _ in stack]
        why = next((EXCLUDED[n] for n in names if n in EXCLUDED), "")
        if not why and names and not any(n in CONTAINERS for n in names):
            why = "outside running text"
        code = next((i for n, i in reversed(stack) if n == "code"), None)
        maybe_shortcode = in_shortcode(start, end)
        for char, cstart, cend in _decoded(self.raw, start, end):
            reason = why or ("in a shortcode" if maybe_shortcode and in_shortcode(cstart) else "")
            self.text_parts.append(char)
            self.chars.append(_Char(cstart, cend, not reason, reason, code))

    # -- finding ---------------------------------------------------------------------------------

    def occurrences(self, anchor: str) -> list[tuple[int, int]]:
        """(start, end) in :attr:`text` of every whole-word, case-insensitive occurrence of ``anchor``."""
        pattern = _phrase(anchor)
        if pattern is None:
            return []
        return [(m.start(), m.end()) for m in pattern.finditer(self.text)]

    def span_of(self, first: int, last: int) -> tuple[int, int] | str:
        """The raw span to wrap for text characters ``first..last`` (inclusive), or why there is none.

        The span grows over inline tags at its edges until every tag inside it has its partner
        inside too, and an inline ``<code>`` it touches lies wholly inside it.
        """
        start, end = self.chars[first].start, self.chars[last].end
        codes = {self._element(c.code) for c in self.chars[first:last + 1] if c.code is not None}
        while True:
            grown = self._grow(start, end)
            if grown is None:
                return "anchor split by markup"
            if grown != (start, end):
                start, end = grown
                continue
            for code_start, code_end in codes:
                if code_start < start and self._only_tags(code_start, start):
                    start = code_start
                if code_end > end and self._only_tags(end, code_end):
                    end = code_end
                if code_start < start or code_end > end:
                    return "in inline code (part of it)"
            if grown == (start, end):
                return start, end

    def _element(self, opening: int) -> tuple[int, int]:
        """The raw span of the element opened by tag ``opening`` (to the end when never closed)."""
        partner = self.tags[opening].partner
        return self.tags[opening].start, self.tags[partner].end if partner is not None else len(self.raw)

    def _grow(self, start: int, end: int) -> tuple[int, int] | None:
        """The span with one unpaired tag's partner taken in; itself when balanced; None when stuck."""
        inner = {i for i, t in enumerate(self.tags) if start <= t.start and t.end <= end}
        for i in sorted(inner):
            tag = self.tags[i]
            if tag.partner is not None and tag.partner in inner:
                continue
            if tag.name not in INLINE or tag.partner is None:
                return None
            other = self.tags[tag.partner]
            if tag.closing and self._only_tags(other.start, start):
                return other.start, end
            if not tag.closing and self._only_tags(end, other.end):
                return start, other.end
            return None
        return start, end

    def _only_tags(self, start: int, end: int) -> bool:
        """Whether raw[start:end] holds nothing but whole inline tags (no text between them)."""
        pos = start
        for tag in self.tags:
            if tag.end <= start or tag.start >= end:
                continue
            if tag.start != pos or tag.end > end or tag.name not in INLINE:
                return False
            pos = tag.end
        return pos == end

    def find(self, anchor: str, context: str | None = None) -> tuple[int, int] | str:
        """The raw span to wrap for ``anchor`` (first in running text, in the context first), or why none."""
        found = self.occurrences(anchor)
        if not found:
            return "anchor not in the post"
        reasons: list[str] = []
        spans: list[tuple[int, tuple[int, int]]] = []
        for start, end in found:
            blocked = next((c.why for c in self.chars[start:end] if not c.allowed), "")
            if blocked:
                reasons.append(blocked)
                continue
            span = self.span_of(start, end - 1)
            if isinstance(span, str):
                reasons.append(span)
                continue
            spans.append((start, span))
        if not spans:
            if "anchor split by markup" in reasons:
                return "anchor split by markup"
            return "anchor only " + ", ".join(dict.fromkeys(reasons))
        sentence = _phrase(context, whole_words=False) if context else None
        if sentence is not None:
            for m in sentence.finditer(self.text):
                inside = [span for start, span in spans if m.start() <= start < m.end()]
                if inside:
                    return inside[0]
        return spans[0][1]

    def links_to(self, target: str, base: str = "") -> bool:
        """Whether an existing link in the markup points at ``target`` (same page, any spelling)."""
        wanted = same_page_key(target)
        for tag in self.tags:
            if tag.name != "a" or tag.closing:
                continue
            href = re.search(r"""\shref\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s>]+))""",
                             self.raw[tag.start:tag.end], re.I)
            if href:
                value = html.unescape(next(g for g in href.groups() if g is not None)).strip()
                if same_page_key(urljoin(base, value)) == wanted:
                    return True
        return False


def _span_test(spans: list[tuple[int, int]]):  # noqa: ANN202 - a predicate
    """``inside(offset)``: is offset in one of ``spans``; ``inside(start, end)``: does that range meet one."""
    def inside(offset: int, end: int | None = None) -> bool:
        stop = offset + 1 if end is None else end
        return any(start < stop and offset < finish for start, finish in spans)
    return inside


def _decoded(raw: str, start: int, end: int) -> Iterator[tuple[str, int, int]]:
    """(character, raw start, raw end) of the text raw[start:end] with entities decoded."""
    pos = start
    while pos < end:
        if raw[pos] == "&":
            m = _ENTITY.match(raw, pos, end)
            if m:
                value = html.unescape(m.group(0))
                if value != m.group(0):
                    for char in value[:1]:
                        yield char, pos, m.end()
                    pos = m.end()
                    continue
        yield raw[pos], pos, pos + 1
        pos += 1


def _phrase(words: str | None, whole_words: bool = True) -> re.Pattern[str] | None:
    """A case-insensitive pattern for ``words`` with any run of spaces between them."""
    parts = html.unescape(words or "").translate(_FOLD).split()
    if not parts:
        return None
    body = r"\s+".join(re.escape(p) for p in parts)
    if whole_words:
        body = WORD_BEFORE + body + WORD_AFTER
    return re.compile(body, re.I)


def same_page_key(url: str) -> str:
    """``url`` reduced to what names a page: lower-case host, no default port, fragment or trailing slash."""
    parts = urlsplit(url.strip())
    host = (parts.hostname or "").lower()
    if parts.port and parts.port not in (80, 443):
        host = f"{host}:{parts.port}"
    path = parts.path.rstrip("/") or "/"
    return urlunsplit(("", host, path, parts.query, ""))


def link_tag(target: str) -> str:
    """The opening tag of a link to ``target``."""
    return f'<a href="{html.escape(target, quote=True)}">'


def insert_link(raw: str, anchor: str, target: str, context: str | None = None, base: str = "") -> Result:
    """``raw`` with ``anchor`` wrapped in a link to ``target``, or unchanged with the reason why not.

    ``base`` (the post's permalink) resolves relative hrefs when checking for an existing link.
    """
    markup = Markup(raw)
    if markup.links_to(target, base):
        return Result(raw, False, "already linked")
    span = markup.find(anchor, context)
    if isinstance(span, str):
        return Result(raw, False, span)
    start, end = span
    content = raw[:start] + link_tag(target) + raw[start:end] + "</a>" + raw[end:]
    return Result(content, True, "", start, end)
