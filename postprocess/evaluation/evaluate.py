"""Hidden-link evaluation: how many of the editors' own in-content links does a ranking find again?

The protocol: take every (source, target) pair that the site already links in
its main content (both ends crawled pages, no self links, pairs deduplicated),
hide a seeded random fraction of them — all links of a hidden pair, in any
position, so the pair is not filtered as "already linked" — and let each method
rank suggestions from the pages and the links that are left. A hidden pair is
*found at k* when its target stands among its source's top k suggestions.

Figures per method: recall@k (share of hidden pairs found at k), MRR (mean of
1/rank over hidden pairs, 0 when not in the ranking's top ``depth``) and anchor
agreement: for hidden pairs found in the top 5, the share whose suggested anchor
shares enough words with the editor's anchor text (token-set Jaccard >= 0.5;
the overlap coefficient >= 0.5 is reported beside it).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import re
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any, Protocol

from postprocess.evaluation.rankings import Ranked, Rankings  # noqa: F401 - part of this module's API

#: Default share of the in-content pairs hidden.
DEFAULT_HIDE = 0.2
#: The rankings compared: the pipeline's ranking (every anchored row, most confident first), the
#: default queue (cut at --min-confidence), and the two baselines.
METHODS = ("default", "queue", "plain", "tfidf")
#: Confidence cuts at which the default ranking's recall@5 is shown (``--min-confidence`` candidates).
CURVE_CUTS = (0.1, 0.3, 0.5, 0.7, 0.9)
#: Default cut-offs for recall@k.
DEFAULT_KS = (1, 5, 10)
#: Anchor agreement is measured on hidden pairs found within this many suggestions.
AGREEMENT_K = 5
#: Two anchors agree when their token-set Jaccard (or overlap coefficient) reaches this.
AGREEMENT_CUT = 0.5

_WORD = re.compile(r"\w+")


class LinkLike(Protocol):
    """What evaluation reads from a link row."""

    source_url: str
    target_url: str
    anchor_text: str | None
    position: str | None


Pair = tuple[str, str]


@dataclass
class MethodResult:
    """The figures of one method on one hidden set."""

    method: str
    recall: dict[int, float]
    mrr: float
    anchor_jaccard: float  # share of found pairs (top AGREEMENT_K) with Jaccard >= AGREEMENT_CUT
    anchor_overlap: float  # same with the overlap coefficient
    anchors_judged: int  # hidden pairs found in the top AGREEMENT_K
    threshold: dict[str, float] = field(default_factory=dict)
    seconds: float = 0.0


# --------------------------------------------------------------------------- protocol


def linked_pairs(links: Iterable[LinkLike], page_urls: set[str]) -> dict[Pair, list[str]]:
    """In-content (source, target) pairs between crawled pages, no self links, with their anchor texts."""
    pairs: dict[Pair, list[str]] = {}
    for link in links:
        if link.position != "content":
            continue
        source, target = link.source_url, link.target_url
        if source == target or source not in page_urls or target not in page_urls:
            continue
        anchors = pairs.setdefault((source, target), [])
        text = " ".join((link.anchor_text or "").split())
        if text and text not in anchors:
            anchors.append(text)
    return pairs


def hide_links(
    links: Sequence[LinkLike], page_urls: set[str], fraction: float = DEFAULT_HIDE, seed: int = 0,
    targets: set[str] | None = None,
) -> tuple[list[LinkLike], dict[Pair, list[str]]]:
    """Split ``links`` into the links a method may see and the hidden pairs (with the editors' anchors).

    The sample is drawn from the sorted pairs with ``random.Random(seed)``, so the
    same crawl, fraction and seed always hide the same pairs. Every link of a hidden
    pair is removed, whatever its position. ``targets``, when given, limits the
    pairs to those whose target may receive suggestions at all.
    """
    if not 0 < fraction < 1:
        raise ValueError(f"hide fraction must be between 0 and 1, got {fraction}")
    pairs = linked_pairs(links, page_urls)
    if targets is not None:
        pairs = {pair: anchors for pair, anchors in pairs.items() if pair[1] in targets}
    ordered = sorted(pairs)
    count = round(len(ordered) * fraction)
    chosen = set(random.Random(seed).sample(ordered, count)) if count else set()
    visible = [link for link in links if (link.source_url, link.target_url) not in chosen]
    return visible, {pair: pairs[pair] for pair in ordered if pair in chosen}


# --------------------------------------------------------------------------- metrics


def rank_of(rankings: Rankings, source: str, target: str) -> int | None:
    """1-based rank of ``target`` among ``source``'s suggestions, None when absent."""
    for position, item in enumerate(rankings.get(source, ()), start=1):
        if item.target_url == target:
            return position
    return None


def recall_at_k(rankings: Rankings, hidden: Iterable[Pair], k: int) -> float:
    """Share of hidden pairs whose target is among the source's top ``k`` suggestions."""
    pairs = list(hidden)
    if not pairs:
        return 0.0
    found = 0
    for source, target in pairs:
        rank = rank_of(rankings, source, target)
        found += rank is not None and rank <= k
    return found / len(pairs)


def mean_reciprocal_rank(rankings: Rankings, hidden: Iterable[Pair], depth: int = 10) -> float:
    """Mean of 1/rank over hidden pairs, counting ranks beyond ``depth`` (or absent) as 0."""
    pairs = list(hidden)
    if not pairs:
        return 0.0
    total = 0.0
    for source, target in pairs:
        rank = rank_of(rankings, source, target)
        if rank is not None and rank <= depth:
            total += 1.0 / rank
    return total / len(pairs)


def anchor_tokens(text: str) -> frozenset[str]:
    """Lower-case word tokens of an anchor (punctuation and brackets dropped)."""
    return frozenset(_WORD.findall(text.lower()))


def jaccard(a: str, b: str) -> float:
    """Token-set Jaccard similarity of two anchors (0 when either has no word)."""
    ta, tb = anchor_tokens(a), anchor_tokens(b)
    if not ta or not tb:
        return 0.0
    return len(ta & tb) / len(ta | tb)


def overlap(a: str, b: str) -> float:
    """Token-set overlap coefficient: shared words over the shorter anchor's words."""
    ta, tb = anchor_tokens(a), anchor_tokens(b)
    if not ta or not tb:
        return 0.0
    return len(ta & tb) / min(len(ta), len(tb))


def anchor_agreement(
    rankings: Rankings,
    hidden: Mapping[Pair, Sequence[str]],
    k: int = AGREEMENT_K,
    measure: Callable[[str, str], float] = jaccard,
    cut: float = AGREEMENT_CUT,
) -> tuple[float, int]:
    """Share of hidden pairs found in the top ``k`` whose suggested anchor agrees with an editor's anchor.

    A pair linked several times agrees when any of its editor anchors agrees.
    Returns (share, number of pairs judged).
    """
    agreed = judged = 0
    for (source, target), editor_anchors in hidden.items():
        for item in list(rankings.get(source, ()))[:k]:
            if item.target_url != target:
                continue
            judged += 1
            agreed += any(measure(item.anchor, anchor) >= cut for anchor in editor_anchors)
            break
    return (agreed / judged if judged else 0.0), judged


def suggest_threshold(rankings: Rankings, hidden: Iterable[Pair], depth: int = 10) -> dict[str, float]:
    """A score threshold for the site, from where the hidden links' scores fall among all suggestions.

    Within each source's top ``depth`` suggestions the hidden pairs are positives and
    the rest negatives (they are unlinked today, not necessarily wrong).
    ``f1_cut`` is the score cut that maximises F1 of "score >= cut" against that
    labelling; ``keep_90`` is the score above which 90% of the found hidden links lie.
    """
    wanted = set(hidden)
    scored: list[tuple[float, bool]] = []
    for source, items in rankings.items():
        for item in items[:depth]:
            scored.append((item.score, (source, item.target_url) in wanted))
    positives = sorted(score for score, hit in scored if hit)
    if not positives:
        return {"f1_cut": math.nan, "f1": 0.0, "keep_90": math.nan, "found": 0.0}
    scored.sort(key=lambda pair: -pair[0])
    total_pos = len(wanted)
    best_f1, best_cut, true_pos = 0.0, scored[0][0], 0
    for taken, (score, hit) in enumerate(scored, start=1):
        true_pos += hit
        if taken < len(scored) and scored[taken][0] == score:
            continue  # a cut sits between distinct scores
        precision, recall = true_pos / taken, true_pos / total_pos
        f1 = 2 * precision * recall / (precision + recall) if true_pos else 0.0
        if f1 > best_f1:
            best_f1, best_cut = f1, score
    keep_90 = positives[int(math.floor(0.1 * (len(positives) - 1)))]
    return {"f1_cut": round(best_cut, 4), "f1": round(best_f1, 4), "keep_90": round(keep_90, 4),
            "found": float(len(positives))}


def threshold_curve(rankings: Rankings, hidden: Iterable[Pair], cuts: Sequence[float],
                    k: int = AGREEMENT_K) -> list[dict[str, float]]:
    """For each score cut: recall@k counting only suggestions at or above it, and the share of top-k kept."""
    pairs = list(hidden)
    top = [(source, item) for source, items in rankings.items() for item in list(items)[:k]]
    out = []
    for cut in cuts:
        kept = {(source, item.target_url) for source, item in top if item.score >= cut}
        out.append({
            "min_confidence": cut,
            "recall": round(sum(pair in kept for pair in pairs) / len(pairs), 4) if pairs else 0.0,
            "kept": round(len(kept) / len(top), 4) if top else 0.0,
        })
    return out


def score_method(
    method: str, rankings: Rankings, hidden: Mapping[Pair, Sequence[str]], ks: Sequence[int] = DEFAULT_KS
) -> MethodResult:
    """All figures of one method's rankings against the hidden pairs."""
    depth = max(ks)
    share_j, judged = anchor_agreement(rankings, hidden, measure=jaccard)
    share_o, _ = anchor_agreement(rankings, hidden, measure=overlap)
    return MethodResult(
        method=method,
        recall={k: recall_at_k(rankings, hidden, k) for k in ks},
        mrr=mean_reciprocal_rank(rankings, hidden, depth),
        anchor_jaccard=share_j,
        anchor_overlap=share_o,
        anchors_judged=judged,
        threshold=suggest_threshold(rankings, hidden, depth),
    )


# --------------------------------------------------------------------------- output


def format_table(results: Sequence[MethodResult], ks: Sequence[int] = DEFAULT_KS) -> str:
    """A plain-text table: one row per method."""
    head = ["method", *(f"recall@{k}" for k in ks), "MRR", "anchor agrees", "(overlap)", "threshold", "s"]
    rows = [head]
    for r in results:
        rows.append([
            r.method,
            *(f"{r.recall[k]:.3f}" for k in ks),
            f"{r.mrr:.3f}",
            f"{r.anchor_jaccard:.0%} of {r.anchors_judged}",
            f"{r.anchor_overlap:.0%}",
            f"{r.threshold.get('f1_cut', math.nan):.3f}",
            f"{r.seconds:.1f}",
        ])
    widths = [max(len(row[i]) for row in rows) for i in range(len(head))]
    lines = ["  ".join(cell.ljust(widths[i]) for i, cell in enumerate(row)) for row in rows]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)


