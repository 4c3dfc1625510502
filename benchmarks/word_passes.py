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
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

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


def measure(checkout: Path, crawl: Path) -> dict:
    """One fresh process in ``checkout``: each pass's CPU seconds and its output's digest."""
    done = subprocess.run([sys.executable, "-c", _CHILD, str(checkout), str(crawl)],
                          cwd=checkout, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        sys.exit(f"word_passes: {checkout} failed: {done.stderr.strip().splitlines()[-1:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("checkouts", nargs="+", type=Path, help="repository roots to compare")
    parser.add_argument("--crawl", type=Path, required=True, help="a crawl dataset folder")
    parser.add_argument("--repeat", type=int, default=3, help="fresh processes per checkout")
    args = parser.parse_args(argv)
    for path in (args.crawl, *args.checkouts):
        if not path.exists():
            sys.exit(f"word_passes: {path} does not exist")
    runs: dict[Path, list[dict]] = {c: [] for c in args.checkouts}
    started = time.perf_counter()
    for turn in range(args.repeat):
        for checkout in args.checkouts if turn % 2 == 0 else list(reversed(args.checkouts)):
            runs[checkout].append(measure(checkout.resolve(), args.crawl))
    for name in PASSES:
        if len({r["digests"][name] for results in runs.values() for r in results}) != 1:
            sys.exit(f"word_passes: the checkouts' {name} differ")
    print(f"{args.repeat} runs each, alternating, {time.perf_counter() - started:.0f} s in all; "
          "every pass's output the same in every run")
    print("| checkout | " + " | ".join(f"{name} min | median | ratio" for name in PASSES) + " |")
    print("| --- |" + " ---: | ---: | ---: |" * len(PASSES))
    first = runs[args.checkouts[0]]
    base = {name: min(r["seconds"][name] for r in first) for name in PASSES}
    for checkout, results in runs.items():
        cells = []
        for name in PASSES:
            seconds = [r["seconds"][name] for r in results]
            cells.append(f"{min(seconds):.2f} s | {statistics.median(seconds):.2f} s | "
                         f"{min(seconds) / base[name]:.2f}")
        print(f"| {checkout} | " + " | ".join(cells) + " |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
