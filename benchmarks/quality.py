"""Suggestion quality on real sites: ``python -m postprocess evaluate`` per site and seed, one markdown table.

Usage (crawl each site first, see docs/benchmarks.md):

    python3 benchmarks/quality.py --site django=/tmp/django-crawl --site postgresql=/tmp/pg-crawl \
        --out /tmp/quality --seeds 0 1 2

For every site and seed it runs the evaluate command (the embeddings are cached
in OUT/SITE/cache, so only the first run of a site embeds), keeps each
evaluation.json as OUT/SITE/evaluation-seedN.json, and prints the table of means
over the seeds with the default ranking's recall@5 beside each baseline's.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
from pathlib import Path


def run_site(name: str, crawl: str, out: Path, seeds: list[int], hide: float) -> list[dict]:
    """Evaluate one site for each seed; returns the evaluation.json payloads."""
    payloads = []
    site_out = out / name
    for seed in seeds:
        command = [sys.executable, "-m", "postprocess", "evaluate", "--crawl", crawl, "--out", str(site_out),
                   "--seed", str(seed), "--hide", str(hide)]
        print("$", " ".join(command), flush=True)
        subprocess.run(command, check=True)
        kept = site_out / f"evaluation-seed{seed}.json"
        shutil.copyfile(site_out / "evaluation.json", kept)
        payloads.append(json.loads(kept.read_text()))
    return payloads


def mean(values: list[float]) -> float:
    return statistics.fmean(values) if values else float("nan")


def site_rows(name: str, payloads: list[dict]) -> list[str]:
    """Markdown rows for one site: one per method, means over the seeds."""
    by_method: dict[str, list[dict]] = {}
    for payload in payloads:
        for method in payload["methods"]:
            by_method.setdefault(method["method"], []).append(method)
    r5 = {m: mean([x["recall"]["5"] for x in runs]) for m, runs in by_method.items()}
    first = payloads[0]
    rows = []
    for method, runs in by_method.items():
        ratio = " / ".join(
            f"{r5[method] / r5[base]:.2f}× {base}" for base in ("plain", "tfidf")
            if base in r5 and base != method and r5[base] > 0
        )
        cut = mean([x["threshold"]["f1_cut"] for x in runs])
        rows.append(
            f"| {name} ({first['sources']} pages, {mean([p['hidden_pairs'] for p in payloads]):.0f} hidden) "
            f"| {method} | {mean([x['recall']['1'] for x in runs]):.3f} | {r5[method]:.3f} "
            f"| {mean([x['recall']['10'] for x in runs]):.3f} | {mean([x['mrr'] for x in runs]):.3f} "
            f"| {mean([x['anchor_jaccard'] for x in runs]):.0%} "
            f"| {mean([x['anchor_overlap'] for x in runs]):.0%} "
            f"| {cut:.3f} | {ratio or '—'} |"
        )
    return rows


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--site", action="append", required=True, metavar="NAME=CRAWL_DIR")
    parser.add_argument("--out", required=True, help="output folder (one subfolder per site)")
    parser.add_argument("--seeds", type=int, nargs="+", default=[0])
    parser.add_argument("--hide", type=float, default=0.2)
    args = parser.parse_args()
    out = Path(args.out)
    lines = [
        f"Hidden share {args.hide}, seeds {' '.join(map(str, args.seeds))} (means over seeds); "
        "anchor agreement: "
        "token-set Jaccard >= 0.5 (and overlap coefficient >= 0.5) for hidden pairs found in the top 5.",
        "",
        "| site | method | recall@1 | recall@5 | recall@10 | MRR | anchor agrees | (overlap) | F1 threshold "
        "| recall@5 ratio |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for spec in args.site:
        name, _, crawl = spec.partition("=")
        if not crawl:
            parser.error(f"--site {spec!r}: expected NAME=CRAWL_DIR")
        lines += site_rows(name, run_site(name, crawl, out, args.seeds, args.hide))
    table = "\n".join(lines) + "\n"
    (out / "quality.md").write_text(table)
    print(table)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
