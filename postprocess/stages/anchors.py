"""Anchor phrases: words that already stand in the source's running text and name the target.

Where a link may go: only prose blocks of the source (paragraphs, list items, quotes,
definitions — never headings, code blocks, table cells, captions or terms), within
one sentence, outside existing links, as whole words that are not part of an
identifier, a path or a URL; a span touching inline code must be that whole code
name (``django.contrib.sites``), not a piece of it.

What may be an anchor: a phrase the site itself uses for the target — an anchor text
at least ``MIN_NAME_USES`` in-content links give it (``link``, spelled as they spell it
when that is a code name or a constant), a code name only the target defines in a term
or heading (``term``), its clean title or h1 (``title``), its URL slug (``slug``), a part
of its title or slug that no other page carries (``part``), or a numbered reference
("Section 38.16.3") to a page whose title starts with that number. A single common
dictionary word (a verb, a common noun or adjective: "signal", "press", "care") is never
enough on its own; a single word passes only when it is a name — rare in English and on
the site, shaped like an identifier, a version or an acronym, a proper noun of the site —
or a whole inline code name that is not a common word (``CharField``, ``reverse()``,
``VACUUM``). The surest evidence wins (link, term > title > slug > part, longer
first); the chosen span is copied from the source as it stands and its sentence is
the context. A suggestion with no qualifying span gets no anchor and leaves the
queue (``--title-anchors`` keeps it with the target's title to write in). Per
source, suggestions are served best first and a phrase or stretch of text is used once.
"""

from __future__ import annotations

import bisect
import contextlib
import copy
import functools
import itertools
import operator
import re
from array import array
from collections import Counter, defaultdict
from collections.abc import Callable, Collection, Container, Iterable, Iterator, KeysView, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import NamedTuple, TypeVar

import numpy as np

from linkspider.items import PROSE_KINDS
from postprocess import background
from postprocess.background import in_chunks
from postprocess.memory import give_back
from postprocess.stages.links import (
    LinkTable,
    TargetsBySource,
    content_uses,
    distinct,
    in_sorted,
    links_table,
)
from postprocess.stages.load import Crawl, Link, Page, PageValues, block_texts, code_spans, resolve
from postprocess.stages.name_table import NameTable
from postprocess.stages.output import progress
from postprocess.stages.overlay import Changed
from postprocess.stages.phrases import (
    PhraseMatcher,
    PhraseTable,
    Vocabulary,
    counter_of,
    groups_per_item,
    phrase_hash,
    phrase_hashes,
)
from postprocess.stages.set_aside import SetAside
from postprocess.stages.suggestions import Pool, Suggestion
from postprocess.stages.titles import clean_title, site_title_parts
from postprocess.stages.tokeniser import (
    WORD,
    bare,
    folded,
    normal_form,
    normalise,
    spaced,
    split_ends,
    words,
)
from postprocess.stages.word_scan import code_points, inside_sentences, scan_texts

#: A phrase holding one of these is code or a list, not words to wrap in a link.
NOT_IN_ANCHORS = re.compile(r"[\n()\[\]{}<>=;,\"|\\*`#@$%/]")
#: Where a sentence ends: after . ! or ? and the space that follows, or after line breaks (only a
#: match's end is read: the next sentence's start). The definition; ``source_text`` reads it as:
SENTENCE_END = re.compile(r"[.!?]\s+|\n+")
#: the same ends, as the one group of a split, written to start with a character class (the regex
#: engine then skips to the next ".!?" or newline instead of trying both branches at every
#: character: ~4x faster on a page; its look-behinds test only the character just matched).
_SENTENCE_END_SPLIT = re.compile(r"([.!?\n](?:(?<=[.!?])\s+|(?<=\n)\n*))")
#: A run-in label ends at a colon; a bare list of names is split at commas, semicolons, and, or.
LIST_SEPARATORS = re.compile(r"[,;:]|\s(?:and|or)\s")
MAX_LIST_ITEM_WORDS = 3
MAX_WORDS = 6
MIN_COMMONNESS = 0.5  # an anchor text names a target when at least this share of its uses point there
#: ... and when at least this many links use it: one page's wording is one editor's choice, not the site's
#: name (blind judgement on the Django docs: 1 use 66%, 2 uses 76%, 3 or more 85% of rows accepted).
MIN_NAME_USES = 3
CONTEXT_CHARS = 300


def _stopwords() -> frozenset[str]:
    from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS

    return frozenset(ENGLISH_STOP_WORDS)


STOPWORDS = _stopwords()


#: Words that name no page on their own: a span made only of these is not an anchor
#: ("new", "guide", "release notes"), though they may stand inside one ("Django 3.2 release notes").
WEAK_WORDS = frozenset(normalise(w) for w in (
    "about advanced api basic basics best code contents doc docs documentation example examples explained "
    "extra faq fixed general good guide guides help home how index info introduction list matter more new "
    "note notes overview page part quick recipe reference release simple source tip tips topic topics "
    "tutorial use using version").split())


def short_title(title: str, max_words: int = MAX_WORDS) -> str:
    """At most ``max_words`` words of a title, without a dangling stopword at the end."""
    tokens = title.split()
    cut = tokens[:max_words]
    while len(cut) > 1 and normalise(cut[-1].strip(",.;:")) in STOPWORDS:
        cut.pop()
    return " ".join(cut).strip(" ,.;:-–—|")


def url_words(url: str) -> list[str]:
    """Words of the URL path (the slug says what the page is)."""
    path = url.split("://", 1)[-1].split("/", 1)[-1].split("?")[0]
    return words(re.sub(r"[-_/.]+", " ", re.sub(r"\.html?$", "", path)))


#: Characters next to a span that make it part of an identifier, a path, a URL or markup (a "(" after
#: it makes a call, ``save()``; before it, it is only a parenthesis).
IDENTIFIER_NEIGHBOURS = frozenset("/\\@#$%=<>[]{}_~^|`:")
CALL_OPENERS = frozenset("([")
#: A single word at least this common in English (wordfreq Zipf scale: 3 = once per million words:
#: "headers" 3.1, "espresso" 3.4, "signal" 4.6) is a dictionary word: never an anchor on its own.
DICTIONARY_ZIPF = 3.0
#: A single word in the running text of more than this share of the site's content pages is common on the
#: site ("middleware" on the Django docs, "whetstone" on a cooking blog): not a name on its own.
SITE_COMMON_SHARE = 0.05
#: A part of a name is specific to the target when no other page carries it in its names:
#: "home oven" in "Baguettes in a Home Oven" and "Creating Steam in a Home Oven" names neither.
SPECIFIC_PAGES = 1
#: A documented class (``class django.views.generic.detail.SingleObjectMixin``), a member written
#: with its class (``Model.save(force_insert=False)``), a member in a class's entry (``get_object()``).
CLASS_ENTRY = re.compile(r"class\s+([\w.]+)")
QUALIFIED_MEMBER = re.compile(r"([\w.]*[A-Z]\w*)\.([a-z_]\w*)\b")
BARE_MEMBER = re.compile(r"([a-z_]\w*)(?:\(|$|\s)")
#: Uses of each in-content anchor text (normalised words), in all and per target URL.
AnchorCounts = tuple[Counter[tuple[str, ...]], dict[str, Counter[tuple[str, ...]]]]
#: How many words before and after an anchor another page's name may reach over it.
NAME_REACH = 3
#: Preference between kinds of evidence that the words name the target. The target's own headings are
#: not names of the page (blind judgement on the Django docs: 2 of 9 such rows accepted); a code name that
#: only the target defines (a term or heading of it, ``data_directory``, ``pg_type``) is.
EVIDENCE_ORDER = {"link": 5, "term": 5, "title": 4, "slug": 3, "part": 2}
#: Kinds of blocks where a page defines a code name (Sphinx and DocBook definition lists, API headings).
DEFINING_BLOCKS = frozenset({"term", "heading"})
#: "see Section 38.16.3": a numbered reference to a page whose title starts with that number.
NUMBERED = re.compile(r"^(\d+(?:\.\d+)*)\.?\s")
REFERENCE_WORDS = frozenset({"section", "chapter", "appendix", "part"})
_DIGIT = re.compile(r"\d")
EVIDENCE_KINDS = tuple(EVIDENCE_ORDER)


@functools.lru_cache(maxsize=1 << 18)
def zipf(word: str) -> float:
    """How common a word is in English (wordfreq's Zipf scale, 0 for unknown words; cached: anchors
    ask about the same words for every candidate)."""
    from wordfreq import zipf_frequency

    return zipf_frequency(word.lower(), "en")


def _forms(word: str) -> set[str]:
    """The word and its plain forms ("doughs" -> "dough", "salting" -> "salt"), lower case."""
    w = word.lower()
    forms = {w, normalise(w)}
    for suffix in ("ing", "ed", "es"):
        if w.endswith(suffix) and len(w) > len(suffix) + 2:
            forms.add(w[:-len(suffix)])
    return forms


def identifier_shaped(raw: str) -> bool:
    """A code name, version or acronym: ``QuerySet``, ``pg_dump``, ``1.3``, ``CSRF`` (not a plain number)."""
    if raw.isdigit():
        return False
    return (any(c.isdigit() or c in "_." for c in raw) or (raw[1:] != raw[1:].lower() and not raw.isupper())
            or (raw.isupper() and len(raw) > 1 and zipf(raw) < DICTIONARY_ZIPF))


def is_dictionary_word(raw: str, proper_nouns: frozenset[str] = frozenset()) -> bool:
    """True for an ordinary English word in any of its plain forms; False for identifier-shaped names,
    words rare in English, and ``proper_nouns`` ("django": a word the site capitalises inside sentences)."""
    if raw.isdigit():
        return True
    if identifier_shaped(raw) or raw.lower() in proper_nouns:
        return False
    return max(zipf(form) for form in _forms(raw)) >= DICTIONARY_ZIPF


#: A word is a proper noun of the site when it stands inside sentences at least this often, and
#: capitalised in at least this share of those uses.
PROPER_MIN_USES = 3
PROPER_SHARE = 0.9
#: Pages read together by the passes over every page's words (``proper_nouns``, ``_prose_counts``):
#: their words held as one list, then counted as ids in NumPy.
PROSE_BATCH_PAGES = 256
T = TypeVar("T")
R = TypeVar("R")
#: A word of those that starts with a capital.
_CAPITAL = re.compile("[A-Z]")


