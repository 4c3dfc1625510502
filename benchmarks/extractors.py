"""Main-text extractors compared on a Sphinx site: speed, precision, recall, boilerplate leaks.

    python3 benchmarks/extractors.py /usr/share/doc/python-django-doc/html --pages 100

The reference text of a page is its Sphinx content element (``--content-xpath``;
the Django docs template puts the document in ``div#yui-main``), with script,
style and the "¶" header links removed. Precision and recall are over word
tokens (multisets, lower-case), micro-averaged over the pages. A leak is a
template string (sidebar, header, footer) that shows in an extractor's text
but not in the page's reference text. Speed is pages per second of CPU time
(``time.process_time``: other processes on a shared machine do not count)
over the same pages, best of ``--rounds`` rounds, extractors interleaved.
trafilatura needs lxml_html_clean (not in requirements.txt: it is only
benchmarked); an extractor that cannot be imported is reported as missing.
"""

from __future__ import annotations

import argparse
import platform
import random
import re
import sys
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from linkspider import extract  # noqa: E402

#: Strings of the Django docs template outside the document (header, sidebar, footer).
LEAKS = ("Quick search", "Last update", "Previous topic", "Next topic", "Django 3.2.25 documentation",
         "Table of contents", "« previous")
_TOKEN = re.compile(r"\w+")


def reference_text(html: bytes, xpath: str, drop: str | None) -> str | None:
    root = extract.parse_html(html)
    found = root.xpath(xpath)
    if not found:
        return None
    el = found[0]
    unwanted = ".//script | .//style | .//a[contains(@class, 'headerlink')]" + (f" | {drop}" if drop else "")
    for bad in el.xpath(unwanted):
        if bad.getparent() is not None:
            bad.getparent().remove(bad)
    return " ".join(el.itertext())


def ours(html: bytes, url: str) -> str:
    return extract.extract_page(html, url).text


def ours_without_names(html: bytes, url: str) -> str:
    """extract_page without the list of named content containers (#content, div.body, #yui-main …):
    what is left when a template's content element is not one it knows."""
    saved = extract._CONTENT_NAMES
    extract._CONTENT_NAMES = frozenset()
    extract._LABEL_CACHE.clear()
    try:
        return extract.extract_page(html, url).text
    finally:
        extract._CONTENT_NAMES = saved
        extract._LABEL_CACHE.clear()


def lxml_parse_only(html: bytes, url: str) -> str:
    extract.parse_html(html)
    return ""


def extractors() -> dict[str, Callable[[bytes, str], str] | str]:
    """name -> function, or name -> why it is missing."""
    found: dict[str, Callable[[bytes, str], str] | str] = {
        "linkspider extract_page (text + links + metadata)": ours,
        "linkspider, content-container names ignored (ablation)": ours_without_names,
    }
    try:
        from resiliparse.extract.html2text import extract_plain_text
        from resiliparse.parse.encoding import detect_encoding
        from resiliparse.parse.html import HTMLTree

        def resiliparse_main(html: bytes, url: str) -> str:
            tree = HTMLTree.parse_from_bytes(html, detect_encoding(html))
            return extract_plain_text(tree, main_content=True, alt_texts=False, links=False)

        def hybrid(html: bytes, url: str) -> str:
            # what extract_page would cost with resiliparse for the text: our parse, landmarks,
            # links and metadata, plus resiliparse's own parse and main-content text
            root = extract.parse_html(html)
            layout = extract._Layout(root)
            extract._links(layout, url)
            extract._dates(root, extract._meta(root), layout.content)
            return resiliparse_main(html, url)

        found["resiliparse extract_plain_text(main_content=True)"] = resiliparse_main
        found["hybrid: linkspider links/metadata + resiliparse text"] = hybrid
    except ImportError as exc:
        found["resiliparse"] = f"missing ({exc})"
    try:
        import trafilatura

        def trafilatura_fast(html: bytes, url: str) -> str:
            return trafilatura.extract(html, url=url, fast=True, include_comments=False) or ""

        found["trafilatura extract(fast=True)"] = trafilatura_fast
    except ImportError as exc:
        found["trafilatura"] = f"missing ({exc})"
    found["lxml parse only (floor)"] = lxml_parse_only
    return found


#: Template regions of the Django docs (element id) and the positions their links should get.
DJANGO_REGIONS = {"hd": ("header", "nav"), "sidebar": ("aside",), "ft": ("footer",), "yui-main": ("content",)}


