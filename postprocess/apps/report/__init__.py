"""The run's outputs for people: the queue's files, summary.json, and report.html.

report.html shows the site's link structure now and after the queue (click depth, orphans, hubs,
starved pages), crawl health, the trend over crawl jobs, the editors' decisions, and the queue itself
(sortable, filterable, paged in the page). Modules: ``queue`` (suggestions.csv/.parquet, stage files),
``graph``/``depth``/``inbound`` (link structure), ``health``, ``trend``, ``decisions``, ``analysis``
(all of it computed once), ``charts`` (matplotlib SVG), ``html`` (the Jinja2 page), ``queue_script``
(the queue's JSON in the page), ``copies`` (a long queue's CSV and JSON made by a second process),
``figures`` (summary.json and the printed summary).

The names below are imported from their modules when first read (PEP 562), so that a process that
needs one module (the copies process: ``queue`` and ``queue_script``) does not import matplotlib,
Jinja2 and scikit-learn with the rest (~110 MB of its memory).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from postprocess.apps.report.analysis import Analysis, analyse
    from postprocess.apps.report.figures import format_summary, orphan_pages, summary, write_summary
    from postprocess.apps.report.html import render_html, write_html
    from postprocess.apps.report.queue import (
        CANNIBAL_COLUMNS,
        INFO_COLUMNS,
        SUGGESTION_COLUMNS,
        csv_columns,
        csv_rows,
        page_titles,
        part_names,
        read_pool,
        read_suggestions,
        suggestions_table,
        write_cannibalisation,
        write_csv,
        write_pages,
        write_parquet,
        write_suggestions,
    )

#: Each name's module.
_HOMES = {
    "Analysis": "analysis", "analyse": "analysis",
    "format_summary": "figures", "orphan_pages": "figures", "summary": "figures", "write_summary": "figures",
    "render_html": "html", "write_html": "html",
    **{name: "queue" for name in (
        "CANNIBAL_COLUMNS", "INFO_COLUMNS", "SUGGESTION_COLUMNS", "csv_columns", "csv_rows", "page_titles",
        "part_names", "read_pool", "read_suggestions", "suggestions_table", "write_cannibalisation",
        "write_csv", "write_pages", "write_parquet", "write_suggestions")},
}

__all__ = ["CANNIBAL_COLUMNS", "INFO_COLUMNS", "SUGGESTION_COLUMNS", "Analysis", "analyse", "csv_columns",
           "csv_rows", "format_summary", "orphan_pages", "page_titles", "part_names", "read_pool",
           "read_suggestions", "render_html", "suggestions_table", "summary", "write_cannibalisation",
           "write_csv", "write_html", "write_pages", "write_parquet", "write_suggestions", "write_summary"]


def __getattr__(name: str) -> object:
    home = _HOMES.get(name)
    if home is None:
        try:  # a module of the package (``report.html``)
            return importlib.import_module(f"{__name__}.{name}")
        except ModuleNotFoundError:
            raise AttributeError(f"module {__name__!r} has no attribute {name!r}") from None
    value = getattr(importlib.import_module(f"{__name__}.{home}"), name)
    globals()[name] = value
    return value
