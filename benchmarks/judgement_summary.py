"""Acceptance per queue from blind labels: ``python3 benchmarks/judgement_summary.py DIR``.

Reads DIR/key.csv (id -> queue) and every DIR/labels-*.csv (id, verdict, reason), checks that
every id has exactly one label, and prints accepted / judged per queue with the reasons of the
rejects (their first word), as a markdown table.
"""

from __future__ import annotations

import csv
import sys
from collections import Counter, defaultdict
from pathlib import Path


def main() -> None:
    folder = Path(sys.argv[1])
    key = {r["id"]: r["queue"] for r in csv.DictReader(open(folder / "key.csv", encoding="utf-8"))}
    labels: dict[str, dict[str, str]] = {}
    for path in sorted(folder.glob("labels-*.csv")):
        for row in csv.DictReader(open(path, encoding="utf-8")):
            if row["id"] in labels:
                raise SystemExit(f"id {row['id']} labelled twice ({path.name})")
            labels[row["id"]] = row
    missing = sorted(set(key) - set(labels), key=int)
    if missing:
        raise SystemExit(f"{len(missing)} rows have no label, e.g. id {missing[0]}")
    judged: Counter[str] = Counter()
    accepted: Counter[str] = Counter()
    reasons: dict[str, Counter[str]] = defaultdict(Counter)
    for id_, queue in key.items():
        verdict = labels[id_]["verdict"].strip().lower()
        judged[queue] += 1
        if verdict == "accept":
            accepted[queue] += 1
        else:
            reasons[queue][labels[id_]["reason"].split(":")[0].strip()] += 1
    print("| queue | judged | accepted | acceptance | rejected because |")
    print("| --- | ---: | ---: | ---: | --- |")
    for queue in sorted(judged):
        why = ", ".join(f"{r} {n}" for r, n in reasons[queue].most_common())
        share = accepted[queue] / judged[queue]
        print(f"| {queue} | {judged[queue]} | {accepted[queue]} | {share:.0%} | {why} |")


if __name__ == "__main__":
    main()
