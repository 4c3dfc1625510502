"""``suggest``: the whole ranking in memory — what ``run`` and the evaluation call.

candidates (index neighbours and lexical evidence, filters, a pool of
``POOL_FACTOR`` × the caps) → anchors (a phrase in the source's running text
that names the target; rows without one leave) → passage check (the anchor's
paragraph against the target) → confidence (learned from the site's own links)
→ the cut at ``--min-confidence`` → the per-source and per-target caps, most
confident first.
"""

from __future__ import annotations

import contextlib
import time
from collections import Counter, defaultdict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from postprocess.background import Background, available_workers
from postprocess.options import Options
from postprocess.stages.anchors import AnchorFinder, choose_anchors
from postprocess.stages.candidates import PairFilter, Suggestion, apply_caps, find_candidates
from postprocess.stages.confidence import ConfidenceModel, learn, queue_reason
from postprocess.stages.embed import Embedder, Embeddings, embed_pages, load_model, page_encoder
from postprocess.stages.index import PageIndex, build_index
from postprocess.stages.load import Crawl, require_linkable
from postprocess.stages.passages import PassageVectors, add_passage_scores
from postprocess.stages.scoring import Evidence
from postprocess.stages.suggestions import Pool

#: The pool anchors and confidence choose from: this many times the per-source and per-target caps.
POOL_FACTOR = 3


@dataclass
class Suggestions:
    """The review queue (best first) with the near-duplicate pairs and what the run did."""

    rows: list[Suggestion]
    cannibalisation: list[Suggestion]
    rejected: Counter[str] = field(default_factory=Counter)
    timings: dict[str, float] = field(default_factory=dict)
    stats: dict[str, float] = field(default_factory=dict)
    embeddings: Embeddings | None = None
    index: PageIndex | None = None
    confidence: ConfidenceModel | None = None

    def by_source(self) -> dict[str, list[Suggestion]]:
        """Suggestions per source page, in rank order."""
        groups: dict[str, list[Suggestion]] = defaultdict(list)
        for s in self.rows:
            groups[s.source_url].append(s)
        return {url: sorted(group, key=lambda s: s.rank) for url, group in groups.items()}


def candidate_pool(crawl: Crawl, embeddings: Embeddings, index: PageIndex, options: Options,
                   evidence: Evidence | None = None, sources: frozenset[str] | None = None,
                   held_back: Mapping[tuple[str, str], str] | None = None,
                   filters: PairFilter | None = None, workers: int = 1,
                   before_caps: Callable[[], None] | None = None,
                   ) -> tuple[Pool, list[Suggestion], Counter[str]]:
    """Filtered, scored pairs as columns, at most POOL_FACTOR × the caps per source and target;
    pairs in ``held_back`` (decided by an editor) are never among them; ``workers`` and
    ``before_caps``: see ``find_candidates``."""
    return find_candidates(crawl, embeddings, index, options,
                           pool_size=POOL_FACTOR * max(options.per_source, 1),
                           pool_targets=POOL_FACTOR * max(options.per_target, 1),
                           evidence=evidence, sources=sources, held_back=held_back, filters=filters,
                           workers=workers, before_caps=before_caps)


def anchor_pool(crawl: Crawl, rows: Pool | Sequence[Suggestion], embeddings: Embeddings,
                passages: PassageVectors, options: Options, rejected: Counter[str] | None = None,
                finder: AnchorFinder | None = None, workers: int = 1,
                before_rows: Callable[[], None] | None = None) -> list[Suggestion]:
    """Rows with a phrase of the source's running text that names the target, about the target
    (``workers``: processes that choose anchors, see ``anchored_rows``). ``before_rows`` is called
    once the anchors are chosen, before their rows are read back (``ChosenAnchors``): a caller that
    lets its finder and pool go there has the rows take the memory they held (this function holds
    neither by then)."""
    rejected = rejected if rejected is not None else Counter()
    pool = rows if isinstance(rows, Pool) else Pool.from_rows(rows)
    rows = ()
    chosen = choose_anchors(pool, finder or AnchorFinder(crawl, options.title_anchors), workers)
    pairs = len(pool)
    finder = pool = None
    if before_rows is not None:
        before_rows()
    anchored = chosen.rows()
    rejected["no_anchor"] += pairs - len(anchored)
    add_passage_scores(crawl, anchored, embeddings, passages, workers)
    kept = [s for s in anchored
            if s.anchor_type != "text" or s.parts.get("passage", 1.0) >= options.min_passage]
    rejected["passage_off_topic"] += len(anchored) - len(kept)
    return kept


