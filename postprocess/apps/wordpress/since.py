"""Was a post edited in WordPress after the crawl read it? (``apply --crawl DIR``)

The crawl's ``pages`` parts say when each URL was fetched (``fetched_at``, UTC); the
REST API says when each post was last changed (``modified_gmt``). A post changed after
the newest fetch of its URL was edited since the suggestions were made: the editor's
approval was given on text that is no longer what WordPress holds.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from postprocess.errors import InputError

COLUMNS = ("url", "fetched_at")


def fetch_times(crawl: Path | str) -> dict[str, datetime]:
    """URL -> the newest ``fetched_at`` of its page rows in the crawl directory ``crawl``."""
    folder = Path(crawl) / "pages"
    parts = sorted(folder.glob("part-*.parquet"))
    if not parts:
        raise InputError(f"crawl {crawl} has no pages/part-*.parquet (--crawl names a crawl directory)")
    newest: dict[str, datetime] = {}
    for path in parts:
        try:
            table = pq.read_table(path, columns=list(COLUMNS))
        except (OSError, pa.ArrowException, KeyError) as exc:
            raise InputError(f"cannot read {path}: {str(exc).splitlines()[0] if str(exc) else exc}") from None
        for url, fetched in zip(table["url"].to_pylist(), table["fetched_at"].to_pylist(), strict=True):
            if url and fetched is not None:
                when = fetched if fetched.tzinfo else fetched.replace(tzinfo=UTC)
                if url not in newest or when > newest[url]:
                    newest[url] = when
    return newest


def modified_at(modified_gmt: str) -> datetime | None:
    """The REST API's ``modified_gmt`` (``2024-01-31T08:00:00``, UTC without an offset) as a datetime."""
    try:
        return datetime.fromisoformat(modified_gmt).replace(tzinfo=UTC)
    except ValueError:
        return None


def edited_since(modified_gmt: str, fetched: datetime | None) -> bool:
    """Whether WordPress changed the post after the crawl fetched it (False when either time is unknown)."""
    changed = modified_at(modified_gmt)
    return changed is not None and fetched is not None and changed > fetched
