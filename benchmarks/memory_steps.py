"""Where the ranking's memory goes: its steps in one process, the memory each one adds.

Loads the crawl, the page vectors and index of an earlier run (``--out`` must hold them), then
builds, one after the other and in this process (``--workers 1``), what ``run``'s rank stage
builds: the lexical evidence (names, then TF-IDF and its neighbours), the anchor finder and the
candidate pool (``--learn``: then the confidence model's steps, the editors' links and the
three folds, as the learning child makes them). After each step it prints the growth of the
process's own (anonymous) memory and of its resident file pages (the mapped index and chunk
vectors), after ``gc.collect()`` and ``malloc_trim(0)``, the peak of its own memory during the
step (sampled every 50 ms: the load's transient peak), and the size of the step's largest
structures.

    python benchmarks/memory_steps.py --crawl /work/runs/scale/crawl-100000 \
        --out /work/runs/scale/out-100000 [--learn]
"""

from __future__ import annotations

import argparse
import ctypes
import gc
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from memory_profile import status_mb  # noqa: E402 - found through the path set just above


def _status_mb() -> tuple[float, float]:
    """(anonymous, file) resident memory of this process in MB, as it is now."""
    anonymous, file = status_mb("RssAnon", "RssFile")
    return anonymous, file


def resident_mb() -> tuple[float, float]:
    """``_status_mb`` after collecting and trimming."""
    gc.collect()
    try:
        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except OSError:
        pass
    return _status_mb()


#: The highest anonymous memory sampled since the last step (MB).
_PEAK = [0.0]


def _sample() -> None:
    while True:
        _PEAK[0] = max(_PEAK[0], _status_mb()[0])
        time.sleep(0.05)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--crawl", required=True)
    parser.add_argument("--out", required=True, help="a run's output folder (vectors.parquet, index.ann)")
    parser.add_argument("--learn", action="store_true", help="then the confidence model's steps")
    args = parser.parse_args()

    from postprocess import cli
    from postprocess.options import options_from
    from postprocess.pipeline import candidate_pool
    from postprocess.stages.anchors import AnchorFinder
    from postprocess.stages.scoring import Evidence

    run = cli.build_parser("run").parse_args(["run", "--crawl", args.crawl, "--out", args.out,
                                              "--encoder", "static", "--workers", "1"])
    session = cli.Session(args=run, options=options_from(run), out=Path(args.out))
    last = resident_mb()
    pages = 1
    threading.Thread(target=_sample, daemon=True).start()

    def step(name: str, note: str = "") -> None:
        nonlocal last
        now = resident_mb()
        anon, file = now[0] - last[0], now[1] - last[1]
        print(f"{name:28s} own +{anon:8.1f} MB ({1024 * anon / pages:6.2f} KB a page), "
              f"peak {_PEAK[0]:7.1f} MB  file pages +{file:7.1f} MB  {note}", flush=True)
        last = now
        _PEAK[0] = now[0]

    crawl = session.get_crawl()
    pages = len(crawl.pages)
    step("load")
    cli._vectors_and_index(session)
    step("page vectors and index")
    evidence = Evidence(crawl, session.embeddings, session.options.neighbours, 1)
    names = evidence.site.names
    step("evidence: names", f"{len(names.by_words):,} names")
    evidence.ready()
    matrix = evidence.site.lexical.matrix
    tfidf = (matrix.data.nbytes + matrix.indices.nbytes + matrix.indptr.nbytes) / 2**20
    neighbours = (evidence.site.lexical_rows.nbytes + evidence.site.lexical_sims.nbytes) / 2**20
    step("evidence: TF-IDF, neighbours", f"matrix {tfidf:.0f} MB, neighbour arrays {neighbours:.0f} MB")
    finder = AnchorFinder(crawl, session.options.title_anchors, 1)
    step("anchor finder")
    pool, cannibal, _ = candidate_pool(crawl, session.embeddings, session.index, session.options, evidence)
    columns = sum(a.nbytes for a in (pool.sources, pool.targets, pool.scores, pool.ranks,
                                     *pool.parts.values())) / 2**20
    step("candidate pool", f"{len(pool):,} pairs, columns {columns:.0f} MB; "
                           f"{len(cannibal):,} near-duplicate rows")
    if args.learn:
        from postprocess.pipeline import learn_confidence
        from postprocess.stages import confidence

        links = confidence.editor_links(crawl, session.options)
        sources = confidence.sample_sources(links.source_urls(), confidence.MAX_TRAINING_SOURCES)
        pairs = links.pairs(sources)
        step("confidence: editors' links", f"{len(links):,} links, {len(pairs):,} pairs of "
                                           f"{len(sources or ()):,} sampled sources")
        del links, pairs
        model = learn_confidence(crawl, session.embeddings, session.index, cli.passage_vectors(session),
                                 session.options, finder, evidence)
        why = model.report.get("why_prior") or f"AUC {model.report.get('auc')}"
        step("confidence: the folds, learned", f"model: {model.source} ({why})")
    del evidence, names
    step("evidence freed", f"(the finder, kept: {len(finder.pages):,} pages)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
