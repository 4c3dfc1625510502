"""Every threshold of the postprocess stage, with its default (the README's options table)."""

from __future__ import annotations

import argparse
from dataclasses import dataclass, fields


@dataclass(frozen=True)
class Options:
    """Thresholds and switches; each field is also a command-line option (``--per-source`` …)."""

    # embedding
    max_chunks: int = 8  # chunks of max_seq_length tokens embedded per page (the rest is ignored)
    chunk_overlap: int = 32  # tokens shared by consecutive chunks
    title_weight: float = 0.3  # page vector = title_weight·title + (1 − title_weight)·mean(chunks)
    batch_size: int = 32  # texts per model call
    prefix: str | None = None  # text put before every input; None = the model table's choice
    encoder: str = "transformer"  # "static": a model2vec model distilled from --model (fast, less recall)
    device: str = "auto"  # auto (CUDA when torch sees one, else the CPU) | cpu | cuda
    # index
    trees: int = 50  # Annoy trees (more: better recall, bigger index)
    search_k: int = -1  # Annoy search_k (-1: trees × neighbours)
    neighbours: int = 50  # nearest pages looked at per source
    # filters
    min_score: float = 0.5  # pairs whose combined score is below this are dropped
    max_similarity: float = 0.95  # pairs above it are near duplicates: cannibalisation report
    per_source: int = 5  # suggestions per source page
    per_target: int = 20  # new inbound suggestions per target page (greedy, best first)
    content_links_only: bool = False  # only links in the main content count as existing
    allow_cross_language: bool = False  # keep pairs whose pages have different languages
    date_decay_days: float = 0.0  # half-life in days of a dated source's score (0 = off)
    exclude_thin_sources: bool = False  # thin pages are never targets; also never sources if set
    listing_targets: bool = False  # listing pages (archives, blog index) may receive links
    # precision
    min_confidence: float = 0.5  # rows whose confidence (editors' link probability) is lower are dropped
    min_passage: float = 0.2  # rows whose anchor paragraph is less similar to the target are dropped
    # plain words or a member name that the site links on fewer of the pages that use it: not queued
    min_link_probability: float = 0.15
    unnamed_members: bool = False  # keep a class's member (save()) in a paragraph that names no such class
    title_anchors: bool = False  # keep pairs without a qualifying phrase, with the target's title to write in
    # run
    workers: int = 0  # processes: 0 = one per core (two are used), 1 = everything in one process


DEVICES = ("auto", "cpu", "cuda")
OPTION_FIELDS = tuple(f.name for f in fields(Options))

#: One line of help per option (argparse and the README's options table).
HELP: dict[str, str] = {
    "max_chunks": "chunks of the model's max_seq_length tokens embedded per page; the rest of a long page "
                  "is not embedded",
    "chunk_overlap": "tokens shared by consecutive chunks",
    "title_weight": "weight of the title (+h1) vector in the page vector; the mean of the chunk vectors "
                    "has the rest",
    "batch_size": "texts per model call",
    "prefix": "text put before every input (default: by model name, e.g. 'query: ' for e5, none for MiniLM)",
    "device": "where the transformer runs: auto (CUDA when torch sees a GPU, else the CPU), cpu or cuda; "
              "on a GPU in half precision with batches of at least 256 texts",
    "encoder": "transformer (the model itself) or static: a model2vec table distilled once from it into "
               "OUT/cache/static-<model>/ and reused, pages cut into 256-word chunks; about 70x faster "
               "embedding on a CPU, finds a few percent fewer links",
    "trees": "Annoy trees: more find neighbours more surely, and build a bigger index",
    "search_k": "Annoy search_k per query (-1: trees × neighbours)",
    "neighbours": "nearest pages looked at per source page",
    "min_score": "pairs with a lower combined score are dropped",
    "max_similarity": "pairs with a higher similarity are near duplicates: cannibalisation.csv, "
                      "not the queue",
    "per_source": "suggestions per source page",
    "per_target": "new inbound suggestions per target page, given best first",
    "content_links_only": "only links in the main content count as existing (a nav link does not block a "
                          "suggestion)",
    "allow_cross_language": "keep pairs of pages in different languages",
    "date_decay_days": "half-life in days applied to a source page's score by its published date (old news "
                       "sinks); 0 = off",
    "exclude_thin_sources": "thin pages give no suggestions either (they never receive any)",
    "listing_targets": "listing pages (tag, category, author and date archives, blog index) may receive "
                       "links",
    "min_confidence": "rows with a lower confidence (the probability, learned from the site's own links, "
                      "that its editors would make the link) are dropped; 0 keeps every row",
    "min_passage": "rows whose anchor paragraph has a lower cosine with the target page are dropped",
    "min_link_probability": "rows whose anchor is plain English words or a lower-case member name (save()) "
                            "that the site links on a smaller share of the pages using it are left out "
                            "of the queue; 0 keeps them",
    "unnamed_members": "keep rows whose anchor is a member the target documents under a class (save() of "
                       "Model) in a paragraph that names none of those classes",
    "title_anchors": "keep pairs with no qualifying phrase in the source, the target's title to write in "
                     "(anchor_type title)",
    "workers": "processes: with 2 or more the site's confidence model is learned in a second process "
               "while the first ranks and anchors (0: one per core this machine gives the run; 1: one "
               "process)",
}


def validate(options: Options) -> None:
    """One-line InputError for a threshold out of range."""
    from postprocess.errors import InputError

    positive = ("max_chunks", "batch_size", "trees", "neighbours", "per_source", "per_target")
    for name in positive:
        if getattr(options, name) < 1:
            raise InputError(f"--{name.replace('_', '-')} must be at least 1, not {getattr(options, name)}")
    if options.workers < 0:
        raise InputError(f"--workers must be 0 (one per core) or more, not {options.workers}")
    if options.device not in DEVICES:
        raise InputError(f"--device must be one of {', '.join(DEVICES)}, not {options.device!r}")
    if options.encoder not in ("transformer", "static"):
        raise InputError(f"--encoder must be transformer or static, not {options.encoder!r}")
    if options.chunk_overlap < 0:
        raise InputError("--chunk-overlap must not be negative")
    if not 0.0 <= options.title_weight <= 1.0:
        raise InputError(f"--title-weight must be between 0 and 1, not {options.title_weight}")
    # min_score cuts the combined score (similarity plus lexical and name evidence, which can
    # pass 1: evaluate suggests cuts near 2 for "surest links only"), so it has no upper bound.
    if options.min_score < -1.0:
        raise InputError(f"--min-score must be at least -1, not {options.min_score}")
    if not -1.0 <= options.max_similarity <= 1.0:
        raise InputError(f"--max-similarity must be between -1 and 1, not {options.max_similarity}")
    if not 0.0 <= options.min_confidence <= 1.0:
        raise InputError(f"--min-confidence must be between 0 and 1, not {options.min_confidence}")
    if not 0.0 <= options.min_link_probability <= 1.0:
        raise InputError("--min-link-probability must be between 0 and 1, "
                         f"not {options.min_link_probability}")
    if not -1.0 <= options.min_passage <= 1.0:
        raise InputError(f"--min-passage must be between -1 and 1, not {options.min_passage}")
    if options.date_decay_days < 0:
        raise InputError("--date-decay-days must not be negative (0 = off)")


def options_from(args: argparse.Namespace) -> Options:
    """The Options of a parsed command line, validated."""
    options = Options(**{f.name: getattr(args, f.name) for f in fields(Options) if hasattr(args, f.name)})
    validate(options)
    return options
