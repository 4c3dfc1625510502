"""Benchmark postprocess on a real crawl: time per stage, embedding pages/s, the issue's checks,
and the whole run beside the plain approach of the blog posts, on the same pages in one run.

Plain approach: title + first 2,000 characters of the text, one embedding per page
(same model), a dense n×n cosine matrix, the top 5 other pages per page.

    python3 benchmarks/postprocess.py --crawl /tmp/django-crawl [--out DIR] [--max-chunks 8]

Prints a Markdown table (wall seconds and CPU seconds: the machine may be shared).
The output folder's embedding cache is cleared first, so the run embeds every page.
"""

from __future__ import annotations

import argparse
import csv
import json
import platform
import shutil
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

# Every module imported now, so that the run uses one version of the code throughout.
from postprocess.stages import anchors, candidates, cli, embed, index, load, pipeline, report  # noqa: E402, F401
from postprocess.stages.candidates import existing_links  # noqa: E402
from postprocess.stages.embed import load_model  # noqa: E402
from postprocess.stages.load import load_crawl  # noqa: E402


class Clock:
    """Wall and CPU seconds of named steps."""

    def __init__(self) -> None:
        self.rows: dict[str, tuple[float, float]] = {}

    def time(self, name: str, fn):  # noqa: ANN001, ANN201
        wall, cpu = time.perf_counter(), time.process_time()
        value = fn()
        self.rows[name] = (time.perf_counter() - wall, time.process_time() - cpu)
        return value


def run_postprocess(crawl: str, out: Path, extra: list[str]) -> tuple[cli.Session, Clock]:
    """Every stage, as ``python -m postprocess run`` does, each timed."""
    args = cli.build_parser("run").parse_args(["run", "--crawl", crawl, "--out", str(out), *extra])
    session = cli.Session(args=args, options=cli.options_from(args), out=out)
    clock = Clock()
    for stage in cli.RUNNERS["run"]:
        clock.time(stage.__name__.removeprefix("stage_"), lambda stage=stage: stage(session))
    return session, clock


def plain_approach(crawl_dir: str, model) -> tuple[Clock, int]:  # noqa: ANN001
    """Title + first 2,000 characters, one vector per page, dense n×n matrix, top 5 per page."""
    clock = Clock()
    crawl = clock.time("load", lambda: load_crawl(crawl_dir))
    pages = [p for p in crawl.pages if p.text.strip()]
    texts = [f"{p.title}\n{p.text[:2000]}" for p in pages]
    vectors = clock.time("embed", lambda: model.model.encode(texts, batch_size=32, normalize_embeddings=True,
                                                             convert_to_numpy=True, show_progress_bar=False))

    def top5() -> np.ndarray:
        sims = vectors @ vectors.T  # the n×n matrix
        np.fill_diagonal(sims, -np.inf)
        return np.argsort(-sims, axis=1)[:, :5]

    best = clock.time("matrix + top 5", top5)
    return clock, int(best.size)


def check(out: Path, crawl_dir: str, per_source: int) -> dict[str, float]:
    """The issue's done-when figures on suggestions.csv."""
    crawl = load_crawl(crawl_dir)
    text = {p.url: p.text for p in crawl.pages}
    linked = existing_links(crawl.links)
    with open(out / "suggestions.csv", newline="", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    per: dict[str, int] = {}
    for r in rows:
        per[r["source_url"]] = per.get(r["source_url"], 0) + 1
    verbatim = sum(1 for r in rows if r["anchor"] and r["anchor"] in text.get(r["source_url"], ""))
    return {
        "rows": len(rows),
        "max_per_source": max(per.values(), default=0),
        "over_cap": sum(1 for n in per.values() if n > per_source),
        "self_links": sum(1 for r in rows if r["source_url"] == r["target_url"]),
        "already_linked": sum(1 for r in rows if (r["source_url"], r["target_url"]) in linked),
        "anchors_verbatim_pct": round(100.0 * verbatim / len(rows), 1) if rows else 0.0,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--crawl", required=True)
    parser.add_argument("--out", default=None, help="output folder (default: a temporary one)")
    parser.add_argument("extra", nargs="*", help="postprocess options after --, e.g. -- --max-chunks 4")
    args = parser.parse_args()
    out = Path(args.out or tempfile.mkdtemp(prefix="pp-bench-"))
    shutil.rmtree(out / "cache", ignore_errors=True)

    session, clock = run_postprocess(args.crawl, out, args.extra)
    stats = session.embeddings.stats
    model = session.model
    total = sum(w for w, _ in clock.rows.values())
    total_cpu = sum(c for _, c in clock.rows.values())
    cached_session, cached = run_postprocess(args.crawl, out, args.extra)  # second run: all from the cache
    plain, plain_pairs = plain_approach(args.crawl, model or load_model(None))
    # The plain approach loads the same model: count the load measured in the postprocess run.
    model_wall = session.timings.get("model", 0.0)
    plain.rows = {"model (the same load)": (model_wall, model_wall), **plain.rows}
    plain_total = sum(w for w, _ in plain.rows.values())
    plain_cpu = sum(c for _, c in plain.rows.values())
    figures = check(out, args.crawl, session.options.per_source)

    print(f"machine: {platform.machine()}, {platform.python_version()}, "
          f"{__import__('os').cpu_count()} CPUs; crawl {args.crawl}; options {args.extra or 'defaults'}")
    print(f"pages {int(stats['pages'])}, texts embedded {int(stats['texts'])} "
          f"(title + chunks), encode {stats['encode_seconds']:.1f} s → "
          f"{stats['pages'] / stats['encode_seconds']:.1f} pages/s, "
          f"{stats['texts'] / stats['encode_seconds']:.1f} texts/s\n")
    print("| step | wall s | CPU s |\n| --- | --- | --- |")
    for name, (wall, cpu) in clock.rows.items():
        inner = session.timings
        note = {"embed": f" (load {inner.get('load', 0):.1f}, model {inner.get('model', 0):.1f}, "
                         f"embed {inner.get('embed', 0):.1f})"}.get(name, "")
        print(f"| {name}{note} | {wall:.1f} | {cpu:.1f} |")
    print(f"| **postprocess, whole run** | **{total:.1f}** | **{total_cpu:.1f}** |")
    cached_total = sum(w for w, _ in cached.rows.values())
    print(f"| postprocess again, every page from the cache | {cached_total:.1f} | "
          f"{sum(c for _, c in cached.rows.values()):.1f} |")
    for name, (wall, cpu) in plain.rows.items():
        print(f"| plain: {name} | {wall:.1f} | {cpu:.1f} |")
    print(f"| **plain approach, whole** | **{plain_total:.1f}** | **{plain_cpu:.1f}** |")
    print(f"\nratio postprocess / plain: {total / plain_total:.2f}× wall, {total_cpu / plain_cpu:.2f}× CPU; "
          f"plain pairs {plain_pairs}")
    print("checks:", json.dumps(figures))
    print("summary:", json.dumps({k: v for k, v in json.loads((out / "summary.json").read_text()).items()
                                  if k not in ("outputs",)}))
    del cached_session
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