def learn_confidence(crawl: Crawl, embeddings: Embeddings, index: PageIndex, passages: PassageVectors,
                     options: Options, finder: AnchorFinder | None = None,
                     evidence: Evidence | None = None) -> ConfidenceModel:
    """The site's confidence model, from pools ranked with a share of its links hidden (``finder``
    and ``evidence``, built for ``crawl``, are reused: each fold's evidence, pair filters and
    finder are the site's less the fold's hidden links, ``without`` them, so that a fold costs what
    its sampled sources and hidden links cost, not a rebuild for the whole site). A fold's sources
    are ranked and anchored in chunks shared with a second process when the run has one to spare
    (``background.worth_a_fork``: not when the model is learned in a child beside the ranking)."""
    finder = finder or AnchorFinder(crawl, options.title_anchors)
    evidence = evidence or Evidence(crawl, embeddings, options.neighbours)
    filters: list[PairFilter] = []  # the site's, made for the first fold: each fold's is it less its links
    # a fold's ranking reads none of the finder's tables: on disk through it, unless this is a child
    # learning beside the ranking (its pages are its parent's too: letting them go frees nothing)
    aside = contextlib.nullcontext if learn_beside(crawl, options) else finder.tables_aside

    def pool(crawl: Crawl, hidden: frozenset[tuple[str, str]], sources: frozenset[str] | None
             ) -> list[Suggestion]:
        if not filters:
            filters.append(PairFilter(crawl, index.urls, options))
        with aside():
            rows, _, _ = candidate_pool(crawl, embeddings, index, options, evidence.without(crawl, hidden),
                                        sources, filters=filters[0].without(hidden), workers=workers(options))
        return anchor_pool(crawl, rows, embeddings, passages, options, finder=finder.without(crawl, hidden),
                           workers=workers(options))

    try:
        return learn(crawl, options, pool)
    finally:
        finder.folds_done()


#: Sites with more pages than this learn their confidence model in the main process before the
#: ranking, not in a forked child beside it: a forked child keeps the pages of the parent's heap
#: that either process then writes (reference counts of the pages, names and texts the ranking
#: reads), a copy that grows with the site (100k synthetic pages: tree PSS 3.12–3.19 GB beside,
#: 2.84–2.87 GB here, for 46–59 s of learning on the way: ~6% of the run, within the machine's
#: noise), while the learning's own cost is that of a fixed sample of sources.
LEARN_BESIDE_MAX_PAGES = 50_000


def learn_beside(crawl: Crawl, options: Options) -> bool:
    """Whether the confidence model is learned in a forked child beside the ranking (two processes,
    a site of at most ``LEARN_BESIDE_MAX_PAGES`` pages), or in this process first."""
    return workers(options) > 1 and len(crawl.pages) <= LEARN_BESIDE_MAX_PAGES


def ranking_workers(options: Options, learning_beside: bool) -> int:
    """Processes that rank the site's sources: the run's, but one while the confidence model is
    learned beside the ranking (three processes on two cores ranked no faster than one: 100k
    synthetic pages, 330 s alone, 393 s split; with the model learned first, 100 s alone, ~70 s
    split)."""
    return 1 if learning_beside else workers(options)


def workers(options: Options) -> int:
    """Processes the run uses: ``--workers``, or one per core when it is 0."""
    return options.workers or available_workers()


def paragraph_workers(options: Options) -> int:
    """Processes that embed new paragraphs (``PassageVectors``): the run's with the static encoder,
    which works on one core; one with the transformer, which takes every core itself."""
    return workers(options) if options.encoder == "static" else 1


def learn_in_background(crawl: Crawl, embeddings: Embeddings, index: PageIndex, passages: PassageVectors,
                         options: Options, finder: AnchorFinder, evidence: Evidence | None
                         ) -> tuple[ConfidenceModel, dict[str, np.ndarray], float]:
    """``learn_confidence``, with the paragraph vectors it held (made without a cache) and its seconds."""
    started = time.perf_counter()
    known = set(passages.vectors)
    model = learn_confidence(crawl, embeddings, index, passages, options, finder, evidence)
    made = {key: vector for key, vector in passages.vectors.items() if key not in known}
    return model, made, round(time.perf_counter() - started, 3)


