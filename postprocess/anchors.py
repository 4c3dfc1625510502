"""Anchor phrases: words that already stand in the source page and best name the target.

For each suggestion the source's main text is searched for spans of 1–6 words that
start and end with a word of the target's profile — its clean title and h1 (weight 1),
URL slug (0.8), headings (0.5) and the 30 most distinctive words of its text (0.3);
name words shared by many page names ("release notes", "source code") are weighted
down by their rarity among names — and lie within one sentence, outside every
occurrence of an existing link's anchor text, with no code punctuation. A span
scores Σ weight·idf of the target words it holds, times the share of its content
words that are target words (so longer spans win only when every word fits), ×1.5
when it is the target's whole title or h1. The best span is the anchor, exactly as
it stands in the source, and its sentence is the context. With no span scoring at
least ``MIN_GAIN`` the anchor is the target's title, cut to six words
(``anchor_type`` "title"). Per source, suggestions are served best first and an
anchor phrase or a stretch of text is used once.
"""

from __future__ import annotations

import bisect
import itertools
import math
import re
from collections import Counter, defaultdict
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field

from postprocess.candidates import Suggestion
from postprocess.load import Crawl, Link, Page
from postprocess.output import progress
from postprocess.titles import clean_title, site_title_parts

WORD = re.compile(r"\w+(?:[-'’.]\w+)*")
#: A phrase holding one of these is code or a list, not words to wrap in a link.
NOT_IN_ANCHORS = re.compile(r"[\n()\[\]{}<>=;,\"|\\*`#@$%]")
SENTENCE_END = re.compile(r"(?<=[.!?])\s+|\n+")
MAX_WORDS = 6
MIN_COMMONNESS = 0.5  # an anchor text names a target when at least this share of its uses point there
MIN_GAIN = 0.1  # weight·idf a span must reach (Django docs: 0.5 left 8% of rows on titles, 0.1 3%)
TITLE_BONUS = 1.5
TEXT_TERMS = 30  # distinctive words of the target's text in its profile
MIN_SPECIFICITY = 0.25  # floor of a name word's weight factor when many pages share it
CONTEXT_CHARS = 300
BLOCKING_POSITIONS = frozenset({"content", "other"})


def _stopwords() -> frozenset[str]:
    from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS

    return frozenset(ENGLISH_STOP_WORDS)


STOPWORDS = _stopwords()


def normalise(word: str) -> str:
    """Lower case and a light plural strip, so "queries" meets "query" and "models" "model"."""
    w = word.lower().replace("’", "'")
    if len(w) > 4 and w.endswith("ies"):
        return w[:-3] + "y"
    if len(w) > 3 and w.endswith("s") and not w.endswith("ss"):
        return w[:-1]
    return w


#: Words that name no page on their own: a span made only of these is not an anchor
#: ("new", "guide", "release notes"), though they may stand inside one ("Django 3.2 release notes").
WEAK_WORDS = frozenset(normalise(w) for w in (
    "about advanced api basic basics best code contents doc docs documentation example examples explained "
    "extra faq fixed general good guide guides help home how index info introduction list matter more new "
    "note notes overview page part quick recipe reference release simple source tip tips topic topics "
    "tutorial use using version").split())


def words(text: str) -> list[str]:
    """Normalised words of ``text``."""
    return [normalise(m.group()) for m in WORD.finditer(text or "")]


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


@dataclass
class SourceText:
    """A source page's words with their places, sentences and the stretches it may not use."""

    text: str
    spans: list[tuple[int, int]]  # character span of each word
    norms: list[str]
    sentence_of: list[int]  # sentence number of each word
    positions: dict[str, list[int]]  # normalised word -> word numbers
    blocked: list[tuple[int, int]]  # character spans inside existing anchors
    bounds: list[int]  # character offset where each sentence ends
    used: list[tuple[int, int]] = field(default_factory=list)  # spans given to earlier anchors
    used_phrases: set[str] = field(default_factory=set)


def blocked_spans(text: str, anchor_texts: Iterable[str], raw: Sequence[str] | None = None,
                  spans: Sequence[tuple[int, int]] | None = None) -> list[tuple[int, int]]:
    """Every occurrence (same words, same case) in ``text`` of an existing link's anchor text.

    Matched word by word on the text's words (``raw``/``spans`` from ``WORD``), so a page
    with hundreds of links costs one pass over its words, not one regex scan per anchor.
    """
    if raw is None or spans is None:
        found = list(WORD.finditer(text))
        raw, spans = [m.group() for m in found], [m.span() for m in found]
    starts: dict[str, list[int]] = defaultdict(list)
    for i, word in enumerate(raw):
        starts[word].append(i)
    blocked: set[tuple[int, int]] = set()
    for anchor in {a for a in anchor_texts if a}:
        needle = WORD.findall(anchor)
        if not needle:
            continue
        n = len(needle)
        for i in starts.get(needle[0], ()):
            if list(raw[i:i + n]) == needle:
                blocked.add((spans[i][0], spans[i + n - 1][1]))
    return sorted(blocked)


