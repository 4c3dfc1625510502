"""The TF-IDF job's memory: ``lexical._lexical_neighbours`` over a crawl's pages in this process.

Loads the crawl, then makes the TF-IDF index and each page's lexical neighbours as the run's TF-IDF
child does, sampling this process's own memory (``RssAnon``) every 20 ms. Prints, above what the
process held before the job: its peak while the index is made, what it holds once it is made, what it
holds when the neighbours' queries start (after the reduction and the reduced rows' Annoy index: the
longest part of the job at 100k pages) and its peak through them. Run it in two checkouts to compare.

    python benchmarks/lexical_job_memory.py --crawl /work/runs/scale/crawl-100000
"""

from __future__ import annotations

import argparse
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from memory_profile import status_mb  # noqa: E402 - found through the path set just above

_PEAK = [0.0]


def _sample() -> None:
    while True:
        _PEAK[0] = max(_PEAK[0], status_mb("RssAnon")[0])
        time.sleep(0.02)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--crawl", required=True)
    parser.add_argument("--neighbours", type=int, default=50)
    args = parser.parse_args()

    from postprocess.memory import give_back
    from postprocess.stages import lexical
    from postprocess.stages.load import load_crawl

    crawl = load_crawl(Path(args.crawl))
    documents = lexical.PageDocuments(crawl.pages)
    give_back()
    threading.Thread(target=_sample, daemon=True).start()
    time.sleep(0.1)
    base = status_mb("RssAnon")[0]
    _PEAK[0] = base
    marks: dict[str, float] = {}
    made = lexical.LexicalIndex.__init__
    similarities = lexical.LexicalIndex.similarities

    def index_made(self: lexical.LexicalIndex, *given: object, **named: object) -> None:
        made(self, *given, **named)
        marks["index: peak"] = _PEAK[0]
        marks["index: held"] = status_mb("RssAnon")[0]

    def first_query(self: lexical.LexicalIndex, *given: object) -> object:
        if "queries: start" not in marks:
            marks["queries: start"] = status_mb("RssAnon")[0]
            _PEAK[0] = marks["queries: start"]
        return similarities(self, *given)

    lexical.LexicalIndex.__init__ = index_made
    lexical.LexicalIndex.similarities = first_query
    start = time.perf_counter()
    _, rows, _ = lexical._lexical_neighbours([documents], args.neighbours)
    marks["queries: peak"] = _PEAK[0]
    print(f"{len(rows):,} pages, {time.perf_counter() - start:.1f} s; own memory above the start "
          f"({base:.0f} MB): " + ", ".join(f"{name} {value - base:+.0f} MB" for name, value in marks.items()))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
