"""The previous job of a crawl directory: what an incremental recrawl sends back and carries over.

With ``-a incremental=1`` the ``site`` spider loads the newest earlier job found under its
output folder (``pages/`` and ``links/`` parts) before it starts:

- each page's validators (``etag``, ``last_modified``) go back to the server as
  ``If-None-Match`` / ``If-Modified-Since``; a ``304 Not Modified`` costs no body and no parse;
- the links that page had are followed again from here (compact: integer ids in CSR arrays,
  so a 100,000-page site with millions of links takes tens of MB);
- when the crawl closes, the previous job's page and link rows of every page answered 304
  are copied into the new job's parts (its ``job`` and ``fetched_at`` updated), so the new job
  is a whole crawl of the site on its own;
- each page's previous ``fetched_at`` tells which sitemap entries (``lastmod``) are newer.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from linkspider.parquet import part_files, read_part


@dataclass(frozen=True, slots=True)
class PreviousPage:
    """What the previous job knew of one page."""

    etag: str | None
    last_modified: str | None
    fetched_at: datetime | None
    depth: int | None
    found_by: str | None


def newest_job(out: Path, exclude: str) -> str | None:
    """The job with the latest page fetch under ``out/pages`` other than ``exclude``."""
    newest: dict[str, datetime] = {}
    for path in part_files(out / "pages"):
        table = read_part(path, ["job", "fetched_at"])
        if table is None or not {"job", "fetched_at"} <= set(table.column_names):
            continue
        for job, at in zip(table["job"].to_pylist(), table["fetched_at"].to_pylist(), strict=True):
            if job and job != exclude and at is not None and (job not in newest or at > newest[job]):
                newest[job] = at
    return max(newest, key=lambda j: newest[j]) if newest else None


class PreviousCrawl:
    """The pages and internal links of one earlier job (``job``) under ``out``."""

    def __init__(self, out: Path, job: str) -> None:
        self.out = out
        self.job = job
        self.pages: dict[str, PreviousPage] = {}
        wanted = ("url", "job", "etag", "last_modified", "fetched_at", "depth", "found_by")
        for path in part_files(out / "pages"):
            table = read_part(path, wanted)
            if table is None:
                continue
            table = table.filter(pc.equal(table["job"], job))
            for row in table.to_pylist():
                self.pages[row["url"]] = PreviousPage(row.get("etag"), row.get("last_modified"),
                                                      row.get("fetched_at"), row.get("depth"),
                                                      row.get("found_by"))
        self._index_links()

    @classmethod
    def load(cls, out: str | Path, current_job: str) -> PreviousCrawl | None:
        """The newest earlier job under ``out``, or None when there is none."""
        job = newest_job(Path(out), current_job)
        return cls(Path(out), job) if job else None

    def _index_links(self) -> None:
        """Each source's internal link targets as integer ids: ``offsets`` into ``targets`` (CSR)."""
        ids: dict[str, int] = {}
        sources: list[np.ndarray] = []
        targets: list[np.ndarray] = []

        def encode(column: pa.ChunkedArray) -> np.ndarray:
            encoded = column.combine_chunks().dictionary_encode()
            lookup = np.array([ids.setdefault(url, len(ids)) for url in encoded.dictionary.to_pylist()],
                              dtype=np.int64)
            if not len(lookup):
                return np.zeros(0, np.int64)
            return lookup[encoded.indices.to_numpy(zero_copy_only=False)]

        for path in part_files(self.out / "links"):
            table = read_part(path, ("source_url", "target_url", "internal", "job"))
            if table is None:
                continue
            keep = pc.equal(table["job"], self.job)
            if "internal" in table.column_names:
                keep = pc.and_(keep, pc.fill_null(table["internal"], True))
            table = table.filter(keep)
            if table.num_rows:
                sources.append(encode(table["source_url"]))
                targets.append(encode(table["target_url"]))
        self.urls = [""] * len(ids)
        for url, i in ids.items():
            self.urls[i] = url
        self.ids = ids
        src = np.concatenate(sources) if sources else np.zeros(0, np.int64)
        tgt = np.concatenate(targets) if targets else np.zeros(0, np.int64)
        order = np.argsort(src, kind="stable")
        self.targets = tgt[order].astype(np.int32)
        self.offsets = np.zeros(len(ids) + 1, dtype=np.int64)
        np.cumsum(np.bincount(src, minlength=len(ids)), out=self.offsets[1:])

    def __contains__(self, url: str) -> bool:
        return url in self.pages

    def __len__(self) -> int:
        return len(self.pages)

    def validators(self, url: str) -> dict[str, str]:
        """Conditional request headers for ``url`` (empty when the previous job has none)."""
        page = self.pages.get(url)
        headers: dict[str, str] = {}
        if page is not None and page.etag:
            headers["If-None-Match"] = page.etag
        if page is not None and page.last_modified:
            headers["If-Modified-Since"] = page.last_modified
        return headers

    def links_of(self, url: str) -> Iterator[str]:
        """The internal targets ``url`` linked to in the previous job."""
        i = self.ids.get(url)
        if i is None:
            return
        for t in self.targets[self.offsets[i]:self.offsets[i + 1]]:
            yield self.urls[int(t)]

    def changed_since(self, url: str, lastmod: str) -> bool:
        """Whether a sitemap ``lastmod`` is newer than the previous fetch of ``url`` (new pages too)."""
        page = self.pages.get(url)
        if page is None or page.fetched_at is None:
            return True
        try:
            when = datetime.fromisoformat(lastmod.strip().replace("Z", "+00:00"))
        except ValueError:
            return False
        if when.tzinfo is None:
            when = when.replace(tzinfo=UTC)
        fetched = page.fetched_at if page.fetched_at.tzinfo else page.fetched_at.replace(tzinfo=UTC)
        return when > fetched

    def carried_rows(self, table: str, urls: set[str], key: str, job: str,
                     fetched_at: datetime) -> Iterator[pa.Table]:
        """The previous job's rows of ``table`` whose ``key`` column is in ``urls``, as the new job's."""
        if not urls:
            return
        wanted = pa.array(sorted(urls), pa.string())
        for path in part_files(self.out / table):
            part = read_part(path)
            if part is None:
                continue
            part = part.filter(pc.and_(pc.equal(part["job"], self.job),
                                       pc.is_in(part[key], value_set=wanted)))
            if not part.num_rows:
                continue
            part = part.set_column(part.schema.get_field_index("job"), "job",
                                   pa.array([job] * part.num_rows, pa.string()))
            index = part.schema.get_field_index("fetched_at")
            part = part.set_column(index, part.schema.field(index),
                                   pa.array([fetched_at] * part.num_rows, part.schema.field(index).type))
            yield part
