"""A seeded synthetic website for scale runs: as a crawl dataset (Parquet parts) or served over HTTP.

Every page is a pure function of ``(seed, page number)``, so a million-page crawl is written
part by part in bounded memory, the HTTP server answers any page without holding the site, and
``--changed`` re-draws a share of pages (new text, a new ``modified`` date) for the incremental
benchmarks.

Shape (what makes neighbours and anchors mean something):

- topic clusters of ~100 pages; a topic has its own vocabulary of invented words drawn with a
  Zipf law, mixed into common English (wordfreq's top list), so pages of one topic are close;
- text lengths log-normal from a few dozen to several thousand words, in paragraphs, with
  headings, an occasional list, code block and inline code name;
- titles of 2–4 topic words ("Varo Tesil Kamu guide"); slugs from the title;
- 20–200 links per page: a template (navigation to the topic hubs, a footer) and content links
  in running text, mostly to pages of the same topic, their anchor the target's title;
- 1% exact duplicates of the previous page, 3% thin pages, a hub page (listing) per topic.

    python benchmarks/synthetic_site.py crawl --pages 10000 --out /tmp/synth-10k
    python benchmarks/synthetic_site.py serve --pages 100000 --port 8740
"""

from __future__ import annotations

import argparse
import hashlib
import html
import math
import os
import sys
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from linkspider.items import LINK_SCHEMA, PAGE_SCHEMA, SKIP_SCHEMA  # noqa: E402

BASE = "http://synthetic.test"
TOPIC_SIZE = 100
NAV_LINKS = 24
FOOTER_LINKS = 6
_ONSETS = "b c d f g h j k l m n p r s t v w z br dr fl gr kl pr st tr".split()
_VOWELS = "a e i o u ai ea io ou".split()
_CODAS = ["", "", "", "n", "r", "s", "l", "m", "x", "th"]
_TAILS = ("guide", "notes", "explained", "in practice", "basics", "reference")
_EPOCH = datetime(2024, 1, 1, tzinfo=UTC)


def _english() -> list[str]:
    from wordfreq import top_n_list

    return [w for w in top_n_list("en", 4000) if w.isalpha()][:3000]


def _topic_pool() -> list[str]:
    """Less common real English words (wordfreq ranks 3,000-40,000): what topics are made of."""
    from wordfreq import top_n_list

    return [w for w in top_n_list("en", 40000)[3000:] if w.isalpha() and len(w) >= 4]


def _invented(count: int, seed: int) -> list[str]:
    """``count`` distinct pronounceable invented words (the topics' own vocabulary)."""
    rng = np.random.default_rng([seed, 99])
    seen: set[str] = set()
    out: list[str] = []
    while len(out) < count:
        n = int(rng.integers(2, 4))
        word = "".join(_ONSETS[rng.integers(len(_ONSETS))] + _VOWELS[rng.integers(len(_VOWELS))]
                       for _ in range(n)) + _CODAS[rng.integers(len(_CODAS))]
        if word not in seen:
            seen.add(word)
            out.append(word)
    return out


@dataclass
class Page:
    number: int
    url: str
    title: str
    blocks: list[dict]
    headings: list[str]
    links: list[tuple[str, str, str]]  # target url, anchor, position
    kind: str
    thin: bool
    modified: str
    text: str = field(default="")


