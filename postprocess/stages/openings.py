"""A page's opening words: what an editor reads to recognise a link target without opening it.

The report stage writes them into pages.parquet (column ``OPENING_COLUMN``); the review page
shows them under each suggestion's target title.
"""

from __future__ import annotations

from linkspider.items import PROSE_KINDS
from postprocess.stages.load import Crawl, Page, block_texts

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


def page_openings(crawl: Crawl, words: int = OPENING_WORDS) -> dict[str, str]:
    """URL → opening words of every page of the crawl."""
    return {p.url: opening_words(p, words) for p in crawl.pages}
