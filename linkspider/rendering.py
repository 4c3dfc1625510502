"""Which pages a browser renders, and rendering without fetching a page twice.

``render=all`` renders every HTML page; ``render=auto`` only a page whose plain HTML has
scripts and much less text or far fewer content links than the site's typical page (a
JavaScript shell). Either way the plain fetch has already settled status, redirects and type,
and the browser is handed that same HTML for the page itself (:func:`serve_plain_document`):
the server sees each page once; only the page's scripts and data are loaded by the browser.
"""

from __future__ import annotations

import re
import statistics
from collections import deque
from dataclasses import dataclass, field
from typing import Any

#: Request meta keys: the plain response the browser is handed, and a render that failed.
PLAIN_DOCUMENT = "linkspider_plain_document"
RENDER_FAILED = "linkspider_render_failed"
_SCRIPT = re.compile(rb"<script\b", re.IGNORECASE)


@dataclass
class RenderPolicy:
    """``render=auto``: decide from the plain HTML whether a page needs the browser.

    ``share``: a page with fewer words, or fewer content links, than this share of the typical
    (median) plain page of the site is rendered; ``min_words``: until ``warm_up`` plain pages
    are known, a page with scripts and fewer words than this is rendered. Only pages with a
    ``<script>`` are ever rendered: nothing else could change them.
    """

    share: float = 0.25
    min_words: int = 50
    warm_up: int = 5
    min_links: int = 3  # the link test applies only where pages typically have this many
    words: deque[int] = field(default_factory=lambda: deque(maxlen=501))
    links: deque[int] = field(default_factory=lambda: deque(maxlen=501))

    def needs_browser(self, body: bytes, word_count: int, content_links: int) -> bool:
        """Whether a page (plain ``body``, its text's words and content links) must be rendered."""
        if not _SCRIPT.search(body):
            return False  # nothing could change it
        if len(self.words) < self.warm_up:
            return word_count < self.min_words
        typical_links = statistics.median(self.links)
        return (word_count < self.share * statistics.median(self.words)
                or (typical_links >= self.min_links and content_links < self.share * typical_links))

    def learn(self, word_count: int, content_links: int) -> None:
        """One more page of the site read from its plain HTML (the typical page moves with it)."""
        self.words.append(word_count)
        self.links.append(content_links)


async def serve_plain_document(page: Any, request: Any) -> None:
    """scrapy-playwright page init callback: answer the browser's request for the page itself
    with the body of the plain fetch, so the server is not asked for it a second time."""
    plain = request.meta.get(PLAIN_DOCUMENT)
    if not plain:
        return
    url = request.url

    async def fulfil(route: Any) -> None:
        if route.request.is_navigation_request() and route.request.url == url:
            await route.fulfill(status=plain["status"], headers=plain["headers"], body=plain["body"])
        else:
            await route.fallback()

    await page.route(lambda candidate: candidate == url, fulfil)
