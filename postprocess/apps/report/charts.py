"""The report's charts: matplotlib figures rendered to inline SVG (no pyplot state, no network fonts).

Text stays text in the SVG (``svg.fonttype: none``) in a generic sans-serif, so a chart is small,
selectable and drawn with the reader's fonts; each chart's ids are salted with its name, so several
charts inline in one page never share an id.
"""

from __future__ import annotations

import io
import re
from collections.abc import Sequence

import matplotlib
from matplotlib.figure import Figure

from postprocess.apps.report.depth import DepthSummary

COLOURS = ("#9aa5b1", "#2b6cb0", "#2f855a", "#c05621")  # now, after, approved, extra
WIDTH, HEIGHT = 6.4, 3.0
_METADATA = re.compile(r"\s*<metadata>.*?</metadata>", re.S)
_RC = {"svg.fonttype": "none", "font.family": "sans-serif", "font.size": 9, "axes.spines.top": False,
       "axes.spines.right": False, "axes.titlesize": 10, "axes.titleweight": "bold"}


def _svg(fig: Figure, name: str) -> str:
    buffer = io.StringIO()
    with matplotlib.rc_context({**_RC, "svg.hashsalt": name}):
        fig.savefig(buffer, format="svg", metadata={"Date": None}, bbox_inches="tight")
    text = buffer.getvalue()
    return _METADATA.sub("", text[text.index("<svg"):])


def _figure(height: float = HEIGHT) -> Figure:
    with matplotlib.rc_context(_RC):
        return Figure(figsize=(WIDTH, height), layout="constrained")


def _short(label: str, n: int = 48) -> str:
    return label if len(label) <= n else label[: n - 1] + "…"


def depth_chart(name: str, title: str, series: dict[str, DepthSummary]) -> str:
    """Grouped bars: pages at each click depth (and unreachable) per scenario, the mean in the legend."""
    deepest = max((s.deepest or 0 for s in series.values()), default=0)
    unreachable = any(s.unreachable for s in series.values())
    labels = [str(d) for d in range(deepest + 1)] + (["none"] if unreachable else [])
    fig = _figure()
    with matplotlib.rc_context(_RC):
        ax = fig.subplots()
        width = 0.8 / max(1, len(series))
        for i, (label, s) in enumerate(series.items()):
            values = [s.histogram.get(d, 0) for d in range(deepest + 1)]
            values += [s.unreachable] if unreachable else []
            mean = "–" if s.mean is None else f"{s.mean:.2f}"
            ax.bar([x + (i - (len(series) - 1) / 2) * width for x in range(len(labels))], values, width,
                   label=f"{label} (mean {mean})", color=COLOURS[i % len(COLOURS)])
        ax.set_xticks(range(len(labels)), labels)
        ax.margins(y=0.25)
        ax.set_xlabel("clicks from the start page (none: no link path)")
        ax.set_ylabel("pages")
        ax.set_title(title, loc="left")
        ax.legend(frameon=False)
    return _svg(fig, name)


def bar_chart(name: str, title: str, items: Sequence[tuple[str, float]], xlabel: str = "") -> str:
    """Horizontal bars, largest first, labels shortened."""
    items = list(items)
    fig = _figure(max(1.4, 0.28 * len(items) + 0.8))
    with matplotlib.rc_context(_RC):
        ax = fig.subplots()
        ax.barh(range(len(items)), [v for _, v in items], color=COLOURS[1])
        ax.set_yticks(range(len(items)), [_short(k) for k, _ in items])
        ax.invert_yaxis()
        for y, (_, v) in enumerate(items):
            ax.annotate(f"{v:g}", (v, y), xytext=(3, 0), textcoords="offset points", va="center", fontsize=8)
        ax.set_xlabel(xlabel)
        ax.set_title(title, loc="left")
        ax.margins(x=0.12)
    return _svg(fig, name)


def grouped_bars(name: str, title: str, categories: Sequence[str], series: dict[str, Sequence[float]],
                 xlabel: str = "", ylabel: str = "") -> str:
    """Vertical bars per category, one colour per series."""
    fig = _figure()
    with matplotlib.rc_context(_RC):
        ax = fig.subplots()
        width = 0.8 / max(1, len(series))
        for i, (label, values) in enumerate(series.items()):
            ax.bar([x + (i - (len(series) - 1) / 2) * width for x in range(len(categories))], values, width,
                   label=label, color=COLOURS[i % len(COLOURS)])
        ax.margins(y=0.2)
        ax.set_xticks(range(len(categories)), categories)
        ax.set_xlabel(xlabel)
        ax.set_ylabel(ylabel)
        ax.set_title(title, loc="left")
        ax.legend(frameon=False)
    return _svg(fig, name)


def trend_chart(name: str, labels: Sequence[str], counts: dict[str, Sequence[float | None]],
                depths: dict[str, Sequence[float | None]]) -> str:
    """Two panels over the crawl jobs: counts (pages, orphans, links added) and mean click depth."""
    fig = _figure(HEIGHT * 1.5)
    with matplotlib.rc_context(_RC):
        top, bottom = fig.subplots(2, 1, sharex=True)
        x = range(len(labels))
        for i, (label, values) in enumerate(counts.items()):
            top.plot(x, [float("nan") if v is None else v for v in values], marker="o", label=label,
                     color=COLOURS[(i + 1) % len(COLOURS)])
        top.set_title("Pages, orphans and links added per crawl", loc="left")
        top.legend(frameon=False)
        for i, (label, values) in enumerate(depths.items()):
            bottom.plot(x, [float("nan") if v is None else v for v in values], marker="o", label=label,
                        color=COLOURS[i % len(COLOURS)])
        bottom.set_title("Mean click depth per crawl", loc="left")
        bottom.set_ylabel("clicks")
        bottom.legend(frameon=False)
        bottom.set_xticks(list(x), labels, rotation=20, ha="right")
    return _svg(fig, name)
