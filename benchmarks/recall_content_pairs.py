"""Hidden-link recall on the links between content pages, for any version of the pipeline.

Today's (``evaluate``) protocol hides links from every page, navigation and code
listings included; since issue 8 only content pages give and receive suggestions, so
the comparable figure hides the same pairs — in-content links between two pages that
``KINDS`` (a crawl written by schema 2) calls content — for the old and the new code:

    # new code (this checkout), schema-2 crawl
    PYTHONPATH=. python3 benchmarks/recall_content_pairs.py --crawl NEW_CRAWL --kinds NEW_CRAWL \
        --cache OUT/cache
    # old code: run this same file with the old checkout first on the path, on its own crawl
    PYTHONPATH=OLD_CHECKOUT python3 benchmarks/recall_content_pairs.py --crawl OLD_CRAWL --kinds NEW_CRAWL \
        --cache OLD_OUT/cache

Prints recall@1/5/10 and anchor agreement of the pipeline's default ranking (the
queue before any confidence cut) on the same hidden pairs (seeded), as one JSON line.
"""

from __future__ import annotations

import argparse
import dataclasses
import inspect
import json
import random
import sys

import pyarrow.parquet as pq

# This folder holds a benchmarks/postprocess.py: the package must come from PYTHONPATH (old or new checkout).
sys.path = [p for p in sys.path if not p.endswith("benchmarks")]


def content_urls(crawl_dir: str) -> set[str]:
    table = pq.read_table(f"{crawl_dir}/pages", columns=["url", "kind"])
    kinds = zip(table["url"].to_pylist(), table["kind"].to_pylist(), strict=True)
    return {u for u, k in kinds if k == "content"}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--crawl", required=True)
    parser.add_argument("--kinds", required=True, help="a schema-2 crawl of the same site (its page kinds)")
    parser.add_argument("--cache", required=True)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--hide", type=float, default=0.2)
    args = parser.parse_args()

    from postprocess.evaluation import evaluate as ev
    from postprocess.options import Options
    from postprocess.stages.embed import embed_pages, load_model
    from postprocess.stages.index import build_index
    from postprocess.stages.load import load_crawl

    crawl = load_crawl(args.crawl)
    options = Options()
    model = load_model(None)
    embeddings = embed_pages(crawl, model, options, cache_dir=args.cache)
    content = content_urls(args.kinds) & set(embeddings.urls)
    pairs = ev.linked_pairs(crawl.links, content)
    ordered = sorted(pairs)
    hidden = set(random.Random(args.seed).sample(ordered, round(len(ordered) * args.hide)))
    visible = dataclasses.replace(crawl, links=[lk for lk in crawl.links
                                                if (lk.source_url, lk.target_url) not in hidden])
    index = build_index(embeddings.urls, embeddings.vectors, options.trees)
    result = ev.default_rankings(visible, options, model, embeddings, index, 10)
    rankings = result[0] if isinstance(result, tuple) else result
    scored = ev.score_method("default", rankings, {p: pairs[p] for p in hidden}, (1, 5, 10))
    print(json.dumps({"code": inspect.getsourcefile(ev), "pairs": len(pairs), "hidden": len(hidden),
                      "recall": scored.recall, "anchor_agreement": round(scored.anchor_jaccard, 4),
                      "anchors_judged": scored.anchors_judged}))


if __name__ == "__main__":
    main()