def source_text(page: Page, anchor_texts: Iterable[str]) -> SourceText:
    """Index a source page's text for anchor search."""
    text = page.text
    bounds = [m.end() for m in SENTENCE_END.finditer(text)]
    spans, norms, sentence_of, raw = [], [], [], []
    positions: dict[str, list[int]] = defaultdict(list)
    sentence = 0
    for m in WORD.finditer(text):
        while sentence < len(bounds) and bounds[sentence] <= m.start():
            sentence += 1
        norm = normalise(m.group())
        positions[norm].append(len(spans))
        spans.append((m.start(), m.end()))
        raw.append(m.group())
        norms.append(norm)
        sentence_of.append(sentence)
    return SourceText(text, spans, norms, sentence_of, dict(positions),
                      blocked_spans(text, anchor_texts, raw, spans), bounds)


def _overlaps(span: tuple[int, int], others: Iterable[tuple[int, int]]) -> bool:
    return any(span[0] < end and start < span[1] for start, end in others)


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


class AnchorFinder:
    """Chooses anchors for suggestions; built once per crawl (word rarity, title cleaning)."""

    def __init__(self, crawl: Crawl) -> None:
        self.pages = {p.url: p for p in crawl.pages}
        self.site_parts = site_title_parts([p.title for p in crawl.pages])
        counts: Counter[str] = Counter()
        self._tf: dict[str, Counter[str]] = {}
        for page in crawl.pages:
            tf = Counter(w for w in words(page.text) if w not in STOPWORDS)
            self._tf[page.url] = tf
            counts.update(tf.keys())
        n = max(1, len(crawl.pages))
        self.idf = {w: math.log((1 + n) / (1 + df)) for w, df in counts.items()}
        # How many pages carry a word in their name (clean title, h1): "release notes" or
        # "source code" name hundreds of pages and say little about any one of them.
        name_df: Counter[str] = Counter()
        for page in crawl.pages:
            name_df.update(set(words(clean_title(page.title, self.site_parts))) | set(words(page.h1)))
        self.specificity = {w: max(MIN_SPECIFICITY, math.log((1 + n) / (1 + df)) / math.log(1 + n))
                            for w, df in name_df.items()}
        self.default_idf = math.log(1 + n)
        self.anchor_texts: dict[str, list[str]] = defaultdict(list)
        for link in crawl.links:
            if link.position in BLOCKING_POSITIONS and link.anchor_text:
                self.anchor_texts[link.source_url].append(link.anchor_text)
        self.link_names = link_names(crawl.links)
        self._profiles: dict[str, tuple[dict[str, float], set[tuple[str, ...]]]] = {}

    def rarity(self, word: str) -> float:
        return self.idf.get(word, self.default_idf)

    def title_of(self, page: Page) -> str:
        return clean_title(page.title, self.site_parts) or page.h1.strip()

    def profile(self, page: Page) -> tuple[dict[str, float], set[tuple[str, ...]]]:
        """Target words with weights, and the target's names (clean title, h1) as word tuples."""
        cached = self._profiles.get(page.url)
        if cached is not None:
            return cached
        weights: dict[str, float] = {}

        def add(items: Iterable[str], weight: float) -> None:
            for w in items:
                if w not in STOPWORDS and not w.isdigit() and len(w) > 1:
                    weights[w] = max(weights.get(w, 0.0), weight)

        tf = self._tf.get(page.url, Counter())
        top = sorted(tf, key=lambda w: -tf[w] * self.rarity(w))[:TEXT_TERMS]
        add(top, 0.3)
        for heading in page.headings:
            add(words(heading), 0.5)
        title = self.title_of(page)
        for name_words, weight in ((url_words(page.url), 0.8), (words(title), 1.0), (words(page.h1), 1.0)):
            for w in name_words:
                add([w], weight * self.specificity.get(w, 1.0))
        names = {tuple(words(title)), tuple(words(page.h1))} - {()}
        self._profiles[page.url] = (weights, names)
        return weights, names

    def best_spans(self, src: SourceText, target: Page) -> list[tuple[float, int, int]]:
        """Candidate spans (score, first word, last word), best first."""
        weights, names = self.profile(target)
        hits = sorted(i for w in weights if w in src.positions for i in src.positions[w])
        scored: dict[tuple[str, ...], float] = {}
        found: list[tuple[float, int, int]] = []
        for a, i in enumerate(hits):
            for j in hits[a:]:
                if j - i >= MAX_WORDS or src.sentence_of[j] != src.sentence_of[i]:
                    break
                key = tuple(src.norms[i:j + 1])
                score = scored.get(key)
                if score is None:
                    score = self._span_score(key, weights, names)
                    scored[key] = score
                if score >= MIN_GAIN:
                    found.append((score, i, j))
        found.sort(key=lambda t: (-t[0], t[1]))
        return found

    def _span_score(self, key: tuple[str, ...], weights: dict[str, float],
                    names: set[tuple[str, ...]]) -> float:
        content = [w for w in key if w not in STOPWORDS]
        if not content or all(w in WEAK_WORDS for w in content):
            return 0.0
        matched = {w for w in content if w in weights}
        gain = sum(weights[w] * self.rarity(w) for w in matched)
        share = sum(1 for w in content if w in weights) / len(content)
        score = gain * share
        return score * TITLE_BONUS if key in names else score

    def choose(self, source_url: str, suggestions: Sequence[Suggestion]) -> None:
        """Set anchor, anchor_type and context on one source's suggestions (best first)."""
        page = self.pages[source_url]
        src = source_text(page, self.anchor_texts.get(source_url, ()))
        for s in sorted(suggestions, key=lambda s: (-s.score, s.target_url)):
            target = self.pages[s.target_url]
            if not self._choose_text(src, s, target):
                self._choose_title(src, s, target)

    def known_name_spans(self, src: SourceText, target: Page) -> Iterator[tuple[int, int]]:
        """Spans (first word, last word) of the source that read exactly like an anchor other pages
        already give the target, the surest names first (see ``link_names``)."""
        for key in self.link_names.get(target.url, ()):
            for i in src.positions.get(key[0], ()):
                j = i + len(key) - 1
                if (j < len(src.norms) and tuple(src.norms[i:j + 1]) == key
                        and src.sentence_of[j] == src.sentence_of[i]):
                    yield i, j

    def _choose_text(self, src: SourceText, s: Suggestion, target: Page) -> bool:
        scored = ((i, j) for _, i, j in self.best_spans(src, target))
        for i, j in itertools.chain(self.known_name_spans(src, target), scored):
            span = (src.spans[i][0], src.spans[j][1])
            phrase = src.text[span[0]:span[1]]
            if (phrase.lower() in src.used_phrases or NOT_IN_ANCHORS.search(phrase)
                    or _overlaps(span, src.blocked) or _overlaps(span, src.used)):
                continue
            src.used.append(span)
            src.used_phrases.add(phrase.lower())
            s.anchor, s.anchor_type = phrase, "text"
            s.context = context_of(src.text, src.bounds, *span)
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


