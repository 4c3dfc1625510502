"""The figures of a run: summary.json and the lines printed at the end."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

from postprocess.apps.report.analysis import Analysis
from postprocess.stages.candidates import Suggestion
from postprocess.stages.load import Crawl
from postprocess.stages.output import replace_atomically
from postprocess.stages.scoring import inbound_counts


def orphan_pages(crawl: Crawl) -> list[str]:
    """Pages no other page links to (after aliases are resolved)."""
    inbound = inbound_counts(crawl)
    return sorted(p.url for p in crawl.pages if inbound.get(p.url, 0) == 0)


def summary(crawl: Crawl, rows: Sequence[Suggestion], near_duplicates: int,
            timings: dict[str, float], out: Path, rejected: Counter[str] | None = None,
            confidence: dict | None = None, analysis: Analysis | None = None) -> dict:
    """The figures of a run (summary.json and the lines printed at the end; ``near_duplicates``: the
    pairs in cannibalisation.csv); with ``analysis``, also
    click depth now and after, content orphans, crawl health, the trend and the decisions' counts."""
    figures = {
        "pages": len(crawl.pages),
        "links": len(crawl.links),
        "suggestions": len(rows),
        "sources_with_suggestions": len({s.source_url for s in rows}),
        "anchors_in_text": sum(1 for s in rows if s.anchor_type == "text"),
        "anchors_from_title": sum(1 for s in rows if s.anchor_type == "title"),
        "orphan_pages": len(orphan_pages(crawl)),
        "near_duplicate_pairs": near_duplicates,
        "page_kinds": dict(Counter(p.kind for p in crawl.pages).most_common()),
        "rejected": dict(sorted((rejected or Counter()).items())),
        "seconds": {k: round(v, 2) for k, v in timings.items()},
        "outputs": {name: str(out / name) for name in
                    ("suggestions.csv", "suggestions.parquet", "cannibalisation.csv", "report.html",
                     "summary.json")},
    }
    if confidence:
        figures["confidence"] = {"model": confidence.get("source"), **(confidence.get("report") or {})}
    if analysis is not None:
        figures.update(analysis.figures())
    return figures


def _depth_line(figures: dict) -> str | None:
    depth = figures.get("depth", {}).get("all")
    if not depth or depth["now"]["mean"] is None:
        return None
    now, after = depth["now"], depth["after"]
    orphans = figures.get("content_orphans", {})
    return (f"click depth      mean {now['mean']:.2f} now, {after['mean']:.2f} after the queue (all links); "
            f"content orphans {orphans.get('now', 0)} -> {orphans.get('after', 0)}")


def format_summary(figures: dict) -> str:
    """One screen: counts, time per stage, where the files are."""
    lines = [
        f"pages            {figures['pages']}",
        f"suggestions      {figures['suggestions']} from {figures['sources_with_suggestions']} source pages "
        f"({figures['anchors_in_text']} anchors found in the text, "
        f"{figures['anchors_from_title']} from titles)",
        f"orphan pages     {figures['orphan_pages']} (no inbound internal link)",
        "page kinds       " + ", ".join(f"{k} {v}" for k, v in figures.get("page_kinds", {}).items()),
        f"near duplicates  {figures['near_duplicate_pairs']} pairs (cannibalisation.csv)",
        "time per stage   " + ", ".join(f"{k} {v:.1f} s" for k, v in figures["seconds"].items()),
    ]
    depth = _depth_line(figures)
    if depth:
        lines.insert(3, depth)
    conf = figures.get("confidence")
    if conf and conf.get("at_cut"):
        cut = conf["at_cut"]
        lines.insert(3, f"confidence       learned from {conf['links']} of the site's links: "
                        f"at ≥ {cut['cut']:g}, "
                        f"{cut['precision']:.0%} of held-out rows are links its editors made")
    elif conf:
        lines.insert(3, f"confidence       prior model ({conf.get('why_prior', '')})")
    if "embedding" in figures:
        emb = figures["embedding"]
        lines.insert(4, f"embedded         {emb['embedded_pages']} pages ({emb['cached_pages']} unchanged, "
                        "from the cache)")
    lines += [f"{name:<17}{path}" for name, path in figures["outputs"].items()
              if name in ("suggestions.csv", "report.html")]
    return "\n".join(lines)


def write_summary(out: Path, figures: dict) -> None:
    replace_atomically(out / "summary.json",
                       lambda tmp: tmp.write_text(json.dumps(figures, indent=2) + "\n", encoding="utf-8"))
