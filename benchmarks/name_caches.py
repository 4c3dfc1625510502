"""The two word caches the names and anchors asked: how often a bounded cache of normal forms finds a
word, and what a cache of name parts saves.

1. ``normalise``'s forms: the words of the prose of every ``--every``-th page of a crawl, normalised
   in order through LRU caches of several sizes (``normal_form`` uncached beside them): each size's
   share of words found and its nanoseconds a word.
2. ``_nameable``: every call the anchor finder's build makes (recorded), then timed again through
   the function as it is and through an LRU cache of 262,144 entries, as it had before (its misses
   included: one pass, as in a run).

    python benchmarks/name_caches.py --crawl /work/runs/scale/crawl-100000 --every 5
"""

from __future__ import annotations

import argparse
import functools
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def normal_forms(crawl: object, every: int) -> None:
    from linkspider.items import PROSE_KINDS
    from postprocess.stages.load import block_texts
    from postprocess.stages.tokeniser import WORD, normal_form

    tokens: list[str] = []
    for page in crawl.pages[::every]:  # type: ignore[attr-defined]
        tokens.extend(WORD.findall(" ".join(block_texts(page, PROSE_KINDS))))
    print(f"normal forms: {len(tokens):,} words, {len(set(tokens)):,} distinct")
    for size in (1 << 14, 1 << 16, 1 << 18, 1 << 20):
        cached = functools.lru_cache(maxsize=size)(normal_form)
        started = time.perf_counter()
        list(map(cached, tokens))
        seconds = time.perf_counter() - started
        print(f"  {size:>9,} kept: {cached.cache_info().hits / len(tokens):.2%} found, "
              f"{seconds / len(tokens) * 1e9:.0f} ns a word")
    started = time.perf_counter()
    list(map(normal_form, tokens))
    print(f"  uncached: {(time.perf_counter() - started) / len(tokens) * 1e9:.0f} ns a word")


def name_parts(crawl: object) -> None:
    from postprocess.stages import anchors

    asked: list[tuple[str, ...]] = []
    plain = anchors._nameable

    def recording(key: tuple[str, ...]) -> bool:
        asked.append(key)
        return plain(key)

    anchors._nameable = recording
    try:
        anchors.AnchorFinder(crawl, False, 1)  # type: ignore[arg-type]
    finally:
        anchors._nameable = plain
    print(f"name parts: {len(asked):,} calls in the finder's build, {len(set(asked)):,} distinct")
    cached = functools.lru_cache(maxsize=1 << 18)(plain)
    for label, function in (("no cache", plain), ("262,144 cached", cached)):
        started = time.perf_counter()
        for key in asked:
            function(key)
        print(f"  {label}: {(time.perf_counter() - started) / len(asked) * 1e9:.0f} ns a call")
    print(f"  the cache: {cached.cache_info()}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--crawl", required=True, type=Path)
    parser.add_argument("--every", type=int, default=5, help="the normal forms' sample: every N-th page")
    args = parser.parse_args(argv)
    from postprocess.stages.load import load_crawl

    crawl = load_crawl(args.crawl)
    normal_forms(crawl, args.every)
    name_parts(crawl)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