def write_json(path: str, payload: dict[str, Any]) -> None:
    """Write ``payload`` as JSON through a temporary name, then rename."""
    tmp = f"{path}.tmp-{os.getpid()}"
    with open(tmp, "w", encoding="utf-8") as fh:
        json.dump(payload, fh, indent=2, sort_keys=True)
        fh.write("\n")
    os.replace(tmp, path)


def result_dict(result: MethodResult) -> dict[str, Any]:
    """JSON-friendly form of a result (recall keys as strings)."""
    data = asdict(result)
    data["recall"] = {str(k): v for k, v in result.recall.items()}
    return data


def timed(fn: Callable[[], Rankings]) -> tuple[Rankings, float]:
    """Run ``fn`` and return its rankings with the seconds it took."""
    start = time.perf_counter()
    out = fn()
    return out, time.perf_counter() - start


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The evaluate subcommand's own options."""
    parser.add_argument("--hide", type=float, default=DEFAULT_HIDE,
                        help="share of in-content linked pairs to hide (default 0.2)")
    parser.add_argument("--seed", type=int, default=0, help="random seed of the hidden sample (default 0)")
    parser.add_argument("--k", type=int, nargs="+", default=list(DEFAULT_KS),
                        help="cut-offs for recall@k (default 1 5 10)")
    parser.add_argument("--methods", nargs="+", default=list(METHODS),
                        help="methods to compare: default queue plain tfidf (default all four)")


