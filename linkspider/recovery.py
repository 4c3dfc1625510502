"""After a kill -9: what a crawl job had stored, to find its frontier again.

Scrapy's JOBDIR keeps the dupefilter's fingerprints (written as requests are scheduled) and a
disk queue whose positions are only saved on a clean stop. A crawl killed with rows still in
memory therefore leaves pages whose fingerprints are on disk but whose rows are not, and a
queue whose files no longer match its saved positions (it pops old requests and loses new
ones): resumed as is, pages are lost. A crawl that did not stop cleanly (its JOBDIR still
holds the ``linkspider-running`` marker) is instead resumed from its own parts: the stale
queue and fingerprints are discarded before Scrapy opens them, stored pages are done, and
every link of a stored page to a page not stored is followed again (the pipeline's check of
stored rows keeps each page to one row).
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass, field
from pathlib import Path

import pyarrow.compute as pc

from linkspider.parquet import part_files, read_part

#: A file in JOBDIR while a crawl runs; removed on a clean stop.
RUNNING_MARKER = "linkspider-running"
#: Scrapy's JOBDIR state that a kill -9 leaves inconsistent.
STALE_STATE = ("requests.queue", "requests.seen")


def killed_before(jobdir: str | Path | None) -> bool:
    """Whether the last crawl in ``jobdir`` was killed (its running marker is still there); if
    so, its stale queue and fingerprints are removed, so that Scrapy starts them afresh."""
    if not jobdir or not (Path(jobdir) / RUNNING_MARKER).is_file():
        return False
    for name in STALE_STATE:
        path = Path(jobdir) / name
        if path.is_dir():
            shutil.rmtree(path)
        else:
            path.unlink(missing_ok=True)
    return True


@dataclass
class StoredJob:
    """The rows one job wrote before it was killed."""

    pages: dict[str, int | None] = field(default_factory=dict)  # url -> depth
    links: list[tuple[str, str]] = field(default_factory=list)  # (source, target) of stored pages
    skipped: set[str] = field(default_factory=set)


def stored_job(out: str | Path, job: str) -> StoredJob:
    """The pages (with depth), their links and the skipped URLs ``job`` wrote under ``out``."""
    stored = StoredJob()
    wanted = {"pages": ["url", "depth", "job"], "links": ["source_url", "target_url", "job"],
              "skipped": ["url", "job"]}
    for table_name, columns in wanted.items():
        for path in part_files(Path(out) / table_name):
            table = read_part(path, columns)
            if table is None or "job" not in table.column_names:
                continue
            table = table.filter(pc.equal(table["job"], job))
            if table_name == "pages":
                depths = table["depth"].to_pylist() if "depth" in table.column_names else [None] * len(table)
                stored.pages.update(zip(table["url"].to_pylist(), depths, strict=True))
            elif table_name == "links":
                sources, targets = table["source_url"].to_pylist(), table["target_url"].to_pylist()
                stored.links += zip(sources, targets, strict=True)
            else:
                stored.skipped.update(table["url"].to_pylist())
    return stored
