"""CPU seconds of the anchors stage, in one process, for comparing checkouts on a noisy machine.

A whole run's wall time on these 2-core VMs moves by ±15% from one run to the next, which hides a
change worth 5–10% of one stage. This measures only the anchor work, in a single process (no fork,
no confidence folds beside it), with ``time.process_time``: the anchor finder built from the crawl
(``AnchorFinder``: names, proper nouns, phrase counts), the anchors chosen for the pool that an
earlier run wrote (``candidates.parquet``), and, apart, every page of the crawl read once as a
source's running text (``source_text``: the words, spans and sentences the anchors search; about
half the anchor work), made as the checkout's anchoring makes them (``source_texts``, a batch of
sources at a time, where the checkout has it). Each checkout is run ``--repeat`` times,
alternating, each time in a fresh process, and the minimum and median are printed side by side::

    python3 benchmarks/anchor_cpu.py --crawl /work/runs/scale/crawl-10000 \\
        --pool /work/runs/scale/out-10000/candidates.parquet --repeat 4 /tmp/wt-old .

Each checkout must give the same anchored rows (their count and a digest are compared); the run
stops with an error when they differ.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from checkouts import compare, table  # noqa: E402

#: Run inside the checkout under test (its ``postprocess`` package first on sys.path).
_CHILD = """
import hashlib, json, sys, time
from pathlib import Path
sys.path.insert(0, sys.argv[1])
from postprocess.apps.report import read_pool
from postprocess.stages import anchors
from postprocess.stages.anchors import AnchorFinder, anchored_rows
from postprocess.stages.load import load_crawl

crawl = load_crawl(sys.argv[2])
pool = read_pool(Path(sys.argv[3]))
started = time.process_time()
finder = AnchorFinder(crawl, False, 1)
built = time.process_time()
rows = anchored_rows(pool, finder, 1)
done = time.process_time()
pages = list(crawl.pages)
if hasattr(anchors, "source_texts"):  # made as the anchoring makes them: a batch at a time
    for first in range(0, len(pages), anchors.SOURCE_BATCH):
        batch = pages[first:first + anchors.SOURCE_BATCH]
        anchors.source_texts(batch, [None] * len(batch))
else:
    for page in pages:
        anchors.source_text(page)
texts = time.process_time() - done
digest = hashlib.sha256()
for s in rows:
    digest.update(repr((s.source_url, s.target_url, s.anchor, s.context, s.evidence,
                        sorted(s.parts.items()))).encode())
print(json.dumps({"finder": built - started, "anchors": done - built, "texts": texts, "rows": len(rows),
                  "digest": digest.hexdigest()}))
"""


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("checkouts", nargs="+", type=Path, help="repository roots to compare")
    parser.add_argument("--crawl", type=Path, required=True, help="a crawl dataset folder")
    parser.add_argument("--pool", type=Path, required=True, help="candidates.parquet of a run on it")
    parser.add_argument("--repeat", type=int, default=3, help="fresh processes per checkout")
    args = parser.parse_args(argv)
    started = time.perf_counter()
    runs = compare("anchor_cpu", _CHILD, args.checkouts, [str(args.crawl), str(args.pool)], args.repeat)
    digests = {r["digest"] for results in runs.values() for r in results}
    if len(digests) != 1:
        sys.exit("anchor_cpu: the checkouts anchor the pool differently (rows differ)")
    first = runs[args.checkouts[0]]
    print(f"{args.repeat} runs each, alternating, {time.perf_counter() - started:.0f} s in all; "
          f"{first[0]['rows']:,} anchored rows, the same in every run")
    table(runs, ("finder", "anchors", "texts"), lambda run, name: run[name])
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