def position_agreement(root: Path) -> None:
    """Every link of every page: the template region it sits in against its extracted position."""
    table: Counter[tuple[str, str]] = Counter()
    for path in sorted(root.rglob("*.html")):
        html = path.read_bytes()
        regions = []
        for a in extract.parse_html(html).iter("a"):
            href = (a.get("href") or "").strip()
            if not href or href.startswith("#") or href.lower().startswith(extract._SKIPPED_SCHEMES):
                continue
            ids = (anc.get("id") for anc in a.iterancestors())
            regions.append(next((i for i in ids if i in DJANGO_REGIONS), "none"))
        links = extract.extract_page(html, f"http://127.0.0.1:8000/{path.relative_to(root)}").links
        if len(links) != len(regions):
            print(f"error: {path}: {len(links)} links extracted, {len(regions)} in the page", file=sys.stderr)
            continue
        table.update(zip(regions, (link.position for link in links), strict=True))
    total = sum(table.values())
    agree = sum(n for (region, pos), n in table.items() if pos in DJANGO_REGIONS.get(region, ()))
    print("| template region (id) | position | links |")
    print("| --- | --- | ---: |")
    for (region, pos), n in sorted(table.items()):
        print(f"| {region} | {pos} | {n} |")
    print(f"\n{agree}/{total} links ({agree / total:.2%}) got the position of their template region")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("root", type=Path, help="folder of a Sphinx HTML build")
    parser.add_argument("--pages", type=int, default=100)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--content-xpath", default="//div[@id='yui-main']",
                        help="the reference content element (default: the Django docs template's)")
    parser.add_argument("--drop-xpath", help="elements removed from the reference (relative to it)")
    parser.add_argument("--leak", action="append",
                        help="a template string that must not show in the text (repeatable; "
                             "default: the Django docs template's)")
    parser.add_argument("--positions", action="store_true",
                        help="instead: link positions of every page against the Django docs template regions")
    args = parser.parse_args(argv)
    if not args.root.is_dir():
        print(f"error: {args.root} is not a folder", file=sys.stderr)
        return 2
    if args.positions:
        position_agreement(args.root)
        return 0

    files = sorted(p for p in args.root.rglob("*.html") if "_modules" not in p.parts)
    random.Random(args.seed).shuffle(files)
    pages: list[tuple[str, bytes, str]] = []
    for path in files:
        html = path.read_bytes()
        ref = reference_text(html, args.content_xpath, args.drop_xpath)
        if ref is not None and ref.strip():
            pages.append((f"http://127.0.0.1:8000/{path.relative_to(args.root)}", html, ref))
        if len(pages) == args.pages:
            break
    if not pages:
        print(f"error: no page under {args.root} has {args.content_xpath}", file=sys.stderr)
        return 2
    total_kb = sum(len(h) for _, h, _ in pages) / 1024

    funcs = extractors()
    runnable = {n: f for n, f in funcs.items() if callable(f)}
    outputs: dict[str, list[str]] = {}
    best: dict[str, float] = {}
    for name, func in runnable.items():  # warm-up (py3langid, trafilatura imports) + outputs
        outputs[name] = [func(html, url) for url, html, _ in pages]
    for _ in range(args.rounds):
        for name, func in runnable.items():
            start = time.process_time()
            for url, html, _ in pages:
                func(html, url)
            best[name] = min(best.get(name, float("inf")), time.process_time() - start)

    print(f"{len(pages)} pages ({total_kb / len(pages):.0f} KB average) from {args.root}, "
          f"CPU time, best of {args.rounds} rounds; {platform.processor() or platform.machine()}, "
          f"Python {platform.python_version()}")
    print()
    print("| extractor | pages/s | ms/page | precision | recall | pages with leaks |")
    print("| --- | ---: | ---: | ---: | ---: | ---: |")
    for name, func in funcs.items():
        if not callable(func):
            print(f"| {name} | {func} | | | | |")
            continue
        speed = len(pages) / best[name]
        if name.startswith("lxml parse only"):
            print(f"| {name} | {speed:.0f} | {1000 / speed:.1f} | – | – | – |")
            continue
        hit = got = want = 0
        leaky = 0
        for (_, _, ref), text in zip(pages, outputs[name], strict=True):
            ref_tokens = Counter(t.lower() for t in _TOKEN.findall(ref))
            out_tokens = Counter(t.lower() for t in _TOKEN.findall(text))
            hit += sum((ref_tokens & out_tokens).values())
            got += sum(out_tokens.values())
            want += sum(ref_tokens.values())
            flat_ref = " ".join(ref.split())
            flat_text = " ".join(text.split())
            if any(s in flat_text and s not in flat_ref for s in args.leak or LEAKS):
                leaky += 1
        precision = hit / got if got else 0.0
        recall = hit / want if want else 0.0
        print(f"| {name} | {speed:.0f} | {1000 / speed:.1f} | {precision:.3f} | {recall:.3f} | "
              f"{leaky}/{len(pages)} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
