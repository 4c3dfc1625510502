"""Outputs: suggestions.csv / .parquet, cannibalisation.csv, report.html, summary.json + stdout.

Every file is written under a temporary name and renamed when complete, so a file
with the final name is always whole (an old one stays as it was if a run fails).
"""

from __future__ import annotations

import csv
import html
import json
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from postprocess.errors import InputError
from postprocess.stages.anchors import clean_title, site_title_parts
from postprocess.stages.candidates import Suggestion
from postprocess.stages.load import Crawl
from postprocess.stages.output import PAGES_FILE, replace_atomically
from postprocess.stages.scoring import PART_COLUMNS, inbound_counts

SUGGESTION_COLUMNS = ("source_url", "target_url", "anchor", "anchor_type", "context", "confidence", "score",
                      "evidence", "rank")
#: Kept in the stage files (candidates/anchored.parquet) for the next stage, not in the queue's outputs.
STAGE_COLUMNS = ("passage",)
INFO_COLUMNS = ("source_title", "target_title", "target_inbound")
CANNIBAL_COLUMNS = ("url_a", "url_b", "title_a", "title_b", "similarity", "already_linked")
HTML_ROWS = 2000  # queue rows shown in report.html (the CSV has them all)


def part_names(rows: Sequence[Suggestion]) -> list[str]:
    """Score parts in column order: the known ones first, then any others by name."""
    seen = {k for s in rows for k in s.parts}
    return [c for c in PART_COLUMNS if c in seen or not rows] + sorted(seen - set(PART_COLUMNS))


def page_titles(crawl: Crawl) -> dict[str, str]:
    """URL → title without the site-wide segments (what an editor reads)."""
    site = site_title_parts([p.title for p in crawl.pages])
    return {p.url: clean_title(p.title, site) or p.h1 for p in crawl.pages}


def suggestions_table(rows: Sequence[Suggestion], crawl: Crawl | None = None,
                      stage: bool = False, titles: dict[str, str] | None = None) -> pa.Table:
    """The queue as a table, best first; titles and inbound counts when ``crawl`` is given.

    ``stage`` adds what the next stage needs (the anchor's paragraph); ``titles``: ``page_titles``
    of ``crawl`` when the caller has them.
    """
    parts = part_names(rows)
    columns: dict[str, pa.Array] = {
        "source_url": pa.array([s.source_url for s in rows], pa.string()),
        "target_url": pa.array([s.target_url for s in rows], pa.string()),
        "anchor": pa.array([s.anchor for s in rows], pa.string()),
        "anchor_type": pa.array([s.anchor_type for s in rows], pa.string()),
        "context": pa.array([s.context for s in rows], pa.string()),
        "confidence": pa.array([s.confidence for s in rows], pa.float64()),
        "score": pa.array([s.score for s in rows], pa.float64()),
        "evidence": pa.array([s.evidence for s in rows], pa.string()),
        "rank": pa.array([s.rank for s in rows], pa.int32()),
    }
    if stage:
        columns["passage"] = pa.array([s.passage for s in rows], pa.string())
    for name in parts:
        columns[name] = pa.array([s.parts.get(name) for s in rows], pa.float64())
    if crawl is not None:
        titles = titles if titles is not None else page_titles(crawl)
        inbound = inbound_counts(crawl)
        columns["source_title"] = pa.array([titles.get(s.source_url, "") for s in rows], pa.string())
        columns["target_title"] = pa.array([titles.get(s.target_url, "") for s in rows], pa.string())
        columns["target_inbound"] = pa.array([inbound.get(s.target_url, 0) for s in rows], pa.int32())
    return pa.table(columns)


def read_suggestions(path: Path) -> list[Suggestion]:
    """Suggestions back from a Parquet file written by ``write_parquet``."""
    if not path.is_file():
        raise InputError(f"{path} not found: run the earlier stages first")
    table = pq.read_table(path)
    base = set(SUGGESTION_COLUMNS) | set(INFO_COLUMNS) | set(STAGE_COLUMNS)
    parts = [c for c in table.column_names if c not in base]
    rows = []
    for r in table.to_pylist():
        rows.append(Suggestion(r["source_url"], r["target_url"], r["score"],
                               {p: r[p] for p in parts if r[p] is not None}, r["rank"] or 0,
                               r["anchor"] or "", r["anchor_type"] or "", r["context"] or "",
                               r.get("evidence") or "", r.get("passage") or "", r.get("confidence") or 0.0))
    return rows


def write_parquet(path: Path, rows: Sequence[Suggestion], crawl: Crawl | None = None) -> None:
    """A stage file: the rows with everything the next stage reads."""
    table = suggestions_table(rows, crawl, stage=True)
    replace_atomically(path, lambda tmp: pq.write_table(table, tmp))


