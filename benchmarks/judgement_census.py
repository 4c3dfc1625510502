"""Acceptance of a whole queue from every blind judgement of its rows, in any round.

    python3 benchmarks/judgement_census.py QUEUE.csv ROUND_DIR [ROUND_DIR ...]

A row is the same row when its source, target and anchor are; a row judged in several rounds (as a
"before" or an "after" row: the readers could not tell) counts each judgement. Prints how many of
the queue's rows were judged, the share of judgements that accepted, the mean per row, and the rows
no round judged. When every row is judged, this is the acceptance of the queue itself, not of a
sample of it.
"""

from __future__ import annotations

import argparse
import csv
from collections import defaultdict
from pathlib import Path

Row = tuple[str, str, str]


def judgements(folders: list[Path]) -> dict[Row, list[bool]]:
    """Every verdict of every round folder (rows-K.csv with labels-K.csv), by (source, target, anchor)."""
    found: dict[Row, list[bool]] = defaultdict(list)
    for folder in folders:
        for rows_path in sorted(folder.glob("rows-*.csv")):
            labels_path = folder / rows_path.name.replace("rows-", "labels-")
            rows = {r["id"]: r for r in csv.DictReader(open(rows_path, encoding="utf-8"))}
            labels = list(csv.DictReader(open(labels_path, encoding="utf-8")))
            if {r["id"] for r in labels} != set(rows):
                raise SystemExit(f"{labels_path}: labels do not match the ids of {rows_path.name}")
            for label in labels:
                row = rows[label["id"]]
                found[(row["source_url"], row["target_url"], row["anchor"])].append(
                    label["verdict"].strip().lower() == "accept")
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("queue", type=Path, help="suggestions.csv of a run")
    parser.add_argument("rounds", type=Path, nargs="+", help="judgement folders (rows-K.csv, labels-K.csv)")
    args = parser.parse_args()
    verdicts = judgements(args.rounds)
    queue = [(r["source_url"], r["target_url"], r["anchor"]) for r in
             csv.DictReader(open(args.queue, encoding="utf-8"))]
    judged = [row for row in queue if row in verdicts]
    every = [v for row in judged for v in verdicts[row]]
    if not judged:
        raise SystemExit(f"no row of {args.queue} was judged in these rounds")
    per_row = sum(sum(verdicts[row]) / len(verdicts[row]) for row in judged) / len(judged)
    print(f"{args.queue}: {len(queue)} rows, {len(judged)} judged ({len(every)} judgements): "
          f"{sum(every) / len(every):.1%} of judgements accepted, {per_row:.1%} per row")
    unjudged = [row for row in queue if row not in verdicts]
    if unjudged:
        print(f"not judged ({len(unjudged)}): " + "; ".join(f"{a!r} {s} -> {t}" for s, t, a in unjudged[:20]))


if __name__ == "__main__":
    main()
