"""What the names and the anchor finder hold once built: the run's two largest structures in the
main process, made over a crawl's pages in this process, one after the other.

Loads the crawl, hands its freed memory back, then builds the ``NameIndex`` (as ``SiteEvidence``
does) and the ``AnchorFinder`` (as the run does, with ``--workers`` processes for its page passes),
each followed by a full collection and ``give_back``. Prints, for each, the process's own memory
(``RssAnon``) it added and the allocator blocks still in use (``sys.getallocatedblocks``), and the
normal forms ``normalise`` keeps at the end. Run it in two checkouts to compare.

    python benchmarks/names_finder_memory.py --crawl /work/runs/scale/crawl-100000
"""

from __future__ import annotations

import argparse
import gc
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from memory_profile import status_mb  # noqa: E402 - found through the path set just above


def _held() -> tuple[float, int]:
    from postprocess.memory import give_back

    gc.collect()
    give_back()
    [anonymous] = status_mb("RssAnon")
    return anonymous, sys.getallocatedblocks()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--crawl", required=True, type=Path)
    parser.add_argument("--workers", type=int, default=1, help="processes for the finder's page passes")
    args = parser.parse_args(argv)

    from postprocess.stages.anchors import AnchorFinder
    from postprocess.stages.lexical import NameIndex, clean_title, site_title_parts
    from postprocess.stages.load import PageValues, load_crawl
    from postprocess.stages.scoring import _anchor_uses
    from postprocess.stages.tokeniser import normalise

    crawl = load_crawl(args.crawl)
    memory, blocks = _held()
    print(f"loaded: {len(crawl.pages):,} pages, {memory:,.0f} MB own memory, {blocks:,} blocks", flush=True)
    pages = crawl.pages
    site = site_title_parts([p.title for p in pages])
    row = {p.url: i for i, p in enumerate(pages)}
    titles = [(p.h1, clean_title(p.title, site)) for p in pages]
    started = time.perf_counter()
    names = NameIndex(titles, _anchor_uses(crawl, row), PageValues(pages, lambda p: p.text))
    after, after_blocks = _held()
    print(f"names: +{after - memory:,.0f} MB held, +{after_blocks - blocks:,} blocks, "
          f"{time.perf_counter() - started:.1f} s", flush=True)
    memory, blocks = after, after_blocks
    started = time.perf_counter()
    finder = AnchorFinder(crawl, False, args.workers)
    after, after_blocks = _held()
    print(f"finder: +{after - memory:,.0f} MB held, +{after_blocks - blocks:,} blocks, "
          f"{time.perf_counter() - started:.1f} s", flush=True)
    kept = normalise.cache_info()
    print(f"normal forms kept: {kept.currsize:,} (at most {kept.maxsize:,})")
    del names, finder
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
