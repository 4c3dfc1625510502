"""Write outputs atomically: to a temporary name in the same folder, then rename."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from pathlib import Path

#: Every crawled page's URL and clean title, written by the report stage (``apps.report``): what
#: ``serve`` answers for a page that has no suggestion.
PAGES_FILE = "pages.parquet"
#: No progress bars (a background worker's: the bars are the parent's).
QUIET = False


def replace_atomically(path: str | Path, write: Callable[[Path], object]) -> None:
    """Call ``write(tmp)`` and rename ``tmp`` to ``path``; on failure ``path`` is untouched."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}")
    try:
        write(tmp)
        os.replace(tmp, path)
    finally:
        if tmp.exists():
            tmp.unlink()


def progress(total: int, desc: str, unit: str = "it"):  # noqa: ANN201 - tqdm or None
    """A tqdm bar on stderr when stderr is a terminal; None otherwise (logs and pipes stay clean)."""
    if QUIET or not sys.stderr.isatty():
        return None
    from tqdm import tqdm

    return tqdm(total=total, desc=desc, unit=unit, file=sys.stderr)