def write_csv(path: Path, table: pa.Table, columns: Sequence[str]) -> None:
    """``columns`` of ``table`` as UTF-8 CSV with a header row."""
    data = {c: table[c].to_pylist() for c in columns}

    def write(tmp: Path) -> None:
        with open(tmp, "w", newline="", encoding="utf-8") as handle:
            writer = csv.writer(handle)
            writer.writerow(columns)
            writer.writerows(zip(*(data[c] for c in columns), strict=True))

    replace_atomically(path, write)


def csv_columns(table: pa.Table) -> list[str]:
    """Editor's order: who links to whom with which words, then the score and its parts."""
    first = ["source_url", "target_url", "anchor", "anchor_type", "context", "confidence", "score",
             "evidence"]
    info = [c for c in ("source_title", "target_title", "target_inbound", "rank") if c in table.column_names]
    return first + [c for c in table.column_names if c not in first and c not in info] + info


def write_pages(out: Path, titles: dict[str, str]) -> None:
    """``pages.parquet``: url and clean title (``page_titles``) of every page of the crawl."""
    table = pa.table({"url": pa.array(list(titles), pa.string()),
                      "title": pa.array(list(titles.values()), pa.string())})
    replace_atomically(out / PAGES_FILE, lambda tmp: pq.write_table(table, tmp))


def write_suggestions(out: Path, rows: Sequence[Suggestion], crawl: Crawl) -> pa.Table:
    """suggestions.parquet and suggestions.csv (same rows, score descending)."""
    titles = page_titles(crawl)
    table = suggestions_table(rows, crawl, titles=titles)
    replace_atomically(out / "suggestions.parquet", lambda tmp: pq.write_table(table, tmp))
    write_pages(out, titles)
    write_csv(out / "suggestions.csv", table, csv_columns(table))
    return table


def write_cannibalisation(out: Path, pairs: Sequence[Suggestion], crawl: Crawl) -> None:
    """Near-duplicate pairs (similarity above --max-similarity): one row per pair."""
    titles = page_titles(crawl)
    table = pa.table({
        "url_a": [p.source_url for p in pairs], "url_b": [p.target_url for p in pairs],
        "title_a": [titles.get(p.source_url, "") for p in pairs],
        "title_b": [titles.get(p.target_url, "") for p in pairs],
        "similarity": pa.array([p.parts.get("similarity", p.score) for p in pairs], pa.float64()),
        "already_linked": pa.array([bool(p.parts.get("already_linked")) for p in pairs], pa.bool_()),
    }, schema=pa.schema([(c, pa.float64() if c == "similarity" else pa.bool_() if c == "already_linked"
                          else pa.string()) for c in CANNIBAL_COLUMNS]))
    write_csv(out / "cannibalisation.csv", table, CANNIBAL_COLUMNS)


def orphan_pages(crawl: Crawl) -> list[str]:
    """Pages no other page links to (after aliases are resolved)."""
    inbound = inbound_counts(crawl)
    return sorted(p.url for p in crawl.pages if inbound.get(p.url, 0) == 0)


def summary(crawl: Crawl, rows: Sequence[Suggestion], cannibal: Sequence[Suggestion],
            timings: dict[str, float], out: Path, rejected: Counter[str] | None = None,
            confidence: dict | None = None) -> dict:
    """The figures of a run (summary.json and the lines printed at the end)."""
    figures = {
        "pages": len(crawl.pages),
        "links": len(crawl.links),
        "suggestions": len(rows),
        "sources_with_suggestions": len({s.source_url for s in rows}),
        "anchors_in_text": sum(1 for s in rows if s.anchor_type == "text"),
        "anchors_from_title": sum(1 for s in rows if s.anchor_type == "title"),
        "orphan_pages": len(orphan_pages(crawl)),
        "near_duplicate_pairs": len(cannibal),
        "page_kinds": dict(Counter(p.kind for p in crawl.pages).most_common()),
        "rejected": dict(sorted((rejected or Counter()).items())),
        "seconds": {k: round(v, 2) for k, v in timings.items()},
        "outputs": {name: str(out / name) for name in
                    ("suggestions.csv", "suggestions.parquet", "cannibalisation.csv", "report.html",
                     "summary.json")},
    }
    if confidence:
        figures["confidence"] = {"model": confidence.get("source"), **(confidence.get("report") or {})}
    return figures


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


