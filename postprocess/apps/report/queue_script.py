"""The queue as the JSON report.html embeds in a <script> element: pages once ([url, title]), rows
referring to them, made a piece at a time — from the queue's rows, or from suggestions.parquet alone
(``batches_json_pieces``, what a second process makes while this one draws the report)."""

from __future__ import annotations

import itertools
import json
from collections.abc import Callable, Iterable, Iterator, Sequence

import pyarrow as pa

from postprocess.stages.suggestions import Suggestion

#: Characters that must not appear raw inside a <script> element (JSON stays valid with them escaped).
_SCRIPT_ESCAPES = {ord("<"): "\\u003c", ord(">"): "\\u003e", ord("&"): "\\u0026", 0x2028: "\\u2028",
                   0x2029: "\\u2029"}
#: Queue rows (and pages) made JSON at a time.
JSON_BATCH = 8192
#: A row's fields in the JSON, in order (the report's script reads them by position).
ROW_FIELDS = ("source_url", "target_url", "anchor", "anchor_type", "context", "confidence", "score",
              "evidence")


def queue_json(rows: Sequence[Suggestion], titles: dict[str, str]) -> str:
    """The queue as compact JSON safe inside <script>: pages once ([url, title]), rows referring to them."""
    return "".join(queue_json_pieces(rows, titles))


def queue_json_pieces(rows: Sequence[Suggestion], titles: dict[str, str]) -> Iterator[str]:
    """``queue_json`` in pieces of ``JSON_BATCH`` pages or rows, so that no more of it is made at once
    (the whole, at 187,074 rows: ~35 MB of text made several times over, as values, JSON, escaped)."""
    index: dict[str, int] = {}
    for s in rows:
        for url in (s.source_url, s.target_url):
            if url not in index:
                index[url] = len(index)
    pages = ([u, titles.get(u, "")] for u in index)
    table = ([index[s.source_url], index[s.target_url], s.anchor, s.anchor_type, s.context,
              round(s.confidence, 4), round(s.score, 4), s.evidence] for s in rows)
    return _pieces(pages, table)


def batches_json_pieces(read: Callable[[list[str]], Iterable[pa.RecordBatch]]) -> Iterator[str]:
    """``queue_json_pieces`` of the queue's rows and titles, read from their table (``suggestions_table``
    made with the crawl, as suggestions.parquet holds it) in batches, ``read(columns)`` each time
    (twice: the pages first, then the rows; a file read so holds a batch at a time, never the whole
    queue): the same text."""
    index: dict[str, int] = {}
    pages: list[list[str]] = []
    for batch in read(["source_url", "target_url", "source_title", "target_title"]):
        sources, targets, source_titles, target_titles = (column.to_pylist() for column in batch.columns)
        for source, target, source_title, target_title in zip(sources, targets, source_titles, target_titles,
                                                               strict=True):
            for url, title in ((source, source_title), (target, target_title)):
                if url not in index:
                    index[url] = len(index)
                    pages.append([url, title])

    def rows() -> Iterator[list[object]]:
        for batch in read(list(ROW_FIELDS)):
            for source, target, anchor, kind, context, confidence, score, evidence in zip(
                    *(column.to_pylist() for column in batch.columns), strict=True):
                yield [index[source], index[target], anchor, kind, context, round(confidence, 4),
                       round(score, 4), evidence]

    return _pieces(pages, rows())


def _pieces(pages: Iterable[object], rows: Iterable[object]) -> Iterator[str]:
    yield '{"pages":'
    yield from _json_list(pages)
    yield ',"rows":'
    yield from _json_list(rows)
    yield "}"


def _json_list(items: Iterable[object]) -> Iterator[str]:
    """``json.dumps(list(items))`` (compact, safe inside <script>), ``JSON_BATCH`` items a piece."""
    yield "["
    first = True
    for batch in _batched(items):
        if not first:
            yield ","
        yield ",".join(json.dumps(item, ensure_ascii=False, separators=(",", ":")) for item in batch
                       ).translate(_SCRIPT_ESCAPES)
        first = False
    yield "]"


def _batched(items: Iterable[object]) -> Iterator[tuple[object, ...]]:
    """``items`` in tuples of ``JSON_BATCH`` (``itertools.batched`` from Python 3.12)."""
    iterator = iter(items)
    while batch := tuple(itertools.islice(iterator, JSON_BATCH)):
        yield batch
