"""Crawl health: pages by kind and language, thin and noindex pages, status codes, skipped URLs by reason,
redirect chains and the pages only the sitemap reaches."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from postprocess.apps.report.crawlfiles import read_rows
from postprocess.stages.load import Crawl, merge_pages

#: Examples kept per skip reason and per list.
EXAMPLES = 5


@dataclass(frozen=True)
class Skipped:
    """URLs skipped for one reason, with a few examples (url, the page linking to it, detail)."""

    reason: str
    count: int
    examples: tuple[tuple[str, str, str], ...]


@dataclass
class CrawlHealth:
    """What the crawl says about the site, beyond its links."""

    kinds: Counter[str] = field(default_factory=Counter)
    langs: Counter[str] = field(default_factory=Counter)
    thin: list[str] = field(default_factory=list)
    noindex: list[str] = field(default_factory=list)
    statuses: Counter[str] = field(default_factory=Counter)  # pages' and skipped URLs' HTTP statuses
    skipped: list[Skipped] = field(default_factory=list)
    redirects: int = 0
    chains: list[tuple[str, ...]] = field(default_factory=list)  # redirect chains of two hops or more
    sitemap_only: list[str] = field(default_factory=list)

    def to_json(self) -> dict:
        return {"kinds": dict(self.kinds.most_common()), "langs": dict(self.langs.most_common()),
                "thin": len(self.thin), "noindex": len(self.noindex),
                "statuses": dict(sorted(self.statuses.items())),
                "skipped": {s.reason: s.count for s in self.skipped}, "redirects": self.redirects,
                "redirect_chains": len(self.chains), "sitemap_only": len(self.sitemap_only)}


def _status(detail: str | None) -> str | None:
    head = (detail or "").strip()[:3]
    return head if head.isdigit() else None


def redirect_chains(redirects: dict[str, str]) -> list[tuple[str, ...]]:
    """Chains of two redirects or more (URL -> URL -> URL ...), longest first, from their first URL."""
    targets = set(redirects.values())
    chains = []
    for url in redirects:
        if url in targets:
            continue  # not where a chain starts
        chain = [url]
        while chain[-1] in redirects and redirects[chain[-1]] not in chain:
            chain.append(redirects[chain[-1]])
        if len(chain) >= 3:
            chains.append(tuple(chain))
    return sorted(chains, key=lambda c: (-len(c), c))


def crawl_health(crawl: Crawl, reached: set[str], job: str | None = None) -> CrawlHealth:
    """Health of ``crawl``; ``reached``: the pages a link path from the start page reaches."""
    health = CrawlHealth()
    for p in crawl.pages:
        health.kinds[p.kind] += 1
        health.langs[p.lang or "unknown"] += 1
        health.statuses[str(p.status)] += 1
        if p.thin:
            health.thin.append(p.url)
        if p.noindex:
            health.noindex.append(p.url)
    if not crawl.directory:
        return health
    # the pages no link path reaches, found only in a sitemap (their newest row says so): only their
    # rows are read, not a row per page and job
    unreached = {p.url for p in crawl.pages} - reached
    pages = merge_pages(read_rows(crawl.directory, "pages", ("url", "found_by", "fetched_at"), job,
                                  urls=unreached))
    health.sitemap_only = sorted(u for u, r in pages.items() if r.get("found_by") == "sitemap")
    newest: dict[tuple[str, str], dict] = {}
    for row in read_rows(crawl.directory, "skipped",
                         ("url", "reason", "from_url", "alias_of", "detail", "fetched_at"), job):
        newest[(row["url"], row["reason"])] = row
    by_reason: dict[str, list[dict]] = {}
    redirects: dict[str, str] = {}
    for (url, reason), row in newest.items():
        by_reason.setdefault(reason, []).append(row)
        status = _status(row.get("detail")) if reason in ("http_error", "redirect", "offsite") else None
        if status:
            health.statuses[status] += 1
        if reason == "redirect" and row.get("alias_of"):
            redirects[url] = row["alias_of"]
    for reason, found in sorted(by_reason.items(), key=lambda kv: (-len(kv[1]), kv[0])):
        found.sort(key=lambda r: r["url"])
        examples = tuple((r["url"], r.get("from_url") or "", r.get("detail") or "") for r in found[:EXAMPLES])
        health.skipped.append(Skipped(reason, len(found), examples))
    health.redirects = len(redirects)
    health.chains = redirect_chains(redirects)
    return health
