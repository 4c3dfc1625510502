"""CPU seconds of the passes over every page's words, in one process, for comparing checkouts.

The passes that read every page's text as words: the TF-IDF counts (``lexical.term_counts``), the
names found in page texts (``lexical.scan_page_names``), the finder's pages per word and per name
(``anchors._prose_counts``) and its proper nouns (``anchors.proper_nouns``). Each checkout is run
``--repeat`` times, alternating, each time in a fresh process (``time.process_time``, one core),
and the minimum and median of each pass are printed side by side; every run must give the same
results (a digest of each pass's output is compared)::

    python3 benchmarks/word_passes.py --crawl /work/runs/scale/crawl-10000 --repeat 3 /tmp/wt-old .
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
sys.path.insert(0, sys.argv[1])
from postprocess.stages.anchors import _prose_counts, proper_nouns
from postprocess.stages.lexical import scan_page_names, term_counts
from postprocess.stages.load import load_crawl, text_of, text_source
from postprocess.stages.tokeniser import terms, words

crawl = load_crawl(sys.argv[2])
texts = [text_of(text_source(page)) for page in crawl.pages]
titles = sorted({page.title for page in crawl.pages if page.title})
term_names = sorted({tuple(terms(t)) for t in titles} - {()})
word_names = sorted({tuple(words(t)) for t in titles} - {()})
seconds, digests = {}, {}

def timed(name, work):
    started = time.process_time()
    result = work()
    seconds[name] = time.process_time() - started
    digests[name] = hashlib.sha256(repr(result).encode()).hexdigest()

def counts():
    matrix = term_counts(texts, 2, 0.5)
    return (matrix.shape, matrix.data.tobytes(), matrix.indices.tobytes(), matrix.indptr.tobytes())

def names():
    found = scan_page_names(term_names, texts)
    return (found.ids.tobytes(), found.counts.tobytes(), found.indptr.tobytes())

def prose():
    pages_per_word, table = _prose_counts(crawl, word_names)
    return (list(pages_per_word.items()), [table.get(key, 0) for key in word_names])

timed("tf-idf counts", counts)
timed("names in texts", names)
timed("words and names a page", prose)
timed("proper nouns", lambda: sorted(proper_nouns(texts)))
print(json.dumps({"seconds": seconds, "digests": digests}))
"""

PASSES = ("tf-idf counts", "names in texts", "words and names a page", "proper nouns")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("checkouts", nargs="+", type=Path, help="repository roots to compare")
    parser.add_argument("--crawl", type=Path, required=True, help="a crawl dataset folder")
    parser.add_argument("--repeat", type=int, default=3, help="fresh processes per checkout")
    args = parser.parse_args(argv)
    started = time.perf_counter()
    runs = compare("word_passes", _CHILD, args.checkouts, [str(args.crawl)], args.repeat)
    for name in PASSES:
        if len({r["digests"][name] for results in runs.values() for r in results}) != 1:
            sys.exit(f"word_passes: the checkouts' {name} differ")
    print(f"{args.repeat} runs each, alternating, {time.perf_counter() - started:.0f} s in all; "
          "every pass's output the same in every run")
    table(runs, PASSES, lambda run, name: run["seconds"][name])
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
