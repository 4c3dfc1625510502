"""A page's opening words: what an editor reads to recognise a link target without opening it.

The report stage writes them into pages.parquet (column ``OPENING_COLUMN``); the review page
shows them under each suggestion's target title.
"""

from __future__ import annotations

from collections.abc import Sequence

import pyarrow as pa

from linkspider.items import PROSE_KINDS
from postprocess.stages.load import Page, block_texts

#: pages.parquet's column with each page's opening words.
OPENING_COLUMN = "opening"
OPENING_WORDS = 30


def opening_words(page: Page, words: int = OPENING_WORDS) -> str:
    """The first ``words`` words of the page's running text (its prose blocks, else its text), with an
    ellipsis when cut."""
    texts = block_texts(page, PROSE_KINDS)
    if len(texts) > 1 or (texts and texts[0]):  # the prose, joined, is not "": its words, and no more
        found: list[str] = []
        for text in texts:  # the blocks' words one after another are the joined prose's words
            found += text.split()
            if len(found) > words:
                break
    else:
        found = (page.text or "").split()
    return " ".join(found[:words]) + (" …" if len(found) > words else "")


#: Pages whose opening words are made at once (``opening_column``).
OPENING_BATCH = 1 << 16


def opening_column(pages: Sequence[Page], words: int = OPENING_WORDS) -> pa.ChunkedArray:
    """The opening words of ``pages``, in their order, as an Arrow column made ``OPENING_BATCH`` pages
    at a time: no string of them is held as a Python object beyond its batch (a million synthetic
    pages: ~0.3 GB of them and a dict by URL were made beside the column)."""
    return pa.chunked_array([pa.array([opening_words(p, words) for p in pages[start:start + OPENING_BATCH]],
                                      pa.string()) for start in range(0, len(pages), OPENING_BATCH)],
                            pa.string())
