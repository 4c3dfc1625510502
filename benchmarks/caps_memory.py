"""The caps' memory: ``_PairColumns.capped`` over synthetic scored pairs, its traced peak.

Makes ``--pairs`` scored pairs over ``--pages`` pages (random targets, scores rounded to 4 digits so
that many tie, six score parts) as the ranking hands them over (chunks of 2,000 sources joined),
then takes the caps (15 a source, 60 a target) with ``tracemalloc`` tracing: the peak of the whole
call, the peak of the sort alone, and the pool it returns (NumPy's buffers are traced). Run it in two
checkouts to compare; ``--save`` writes the pool's sources, targets and ranks to compare them too.

    python benchmarks/caps_memory.py --pages 100000 --pairs 5000000 [--save pool.npy]
"""

from __future__ import annotations

import argparse
import sys
import time
import tracemalloc
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pages", type=int, default=100_000)
    parser.add_argument("--pairs", type=int, default=5_000_000)
    parser.add_argument("--save", help="write the pool's sources, targets and ranks (.npy)")
    args = parser.parse_args()

    from postprocess.stages import candidates

    rng = np.random.default_rng(0)
    urls = [f"https://site.test/section-{i % 97}/page-{i:07d}/" for i in range(args.pages)]
    per = max(1, args.pairs // args.pages)
    pairs = candidates._PairColumns()
    for first in range(0, args.pages, 2000):
        chunk = candidates._PairColumns()
        for source in range(first, min(first + 2000, args.pages)):
            targets = rng.choice(args.pages, per, replace=False)
            parts = {f"part{k}": rng.random(per) for k in range(6)}
            chunk.add(source, targets, np.round(rng.random(per), 4), parts)
        chunk.join()
        pairs.extend(chunk)
    sort = getattr(candidates, "_best_first", None)
    peaks = [0, 0]  # before the sort, the sort's own
    if sort is not None:  # the sort's own peak, where the checkout has it as a function
        def watched(*given: object) -> np.ndarray:
            peaks[0] = tracemalloc.get_traced_memory()[1]
            tracemalloc.reset_peak()
            order = sort(*given)
            peaks[1] = tracemalloc.get_traced_memory()[1]
            return order
        candidates._best_first = watched
    tracemalloc.start()
    start = time.perf_counter()
    pool = pairs.capped(urls, 15, 60)
    seconds = time.perf_counter() - start
    held, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    mib = 2**20
    sort_part = f", the sort's {peaks[1] / mib:.0f} MiB" if sort is not None else ""
    print(f"{pairs.size:,} pairs over {args.pages:,} pages -> a pool of {len(pool):,}: the call's peak "
          f"{max(peak, *peaks) / mib:.0f} MiB{sort_part}; held after it (the pool) {held / mib:.0f} MiB; "
          f"{seconds:.1f} s")
    if args.save:
        np.save(args.save, np.stack([pool.sources, pool.targets, pool.ranks]).astype(np.int64))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
