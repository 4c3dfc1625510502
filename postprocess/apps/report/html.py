"""report.html: one self-contained page (charts as inline SVG, the queue as embedded JSON, no request)."""

from __future__ import annotations

import shutil
from collections.abc import Callable, Sequence
from pathlib import Path

from jinja2 import Environment, FileSystemLoader, select_autoescape
from markupsafe import Markup

from postprocess.apps.report.analysis import Analysis, analyse
from postprocess.apps.report.charts import bar_chart, depth_chart, grouped_bars, trend_chart
from postprocess.apps.report.depth import LINK_SETS
from postprocess.apps.report.inbound import INBOUND_BINS
from postprocess.apps.report.queue import page_titles
from postprocess.apps.report.queue_script import queue_json, queue_json_pieces
from postprocess.stages.candidates import Suggestion
from postprocess.stages.load import Crawl
from postprocess.stages.output import replace_atomically

TEMPLATES = Path(__file__).with_name("templates")
#: Facts listed at the top, as before (summary.json keys).
FACTS = ("pages", "links", "suggestions", "sources_with_suggestions", "anchors_in_text", "anchors_from_title",
         "orphan_pages", "near_duplicate_pairs", "page_kinds")
FACT_LABELS = {"orphan_pages": "pages no other page links to (any link)"}
SCENARIO_LABELS = {"now": "now", "after": "after the whole queue", "approved": "after approved links only"}
LINK_SET_LABELS = {"content": "content links", "all": "all links"}
#: Stands in the rendered page where the queue's JSON goes, while the page is written a piece at a time.
_QUEUE_HERE = "\x00queue-data\x00"
#: Characters of a made queue JSON file copied into the page at a time.
_COPY_CHARS = 1 << 20


def _shown(value: object) -> str:
    if isinstance(value, dict):  # page kinds: "content 503, code 150, …"
        return ", ".join(f"{k} {v}" for k, v in value.items())
    return str(value)


def _confidence_line(figures: dict) -> str | None:
    conf = figures.get("confidence") or {}
    if not conf:
        return None
    at = conf.get("at_cut")
    if at:
        return (f"learned from {conf.get('links')} of the site's links (held-out AUC {conf.get('auc')}); "
                f"at ≥ {at['cut']:g}, {at['precision']:.0%} of held-out rows are links its editors made")
    return f"prior model: {conf.get('why_prior', '')}"


def make_charts(a: Analysis, titles: dict[str, str]) -> dict[str, str]:
    """Every chart of the report, by name (an SVG string each)."""
    made: dict[str, str] = {}
    scenarios = a.depths.scenarios()
    for links in LINK_SETS:
        made[f"depth-{links}"] = depth_chart(
            f"depth-{links}", f"Click depth over {LINK_SET_LABELS[links]}",
            {SCENARIO_LABELS[s]: a.depths.summary(links, s) for s in scenarios})
    made["inbound"] = grouped_bars(
        "inbound", "Inbound content links per page", [b[0] for b in INBOUND_BINS],
        {"now": list(a.links.histogram("now").values()),
         "after the whole queue": list(a.links.histogram("after").values())},
        xlabel="other pages linking to it in running content", ylabel="pages")
    proposed = a.links.most_proposed()
    if proposed:
        made["proposed"] = bar_chart(
            "proposed", "Most proposed targets", [(titles.get(p.url) or p.url, p.proposed) for p in proposed],
            "queue rows pointing at the page")
    h = a.health
    made["kinds"] = bar_chart("kinds", "Pages by kind", h.kinds.most_common(), "pages")
    made["langs"] = bar_chart("langs", "Pages by language", h.langs.most_common(12), "pages")
    made["statuses"] = bar_chart("statuses", "HTTP status codes (pages and skipped URLs)",
                                        sorted(h.statuses.items()), "URLs")
    if h.skipped:
        made["skipped"] = bar_chart("skipped", "Skipped URLs by reason",
                                           [(s.reason, s.count) for s in h.skipped], "URLs")
    if len(a.trend) > 1:
        made["trend"] = trend_chart(
            "trend", [s.label for s in a.trend],
            {"pages": [s.pages for s in a.trend], "content orphans": [s.orphans for s in a.trend],
             "content links added": [s.links_added for s in a.trend]},
            {"all links": [s.mean_depth for s in a.trend],
             "content links": [s.mean_content_depth for s in a.trend]})
    if a.decisions is not None:
        made["decisions"] = bar_chart("decisions", "Editors' decisions",
                                             list(a.decisions.counts.items()), "pairs")
    return made


def render_html(crawl: Crawl, rows: Sequence[Suggestion], figures: dict, analysis: Analysis | None = None,
                out: Path | str | None = None) -> str:
    """The report page (``analysis`` is computed when not given; ``out``: where the run's files are)."""
    a = analysis if analysis is not None else analyse(crawl, rows, out or ".")
    titles = page_titles(crawl)
    return _rendered(crawl, rows, figures, a, titles, Markup(queue_json(rows, titles)))


def _rendered(crawl: Crawl, rows: Sequence[Suggestion], figures: dict, a: Analysis, titles: dict[str, str],
              queue: Markup) -> str:
    """The report page with ``queue`` as the queue's JSON."""
    env = Environment(loader=FileSystemLoader(TEMPLATES), autoescape=select_autoescape(["html", "j2"]),
                      trim_blocks=True, lstrip_blocks=True)
    made = {name: Markup(svg) for name, svg in make_charts(a, titles).items()}
    facts = [(FACT_LABELS.get(k, k.replace("_", " ")), _shown(figures.get(k, ""))) for k in FACTS]
    confidence = _confidence_line(figures)
    if confidence:
        facts.append(("confidence", confidence))
    return env.get_template("report.html.j2").render(
        a=a, figures=figures, facts=facts, charts=made, titles=titles, rows=rows,
        scenarios=[(s, SCENARIO_LABELS[s]) for s in a.depths.scenarios()], link_sets=LINK_SET_LABELS,
        queue_json=queue, css=Markup((TEMPLATES / "report.css").read_text()),
        script=Markup((TEMPLATES / "queue.js").read_text()),
        starved=a.links.starved([p.kind for p in crawl.pages]))


def write_html(out: Path, crawl: Crawl, rows: Sequence[Suggestion], figures: dict,
               analysis: Analysis | None = None, queue: Callable[[], Path] | None = None) -> None:
    """report.html in ``out`` (written under a temporary name, then renamed): ``render_html``'s page,
    the queue's JSON written a piece at a time into it (``queue_json_pieces``), or copied from the file
    ``queue()`` returns once it is made (``QueueCopies``: the same text, made by a second process)."""
    a = analysis if analysis is not None else analyse(crawl, rows, out)
    titles = page_titles(crawl)
    page = _rendered(crawl, rows, figures, a, titles, Markup(_QUEUE_HERE))
    head, here, tail = page.partition(_QUEUE_HERE)
    streamed = bool(here) and _QUEUE_HERE not in tail
    if not streamed:  # the crawl's own text holds the marker: the page is made whole
        head, tail = _rendered(crawl, rows, figures, a, titles, Markup(queue_json(rows, titles))), ""
    del page
    made = queue() if queue is not None and streamed else None

    def write(tmp: Path) -> None:
        with open(tmp, "w", encoding="utf-8") as handle:
            handle.write(head)
            if made is not None:
                with open(made, encoding="utf-8") as queue_file:
                    shutil.copyfileobj(queue_file, handle, _COPY_CHARS)
            elif streamed:
                for piece in queue_json_pieces(rows, titles):
                    handle.write(piece)
            handle.write(tail)

    replace_atomically(out / "report.html", write)
