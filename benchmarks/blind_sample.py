"""Blind samples of review-queue rows for an editor to judge (issue 8's measured judgement).

Mixes random rows of two or more queues (e.g. before and after a change), hides which
queue each row came from and every score, and writes:

- ``DIR/rows-N.csv``: what the reader sees, split into N files (id, site, source, target,
  target's opening words, anchor, the sentence it stands in);
- ``DIR/key.csv``: id -> queue label (kept from the reader until the labels are written).

    python3 benchmarks/blind_sample.py --out DIR --readers 4 --seed 0 \
        --queue django:before:100:CRAWL:OUT_BEFORE/suggestions.csv \
        --queue django:after:100:CRAWL:OUT_AFTER/suggestions.csv

Each ``--queue`` is SITE:LABEL:COUNT:CRAWL_DIR:SUGGESTIONS_CSV (COUNT 0 = every row).
"""

from __future__ import annotations

import argparse
import csv
import random
from pathlib import Path

import pyarrow.parquet as pq

OPENING_WORDS = 60


def openings(crawl: str) -> dict[str, str]:
    """URL -> the first words of the page's main text."""
    table = pq.read_table(Path(crawl) / "pages", columns=["url", "text"])
    return {u: " ".join((t or "").split()[:OPENING_WORDS]) for u, t in
            zip(table["url"].to_pylist(), table["text"].to_pylist(), strict=True)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", required=True)
    parser.add_argument("--readers", type=int, default=1)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--queue", action="append", required=True)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    rows = []
    for spec in args.queue:
        site, label, count, crawl, path = spec.split(":", 4)
        queue = list(csv.DictReader(open(path, encoding="utf-8")))
        chosen = queue if int(count) == 0 or int(count) >= len(queue) else rng.sample(queue, int(count))
        opening = openings(crawl)
        for r in chosen:
            rows.append({
                "site": site, "source_url": r["source_url"], "source_title": r.get("source_title", ""),
                "target_url": r["target_url"], "target_title": r.get("target_title", ""),
                "target_opening": opening.get(r["target_url"], ""),
                "anchor": r["anchor"],
                "anchor_stands_in_text": "yes" if r.get("anchor_type", "text") == "text" else
                "no (the target's title, to write into the page)",
                "sentence": r.get("context", ""),
                "_label": f"{site}:{label}",
            })
    rng.shuffle(rows)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    fields = [k for k in rows[0] if not k.startswith("_")]
    for n in range(args.readers):
        with open(out / f"rows-{n + 1}.csv", "w", newline="", encoding="utf-8") as handle:
            writer = csv.DictWriter(handle, ["id", *fields])
            writer.writeheader()
            for i, row in enumerate(rows):
                if i % args.readers == n:
                    writer.writerow({"id": i + 1, **{k: row[k] for k in fields}})
    with open(out / "key.csv", "w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["id", "queue"])
        writer.writerows((i + 1, row["_label"]) for i, row in enumerate(rows))
    print(f"{len(rows)} rows in {args.readers} files under {out}")


if __name__ == "__main__":
    main()