_CSS = """body{font:14px/1.4 system-ui,sans-serif;margin:2em;color:#222}table{border-collapse:collapse;
width:100%;margin:1em 0}th,td{border-bottom:1px solid #ddd;padding:4px 6px;text-align:left;vertical-align:top}
th{background:#f4f4f4}td.n{text-align:right;white-space:nowrap}mark{background:#ffe98a}.small{color:#666;
font-size:12px}dl{display:grid;grid-template-columns:max-content auto;gap:2px 1em}dt{font-weight:600}"""


def _e(value: object) -> str:
    return html.escape(str(value), quote=True)


def _link(url: str, label: str | None = None) -> str:
    return f'<a href="{_e(url)}">{_e(label or url)}</a>'


def _context_html(s: Suggestion) -> str:
    if s.anchor_type == "text" and s.anchor and s.anchor in s.context:
        before, _, after = s.context.partition(s.anchor)
        return f"{_e(before)}<mark>{_e(s.anchor)}</mark>{_e(after)}"
    return _e(s.context)


def render_html(crawl: Crawl, rows: Sequence[Suggestion], figures: dict) -> str:
    """A self-contained page: figures, the queue, orphan pages, most-linked pages."""
    titles = page_titles(crawl)
    inbound = inbound_counts(crawl)
    parts = part_names(rows)
    # The editor's sentence: in SOURCE, link to TARGET with ANCHOR, in this CONTEXT.
    columns = ("source", "target", "anchor", "context", "confidence", "score", *parts)
    head = "".join(f"<th>{_e(h)}</th>" for h in columns)
    body = []
    for s in rows[:HTML_ROWS]:
        cells = [_link(s.source_url, titles.get(s.source_url) or s.source_url),
                 _link(s.target_url, titles.get(s.target_url) or s.target_url),
                 _e(s.anchor) + ("" if s.anchor_type == "text" else ' <span class="small">(title)</span>'),
                 _context_html(s)]
        numbers = [f"{s.confidence:.2f}", f"{s.score:.3f}"] + [f"{s.parts.get(p, 0):.3f}" for p in parts]
        body.append("<tr>" + "".join(f"<td>{c}</td>" for c in cells)
                    + "".join(f'<td class="n">{n}</td>' for n in numbers) + "</tr>")
    orphans = orphan_pages(crawl)
    top = sorted(inbound.items(), key=lambda kv: (-kv[1], kv[0]))[:25]
    known = {p.url for p in crawl.pages}
    def shown_value(value: object) -> str:
        if isinstance(value, dict):  # page kinds: "content 503, code 150, …"
            return ", ".join(f"{k} {v}" for k, v in value.items())
        return str(value)

    facts = "".join(f"<dt>{_e(k.replace('_', ' '))}</dt><dd>{_e(shown_value(figures.get(k, '')))}</dd>"
                    for k in ("pages", "links", "suggestions", "sources_with_suggestions", "anchors_in_text",
                              "anchors_from_title", "orphan_pages", "near_duplicate_pairs", "page_kinds"))
    conf = figures.get("confidence") or {}
    if conf:
        at = conf.get("at_cut")
        said = (f"learned from {conf.get('links')} of the site's links (held-out AUC {conf.get('auc')}); "
                f"at ≥ {at['cut']:g}, {at['precision']:.0%} of held-out rows are links its editors made"
                if at else f"prior model: {conf.get('why_prior', '')}")
        facts += f"<dt>confidence</dt><dd>{_e(said)}</dd>"
    shown = ""
    if len(rows) > HTML_ROWS:
        shown = f' <span class="small">(first {HTML_ROWS}; all in suggestions.csv)</span>'
    return "\n".join([
        "<!doctype html>", '<html lang="en"><head><meta charset="utf-8">',
        "<title>Internal-link review queue</title>", f"<style>{_CSS}</style></head><body>",
        "<h1>Internal-link review queue</h1>", f"<dl>{facts}</dl>",
        f"<h2>Suggestions{shown}</h2>", f"<table><thead><tr>{head}</tr></thead><tbody>",
        *body, "</tbody></table>",
        f"<h2>Orphan pages ({len(orphans)})</h2><p class=\"small\">No other page links to these.</p><ul>",
        *(f"<li>{_link(u, titles.get(u) or u)}</li>" for u in orphans), "</ul>",
        "<h2>Most linked pages</h2><table><thead><tr><th>page</th><th>inbound</th></tr></thead><tbody>",
        *(f'<tr><td>{_link(u, titles.get(u) or u)}</td><td class="n">{n}</td></tr>' for u, n in top
          if u in known),
        "</tbody></table></body></html>",
    ])


def write_html(out: Path, crawl: Crawl, rows: Sequence[Suggestion], figures: dict) -> None:
    text = render_html(crawl, rows, figures)
    replace_atomically(out / "report.html", lambda tmp: tmp.write_text(text, encoding="utf-8"))