class SyntheticSite:
    """The site of ``pages`` pages drawn from ``seed``; ``changed`` pages (a seeded share) re-drawn."""

    def __init__(self, pages: int, seed: int = 1, changed: float = 0.0, base: str = BASE) -> None:
        self.pages = pages
        self.seed = seed
        self.base = base.rstrip("/")
        self.topics = max(1, math.ceil(pages / TOPIC_SIZE))
        self.english = _english()
        vocabulary = _topic_pool()
        self.vocabulary = vocabulary
        self.names = _invented(4000, seed)  # product and code names, one per page at most
        ranks = np.arange(1, len(self.english) + 1)
        weights = 1.0 / ranks
        self.english_p = weights / weights.sum()
        topic_ranks = np.arange(1, 41)
        self.topic_p = (1.0 / topic_ranks) / (1.0 / topic_ranks).sum()
        self._change_mark = np.random.default_rng([seed, 7]).random(pages) < changed if changed else None
        rng = np.random.default_rng([seed, 11])
        self._topic_words = [[vocabulary[i] for i in row]
                             for row in rng.integers(0, len(vocabulary), (self.topics, 40)).tolist()]
        self._title_words = rng.choice(40, (pages, 4), p=self.topic_p)
        self._title_len = rng.integers(2, 5, pages)
        self._title_tail = rng.integers(0, len(_TAILS), pages)
        self._urls: dict[int, str] = {}
        self._nav = [self.url(self.hub(t)) for t in range(min(NAV_LINKS, self.topics))]

    # -- identities -------------------------------------------------------------------------------
    def topic(self, number: int) -> int:
        return number % self.topics

    def hub(self, topic: int) -> int:
        return topic  # page t is topic t's hub (the first page of the topic)

    def topic_words(self, topic: int) -> list[str]:
        return self._topic_words[topic]

    def title(self, number: int) -> str:
        words = self._topic_words[self.topic(number)]
        if number < self.topics:
            return f"{words[0].capitalize()} {words[1]}: all articles"
        picked = dict.fromkeys(self._title_words[number, :self._title_len[number]].tolist())
        return " ".join(words[i] for i in picked).capitalize() + " " + _TAILS[self._title_tail[number]]

    def url(self, number: int) -> str:
        cached = self._urls.get(number)
        if cached is not None:
            return cached
        slug = "-".join(self.title(number).lower().replace(":", "").split()[:5])
        url = self._urls[number] = f"{self.base}/t{self.topic(number)}/{number}-{slug}/"
        return url

    def modified(self, number: int) -> str:
        """The page's last-modified date (a re-drawn page is 400 days newer): the sitemap's lastmod."""
        version = 1 if self.is_changed(number) else 0
        return (_EPOCH + timedelta(days=int(number % 600) + 400 * version)).date().isoformat()

    def is_changed(self, number: int) -> bool:
        return bool(self._change_mark is not None and self._change_mark[number])

    # -- one page ---------------------------------------------------------------------------------
    def page(self, number: int) -> Page:
        version = 1 if self.is_changed(number) else 0
        source = number - 1 if number % 100 == 57 and number > self.topics else number  # 1% duplicates
        rng = np.random.default_rng([self.seed, 17, source, version])
        topic = self.topic(number)
        words = self.topic_words(topic)
        hub = number < self.topics
        thin = not hub and rng.random() < 0.03
        length = 40 if hub else (int(rng.integers(25, 60)) if thin
                                 else int(np.clip(rng.lognormal(6.0, 0.8), 60, 6000)))
        draw = rng.random(length)
        own = rng.integers(0, len(self.vocabulary), 4)  # the page's own subject words
        tokens = np.where(draw < 0.4, rng.choice(40, length, p=self.topic_p) + len(self.english),
                          rng.choice(len(self.english), length, p=self.english_p))
        tokens = np.where(draw > 0.95, rng.choice(4, length) + len(self.english) + 40, tokens)
        pool = self.english + words + [self.vocabulary[i] for i in own]
        blocks: list[dict] = []
        headings: list[str] = []
        links: list[tuple[str, str, str]] = []
        n_content = 0 if hub else int(rng.integers(3, 90)) if not thin else 2
        targets = self._content_targets(rng, number, topic, n_content)
        mentions = [t for t in self._content_targets(rng, number, topic, int(rng.integers(2, 7)))
                    if t not in targets]
        per_block = max(1, math.ceil(len(targets) / max(1, length // 80)))
        pos = 0
        while pos < length:
            size = int(rng.integers(40, 120))
            chunk = [pool[t] for t in tokens[pos:pos + size]]
            pos += size
            if len(blocks) % 4 == 3:
                heading = " ".join(chunk[:4]).capitalize()
                headings.append(heading)
                blocks.append({"kind": "heading", "text": heading, "code": [], "links": []})
            text = " ".join(chunk).capitalize() + "."
            code_spans = []
            if rng.random() < 0.08:
                name = f"{words[int(rng.integers(40))]}_{self.names[int(rng.integers(len(self.names)))]}()"
                start = len(text) + 5
                text += f" Use {name} here."
                code_spans.append({"start": start, "end": start + len(name)})
            link_spans = []
            for target in targets[:per_block]:
                anchor = self.title(target)
                text += " See "
                link_spans.append({"start": len(text), "end": len(text) + len(anchor),
                                   "url": self.url(target)})
                text += anchor + "."
                links.append((self.url(target), anchor, "content"))
            targets = targets[per_block:]
            if mentions and rng.random() < 0.5:  # a page named in passing, without a link
                text += f" Readers of {self.title(mentions.pop()).lower()} will know this."
            kind = "list_item" if rng.random() < 0.1 else "paragraph"
            blocks.append({"kind": kind, "text": text, "code": code_spans, "links": link_spans})
            if rng.random() < 0.04:
                blocks.append({"kind": "code", "text": f"{words[0]} = load('{words[1]}')\nprint({words[0]})",
                               "code": [], "links": []})
        if hub:
            members = range(topic + self.topics, self.pages, self.topics)
            for target in list(members)[:TOPIC_SIZE]:
                anchor = self.title(target)
                blocks.append({"kind": "list_item", "text": anchor, "code": [],
                               "links": [{"start": 0, "end": len(anchor), "url": self.url(target)}]})
                links.append((self.url(target), anchor, "content"))
        links += [(u, f"Topic {i}", "nav") for i, u in enumerate(self._nav)]
        links += [(f"{self.base}/about/{k}/", f"About {k}", "footer") for k in range(FOOTER_LINKS)]
        page = Page(number, self.url(number), self.title(number), blocks, headings, links,
                    "listing" if hub else "content", thin, self.modified(number))
        page.text = "\n".join(b["text"] for b in blocks)
        return page

    def _content_targets(self, rng: np.random.Generator, number: int, topic: int, count: int) -> list[int]:
        per_topic = max(1, (self.pages - topic + self.topics - 1) // self.topics)
        same = topic + self.topics * rng.integers(0, per_topic, count)
        other = rng.integers(0, self.pages, count)
        chosen = np.where(rng.random(count) < 0.8, same, other)
        return [int(t) for t in dict.fromkeys(chosen.tolist()) if t != number and t < self.pages]

    # -- renderings -------------------------------------------------------------------------------
    def html(self, number: int) -> str:
        """The page as HTML (template navigation and footer around the article)."""
        page = self.page(number)
        nav = "".join(f'<a href="{u}">{html.escape(a)}</a> ' for u, a, p in page.links if p == "nav")
        foot = "".join(f'<a href="{u}">{html.escape(a)}</a> ' for u, a, p in page.links if p == "footer")
        body = []
        for block in page.blocks:
            text = block["text"]
            out, at = [], 0
            for span in sorted(block["links"], key=lambda s: s["start"]):
                out.append(html.escape(text[at:span["start"]]))
                out.append(f'<a href="{span["url"]}">{html.escape(text[span["start"]:span["end"]])}</a>')
                at = span["end"]
            out.append(html.escape(text[at:]))
            inner = "".join(out)
            tag = {"heading": "h2", "code": "pre", "list_item": "li"}.get(block["kind"], "p")
            body.append(f"<ul><li>{inner}</li></ul>" if tag == "li" else f"<{tag}>{inner}</{tag}>")
        return (f"<!doctype html><html lang=en><head><title>{html.escape(page.title)} | Synthetic</title>"
                f'<meta name="last-modified" content="{page.modified}"></head><body><nav>{nav}</nav>'
                f"<main><article><h1>{html.escape(page.title)}</h1>{''.join(body)}</article></main>"
                f"<footer>{foot}</footer></body></html>")


# -- the crawl dataset ---------------------------------------------------------------------------
def _rows(site: SyntheticSite, numbers: range, job: str) -> tuple[pa.Table, pa.Table]:
    fetched = datetime(2026, 11, 1, tzinfo=UTC)
    pages: dict[str, list] = {f.name: [] for f in PAGE_SCHEMA}
    links: dict[str, list] = {f.name: [] for f in LINK_SCHEMA}
    for number in numbers:
        page = site.page(number)
        row = {"url": page.url, "fetched_url": page.url, "status": 200, "title": f"{page.title} | Synthetic",
               "meta_description": page.text[:150], "h1": page.title, "headings": page.headings,
               "text": page.text, "word_count": len(page.text.split()), "lang": "en", "canonical": page.url,
               "published": "2023-06-01", "modified": page.modified, "noindex": False, "nofollow": False,
               "thin": page.thin, "depth": 1 + number % 4, "found_by": "link",
               "content_hash": hashlib.sha1(page.text.encode()).hexdigest(), "kind": page.kind,
               "blocks": page.blocks, "fetched_at": fetched, "job": job,
               "etag": '"' + hashlib.sha1(page.text.encode()).hexdigest()[:16] + '"', "last_modified": None,
               "rendered": False}
        for name in pages:
            pages[name].append(row.get(name))  # a column the schema gained since: null
        for target, anchor, position in page.links:
            links["source_url"].append(page.url)
            links["target_url"].append(target)
            links["anchor_text"].append(anchor)
            links["position"].append(position)
        n = len(page.links)
        links["nofollow"] += [False] * n
        links["internal"] += [True] * n
        links["fetched_at"] += [fetched] * n
        links["job"] += [job] * n
    return (pa.Table.from_pydict(pages, schema=PAGE_SCHEMA), pa.Table.from_pydict(links, schema=LINK_SCHEMA))


def _write(table: pa.Table, directory: Path, name: str) -> None:
    directory.mkdir(parents=True, exist_ok=True)
    tmp = directory / f".tmp-{name}"
    pq.write_table(table, tmp, compression="zstd")
    os.replace(tmp, directory / name)


def _write_part(args: tuple[int, float, int, int, str, str]) -> int:
    pages, changed, start, stop, out, job = args
    site = SyntheticSite(pages, changed=changed)
    page_table, link_table = _rows(site, range(start, stop), job)
    name = f"part-{job}-{start:08d}.parquet"
    _write(page_table, Path(out) / "pages", name)
    _write(link_table, Path(out) / "links", name)
    return stop - start


def write_crawl(pages: int, out: str | Path, *, changed: float = 0.0, part_pages: int = 20_000,
                workers: int = 2, job: str = "synthetic") -> Path:
    """Write the site as a crawl dataset under ``out`` (pages/, links/, skipped/)."""
    out = Path(out)
    tasks = [(pages, changed, start, min(pages, start + part_pages), str(out), job)
             for start in range(0, pages, part_pages)]
    with ProcessPoolExecutor(max_workers=workers) as pool:
        done = 0
        for count in pool.map(_write_part, tasks):
            done += count
            print(f"\r{done:,} of {pages:,} pages written", end="", file=sys.stderr, flush=True)
    print(file=sys.stderr)
    skipped = pa.Table.from_pydict({"url": [f"{BASE}/t0/?page=2"], "reason": ["pagination"],
                                    "from_url": [f"{BASE}/t0/0/"], "alias_of": [None], "detail": [None],
                                    "fetched_at": [datetime(2026, 11, 1, tzinfo=UTC)], "job": [job]},
                                   schema=SKIP_SCHEMA)
    _write(skipped, out / "skipped", f"part-{job}-00000000.parquet")
    return out


# -- over HTTP -----------------------------------------------------------------------------------
def serve(site: SyntheticSite, port: int) -> ThreadingHTTPServer:
    """An HTTP server on 127.0.0.1:``port`` answering every page of ``site`` (and /sitemap.xml)."""
    numbers = {site.url(n).removeprefix(site.base): n for n in range(site.pages)}

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: object) -> None:
            pass

        def do_GET(self) -> None:  # noqa: N802 (http.server's name)
            if self.path == "/":
                body = site.html(0)
            elif self.path == "/sitemap.xml":
                body = ('<?xml version="1.0" encoding="UTF-8"?>\n'
                        '<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'
                        + "".join(f"<url><loc>{site.url(n)}</loc><lastmod>{site.modified(n)}</lastmod></url>"
                                  for n in range(site.pages)) + "</urlset>")
            elif self.path in numbers:
                body = site.html(numbers[self.path])
            else:
                self.send_error(404)
                return
            data = body.encode()
            etag = '"' + hashlib.sha1(data).hexdigest()[:16] + '"'
            if self.headers.get("If-None-Match") == etag:
                self.send_response(304)
                self.send_header("ETag", etag)
                self.send_header("Content-Length", "0")
                self.end_headers()
                server.not_modified += 1
                return
            self.send_response(200)
            self.send_header("Content-Type", "application/xml" if self.path.endswith(".xml") else "text/html")
            self.send_header("Content-Length", str(len(data)))
            self.send_header("ETag", etag)
            self.end_headers()
            self.wfile.write(data)
            server.full += 1
            server.bytes_sent += len(data)

    server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
    server.full = server.not_modified = server.bytes_sent = 0  # type: ignore[attr-defined]
    return server


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("what", choices=("crawl", "serve"))
    parser.add_argument("--pages", type=int, required=True)
    parser.add_argument("--out", help="crawl directory to write (crawl)")
    parser.add_argument("--changed", type=float, default=0.0, help="share of pages re-drawn (default 0)")
    parser.add_argument("--port", type=int, default=8740)
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args(argv)
    if args.pages < 1:
        parser.error("--pages must be at least 1")
    if args.what == "crawl":
        if not args.out:
            parser.error("crawl needs --out")
        write_crawl(args.pages, args.out, changed=args.changed, workers=args.workers)
        return 0
    site = SyntheticSite(args.pages, changed=args.changed, base=f"http://127.0.0.1:{args.port}")
    server = serve(site, args.port)
    print(f"serving {args.pages:,} pages on http://127.0.0.1:{args.port}/", file=sys.stderr)
    server.serve_forever()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