def link_names(links: Iterable[Link],
               min_commonness: float = MIN_COMMONNESS) -> dict[str, list[tuple[str, ...]]]:
    """Per target URL, the anchor texts in-content links already give it, as normalised words.

    Ordered surest first: by commonness (the share of the anchor's uses that point to
    this target), then by how often, then longer first. Anchors made only of stopwords
    or weak words, longer than ``MAX_WORDS``, or pointing here in under
    ``min_commonness`` of their uses are left out.
    """
    uses: Counter[tuple[str, ...]] = Counter()
    per_target: dict[str, Counter[tuple[str, ...]]] = defaultdict(Counter)
    for link in links:
        if link.position != "content" or not link.anchor_text or link.source_url == link.target_url:
            continue
        key = tuple(words(link.anchor_text))
        content = [w for w in key if w not in STOPWORDS]
        if not content or len(key) > MAX_WORDS or all(w in WEAK_WORDS for w in content):
            continue
        uses[key] += 1
        per_target[link.target_url][key] += 1
    names: dict[str, list[tuple[str, ...]]] = {}
    for target, counts in per_target.items():
        ranked = sorted(counts.items(), key=lambda kv: (-kv[1] / uses[kv[0]], -kv[1], -len(kv[0]), kv[0]))
        names[target] = [key for key, n in ranked if n / uses[key] >= min_commonness]
    return names


def add_anchors(crawl: Crawl, suggestions: Sequence[Suggestion], finder: AnchorFinder | None = None) -> None:
    """Choose the anchor of every suggestion, source by source."""
    finder = finder or AnchorFinder(crawl)
    by_source: dict[str, list[Suggestion]] = defaultdict(list)
    for s in suggestions:
        by_source[s.source_url].append(s)
    bar = progress(len(by_source), "anchors", "page") if by_source else None
    for source_url, group in by_source.items():
        finder.choose(source_url, group)
        if bar is not None:
            bar.update(1)
    if bar is not None:
        bar.close()
