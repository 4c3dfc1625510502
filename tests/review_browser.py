"""The review page driven by a real browser: Debian's chromium through Playwright, headless.

``review_in_browser(url, approve=3, reject=2)`` opens the review page at ``url`` (for a server
with a token: ``…/review?token=…``), approves the first ``approve`` pending rows and rejects
the next ``reject`` with the mouse, and returns the (source, target) pairs of each, for
end-to-end tests. ``chromium_page()`` gives a page for tests that drive it themselves.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from playwright.sync_api import Locator, Page, sync_playwright

from linkspider.settings import LINKSPIDER_CHROMIUM_PATH

CHROMIUM_ARGS = ["--no-sandbox", "--disable-background-networking", "--disable-component-update"]
STATE_OF = {"approve": "approved", "reject": "rejected", "reset": "pending"}


@contextmanager
def chromium_page(javascript: bool = True) -> Iterator[Page]:
    """A fresh headless Chromium page (its own cookies), closed at the end of the block."""
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=LINKSPIDER_CHROMIUM_PATH, args=CHROMIUM_ARGS)
        try:
            yield browser.new_context(java_script_enabled=javascript).new_page()
        finally:
            browser.close()


def pair(row: Locator) -> tuple[str, str]:
    """(source URL, target URL) of a row of the review page."""
    return row.get_attribute("data-source") or "", row.get_attribute("data-target") or ""


def click_action(page: Page, row_id: str, action: str, reason: str = "") -> tuple[str, str]:
    """Click ``action`` (approve, reject, reset) on one row with the mouse; waits until the page shows it."""
    row = page.locator(f"#{row_id}")
    if reason:
        row.locator('form.reject input[name="reason"]').fill(reason)
    row.locator(f"form.{action} button").click()
    page.wait_for_selector(f'#{row_id}[data-state="{STATE_OF[action]}"]')
    return pair(row)


def review_in_browser(url: str, approve: int, reject: int,
                      reason: str = "") -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
    """Approve the first ``approve`` pending rows and reject the next ``reject``; their pairs."""
    with chromium_page() as page:
        page.goto(url)
        pending = page.locator('article.row[data-state="pending"]')
        ids = [pending.nth(i).get_attribute("id") or "" for i in range(pending.count())]
        if len(ids) < approve + reject:
            raise AssertionError(f"{url} shows {len(ids)} pending rows, not {approve + reject}")
        approved = [click_action(page, row_id, "approve") for row_id in ids[:approve]]
        rejected = [click_action(page, row_id, "reject", reason) for row_id in ids[approve:approve + reject]]
        return approved, rejected