def proper_nouns(texts: Iterable[str], workers: int = 1) -> frozenset[str]:
    """Words the site writes capitalised inside sentences (names: "Django", "GeoDjango", "Chemex");
    with ``workers`` above 1 the texts are counted in chunks shared with a second process."""
    upper: Counter[str] = Counter()
    total: Counter[str] = Counter()
    items = texts if isinstance(texts, Sequence) else list(texts)
    for more_upper, more_total in _in_page_chunks(_capitalised, items, workers):
        upper.update(more_upper)
        total.update(more_total)
    return frozenset(w for w, n in upper.items() if n >= PROPER_MIN_USES and n / total[w] >= PROPER_SHARE)


def _capitalised(texts: Sequence[str]) -> tuple[Counter[str], Counter[str]]:
    """Uses of each word inside sentences, capitalised and in all: one scan a text, each written
    word looked up once in a table of the written words seen (its lower-case form's id, whether it
    is capitalised), and a batch of texts counted in NumPy."""
    written = Vocabulary()  # a word as written → its number
    forms = Vocabulary()  # its lower-case form → the form's number
    form_of = np.zeros(0, dtype=np.int64)  # by written number
    upper_of = np.zeros(0, dtype=bool)  # by written number: starts with a capital, not all capitals
    upper = np.zeros(0, dtype=np.int64)  # by form number
    total = np.zeros(0, dtype=np.int64)
    for start in range(0, len(texts), PROSE_BATCH_PAGES):
        batch = texts[start:start + PROSE_BATCH_PAGES]
        text, found, _ = scan_texts(batch, scanner=inside_sentences)  # the words inside sentences
        numbers = written.ids_of(text, found)
        new = written.words[len(form_of):]
        form_of = np.concatenate([form_of, forms.ids(map(str.lower, new), len(new))])
        upper_of = np.concatenate([upper_of, np.fromiter(
            (bool(_CAPITAL.match(w)) and not w.isupper() for w in new), dtype=bool, count=len(new))])
        size = len(forms.words)
        used = form_of[numbers]
        total = np.bincount(used, minlength=size) + np.pad(total, (0, size - len(total)))
        upper = np.bincount(used[upper_of[numbers]], minlength=size) + np.pad(upper, (0, size - len(upper)))
    return counter_of(forms.words, upper), counter_of(forms.words, total)


def _shared(work: Callable[[Sequence[T]], R], items: Sequence[T], workers: int,
            chunk: int | None = None, before_fork: Callable[[], None] | None = None,
            min_items: int | None = None) -> Sequence[R]:
    """``work`` over chunks of ``items`` shared with a second process (``background.in_chunks``) when
    ``worth_a_fork`` (``min_items``: see there), ``before_fork`` done first (what both processes
    would otherwise each make); else over all of them at once."""
    if not background.worth_a_fork(len(items), workers, min_items):
        return [work(items)]
    if before_fork is not None:
        before_fork()
    return in_chunks(work, items, chunk=chunk)