def eligible_urls(crawl: Any, embedded: Sequence[str], options: Any = None) -> tuple[set[str], set[str]]:
    """(sources, targets): content pages with a vector (the only pages that give suggestions), and the
    pages with a vector that may receive them. Links from listings, indexes and code listings are not
    hidden: the pipeline never suggests from those pages, by design."""
    from postprocess.stages.candidates import target_exclusion

    embedded = set(embedded)
    sources = {p.url for p in crawl.pages if p.url in embedded and p.kind == "content"}
    targets = {p.url for p in crawl.pages if p.url in embedded and target_exclusion(p, options) is None}
    return sources, targets


def default_rankings(visible_crawl: Any, options: Any, model: Any, embeddings: Any, index: Any,
                     depth: int, queue: bool = False) -> tuple[Rankings, dict[str, Any]]:
    """The pipeline's own ranking (``postprocess.pipeline.suggest``) with ``depth`` suggestions per source,
    and the confidence model's report.

    ``queue`` False: every anchored row, most confident first — the minimum score lifted (-1)
    and no confidence cut, so that the evaluation sees the whole range; the per-target cap
    grows in step with the per-source one (``depth`` / ``per_source``). ``queue`` True: the
    default queue itself, cut at ``--min-confidence``, with the options as given.
    """
    from dataclasses import replace

    from postprocess.pipeline import suggest

    if queue:
        run_options = options
    else:
        per_target = math.ceil(options.per_target * depth / max(1, options.per_source))
        run_options = replace(options, per_source=depth, per_target=max(options.per_target, per_target),
                              min_score=-1.0, min_confidence=0.0, min_link_probability=0.0,
                              unnamed_members=True)
    result = suggest(visible_crawl, run_options, model, embeddings=embeddings, index=index)
    rankings = {source: [Ranked(s.target_url, s.confidence, s.anchor) for s in rows]
                for source, rows in result.by_source().items()}
    report = result.confidence.to_json() if result.confidence is not None else {}
    return rankings, {"model": report.get("source"), **(report.get("report") or {})}


