"""The run's outputs for people: the queue's files, summary.json, and report.html.

report.html shows the site's link structure now and after the queue (click depth, orphans, hubs,
starved pages), crawl health, the trend over crawl jobs, the editors' decisions, and the queue itself
(sortable, filterable, paged in the page). Modules: ``queue`` (suggestions.csv/.parquet, stage files),
``graph``/``depth``/``inbound`` (link structure), ``health``, ``trend``, ``decisions``, ``analysis``
(all of it computed once), ``charts`` (matplotlib SVG), ``html`` (the Jinja2 page), ``queue_script``
(the queue's JSON in the page), ``copies`` (a long queue's CSV and JSON made by a second process),
``figures`` (summary.json and the printed summary).
"""

from __future__ import annotations

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

__all__ = ["CANNIBAL_COLUMNS", "INFO_COLUMNS", "SUGGESTION_COLUMNS", "Analysis", "analyse", "csv_columns",
           "csv_rows", "format_summary", "orphan_pages", "page_titles", "part_names", "read_pool",
           "read_suggestions", "render_html", "suggestions_table", "summary", "write_cannibalisation",
           "write_csv", "write_html", "write_pages", "write_parquet", "write_suggestions", "write_summary"]
