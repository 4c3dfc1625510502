"""``suggest``: the whole ranking in memory — what ``run`` and the evaluation call."""

from __future__ import annotations

import time
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path

from postprocess.anchors import AnchorFinder, add_anchors
from postprocess.candidates import Suggestion, find_candidates
from postprocess.embed import Embedder, Embeddings, embed_pages, load_model
from postprocess.index import PageIndex, build_index
from postprocess.load import Crawl, require_linkable
from postprocess.options import Options


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

    def by_source(self) -> dict[str, list[Suggestion]]:
        """Suggestions per source page, in rank order."""
        groups: dict[str, list[Suggestion]] = defaultdict(list)
        for s in self.rows:
            groups[s.source_url].append(s)
        return {url: sorted(group, key=lambda s: s.rank) for url, group in groups.items()}


def suggest(crawl: Crawl, options: Options | None = None, model: Embedder | None = None, *,
            embeddings: Embeddings | None = None, index: PageIndex | None = None,
            cache_dir: str | Path | None = None, anchors: bool = True,
            anchor_finder: AnchorFinder | None = None) -> Suggestions:
    """Rank internal-link suggestions for ``crawl``.

    ``embeddings`` / ``index`` skip those steps (they depend on pages only, so one
    embedding serves many calls with altered links); ``model`` None loads the bundled
    model when embedding is needed; ``anchors`` False leaves anchor fields empty.
    """
    options = options or Options()
    require_linkable(crawl)
    timings: dict[str, float] = {}
    if embeddings is None:
        started = time.perf_counter()
        model = model or load_model(None, options.prefix)
        timings["model"] = time.perf_counter() - started
        started = time.perf_counter()
        embeddings = embed_pages(crawl, model, options, cache_dir=cache_dir)
        timings["embed"] = time.perf_counter() - started
    if index is None:
        started = time.perf_counter()
        index = build_index(embeddings.urls, embeddings.vectors, options.trees)
        timings["index"] = time.perf_counter() - started
    started = time.perf_counter()
    rows, cannibal, rejected = find_candidates(crawl, embeddings, index, options)
    timings["rank"] = time.perf_counter() - started
    if anchors:
        started = time.perf_counter()
        add_anchors(crawl, rows, anchor_finder)
        timings["anchors"] = time.perf_counter() - started
    stats = {"pages": len(crawl.pages), "embedded_pages": len(embeddings.urls), "suggestions": len(rows),
             "sources": len({s.source_url for s in rows}), "near_duplicates": len(cannibal)}
    return Suggestions(rows, cannibal, rejected, {k: round(v, 3) for k, v in timings.items()}, stats,
                       embeddings, index)