def evaluate_crawl(crawl: Any, options: Any, model: Any, *, hide: float = DEFAULT_HIDE, seed: int = 0,
                   ks: Sequence[int] = DEFAULT_KS, methods: Sequence[str] = METHODS,
                   cache_dir: str | None = None) -> dict[str, Any]:
    """Hide links, rank with each method, and score them: the payload of evaluation.json."""
    from dataclasses import replace

    from postprocess.evaluation import baselines
    from postprocess.stages.embed import embed_pages, page_encoder
    from postprocess.stages.index import build_index

    depth = max(ks)
    encoder = page_encoder(model, options, cache_dir)  # the pages' and their paragraphs' (static or not)
    embeddings = embed_pages(crawl, encoder, options, cache_dir=cache_dir)
    sources, targets = eligible_urls(crawl, embeddings.urls, options)
    try:
        visible, hidden = hide_links(crawl.links, sources, hide, seed, targets=targets)
    except ValueError as exc:
        raise _input_error(str(exc)) from exc
    if not hidden:
        raise _input_error("the crawl has no in-content links between its pages to hide: nothing to evaluate")
    visible_crawl = replace(crawl, links=list(visible))
    pages = [p for p in crawl.pages if p.url in sources or p.url in targets]
    results: list[MethodResult] = []
    curve: list[dict[str, float]] = []
    confidence: dict[str, Any] = {}
    index = None
    for method in methods:
        started = time.perf_counter()
        if method in ("default", "queue"):
            index = index or build_index(embeddings.urls, embeddings.vectors, options.trees)
            rankings, confidence = default_rankings(visible_crawl, options, encoder, embeddings, index, depth,
                                                    queue=method == "queue")
        elif method == "plain":
            rankings = baselines.plain_rankings(pages, visible, model, depth, targets=targets,
                                                cache_dir=cache_dir)
        elif method == "tfidf":
            rankings = baselines.tfidf_rankings(pages, visible, depth, targets=targets)
        else:
            raise _input_error(f"unknown method {method!r}: choose from {', '.join(METHODS)}")
        result = score_method(method, rankings, hidden, ks)
        result.seconds = time.perf_counter() - started
        results.append(result)
        if method == "default":
            curve = threshold_curve(rankings, hidden, CURVE_CUTS)
    return {
        "crawl": getattr(crawl, "directory", ""),
        "pages": len(crawl.pages),
        "sources": len(sources),
        "targets": len(targets),
        "linked_pairs": len(linked_pairs(crawl.links, sources)),
        "hidden_pairs": len(hidden),
        "hide": hide,
        "seed": seed,
        "k": list(ks),
        "agreement": {"k": AGREEMENT_K, "cut": AGREEMENT_CUT, "measure": "token-set Jaccard"},
        "model": getattr(model, "model_id", ""),
        "methods": [result_dict(r) for r in results],
        "default_confidence_curve": curve,
        "confidence": confidence,
        "table": format_table(results, ks),
    }