def _in_page_chunks(work: Callable[[Sequence[T]], R], items: Sequence[T], workers: int) -> Sequence[R]:
    """A pass over every page: a few large chunks (about 32 a process), each one result to merge."""
    return _shared(work, items, workers, chunk=max(64, len(items) // 64))


class _ListView(Sequence):
    """A sequence made when read, equal to a list of its items (``list``'s ``==``)."""

    __slots__ = ()

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Sequence) and not isinstance(other, str):
            return list(self) == list(other)
        return NotImplemented

    __hash__ = None  # type: ignore[assignment] - as list's

    def __repr__(self) -> str:
        return repr(list(self))


class WrittenWords(_ListView, Sequence[str]):
    """A source's words as written, each cut from its text when asked for (the anchor search reads a
    few words around the names it finds, not every word of the page)."""

    __slots__ = ("_ends", "_starts", "_text")

    def __init__(self, text: str, starts: list[int], ends: list[int]) -> None:
        self._text, self._starts, self._ends = text, starts, ends

    def __len__(self) -> int:
        return len(self._starts)

    def __getitem__(self, k):  # noqa: ANN001, ANN204 - as list's
        if isinstance(k, slice):
            return [self._text[a:b] for a, b in zip(self._starts[k], self._ends[k], strict=True)]
        return self._text[self._starts[k]:self._ends[k]]


class WordSpans(_ListView, Sequence[tuple[int, int]]):
    """The character span of each of a source's words, made when asked for."""

    __slots__ = ("_ends", "_starts")

    def __init__(self, starts: list[int], ends: list[int]) -> None:
        self._starts, self._ends = starts, ends

    def __len__(self) -> int:
        return len(self._starts)

    def __getitem__(self, k):  # noqa: ANN001, ANN204 - as list's
        if isinstance(k, slice):
            return list(zip(self._starts[k], self._ends[k], strict=True))
        return self._starts[k], self._ends[k]


class WordPositions(Mapping[str, list[int]]):
    """Normalised word → the numbers of the words of a source that have that form, in text order;
    made when first asked for (the anchoring finds its names' places through a ``NameTable``: most
    sources are never asked), each list when asked for."""

    __slots__ = ("_bounds", "_forms", "_groups", "_order", "_which")

    def __init__(self, forms: Sequence[str], which: np.ndarray) -> None:
        """``forms``: the batch's distinct normal forms; ``which``: each word's number among them."""
        self._forms, self._which = forms, which
        self._groups: dict[str, int] | None = None

    def _made(self) -> dict[str, int]:
        """Each form's group: the word numbers sorted by form number, then text order (``_order``),
        a form's a run of them (``_bounds``)."""
        if self._groups is None:
            order = np.argsort(self._which, kind="stable")
            by_form = self._which[order]
            runs = np.flatnonzero(np.diff(by_form)) + 1  # where each form's run starts, but the first
            run_forms = by_form[np.concatenate([[0], runs])].tolist() if len(order) else []
            self._order, self._bounds = order, [0, *runs.tolist(), len(order)]
            self._groups = dict(zip(map(self._forms.__getitem__, run_forms), itertools.count()))
            self._forms = self._which = None  # type: ignore[assignment]
        return self._groups

    def __getitem__(self, word: str) -> list[int]:
        group = self._made()[word]
        return self._order[self._bounds[group]:self._bounds[group + 1]].tolist()

    def __contains__(self, word: object) -> bool:
        return word in self._made()

    def keys(self) -> KeysView[str]:
        """The forms, as the groups' own keys: a look-up among them is the dictionary's, no call of
        ``__contains__`` (the anchor search asks ~10 times a pair whether the source writes a word)."""
        return self._made().keys()

    def __iter__(self) -> Iterator[str]:
        return iter(self._made())

    def __len__(self) -> int:
        return len(self._made())


@dataclass
class SourceText:
    """A source page's running text (prose blocks joined by newlines) with what anchors need."""

    text: str
    spans: Sequence[tuple[int, int]]  # character span of each word
    norms: list[str]
    raw: Sequence[str]
    sentence_of: list[int]  # sentence number of each word
    positions: Mapping[str, list[int]]  # normalised word -> word numbers
    blocked: list[tuple[int, int]]  # character spans of existing links
    code: list[tuple[int, int]]  # character spans of inline code
    bounds: list[int]  # character offset where each sentence ends
    block_of: list[int]  # block number of each word
    blocks: list[tuple[str, str]]  # kind and text of each prose block
    used: list[tuple[int, int]] = field(default_factory=list)  # spans given to earlier anchors
    used_phrases: set[str] = field(default_factory=set)
    name_ids: np.ndarray | None = None  # each word's id in a ``NameTable`` (-1: no name has it), if asked
    writes_reference: bool = True  # whether it writes a word of ``REFERENCE_WORDS`` ("section 38.16.3")

    def block_kind(self, i: int) -> str:
        """The kind of the block word ``i`` stands in (``list_item``, ``paragraph``...)."""
        return self.blocks[self.block_of[i]][0]

    def block_text(self, i: int) -> str:
        """The text of the block word ``i`` stands in (the paragraph, for passage checks)."""
        return self.blocks[self.block_of[i]][1]


#: Sources whose running texts are made at once (``source_texts``): their words found in one NumPy scan
#: (a page alone is ~60 NumPy calls on ~5,000 characters: ~0.5 ms, most of it the calls' own cost).
SOURCE_BATCH = 64
#: (target, link name) pairs whose spellings the finder keeps (``AnchorFinder._link_spellings``).
SPELLINGS_KEPT = 1 << 14
#: Normal forms kept made as strings across batches (``source_texts``), by the scan's hash of the form:
#: the first this many forms a process meets (the common words, mostly); a batch makes only the rest.
FORMS_KEPT = 1 << 16
_forms_kept: dict[int, str] = {}


def source_text(page: Page, linked: set[str] | None = None,
                aliases: dict[str, str] | None = None) -> SourceText:
    """Index a source page's prose blocks for anchor search.

    An existing link blocks its words unless its target is a page this source does not
    link in ``linked`` (the evaluation hides links that way); ``linked`` None: every link blocks.
    """
    return source_texts([page], [linked], aliases)[0]


class _Prose(NamedTuple):
    """A source's prose blocks joined, and the spans in that text its blocks mark."""

    text: str
    blocked: list[tuple[int, int]]
    code: list[tuple[int, int]]
    block_ends: list[int]
    blocks: list[tuple[str, str]]


def _prose(page: Page, linked: set[str] | None, aliases: dict[str, str]) -> _Prose:
    """The page's prose blocks that hold words, joined by line breaks, with the spans its links (those
    that block, as ``source_text`` says) and inline code take in that text."""
    pieces: list[str] = []
    blocked: list[tuple[int, int]] = []
    code: list[tuple[int, int]] = []
    block_ends: list[int] = []
    blocks: list[tuple[str, str]] = []
    offset = 0
    for block in page.blocks:
        if block.kind not in PROSE_KINDS or not block.text.strip():
            continue
        pieces.append(block.text)
        block_ends.append(offset + len(block.text))
        blocks.append((block.kind, block.text))
        for start, end, url in block.links:
            if linked is None or url is None or resolve(url, aliases) in linked:
                blocked.append((offset + start, offset + end))
        code.extend((offset + start, offset + end) for start, end in block.code)
        offset += len(block.text) + 1
    return _Prose("\n".join(pieces), sorted(blocked), code, block_ends, blocks)


def source_texts(pages: Sequence[Page], linked: Sequence[set[str] | None],
                 aliases: dict[str, str] | None = None, table: NameTable | None = None) -> list[SourceText]:
    """``source_text`` of each of ``pages`` (``linked``: each one's), their words found in one scan of
    their texts (``word_scan.scan_texts``: the tokeniser's spans, each word's normal form as a hash)
    and grouped by form: one normal form made a distinct word of the batch, not a word; a call is its
    name (``char_span`` gives it back its "()" in inline code). ``table``: each word's id there too
    (``name_ids``), a distinct form of the batch looked up once."""
    aliases = aliases or {}
    prose = [_prose(page, links, aliases) for page, links in zip(pages, linked, strict=True)]
    texts = [p.text for p in prose]
    joined, found, counts = scan_texts(texts, "normal")
    starts, ends = found.starts, found.ends
    if "()" in joined and len(ends):
        ends = ends - 2 * (code_points(joined)[ends - 1] == ord(")"))
    hashes, first, which = np.unique(found.forms, return_index=True, return_inverse=True)
    which = which.reshape(-1)
    forms = _form_strings(joined, hashes.tolist(), starts[first].tolist(), ends[first].tolist())
    if len(set(forms)) < len(forms):  # a form under two hashes (the scan and ``normal_form`` apart): one id
        ids: dict[str, int] = {}
        numbers = np.fromiter((ids.setdefault(form, len(ids)) for form in forms), dtype=np.int64,
                              count=len(forms))
        which, forms = numbers[which], list(ids)
    form_ids = table.ids(forms) if table is not None else None
    # which pages write a reference word: a flag a distinct form, read at the batch's words at once
    is_reference = np.fromiter(map(REFERENCE_WORDS.__contains__, forms), dtype=bool, count=len(forms))
    writes_reference = np.zeros(len(prose), dtype=bool)
    reference_words = np.flatnonzero(is_reference[which])  # each a word's number in the batch: its page's
    word_ends = np.cumsum(counts)  # where each page's words end in the batch's
    writes_reference[np.searchsorted(word_ends, reference_words, side="right")] = True
    lengths = np.fromiter(map(len, texts), dtype=np.int64, count=len(texts))
    text_starts = np.cumsum(lengths + 1) - lengths - 1
    word_bounds = np.concatenate([[0], word_ends]).tolist()
    form_array = np.empty(len(forms), dtype=object)  # a page's words' forms gathered in NumPy, ~4x
    form_array[:] = forms  # faster than a Python map over its forms' numbers
    made = []
    for k, p in enumerate(prose):
        a, b = word_bounds[k], word_bounds[k + 1]
        page_starts = starts[a:b] - text_starts[k]
        start_list, end_list = page_starts.tolist(), (ends[a:b] - text_starts[k]).tolist()
        page_which = which[a:b]
        sentence_ends = split_ends(_SENTENCE_END_SPLIT, p.text)[2]
        # sentence of a word: how many sentence ends are at or before its start; block: how many
        # blocks end before it
        made.append(SourceText(
            p.text, WordSpans(start_list, end_list), form_array.take(page_which).tolist(),
            WrittenWords(p.text, start_list, end_list),
            np.searchsorted(sentence_ends, page_starts, side="right").tolist(),
            WordPositions(forms, page_which),
            p.blocked, p.code, sentence_ends.tolist(),
            np.searchsorted(np.asarray(p.block_ends, dtype=np.int64), page_starts, side="left").tolist(),
            p.blocks, name_ids=form_ids[page_which] if form_ids is not None else None,
            writes_reference=bool(writes_reference[k])))
    return made


def _form_strings(text: str, hashes: list[int], starts: list[int], ends: list[int]) -> list[str]:
    """The normal form of each distinct form of a batch (its hash, and where a word of it is written in
    ``text``): kept ones read back (``FORMS_KEPT``), the others made from the word and kept while there
    is room."""
    kept = _forms_kept
    forms = list(map(kept.get, hashes))
    for k, form in enumerate(forms):
        if form is None:
            form = forms[k] = normalise(text[starts[k]:ends[k]])
            if len(kept) < FORMS_KEPT:
                kept[hashes[k]] = form
    return forms


@functools.lru_cache(maxsize=1 << 16)
def _key_of(text: str) -> tuple[str, ...]:
    """The normalised words of ``text`` as a name's key (cached: a link's spelling is compared with the
    target's names each time a source's words match one of them)."""
    return tuple(words(text))


def _overlaps(span: tuple[int, int], others: Iterable[tuple[int, int]]) -> bool:
    return any(span[0] < end and start < span[1] for start, end in others)


def part_of_identifier(text: str, start: int, end: int) -> bool:
    """True when ``text[start:end]`` touches a path, URL, identifier or markup character."""
    before = text[start - 1] if start > 0 else " "
    after = text[end] if end < len(text) else " "
    if before in IDENTIFIER_NEIGHBOURS or after in IDENTIFIER_NEIGHBOURS or after in CALL_OPENERS:
        return True
    if after in ".-'" and end + 1 < len(text) and text[end + 1].isalnum():
        return True
    return before in ".-" and start > 1 and text[start - 2].isalnum()


def only_names(sentence: str, phrase: str) -> bool:
    """Whether ``sentence`` is no running text around ``phrase`` but a label or a bare list of
    names: the phrase alone ("Moka pot." opening a list item in bold), or short items separated
    by commas ("French press, AeroPress, cold brew.")."""
    items = [" ".join(item.split()) for item in LIST_SEPARATORS.split(sentence.strip().rstrip(".!?:;"))]
    return (phrase.lower() in (item.lower() for item in items)
            and all(len(item.split()) <= MAX_LIST_ITEM_WORDS for item in items))


def context_of(text: str, bounds: Sequence[int], start: int, end: int, limit: int = CONTEXT_CHARS) -> str:
    """The sentence around ``text[start:end]`` (``bounds``: sentence end offsets), cut to ~``limit``."""
    k = bisect.bisect_right(bounds, start)
    left = bounds[k - 1] if k > 0 else 0
    right = bounds[k] if k < len(bounds) else len(text)
    right = max(right, end)
    if right - left > limit:
        half = max(0, (limit - (end - start)) // 2)
        new_left, new_right = max(left, start - half), min(right, end + half)
        if new_left > left:
            space = text.find(" ", new_left, start)
            new_left = space + 1 if space >= 0 else start
        if new_right < right:
            space = text.rfind(" ", end, new_right)
            new_right = space if space >= 0 else end
        left, right = new_left, new_right
    return " ".join(text[left:right].split())


class Name(NamedTuple):
    """A phrase that names a page, and the evidence for it. A named tuple: the names of a target are
    made again each time its packed names are read (``_unpacked``, ~11 a target), and a tuple is made
    in a third of a frozen dataclass's time (0.4 against 1.2 µs)."""

    words: tuple[str, ...]
    evidence: str  # one of EVIDENCE_KINDS: link, title, slug, part
    rank: float  # higher is surer (evidence order, then length)


_RANKS: dict[tuple[str, int], float] = {}


def _rank(evidence: str, length: int) -> float:
    """A name's rank (its evidence's order, then its length), one float object a value: every target's
    names are kept through the anchoring, a float each cost 24 bytes (~11 names a target)."""
    rank = _RANKS.get((evidence, length))
    if rank is None:
        rank = _RANKS[(evidence, length)] = EVIDENCE_ORDER[evidence] + length / 10
    return rank


#: A target's names packed into one string (``_packed``): names apart, and the words of a name apart
#: (no word holds either), each name led by its evidence's number in ``EVIDENCE_KINDS``.
_NAMES_APART, _WORDS_APART = "\x00", "\x01"
_EVIDENCE_NUMBER = {kind: str(i) for i, kind in enumerate(EVIDENCE_KINDS)}
_EVIDENCE_OF = {number: kind for kind, number in _EVIDENCE_NUMBER.items()}


def _packed(names: list[Name]) -> str | list[Name]:
    """A target's names as one string, to keep: the names are kept for every target through the
    anchoring and read by both of its processes, and reading an object writes it (its reference
    count), so a forked process copies every page of them it reads. As ``Name`` objects (a tuple
    and its words each, ~11 a target) they held ~1.8 KB a target; packed, one string of ~0.3 KB
    (255 characters on average at 10k synthetic pages).
    Names it cannot pack (a word with a separator, a name of no words) are kept as they are."""
    packed = []
    for name in names:
        if not name.words or any(_NAMES_APART in w or _WORDS_APART in w for w in name.words):
            return names
        packed.append(_EVIDENCE_NUMBER[name.evidence] + _WORDS_APART.join(name.words))
    return _NAMES_APART.join(packed)


_new_tuple = tuple.__new__  # a ``Name`` made without its ``__new__``'s keyword handling


def _unpacked(kept: str | list[Name], written: Container[str] | None = None) -> list[Name]:
    """The names ``_packed`` kept, made again (new objects, equal to the ones packed); ``written``: only
    those whose first word is in it (the others are never made)."""
    if not isinstance(kept, str):
        return kept if written is None else [n for n in kept if n.words[0] in written]
    names = []
    for part in kept.split(_NAMES_APART) if kept else ():
        if written is not None:
            end = part.find(_WORDS_APART)
            if (part[1:end] if end > 0 else part[1:]) not in written:
                continue
        evidence, words = _EVIDENCE_OF[part[0]], tuple(part[1:].split(_WORDS_APART))
        names.append(_new_tuple(Name, (words, evidence, _rank(evidence, len(words)))))
    return names


def _sub_phrases(key: tuple[str, ...]) -> Iterator[tuple[str, ...]]:
    """Contiguous parts of a name that neither start nor end with a stopword."""
    n = len(key)
    for i in range(n):
        if key[i] in STOPWORDS:
            continue
        for j in range(i, min(n, i + MAX_WORDS)):
            if key[j] not in STOPWORDS:
                yield key[i:j + 1]


def defined_names(page: Page) -> set[tuple[str, ...]]:
    """Code names a page defines: whole inline code names of its terms and headings (at most 3 words),
    identifier-shaped or in capitals (``data_directory``, ``QuerySet.filter``, ``CREATE INDEX``)."""
    found: set[tuple[str, ...]] = set()
    for span in code_spans(page, DEFINING_BLOCKS):
        name = span.strip()
        key = tuple(words(name))
        if 1 <= len(key) <= 3 and (identifier_shaped(name.split()[0]) or name.isupper()):
            found.add(key)
    return found


def _name_of(named: dict[tuple[str, ...], str | frozenset[str]], key: tuple[str, ...], url: str) -> None:
    """Record that ``key`` names ``url`` (a set of URLs once several pages share it)."""
    owner = named.get(key)
    if owner is None:
        named[key] = url
    elif owner != url:
        named[key] = (owner if isinstance(owner, frozenset) else frozenset((owner,))) | {url}


def plain_english(src: SourceText, i: int, j: int) -> bool:
    """Whether every content word of words i..j is in an English dictionary ("model fields", "time
    zone"): with a lower-case member name (``save()``), what an editor links only where the site links
    it; capitalised and dotted code names and words no dictionary knows (``QuerySet``, "URLconf") are
    names whatever their share."""
    return all(zipf(src.raw[k]) > 0 for k in range(i, j + 1) if src.norms[k] not in STOPWORDS)


def _member_shaped(src: SourceText, span: tuple[int, int]) -> bool:
    """A lower-case code name without a dot (``save()``, ``object_list``): a member or a function."""
    phrase = src.text[span[0]:span[1]]
    return (any(a < span[1] and span[0] < b for a, b in src.code) and phrase[:1].islower()
            and phrase == phrase.lower() and "." not in phrase)


def _linking_pages(links: Sequence[Link]) -> Counter[tuple[str, ...]]:
    """How many pages give an in-content link each anchor text (normalised words)."""
    if isinstance(links, LinkTable):  # columns: each anchor text split once, pairs counted in NumPy
        mask = links.content()
        texts, inverse = np.unique(links.anchor[mask], return_inverse=True)
        key_ids: dict[tuple[str, ...], int] = {}
        of_text = np.array([key_ids.setdefault(key, len(key_ids)) if key else -1
                            for key in (tuple(words(links.anchors[t])) for t in texts.tolist())],
                           dtype=np.int64)
        keyed = of_text[inverse] if len(texts) else np.zeros(0, dtype=np.int64)
        kept = keyed >= 0
        width = max(1, len(key_ids))
        pairs = distinct(links.source[mask][kept].astype(np.int64) * width + keyed[kept])
        counts = np.bincount(pairs % width, minlength=width)
        keys = list(key_ids)
        return Counter({keys[k]: int(n) for k, n in enumerate(counts.tolist()) if n})
    keys: dict[str, tuple[str, ...]] = {}
    seen: set[tuple[str, tuple[str, ...]]] = set()
    for source, _, anchor in content_uses(links):
        key = keys.get(anchor)
        if key is None:
            key = keys[anchor] = tuple(words(anchor))
        if key:
            seen.add((source, key))
    return Counter(key for _, key in seen)


#: Between two blocks' words in ``_prose_counts`` (no word holds it, names never match across it).
_BREAK = "\x00"


def _prose_counts(crawl: Crawl, keys: Iterable[tuple[str, ...]], workers: int = 1
                  ) -> tuple[Counter[str], PhraseTable]:
    """On how many content pages each word, and each of ``keys``, stands in the running text (linked
    or not). A page's prose blocks are one text with a break token between them (a phrase never
    spans two blocks); its words are normalised and made ids, and a batch of pages is counted and
    matched in NumPy (``phrases``). The phrases' counts are a ``PhraseTable`` (those found only)."""
    keys = keys if isinstance(keys, list) else list(keys)  # each a name's words, as ``words`` makes
    # them: never empty, no spaces; one given twice is counted once (under the later of the two)
    matcher = PhraseMatcher(keys, keys)
    vocabulary = Vocabulary(normal_form)  # each written word normalised once: its own map, not the cache
    brk = vocabulary[_BREAK]

    def count(pages: Sequence[Page]) -> tuple[Counter[str], np.ndarray]:
        word_pages = np.zeros(0, dtype=np.int64)  # by word id
        found = np.zeros(len(matcher), dtype=np.int64)  # by phrase number
        for start in range(0, len(pages), PROSE_BATCH_PAGES):
            joined = [_BREAK.join([text.replace(_BREAK, " ") for text in block_texts(page, PROSE_KINDS)])
                      for page in pages[start:start + PROSE_BATCH_PAGES] if page.kind == "content"]
            # the words, and a break between two blocks
            text, scanned, lengths = scan_texts(joined, "normal", breaks=True)
            ids = vocabulary.ids_of(text, scanned)
            groups = np.repeat(np.arange(len(lengths), dtype=np.int64), lengths)
            is_word = ids != brk
            more = groups_per_item(groups[is_word], ids[is_word], len(vocabulary.words))
            more[:len(word_pages)] += word_pages
            word_pages = more
            starts, numbers, _ = matcher.find(matcher.word_ids(ids, vocabulary), groups)
            found += groups_per_item(groups[starts], numbers, len(matcher))
        return counter_of(vocabulary.words, word_pages), found

    word_pages: Counter[str] = Counter()
    found = np.zeros(len(keys), dtype=np.int64)
    for more_words, more_found in _in_page_chunks(count, crawl.pages, workers):
        word_pages.update(more_words)
        found += more_found
    seen = np.flatnonzero(found)
    return word_pages, PhraseTable(phrase_hashes([keys[i] for i in seen.tolist()]), found[seen])


def _trimmed(name: tuple[tuple[str, ...], str]) -> tuple[tuple[str, ...], str]:
    """A name without leading and trailing stopwords ("The French press guide" -> "French press guide")."""
    key, evidence = name
    start, end = 0, len(key)
    while start < end and key[start] in STOPWORDS:
        start += 1
    while end > start and key[end - 1] in STOPWORDS:
        end -= 1
    return key[start:end], evidence


def _nameable(key: tuple[str, ...]) -> bool:
    """Whether ``key`` can be a name: a few words, not only stopwords or weak words ("guide", "more").
    Set operations, no cache: an LRU cache of 262,144 parts was full at 100k pages with more misses
    than hits, and over the same calls took 715 ns a call against these operations' 530
    (``benchmarks/name_caches.py``)."""
    if len(key) > MAX_WORDS:
        return False
    content = set(key).difference(STOPWORDS)
    return bool(content) and not content <= WEAK_WORDS


class NameOwners:
    """Which page each of the pages' own names belongs to: its URL, or the set of URLs of the pages
    that share it. Held as a ``PhraseTable`` (~16 bytes a name; a dict of the names held ~110, and
    the pages give ~11 names each), the shared names' sets beside it."""

    __slots__ = ("_shared", "_table", "_urls")

    def __init__(self, hashes: np.ndarray, pages: np.ndarray, urls: Sequence[str]) -> None:
        """Name ``hashes[k]`` (``phrase_hash``) names page ``pages[k]``, whose URL is ``urls[pages[k]]``."""
        order = np.lexsort((pages, hashes))
        hashes, pages = hashes[order], pages[order]
        pair = np.ones(len(hashes), dtype=bool)  # each (name, page) once
        pair[1:] = (hashes[1:] != hashes[:-1]) | (pages[1:] != pages[:-1])
        hashes, pages = hashes[pair], pages[pair]
        first = np.ones(len(hashes), dtype=bool)
        np.not_equal(hashes[1:], hashes[:-1], out=first[1:])
        starts = np.flatnonzero(first)
        ends = np.append(starts[1:], len(hashes))
        codes = pages[starts].astype(np.int64)  # a page's number, or -1 - the number of a shared set
        shared = np.flatnonzero(ends - starts > 1)
        self._shared = [frozenset(urls[p] for p in pages[starts[k]:ends[k]].tolist())
                        for k in shared.tolist()]
        codes[shared] = -1 - np.arange(len(shared), dtype=np.int64)
        self._table = PhraseTable(hashes[starts], codes)
        self._urls = urls

    def get(self, key: tuple[str, ...], default: None = None) -> str | frozenset[str] | None:
        code = self._table.get(key)
        if code is None:
            return default
        return self._urls[code] if code >= 0 else self._shared[-1 - code]

    def __contains__(self, key: object) -> bool:
        return key in self._table

    def __len__(self) -> int:
        return len(self._table)

    @property
    def nbytes(self) -> int:
        """The bytes its table holds (the shared names' sets aside)."""
        return self._table.nbytes


class AnchorFinder:
    """Chooses anchors for suggestions; built once per crawl (the names every page is known by)."""

    #: What the build makes and nothing changes after, read by the anchoring alone: the name and
    #: link tables a ranking runs without (``tables_aside``); ~190 MB at 100k synthetic pages.
    TABLES = ("shared_parts", "word_pages", "occurrences", "_page_named", "linking_pages", "link_names",
              "name_uses", "spellings", "_link_named")

    def __init__(self, crawl: Crawl, allow_title: bool = False, workers: int = 1,
                 before_last_steps: Callable[[], object] | None = None) -> None:
        """``workers``: processes for the passes over every page's text (see ``background``).
        ``before_last_steps``: called once the passes are done, before the names are tabled and the
        links indexed, the build's largest transients (the run waits there for the TF-IDF process
        to leave, so that the two never stand side by side).

        What each pass freed is handed back before the next (``give_back``): the C heap keeps it,
        while a pass's large NumPy arrays are mapped anew beside it (100k synthetic pages, one
        process: 70–220 MB a pass kept, the last steps' transients on top of them)."""
        self.pages = {p.url: p for p in crawl.pages}
        self.aliases = crawl.aliases
        self.allow_title = allow_title
        self.site_parts = site_title_parts([p.title for p in crawl.pages])
        self.proper = proper_nouns(PageValues(crawl.pages, lambda p: p.text), workers)
        give_back()
        self.content_pages = max(1, sum(1 for p in crawl.pages if p.kind == "content"))
        definers: dict[tuple[str, ...], set[str]] = defaultdict(set)
        for page in crawl.pages:
            for key in defined_names(page):
                definers[key].add(page.url)
        self.terms: dict[str, list[tuple[str, ...]]] = defaultdict(list)
        for key, urls in definers.items():
            if len(urls) == 1:  # defined on one page only: the name is that page's
                self.terms[next(iter(urls))].append(key)
        # how many pages carry each part of a name (a page counted once: page URLs are unique); only
        # the parts on more than SPECIFIC_PAGES pages are kept (a part on fewer is specific to its page)
        name_pages: Counter[tuple[str, ...]] = Counter()
        for page in crawl.pages:
            name_pages.update({part for key, _ in self._page_names(page) for part in _sub_phrases(key)})
        self.shared_parts = frozenset(part for part, n in name_pages.items() if n > SPECIFIC_PAGES)
        give_back()
        # one pass over the running text: pages per word, and pages per phrase that may be a name
        # (the phrases as one list, a phrase in it twice where two sources give it: the matcher
        # counts it once; no set of them all is made, and the parts' counts go first)
        counts = anchor_counts(crawl.links)
        give_back()
        keys = [*counts[0], *name_pages, *itertools.chain.from_iterable(self.terms.values())]
        del name_pages
        self.word_pages, self.occurrences = _prose_counts(crawl, keys, workers)
        del keys
        give_back()
        if before_last_steps is not None:
            before_last_steps()
        self._page_named = self._pages_named()
        give_back()
        self._index_links(crawl.links, counts)
        # what the build freed, handed back: the allocator kept it (100k pages, built in one process:
        # the finder held 0.54 GB of its memory after the build, 0.31 GB once handed back; with two
        # processes the passes' transients are the forked child's and nothing shows)
        give_back()

    def tables_aside(self) -> contextlib.AbstractContextManager[None]:
        """A block (``with finder.tables_aside():``) through which the ``TABLES`` are in a temporary
        file, not in memory: for a ranking, which reads none of them. Written at the first block,
        read back after each."""
        aside = self.__dict__.get("_aside")
        if aside is None or aside.holder is not self:  # a copy (``with_links``) has tables of its own
            aside = self.__dict__["_aside"] = SetAside(self, self.TABLES)
        return aside.away()

    def with_links(self, crawl: Crawl) -> AnchorFinder:
        """This finder for the same pages with other links (the evaluation's and confidence's hidden
        links): what depends on the pages alone is kept, what depends on the links is made again."""
        finder = copy.copy(self)
        finder.aliases = crawl.aliases
        finder._index_links(crawl.links)
        return finder

    def without(self, crawl: Crawl, hidden: Collection[tuple[str, str]]) -> AnchorFinder:
        """This finder (made for ``crawl``) for its links less those of the ``hidden`` (source,
        target) URL pairs: what ``with_links`` makes for the crawl without them, at a confidence
        fold's cost. Only what the hidden links change is made again (the names of the targets
        their anchor texts name, the pages linking those texts, the hidden targets' counts and
        spellings, the hidden sources' linked pages), read through the site's for the rest. Links
        not in a table: the crawl without them, through ``with_links``."""
        table = crawl.links
        if not isinstance(table, LinkTable):
            return self.with_links(replace(crawl, links=links_table(table).without(hidden)))
        n = len(table.urls)
        keys = table.keys_of(hidden)
        # the in-content links as columns, and which of them the fold hides (all of a hidden pair's)
        content = np.flatnonzero(table.content())
        links = _FoldLinks(table.source[content], table.target[content], table.anchor[content])
        del content
        links.gone = in_sorted(keys, links.source.astype(np.int64) * n + links.target)
        self._anchor_keys(table)  # made here, not in the copy: every fold's copy has the site's
        finder = copy.copy(self)
        finder._names_without(table, links)
        finder._spellings_without(table, links)
        by_source: dict[str, set[str]] = defaultdict(set)  # the hidden sources' linked pages
        for s, t in hidden:
            by_source[s].add(t)
        finder.linked = _LinkedWithout(self.linked, by_source)
        finder._names, finder._written, finder._owners, finder._spelled = {}, {}, {}, {}
        # a target's names depend on the links through its link names alone: those the fold did not
        # change are the site's, made once for every fold (and for the run's anchors after them)
        finder._names_of_site = (self, finder.link_names.changed)
        return finder

    def _names_without(self, table: LinkTable, links: _FoldLinks) -> None:
        """The counts of the names the hidden links give (their words' uses, each target's uses, the
        pages linking them) and the link names of every target they may change, from the links kept."""
        key_words, key_of, usable = self._anchor_keys(table)
        key = key_of[links.anchor]
        other = links.source != links.target
        touched = np.zeros(len(key_words) + 1, dtype=bool)  # the last: no words (-1)
        touched[key[links.gone]] = True
        touched[-1] = False
        seen = ~links.gone
        uses = np.bincount(key[seen & other & usable[key]], minlength=len(key_words))  # site-wide
        named = other & usable[key] & touched[key]  # links whose targets' names may change
        per_target: dict[str, Counter[tuple[str, ...]] | None] = {}
        hidden = named & links.gone
        urls = table.urls
        for t, k, c in zip(*_pair_counts(links.target[hidden], key[hidden]), strict=True):
            left = per_target.get(urls[t])
            if left is None:
                left = per_target[urls[t]] = Counter(self.name_uses.get(urls[t], Counter()))
            left[key_words[k]] -= c
            if not left[key_words[k]]:
                del left[key_words[k]]
        self.name_uses = Changed(self.name_uses, {url: counts or None for url, counts in per_target.items()})
        number = {words: i for i, words in enumerate(key_words)}
        link_names: dict[str, list[tuple[str, ...]] | None] = {}
        for t in distinct(links.target[named]).tolist():
            counts = self.name_uses.get(urls[t])
            link_names[urls[t]] = [] if counts is None else names_from_counts(
                _Uses(uses, number), {urls[t]: counts}, MIN_COMMONNESS, MIN_NAME_USES)[urls[t]]
        self._link_named = Changed(self._link_named, self._owners_again(link_names))
        self.link_names = Changed(self.link_names, link_names)
        # pages linking each touched text's words (any page, its own too)
        linking = seen & touched[key]
        pairs = distinct(links.source[linking].astype(np.int64) * len(key_words) + key[linking])
        sources = np.bincount(pairs % max(1, len(key_words)), minlength=len(key_words))
        self.linking_pages = Changed(self.linking_pages, {
            key_words[k]: int(sources[k]) or None for k in np.flatnonzero(touched[:-1]).tolist()})

    def _spellings_without(self, table: LinkTable, links: _FoldLinks) -> None:
        """The spellings of the hidden links' targets, from the links kept (each text once a target)."""
        targets = distinct(links.target[links.gone])
        is_target = np.zeros(len(table.urls), dtype=bool)
        is_target[targets] = True
        kept = is_target[links.target] & ~links.gone
        width = max(1, len(table.anchors))
        given = distinct(links.target[kept].astype(np.int64) * width + links.anchor[kept])
        urls, texts = table.urls, table.anchors
        spellings: dict[str, set[str] | None] = {urls[t]: None for t in targets.tolist()}
        for t, a in zip((given // width).tolist(), (given % width).tolist(), strict=True):
            if texts[a]:
                found = spellings[urls[t]]
                if found is None:
                    found = spellings[urls[t]] = set()
                found.add(spaced(texts[a]))
        self.spellings = Changed(self.spellings, spellings)

    def folds_done(self) -> None:
        """Let go of what only the folds' finders read (``without``): every anchor text's words."""
        self.__dict__.pop("_keys_of", None)

    def _anchor_keys(self, table: LinkTable) -> tuple[list[tuple[str, ...]], np.ndarray, np.ndarray]:
        """Each of ``table``'s anchor texts' words (a number into the list; -1: no words), and
        whether those words can be a link name (``anchor_counts``); made once a table."""
        made = self.__dict__.get("_keys_of")
        if made is not None and made[0] is table:
            return made[1]
        number: dict[tuple[str, ...], int] = {}
        usable: list[bool] = []
        of_text = np.full(len(table.anchors) + 1, -1, dtype=np.int32)
        for a, text in enumerate(table.anchors):
            key = tuple(words(text)) if text else ()
            if key:
                if key not in number:
                    number[key] = len(number)
                    content = [w for w in key if w not in STOPWORDS]
                    usable.append(bool(content) and len(key) <= MAX_WORDS
                                  and not all(w in WEAK_WORDS for w in content))
                of_text[a] = number[key]
        result = (list(number), of_text, np.array(usable + [False], dtype=bool))
        self.__dict__["_keys_of"] = (table, result)
        return result

    def _owners_again(self, link_names: Mapping[str, list[tuple[str, ...]] | None]
                      ) -> dict[tuple[str, ...], str | frozenset[str] | None]:
        """``_link_named`` again for the names that ``link_names`` (the targets whose link names a
        fold changes: their new names) gives or took away: the pages' owners and the link owners."""
        def trimmed(names: Iterable[tuple[str, ...]]) -> set[tuple[str, ...]]:
            return {key for key, _ in map(_trimmed, ((key, "link") for key in names))
                    if key and _nameable(key)}

        def as_set(owner: str | frozenset[str] | None) -> set[str]:
            return set() if owner is None else {owner} if isinstance(owner, str) else set(owner)

        moved: set[tuple[str, ...]] = set()  # names a changed target gained or lost
        named_now: dict[tuple[str, ...], set[str]] = defaultdict(set)  # name -> changed targets it names
        for url, names in link_names.items():
            after = trimmed(names or ())
            moved |= after ^ trimmed(self.link_names.get(url, ()))
            for key in after:
                named_now[key].add(url)
        changed: dict[tuple[str, ...], str | frozenset[str] | None] = {}
        for key in moved:
            linked = {url for url in as_set(self._link_named.get(key)) if url not in link_names
                      and key in trimmed(self.link_names.get(url, ()))}
            linked |= named_now.get(key, set())
            if not linked:
                changed[key] = None
                continue
            everyone = linked | as_set(self._page_named.get(key))
            changed[key] = next(iter(everyone)) if len(everyone) == 1 else frozenset(everyone)
        return changed

    def _index_links(self, links: Sequence[Link], counts: AnchorCounts | None = None) -> None:
        """What the existing links say: which pages each source links, and the names links give targets
        (``counts``: ``anchor_counts(links)`` when the caller has it)."""
        self.linked: Mapping[str, set[str]] | TargetsBySource
        if isinstance(links, LinkTable):
            self.linked = links.by_source()
        else:
            self.linked = defaultdict(set)
            for link in links:
                self.linked[link.source_url].add(link.target_url)
        uses, per_target = counts if counts is not None else anchor_counts(links)
        self.linking_pages = _linking_pages(links)
        self.link_names = names_from_counts(uses, per_target, MIN_COMMONNESS, MIN_NAME_USES)
        self.name_uses = per_target
        # The exact spellings in-content links give each target: a code name must be written as the
        # site writes it for that target (`Func` the class, not `func` the argument).
        self.spellings: dict[str, set[str]] = defaultdict(set)
        spelled: dict[str, str] = {}
        if isinstance(links, LinkTable):  # each distinct (anchor, target) once
            texts, urls = links.anchors, links.urls
            given: Iterable[tuple[str, str]] = (
                (urls[t], texts[a]) for a, t, _ in zip(*links.anchor_groups(), strict=True))
        else:
            given = ((target, anchor) for _, target, anchor in content_uses(links))
        for target, anchor in given:
            if anchor:
                spelling = spelled.get(anchor)
                if spelling is None:
                    spelling = spelled[anchor] = spaced(anchor)
                self.spellings[target].add(spelling)
        self._names: dict[str, str | list[Name]] = {}  # per target: its names, ``_packed``
        # a fold's (``without``): the site's finder, and the targets whose link names the fold changed
        self._names_of_site: tuple[AnchorFinder, frozenset[str]] | None = None
        self._written: dict[str, set[str]] = {}  # per target: the words its names write, as written
        # per (target, link name): its links' spellings of the name, and whether one is plain words
        # (``_spelled_right``); the last SPELLINGS_KEPT asked for
        self._spelled: dict[tuple[str, tuple[str, ...]], tuple[frozenset[str], bool]] = {}
        self._owners: dict[str, dict[str, set[str]]] = {}  # per target: member -> the classes it is of
        # Which page each name belongs to (a set when several pages share it): the words around an
        # anchor must not be another page's longer name ("custom model fields", "Model Form API").
        # The pages' own names and terms are named once (``_page_named``); the links' names again for
        # every set of links, in ``_link_named``: each key there holds its owners on the pages too, so a
        # lookup reads it first (a copy of the pages' names per set of links cost ~0.5 KB a page).
        self._link_named: dict[tuple[str, ...], str | frozenset[str]] = {}
        for url, keys in self.link_names.items():
            for key, _ in map(_trimmed, ((key, "link") for key in keys)):
                if key and _nameable(key):
                    if key not in self._link_named:
                        owner = self._page_named.get(key)
                        if owner is not None:
                            self._link_named[key] = owner
                    _name_of(self._link_named, key, url)

    def _pages_named(self) -> NameOwners:
        """Which page each name the pages alone give belongs to (titles, h1s, slugs, their specific
        parts, terms), as a table of the names' hashes."""
        hashes, numbers = array("Q"), array("i")
        for number, (url, page) in enumerate(self.pages.items()):
            terms = [(key, "term") for key in self.terms.get(url, ())]
            for key, evidence in self._page_names(page) + [t for t in map(_trimmed, terms) if t[0]]:
                if evidence == "term" and not _nameable(key):
                    continue
                hashes.append(phrase_hash(key))
                numbers.append(number)
                if evidence in ("title", "slug"):
                    for part in _sub_phrases(key):
                        if part not in self.shared_parts and _nameable(part):
                            hashes.append(phrase_hash(part))
                            numbers.append(number)
        return NameOwners(np.frombuffer(hashes, dtype=np.uint64), np.frombuffer(numbers, dtype=np.int32),
                          list(self.pages))

    def another_name_around(self, src: SourceText, i: int, j: int, target_url: str) -> bool:
        """Whether words i..j stand inside or across a name of another page in their sentence: the
        words then name that page ("model fields" in "custom model fields", which is the custom
        fields how-to; "Form API" in "Model Form API")."""
        norms, sentence_of = src.norms, src.sentence_of
        sentence = sentence_of[i]
        link_named, page_named = self._link_named, self._page_named
        last = min(len(norms) - 1, j + NAME_REACH)
        # every name of both tables is trimmed and nameable (``_trimmed``, ``_sub_phrases``,
        # ``_nameable``): none starts or ends with a stopword or is longer than MAX_WORDS, so those
        # words are not looked up (most of the words around an anchor are stopwords)
        for start in range(max(0, i - NAME_REACH), j + 1):
            if sentence_of[start] != sentence or norms[start] in STOPWORDS:
                continue
            for end in range(max(i, start), min(last, start + MAX_WORDS - 1) + 1):
                if sentence_of[end] != sentence:
                    break
                if (start >= i and end <= j) or norms[end] in STOPWORDS:
                    continue  # inside the anchor (not around it), or a stopword at its end
                key = tuple(norms[start:end + 1])
                owner = link_named.get(key) or page_named.get(key)
                if owner is not None and owner != target_url and not (
                        isinstance(owner, frozenset) and target_url in owner):
                    return True
        return False

    def owners(self, target: Page) -> dict[str, set[str]]:
        """The classes the target documents each member under (``save`` -> {"Model"}): a term or
        definition opening with ``Owner.member`` or with ``member`` inside a ``class Owner`` entry."""
        found = self._owners.get(target.url)
        if found is not None:
            return found
        found = defaultdict(set)
        current = ""
        for block in target.blocks:
            if block.kind not in DEFINING_BLOCKS and block.kind != "definition":
                continue
            text = block.text.strip()
            opened = CLASS_ENTRY.match(text) if block.code else None
            if opened or block.kind != "definition":  # a heading or a top-level entry ends a class's
                current = opened.group(1).split(".")[-1] if opened else ""
                if opened:
                    continue
            if not block.code or block.code[0][0] != 0:
                continue
            qualified = QUALIFIED_MEMBER.match(text)
            if qualified:
                found[qualified.group(2)].add(qualified.group(1).split(".")[-1])
            elif current and block.kind == "definition":
                bare = BARE_MEMBER.match(text)
                if bare:
                    found[bare.group(1)].add(current)
        self._owners[target.url] = found = dict(found)
        return found

    def link_probability(self, key: tuple[str, ...]) -> float:
        """The share of the content pages whose running text holds the phrase that link it (smoothed):
        high for names editors link ("QuerySet", "CSRF protection"), low for words they leave
        plain however often they appear ("model fields", "template tag")."""
        return min(1.0, (self.linking_pages.get(key, 0) + 1) / (self.occurrences.get(key, 0) + 1))

    def title_of(self, page: Page) -> str:
        return clean_title(page.title, self.site_parts) or page.h1.strip()

    def _page_names(self, page: Page) -> list[tuple[tuple[str, ...], str]]:
        """The page's own names: clean title, h1 and slug (what its parts are cut from)."""
        names = [(tuple(words(self.title_of(page))), "title"), (tuple(words(page.h1)), "title"),
                 (tuple(url_words(page.url)), "slug")]
        return [(key, evidence) for key, evidence in map(_trimmed, names) if key and _nameable(key)]

    def own_names(self, page: Page) -> list[tuple[tuple[str, ...], str]]:
        """The page's own names, then the names its links and terms give it (not kept: ``names``,
        their only reader, keeps what it makes of them)."""
        names = [(key, "link") for key in self.link_names.get(page.url, ())]
        names += [(key, "term") for key in self.terms.get(page.url, ())]
        names = [(key, evidence) for key, evidence in map(_trimmed, names) if key and _nameable(key)]
        return self._page_names(page) + names

    def names(self, target: Page, written: Container[str] | None = None) -> list[Name]:
        """Phrases that name ``target``, surest first (``written``: only those whose first word is in
        it)."""
        kept = self._names.get(target.url)
        if kept is not None:
            return _unpacked(kept, written)
        if self._names_of_site is not None and target.url not in self._names_of_site[1]:
            return self._names_of_site[0].names(target, written)
        found: dict[tuple[str, ...], Name] = {}

        def add(key: tuple[str, ...], evidence: str) -> None:
            rank = _rank(evidence, len(key))
            old = found.get(key)
            if old is None or old.rank < rank:
                found[key] = Name(key, evidence, rank)

        for key, evidence in self.own_names(target) if target.url in self.pages else ():
            add(key, evidence)
            if evidence in ("title", "slug"):
                for part in _sub_phrases(key):
                    if part != key and _nameable(part) and part not in self.shared_parts:
                        add(part, "part")
        names = sorted(found.values(), key=lambda n: (-n.rank, n.words))
        self._names[target.url] = _packed(names)
        return names if written is None else [n for n in names if n.words[0] in written]

    @staticmethod
    def char_span(src: SourceText, i: int, j: int) -> tuple[int, int]:
        """Character span of words i..j, with a call's "()" when an inline code name ends with it
        (``reverse()``, ``QuerySet.update()``: the whole code name is the anchor)."""
        start, end = src.spans[i][0], src.spans[j][1]
        if src.text.startswith("()", end) and (start, end + 2) in src.code:
            end += 2
        return start, end

    def qualifies(self, src: SourceText, i: int, j: int, evidence: str = "title") -> bool:
        """Whether words i..j of the source may carry a link: its place and shape, and for one word its
        evidence — an identifier-shaped word always, a whole inline code name unless it is a common
        English word; else the target's whole name (a link text, its title or slug), and not a common
        English word."""
        start, end = self.char_span(src, i, j)
        phrase = src.text[start:src.spans[j][1]]
        if NOT_IN_ANCHORS.search(phrase) or part_of_identifier(src.text, start, end):
            return False
        touching = [(a, b) for a, b in src.code if a < end and start < b]
        whole_code = len(touching) == 1 and touching[0] == (start, end)
        if touching and not whole_code:
            return False
        content = [k for k in range(i, j + 1) if src.norms[k] not in STOPWORDS]
        if len(content) != 1 or identifier_shaped(src.raw[content[0]]):
            return True
        if whole_code:  # `CharField`, `VACUUM`, `reverse()` name a thing; `default` is still a common word
            raw = src.raw[content[0]]
            return raw.isupper() or src.text.endswith("()", 0, end) or not is_dictionary_word(raw)
        k = content[0]
        return (evidence in ("link", "term", "title", "slug")
                and not is_dictionary_word(src.raw[k], self.proper)
                and self.word_pages.get(src.norms[k], 0) <= SITE_COMMON_SHARE * self.content_pages)

    def spans(self, src: SourceText, target: Page,
              places: Iterable[tuple[int, int, Name]] | None = None) -> Iterator[tuple[int, int, Name]]:
        """Qualifying spans (first word, last word, name) of the source that name the target, surest first
        (``places``: where the target's names stand in the source, found already by a ``NameTable``)."""
        sentence_of = src.sentence_of
        for i, j, name in self._name_places(src, target) if places is None else places:
            if (sentence_of[j] == sentence_of[i]
                    and self.qualifies(src, i, j, name.evidence)
                    and self._spelled_right(src, i, j, name, target)
                    and self._inflected_right(src, i, j, name, target)):
                yield i, j, name

    def _name_places(self, src: SourceText, target: Page) -> Iterator[tuple[int, int, Name]]:
        """Where the target's names stand in the source (first word, last word, name): by name, surest
        first, then by place; a pair at a time (``NameTable.places`` finds a batch's at once)."""
        norms, positions = src.norms, src.positions
        written = positions.keys()
        # a target's names (11 on average at 10k synthetic pages): those whose first word the source
        # never writes are dropped first (``_unpacked``'s ``written``: never made as names), the rest
        # looked for one by one
        for name in self.names(target, written):
            key = name.words
            last = len(key) - 1
            if last and key[last] not in written:  # a name's last word the source never writes
                continue
            for i in positions[key[0]]:
                j = i + last
                if last and (j >= len(norms) or norms[i + 1] != key[1] or tuple(norms[i:j + 1]) != key):
                    continue
                yield i, j, name

    def _inflected_right(self, src: SourceText, i: int, j: int, name: Name, target: Page) -> bool:
        """Only the last word of a name may take a plural the target's names do not write: "stale
        breads" names the stale-bread page, "stales bread" (the verb) does not."""
        if name.evidence == "term":
            return True
        raw, norms = src.raw, src.norms
        inflected = [word for word, norm in ((folded(raw[k]), norms[k]) for k in range(i, j)) if word != norm]
        if not inflected:
            return True
        written = self._written.get(target.url)
        if written is None:
            texts = [self.title_of(target), target.h1, target.url, *self.spellings.get(target.url, ())]
            written = self._written[target.url] = {folded(bare(m.group()))
                                                   for text in texts for m in WORD.finditer(text or "")}
        return all(word in written for word in inflected)

    def numbered_spans(self, src: SourceText, target: Page) -> Iterator[tuple[int, int, Name]]:
        """"Section 38.16.3" (or Chapter, Appendix, Part) when the target's title starts with "38.16.";
        looked for only in a source that writes one of those words, towards a target whose title or
        h1 holds a digit (its clean title, or its h1, is cut from them)."""
        if not src.writes_reference or not (
                _DIGIT.search(target.title or "") or _DIGIT.search(target.h1 or "")):
            return
        m = NUMBERED.match(self.title_of(target) or target.title)
        if not m:
            return
        number = m.group(1)
        name = Name(("section", number), "title", EVIDENCE_ORDER["title"] + 0.2)
        for word in REFERENCE_WORDS:
            for i in src.positions.get(word, ()):
                j = i + 1
                if (j < len(src.norms) and src.sentence_of[j] == src.sentence_of[i]
                        and (src.raw[j].rstrip(".") == number or src.raw[j].startswith(number + "."))
                        and self.qualifies(src, i, j, "title")):
                    yield i, j, name

    def _spelled_right(self, src: SourceText, i: int, j: int, name: Name, target: Page) -> bool:
        """A link name must be written as the site's links write it when they write it as a code name or
        a constant: `Func` the class is not `func` the argument, the `DEBUG` setting is not "debug
        logging". A name the links write as plain words matches in any case, in prose."""
        if name.evidence != "link":
            return True
        start, end = self.char_span(src, i, j)
        phrase = src.text[start:end]
        in_code = any(a < end and start < b for a, b in src.code)
        spellings, plain = self._link_spellings(target.url, name.words)
        if phrase in spellings:
            return True
        return not in_code and plain

    def _link_spellings(self, url: str, key: tuple[str, ...]) -> tuple[frozenset[str], bool]:
        """The spellings the links to ``url`` give the name ``key``, and whether one of them is plain
        words (not a code name or a constant): kept for the last ``SPELLINGS_KEPT`` pairs asked for (a
        name stands at several places of a source, and a target is in many sources' rows)."""
        found = self._spelled.get((url, key))
        if found is None:
            spellings = frozenset(s for s in self.spellings.get(url, ()) if _key_of(s) == key)
            found = spellings, any(s[1:] == s[1:].lower() and not identifier_shaped(s) for s in spellings)
            if len(self._spelled) >= SPELLINGS_KEPT:
                self._spelled.clear()
            self._spelled[url, key] = found
        return found

    def source(self, page: Page) -> SourceText:
        return self.sources([page])[0]

    def sources(self, pages: Sequence[Page], table: NameTable | None = None) -> list[SourceText]:
        """The running texts of ``pages`` (``source_texts``), each link blocking as ``linked`` says
        (``table``: with their words' ids there)."""
        linked = [self.linked.get(page.url, set()) for page in pages]
        return source_texts(pages, linked, self.aliases, table)

    def choose(self, source_url: str, suggestions: Sequence[Suggestion], src: SourceText | None = None,
               places: Mapping[str, list[tuple[int, int, Name]]] | None = None) -> None:
        """Set anchor, anchor_type, context and the anchor's parts on a source's suggestions, best first
        (``src``: the source's running text, when made already; ``places``: by target URL, where its
        names stand in the source, when found already: ``NameTable.places``)."""
        if src is None:
            src = self.source(self.pages[source_url])
        for s in sorted(suggestions, key=lambda s: (-s.score, s.target_url)):
            target = self.pages[s.target_url]
            found = places.get(s.target_url, ()) if places is not None else None
            if not self._choose_text(src, s, target, found) and self.allow_title:
                self._choose_title(src, s, target)

    def _choose_text(self, src: SourceText, s: Suggestion, target: Page,
                     places: Iterable[tuple[int, int, Name]] | None = None) -> bool:
        for i, j, name in itertools.chain(self.spans(src, target, places), self.numbered_spans(src, target)):
            span = self.char_span(src, i, j)
            phrase = src.text[span[0]:span[1]]
            if (phrase.lower() in src.used_phrases or _overlaps(span, src.blocked)
                    or _overlaps(span, src.used)):
                continue
            context = context_of(src.text, src.bounds, *span)
            if only_names(context, phrase) or self.another_name_around(src, i, j, target.url):
                continue
            src.used.append(span)
            src.used_phrases.add(phrase.lower())
            s.anchor, s.anchor_type = phrase, "text"
            s.context = context
            s.evidence = name.evidence
            s.paragraph = src.block_of[i]
            content = [k for k in range(i, j + 1) if src.norms[k] not in STOPWORDS]
            s.parts["anchor_words"] = float(len(content))
            s.parts["anchor_commonness"] = round(min(zipf(src.raw[k]) for k in content) / 8.0, 6)
            s.parts["anchor_in_code"] = float(any(a < span[1] and span[0] < b for a, b in src.code))
            s.parts["list_item"] = float(src.block_kind(i) == "list_item")
            key = tuple(src.norms[i:j + 1])
            member = _member_shaped(src, span)
            s.parts["name_uses"] = float(self.name_uses.get(target.url, Counter()).get(key, 0))
            s.parts["link_probability"] = round(self.link_probability(key), 6)
            s.parts["phrase_pages"] = float(self.occurrences.get(key, 0))
            s.parts["plain_words"] = float(member or plain_english(src, i, j))
            owners = self.owners(target).get(phrase.removesuffix("()"), set()) if member else set()
            s.parts["class_member"] = float(bool(owners))
            around = (src.block_text(i), self.pages[s.source_url].title)
            s.parts["class_named"] = float(any(re.search(rf"\b{re.escape(o)}\b", text)
                                               for o in owners for text in around))
            return True
        return False

    def _choose_title(self, src: SourceText, s: Suggestion, target: Page) -> None:
        options = [short_title(self.title_of(target)), short_title(target.h1),
                   short_title(" ".join(url_words(target.url))), short_title(self.title_of(target), 12)]
        for phrase in options:
            if phrase and phrase.lower() not in src.used_phrases:
                break
        else:
            phrase = f"{options[0]} ({s.target_url})"
        src.used_phrases.add(phrase.lower())
        s.anchor, s.anchor_type, s.context = phrase, "title", ""


@dataclass
class _FoldLinks:
    """A fold's in-content links as columns, and which of them it hides."""

    source: np.ndarray
    target: np.ndarray
    anchor: np.ndarray
    gone: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=bool))


def _pair_counts(first: np.ndarray, second: np.ndarray) -> tuple[list[int], list[int], list[int]]:
    """The distinct (first, second) pairs of two columns, with how often each comes."""
    width = int(second.max(initial=-1)) + 1
    keys, counts = np.unique(first.astype(np.int64) * max(width, 1) + second, return_counts=True)
    return (keys // max(width, 1)).tolist(), (keys % max(width, 1)).tolist(), counts.tolist()


class _Uses(Mapping[tuple[str, ...], int]):
    """Links per name, read from a count per name number (``anchor_counts``' first count)."""

    def __init__(self, counts: np.ndarray, number: Mapping[tuple[str, ...], int]) -> None:
        self._counts, self._number = counts, number

    def __getitem__(self, key: tuple[str, ...]) -> int:
        return int(self._counts[self._number[key]])

    def __iter__(self) -> Iterator[tuple[str, ...]]:
        return iter(self._number)

    def __len__(self) -> int:
        return len(self._number)


class _LinkedWithout:
    """The pages each source links (``TargetsBySource`` or a dict of sets) less some (hidden) ones."""

    def __init__(self, linked: Mapping[str, set[str]] | TargetsBySource, hidden: Mapping[str, set[str]]):
        self._linked, self._hidden = linked, hidden

    def get(self, source: str, default: set[str] | None = None) -> set[str] | None:
        found = self._linked.get(source)
        if found is None:
            return default
        found = set(found) - self._hidden.get(source, set())
        return found or default

    def __getitem__(self, source: str) -> set[str]:
        return self.get(source) or set()


def anchor_counts(links: Iterable[Link]) -> AnchorCounts:
    """How often each in-content anchor text (normalised words) is used, in all and per target URL."""
    uses: Counter[tuple[str, ...]] = Counter()
    per_target: dict[str, Counter[tuple[str, ...]]] = defaultdict(Counter)
    keys: dict[str, tuple[str, ...]] = {}  # a site reuses its anchor texts: each is split once
    if isinstance(links, LinkTable):  # each distinct (anchor, target) once, with its number of links
        texts, urls = links.anchors, links.urls
        groups: Iterable[tuple[str, str, int]] = (
            (texts[a], urls[t], n) for a, t, n in zip(*links.anchor_groups(skip_self=True), strict=True))
    else:
        groups = ((anchor, target, 1) for source, target, anchor in content_uses(links) if source != target)
    for anchor, target, n in groups:
        if not anchor:
            continue
        key = keys.get(anchor)
        if key is None:
            key = tuple(words(anchor))
            content = [w for w in key if w not in STOPWORDS]
            if not content or len(key) > MAX_WORDS or all(w in WEAK_WORDS for w in content):
                key = ()
            keys[anchor] = key
        if not key:
            continue
        uses[key] += n
        per_target[target][key] += n
    return uses, per_target


def link_names(links: Iterable[Link], min_commonness: float = MIN_COMMONNESS,
               min_uses: int = 1) -> dict[str, list[tuple[str, ...]]]:
    """Per target URL, the anchor texts in-content links already give it, as normalised words.

    Ordered surest first: by commonness (the share of the anchor's uses that point to
    this target), then by how often, then longer first. Anchors made only of stopwords
    or weak words, longer than ``MAX_WORDS``, pointing here in under ``min_commonness``
    of their uses, or by fewer than ``min_uses`` links, are left out.
    """
    return names_from_counts(*anchor_counts(links), min_commonness, min_uses)


def names_from_counts(uses: Counter[tuple[str, ...]], per_target: dict[str, Counter[tuple[str, ...]]],
                      min_commonness: float = MIN_COMMONNESS, min_uses: int = 1
                      ) -> dict[str, list[tuple[str, ...]]]:
    """``link_names`` from ``anchor_counts``' two counts."""
    names: dict[str, list[tuple[str, ...]]] = {}
    for target, counts in per_target.items():
        ranked = sorted(counts.items(), key=lambda kv: (-kv[1] / uses[kv[0]], -kv[1], -len(kv[0]), kv[0]))
        names[target] = [key for key, n in ranked if n / uses[key] >= min_commonness and n >= min_uses]
    return names


def add_anchors(crawl: Crawl, suggestions: Sequence[Suggestion], finder: AnchorFinder | None = None,
                allow_title: bool = False, workers: int = 1) -> None:
    """Choose the anchor of every suggestion (one without keeps anchor ""): ``anchored_rows`` on the
    rows' pool, its choices set on the caller's rows."""
    finder = finder or AnchorFinder(crawl, allow_title)
    for position, row in choose_anchors(Pool.from_rows(suggestions), finder, workers).pairs():
        s = suggestions[position]
        s.anchor, s.anchor_type, s.context = row.anchor, row.anchor_type, row.context
        s.evidence, s.paragraph = row.evidence, row.paragraph
        s.parts.update(row.parts)


def anchored_rows(pool: Pool, finder: AnchorFinder, workers: int = 1) -> list[Suggestion]:
    """The pool's pairs that get an anchor, as rows in pool order. The rows are made one source at a
    time, so the pairs without an anchor (most of them) never become rows; with
    ``background.worth_a_fork`` (enough sources, ``workers`` above 1) the sources are shared in chunks
    with a forked second process (a source's anchors depend on it alone), and only the anchored rows
    come back."""
    return choose_anchors(pool, finder, workers).rows()


class ChosenAnchors:
    """The anchored rows as the anchoring left them: each chunk's (position in the pool, row) pairs,
    in the files ``background.in_chunks`` saved them to when two processes chose them. A caller
    that lets the finder and the pool go before ``rows`` reads them back has the rows take the
    memory those held."""

    def __init__(self, parts: Sequence[list[tuple[int, Suggestion]]]) -> None:
        self._parts: Sequence[list[tuple[int, Suggestion]]] | None = parts

    def pairs(self) -> list[tuple[int, Suggestion]]:
        """(position in the pool, row) of each anchored pair, in pool order (read once: their files
        go then)."""
        if self._parts is None:
            raise RuntimeError("the anchored rows were read already")
        found = [pair for part in self._parts for pair in part]
        self._parts = None
        found.sort(key=operator.itemgetter(0))
        return found

    def rows(self) -> list[Suggestion]:
        """The rows, in pool order (read once)."""
        return [row for _, row in self.pairs()]


def target_names(pool: Pool, finder: AnchorFinder, workers: int = 1) -> NameTable:
    """The names of every target in ``pool``, as a ``NameTable`` to find a batch's at once. Made here,
    before a second process shares the anchoring: made once and shared with it, where each process made
    (and kept) them again for the targets of its own sources, nearly all of them (100k synthetic pages:
    ~12 s of CPU and ~0.14 GB a process). A site's finder makes them on both cores when ``workers``
    allow (``_names_in_two``: a million synthetic pages, ~100 s of one core while the other idled)."""
    targets = [finder.pages[url] for url in (pool.urls[n] for n in np.unique(pool.targets).tolist())
               if url in finder.pages]
    if finder._names_of_site is None and background.worth_a_fork(len(targets), workers):
        _names_in_two(finder, targets)
    kinds, kept = _EVIDENCE_KIND_NUMBER, finder._names

    def names(target: Page) -> Iterable[tuple[Sequence[str], int]]:
        """The target's names, those made already read from their packed string (no ``Name`` made)."""
        packed = kept.get(target.url)
        if isinstance(packed, str):
            return ((part[1:].split(_WORDS_APART), int(part[0])) for part in packed.split(_NAMES_APART)
                    if part)
        return ((name.words, kinds[name.evidence]) for name in finder.names(target))

    return NameTable((target.url, names(target)) for target in targets)


def _names_in_two(finder: AnchorFinder, targets: Sequence[Page]) -> None:
    """``finder.names`` of each of ``targets`` (a site's finder: each target's names kept in its own
    ``_names``), made in chunks shared with a forked second process; the packed names the second
    process made are merged into this one's, the same names for each target as one process keeps (a
    look-up by URL: the order it was filled in is no matter)."""

    def made(part: Sequence[Page]) -> list[tuple[str, str | list[Name]]]:
        for target in part:
            finder.names(target)
        return [(target.url, finder._names[target.url]) for target in part]

    for part in in_chunks(made, targets, chunk=max(256, len(targets) // 64), name="ls-target-names"):
        finder._names.update(part)


def choose_anchors(pool: Pool, finder: AnchorFinder, workers: int = 1) -> ChosenAnchors:
    """Anchors for the pool's pairs (``anchored_rows``), their rows not read back yet; the sources are
    taken in page order, the order the loader keeps their blocks in, a batch at a time: their texts
    made together, the places where their targets' names stand found together (``NameTable``)."""
    order, bounds = pool.by_source()
    groups = range(len(bounds) - 1)
    bar = progress(len(groups), "anchors", "page") if groups else None
    fork = background.worth_a_fork(len(groups), workers, background.SPLIT_MIN_SOURCES)
    table = target_names(pool, finder, workers if fork else 1)

    def choose(part: Sequence[int]) -> list[tuple[int, Suggestion]]:
        found: list[tuple[int, Suggestion]] = []
        for first in range(0, len(part), SOURCE_BATCH):
            batch = [order[bounds[group]:bounds[group + 1]] for group in part[first:first + SOURCE_BATCH]]
            rows_of = [pool.rows(positions) for positions in batch]
            texts = finder.sources([finder.pages[rows[0].source_url] for rows in rows_of], table)
            targets = [[s.target_url for s in rows] for rows in rows_of]
            places = table.places([src.name_ids for src in texts], targets)
            names = _BatchNames(table)
            for positions, rows, src, urls, at in zip(batch, rows_of, texts, targets, places, strict=True):
                finder.choose(rows[0].source_url, rows, src,
                              {url: _Places(where, names) for url, where in zip(urls, at, strict=True)})
                found.extend((p, s) for p, s in zip(positions.tolist(), rows, strict=True) if s.anchor)
        if bar is not None:
            bar.update(len(part))
        return found

    parts = _shared(choose, groups, workers, min_items=background.SPLIT_MIN_SOURCES)
    if bar is not None:
        bar.close()
    return ChosenAnchors(parts)


_EVIDENCE_KIND_NUMBER = {kind: number for number, kind in enumerate(EVIDENCE_KINDS)}


def _table_name(table: NameTable, number: int) -> Name:
    """Name ``number`` of ``table`` as the finder's ``names`` makes it."""
    words, kind = table.name(number)
    evidence = EVIDENCE_KINDS[kind]
    return _new_tuple(Name, (words, evidence, _rank(evidence, len(words))))


class _BatchNames(dict[int, Name]):
    """A batch of sources' names, each made from its table once (``_table_name``) when first read: a
    target's names stand at many places, in many of the batch's sources."""

    __slots__ = ("_table",)

    def __init__(self, table: NameTable) -> None:
        super().__init__()
        self._table = table

    def __missing__(self, number: int) -> Name:
        name = self[number] = _table_name(self._table, number)
        return name


class _Places:
    """Where a target's names stand in a source (first word, last word, name), the names made only as
    the anchor search reads them: it stops at the first place that qualifies."""

    __slots__ = ("_names", "_where")

    def __init__(self, where: Sequence[tuple[int, int, int]], names: _BatchNames) -> None:
        self._where, self._names = where, names

    def __iter__(self) -> Iterator[tuple[int, int, Name]]:
        names = self._names
        for i, j, n in self._where:
            yield i, j, names[n]
