"""Scale benchmark: postprocess on synthetic crawls of growing size, stage by stage.

For each ``--sizes`` N: writes (once) a synthetic crawl of N pages
(``benchmarks/synthetic_site.py``), runs ``python -m postprocess run --encoder static``
into an empty output folder (cold: every page embedded) and again into the same folder
(warm: the embedding cache holds every page), and records wall time, the process tree's CPU
time, peak RSS and the seconds of each stage from ``summary.json``. Then, on the first size:
Annoy recall@10 against exact search for ``--queries`` pages at the default trees, and the
transformer's texts/s on this machine's device (``--device auto``). ``--cold-only`` makes the
cold run alone, ``--command embed`` runs that stage alone (a million pages' cache filled first).

    python benchmarks/scale.py --work /tmp/scale --sizes 10000 30000
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.append(str(ROOT / "benchmarks"))  # last: benchmarks/postprocess.py must not shadow the package

import timing  # noqa: E402
from timing import postprocess_run  # noqa: E402


def _synthetic():  # noqa: ANN202 - the module beside this file (not on sys.path: benchmarks/postprocess.py
    # would shadow the postprocess package)
    import importlib.util

    path = Path(__file__).with_name("synthetic_site.py")
    spec = importlib.util.spec_from_file_location("synthetic_site", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while the class is made
    spec.loader.exec_module(module)
    return module


def run(crawl: Path, out: Path, extra: list[str], command: str = "run") -> dict:
    wall, rss_kb, summary = postprocess_run(crawl, out, ["--encoder", "static", *extra], command)
    return {"seconds": round(wall, 1), "cpu_seconds": round(timing.LAST_CPU_SECONDS, 1),
            "peak_rss_gb": round(rss_kb / 1024 / 1024, 2),
            "peak_tree_pss_gb": round(timing.LAST_TREE_PSS_KB / 1024 / 1024, 2),
            "peak_tree_anon_gb": round(timing.LAST_TREE_ANON_KB / 1024 / 1024, 2),
            "peak_process_anon_gb": round(timing.LAST_PROCESS_ANON_KB / 1024 / 1024, 2),
            "peak_rss_at": {"seconds": timing.LAST_PEAK_AT[0], "process": timing.LAST_PEAK_AT[1],
                            "kib": timing.LAST_PEAK_AT[2]},
            "stages": summary.get("seconds", {}), "pages": summary.get("pages"),
            "links": summary.get("links"), "suggestions": summary.get("suggestions"),
            "embedded_pages": summary.get("embedding", {}).get("embedded_pages")}


def annoy_recall(out: Path, queries: int, k: int = 10, seed: int = 0) -> float:
    """Mean share of the exact top-k neighbours (cosine) the saved index returns, default search_k."""
    from postprocess.stages.embed import read_vectors
    from postprocess.stages.index import load_index

    vectors = read_vectors(out / "vectors.parquet").vectors
    index = load_index(out)
    rng = np.random.default_rng(seed)
    found = 0
    picked = rng.choice(len(vectors), min(queries, len(vectors)), replace=False)
    for i in picked:
        sims = vectors @ vectors[i]
        sims[i] = -np.inf
        exact = set(np.argpartition(-sims, k)[:k].tolist())
        approx = [j for j in index.annoy.get_nns_by_item(int(i), k + 1) if j != i][:k]
        found += len(exact & set(approx))
    return round(found / (k * len(picked)), 4)


def texts_per_second(crawl: Path, count: int = 512) -> dict:
    """The transformer's throughput on texts of one model window, on the device ``auto`` picks."""
    import pyarrow.dataset as ds

    from postprocess.stages.embed import load_model

    column = ds.dataset(crawl / "pages").to_table(columns=["text"])["text"]
    texts = [t[:1200] for t in column.to_pylist()[:count]]
    model = load_model(None, None, "auto")
    model.encode(texts[:32], 32)  # warm up
    started = time.perf_counter()
    model.encode(texts, 64)
    seconds = time.perf_counter() - started
    return {"device": model.device, "texts": len(texts), "texts_per_second": round(len(texts) / seconds, 1)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--work", type=Path, required=True)
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000])
    parser.add_argument("--queries", type=int, default=1000)
    parser.add_argument("--no-texts-per-second", action="store_true")
    parser.add_argument("--warm-only", action="store_true",
                        help="keep each size's output folder, run the warm run only (its cache must be full)")
    parser.add_argument("--only-checks", action="store_true",
                        help="skip the runs: Annoy recall and texts/s on the first size's existing output")
    parser.add_argument("--cold-only", action="store_true",
                        help="the cold run alone, into an empty output folder")
    parser.add_argument("--command", default="run", choices=["run", "embed"],
                        help="postprocess's whole run (default) or its embedding stage alone")
    args, extra = parser.parse_known_args()
    args.work.mkdir(parents=True, exist_ok=True)
    results = []
    for size in [] if args.only_checks else args.sizes:
        crawl = args.work / f"crawl-{size}"
        if not (crawl / "pages").is_dir():
            write_crawl = _synthetic().write_crawl
            started = time.perf_counter()
            write_crawl(size, crawl)
            print(f"generated {size:,} pages in {time.perf_counter() - started:.0f} s", file=sys.stderr)
        out = args.work / f"out-{size}"
        if args.warm_only and out.is_dir():
            results.append({"pages": size, "warm": run(crawl, out, extra, args.command)})
        else:
            if out.exists():
                shutil.rmtree(out)
            cold = run(crawl, out, extra, args.command)
            if args.cold_only:
                results.append({"pages": size, "cold": cold})
            else:
                results.append({"pages": size, "cold": cold, "warm": run(crawl, out, extra, args.command)})
        print(json.dumps(results[-1]), file=sys.stderr)
    report: dict = {"runs": results}
    first = args.work / f"out-{args.sizes[0]}"
    if args.queries:
        report["annoy_recall_at_10"] = annoy_recall(first, args.queries)
    if not args.no_texts_per_second:
        report["transformer"] = texts_per_second(args.work / f"crawl-{args.sizes[0]}")
    warm = [r for r in results if "warm" in r]  # none with --cold-only
    base = warm[0]["warm"]["seconds"] / warm[0]["pages"] if warm else 0
    for r in warm:
        r["warm_ms_per_page"] = round(1000 * r["warm"]["seconds"] / r["pages"], 2)
        r["per_page_vs_first"] = round(r["warm"]["seconds"] / r["pages"] / base, 2)
        r["warm_cpu_ms_per_page"] = round(1000 * r["warm"]["cpu_seconds"] / r["pages"], 2)
    print(json.dumps(report, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