def _input_error(message: str) -> Exception:
    from postprocess.errors import InputError

    return InputError(message)


def run(args: argparse.Namespace) -> int:
    """``python -m postprocess evaluate``: print the table, write OUT/evaluation.json."""
    from pathlib import Path

    from postprocess.options import options_from
    from postprocess.stages.embed import load_model
    from postprocess.stages.load import load_crawl, require_linkable

    if not 0 < args.hide < 1:
        raise _input_error(f"--hide must be between 0 and 1, got {args.hide}")
    if any(k < 1 for k in args.k):
        raise _input_error(f"--k values must be positive, got {args.k}")
    for method in args.methods:
        if method not in METHODS:
            raise _input_error(f"unknown method {method!r}: choose from {', '.join(METHODS)}")
    options = options_from(args)
    crawl = load_crawl(args.crawl, args.job)
    require_linkable(crawl)
    model = load_model(args.model, options.prefix, options.device)
    out = Path(args.out)
    payload = evaluate_crawl(crawl, options, model, hide=args.hide, seed=args.seed, ks=sorted(set(args.k)),
                             methods=args.methods, cache_dir=str(out / "cache"))
    out.mkdir(parents=True, exist_ok=True)
    write_json(str(out / "evaluation.json"), payload)
    print(f"{payload['hidden_pairs']} of {payload['linked_pairs']} in-content linked pairs hidden "
          f"(seed {payload['seed']}); {payload['sources']} pages, {payload['targets']} may receive links")
    print(payload["table"])
    default = next((m for m in payload["methods"] if m["method"] == "default"), None)
    if default and default["threshold"].get("found"):
        cut = default["threshold"]
        print(f"best-F1 --min-confidence against the hidden links: {cut['f1_cut']:.3f} "
              f"(90% of the found hidden links have a confidence above {cut['keep_90']:.3f})")
    conf = payload.get("confidence") or {}
    if conf.get("at_cut"):
        at = conf["at_cut"]
        print(f"confidence (learned from the visible links, held-out folds): at >= {at['cut']:g}, precision "
              f"{at['precision']:.3f} and recall {at['recall']:.3f} against the site's links in running text "
              f"(AUC {conf.get('auc', float('nan')):.3f})")
    elif conf:
        print(f"confidence: {conf.get('model')} model ({conf.get('why_prior', '')})")
    if payload["default_confidence_curve"]:
        print("default ranking, recall@5 if --min-confidence were: " + ", ".join(
            f"{c['min_confidence']:g} → {c['recall']:.3f} ({c['kept']:.0%} of top-5 kept)"
            for c in payload["default_confidence_curve"]))
    print(f"written: {out / 'evaluation.json'}")
    return 0