def queue(rows: Sequence[Suggestion], model: ConfidenceModel, options: Options,
          rejected: Counter[str] | None = None) -> list[Suggestion]:
    """Set each row's confidence, cut at ``min_confidence``, take the caps most confident first."""
    rejected = rejected if rejected is not None else Counter()
    for s, p in zip(rows, model.predict(rows), strict=True):
        s.confidence = round(float(p), 6)
    kept = [s for s in rows if s.confidence >= options.min_confidence]
    rejected["below_min_confidence"] += len(rows) - len(kept)
    reasons = [queue_reason(s, options) for s in kept]
    rejected.update(reason for reason in reasons if reason)
    kept = [s for s, reason in zip(kept, reasons, strict=True) if reason is None]
    kept.sort(key=lambda s: (-s.confidence, -s.score, s.source_url, s.target_url))
    capped = apply_caps(kept, options.per_source, options.per_target)
    rejected["over_cap"] += len(kept) - len(capped)
    return capped


def suggest(crawl: Crawl, options: Options | None = None, model: Embedder | None = None, *,
            embeddings: Embeddings | None = None, index: PageIndex | None = None,
            cache_dir: str | Path | None = None, confidence: ConfidenceModel | None = None,
            passages: PassageVectors | None = None,
            held_back: Mapping[tuple[str, str], str] | None = None) -> Suggestions:
    """Rank internal-link suggestions for ``crawl``.

    ``embeddings`` / ``index`` skip those steps (they depend on pages only, so one
    embedding serves many calls with altered links); ``model`` None loads the bundled
    model when something must be embedded; ``confidence`` None learns the site's model;
    ``held_back`` (pair -> decision state) are pairs editors decided, never proposed again.
    """
    options = options or Options()
    require_linkable(crawl)
    timings: dict[str, float] = {}
    if embeddings is None:
        started = time.perf_counter()
        model = model or load_model(None, options.prefix, options.device)
        timings["model"] = time.perf_counter() - started
        started = time.perf_counter()
        embeddings = embed_pages(crawl, model, options, cache_dir=cache_dir)
        timings["embed"] = time.perf_counter() - started
    if passages is None:  # paragraphs are embedded by the pages' encoder, in the page vectors' space
        def encoder() -> Embedder:
            return page_encoder(model or load_model(None, options.prefix, options.device), options, cache_dir)

        passages = PassageVectors(encoder, cache_dir, model_id=embeddings.model_id,
                                  workers=paragraph_workers(options))
    if index is None:
        started = time.perf_counter()
        index = build_index(embeddings.urls, embeddings.vectors, options.trees)
        timings["index"] = time.perf_counter() - started
    started = time.perf_counter()
    evidence = Evidence(crawl, embeddings, options.neighbours, workers(options))
    timings["rank"] = time.perf_counter() - started
    started = time.perf_counter()
    # the finder's last steps wait for the TF-IDF process to leave: their transients never beside it
    finder = AnchorFinder(crawl, options.title_anchors, workers(options), before_last_steps=evidence.wait)
    timings["anchors"] = time.perf_counter() - started
    started = time.perf_counter()
    evidence.ready()  # its TF-IDF index, made beside the finder: collected before the next fork
    timings["rank"] += time.perf_counter() - started
    learning = None
    if confidence is None:  # independent of the ranking below: on a second core (a small site), or first
        learning = Background(learn_in_background, crawl, embeddings, index, passages, options, finder,
                              evidence, fork=learn_beside(crawl, options))
        if not learning.forked:
            learning.now()
    started = time.perf_counter()
    rows, cannibal, rejected = candidate_pool(
        crawl, embeddings, index, options, evidence, held_back=held_back,
        workers=ranking_workers(options, learning is not None and learning.forked))
    timings["rank"] += time.perf_counter() - started
    started = time.perf_counter()
    rows = anchor_pool(crawl, rows, embeddings, passages, options, rejected, finder, workers(options))
    timings["anchors"] += time.perf_counter() - started
    started = time.perf_counter()
    if learning is not None:
        confidence, made, _ = learning.result()
        passages.adopt(made)
    assert confidence is not None
    rows = queue(rows, confidence, options, rejected)
    timings["confidence"] = time.perf_counter() - started
    stats = {"pages": len(crawl.pages), "embedded_pages": len(embeddings.urls), "suggestions": len(rows),
             "sources": len({s.source_url for s in rows}), "near_duplicates": len(cannibal)}
    return Suggestions(rows, cannibal, rejected, {k: round(v, 3) for k, v in timings.items()}, stats,
                       embeddings, index, confidence)
