"""Write small crawl datasets with the linkspider schemas, so postprocess tests need no crawl.

``write_crawl(dir, pages, links, skipped)`` writes one part file per table exactly
as the pipelines do; ``page()``, ``link()`` and ``skip()`` fill every column with a
sensible default. ``SITE`` is a handful of pages of real prose on three topics
(coffee, gardening, bicycles) with a few existing links between them.
"""

from __future__ import annotations

import functools
import hashlib
import importlib.util
import sys
import tracemalloc
from collections.abc import Callable, Iterable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from types import ModuleType
from typing import TypeVar

import pyarrow as pa
import pyarrow.parquet as pq

from linkspider.items import LINK_SCHEMA, PAGE_SCHEMA, SKIP_SCHEMA

BASE = "https://example.test"
FETCHED = datetime(2026, 11, 1, 12, 0, tzinfo=UTC)


T = TypeVar("T")


def traced_peak(work: Callable[[], T]) -> tuple[T, int]:
    """``work()``'s value and the most bytes Python and NumPy held above what was held before it
    (``tracemalloc``'s peak, tracing only while it runs)."""
    tracemalloc.start()
    try:
        value = work()
        return value, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def module_from_file(name: str, path: Path) -> ModuleType:
    """The Python file ``path``, outside the packages (a benchmark, a site's build script), imported as
    module ``name`` and registered in ``sys.modules`` (dataclasses look their module up there)."""
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def blocks_of(text: str, links: Iterable[tuple[str, str]] = (), kind: str = "paragraph") -> list[dict]:
    """Blocks of ``text``: one ``kind`` block per line; ``links`` (anchor text, target URL) marks the
    first occurrence of each anchor text as an existing link."""
    blocks = [{"kind": kind, "text": line, "code": [], "links": []}
              for line in text.split("\n") if line.strip()]
    for anchor, target in links:
        for block in blocks:
            at = block["text"].find(anchor)
            if at >= 0:
                block["links"].append({"start": at, "end": at + len(anchor), "url": target})
                break
    return blocks


def page(url: str, title: str, text: str, **columns: object) -> dict:
    """A pages/ row: every column of PAGE_SCHEMA, overridable by keyword (blocks: one paragraph a line)."""
    row = {
        "url": url, "fetched_url": url, "status": 200, "title": title, "meta_description": "",
        "h1": title.split(" | ")[0], "headings": [], "text": text, "word_count": len(text.split()),
        "lang": "en", "canonical": url, "published": None, "modified": None, "noindex": False,
        "nofollow": False, "thin": False, "depth": 1, "found_by": "link",
        "content_hash": hashlib.sha1(text.encode()).hexdigest(), "fetched_at": FETCHED, "job": "job1",
        "kind": "content", "blocks": blocks_of(str(columns.get("text", text))),
    }
    row.update(columns)
    if "text" in columns and "content_hash" not in columns:
        row["content_hash"] = hashlib.sha1(str(columns["text"]).encode()).hexdigest()
    return row


def link(source: str, target: str, anchor: str = "", position: str = "content", **columns: object) -> dict:
    """A links/ row."""
    row = {"source_url": source, "target_url": target, "anchor_text": anchor, "position": position,
           "nofollow": False, "internal": True, "fetched_at": FETCHED, "job": "job1"}
    row.update(columns)
    return row


def skip(url: str, reason: str, alias_of: str | None = None, **columns: object) -> dict:
    """A skipped/ row."""
    row = {"url": url, "reason": reason, "from_url": None, "alias_of": alias_of, "detail": None,
           "fetched_at": FETCHED, "job": "job1"}
    row.update(columns)
    return row


def write_table(directory: Path, table: str, rows: Iterable[dict], schema: pa.Schema, part: str) -> None:
    folder = directory / table
    folder.mkdir(parents=True, exist_ok=True)
    rows = list(rows)
    pq.write_table(pa.Table.from_pylist(rows, schema=schema), folder / f"part-{part}.parquet")


def write_crawl(directory: str | Path, pages: Iterable[dict], links: Iterable[dict] = (),
                skipped: Iterable[dict] = (), part: str = "job1-0001") -> Path:
    """Write one part file per table under ``directory`` (created); returns the directory."""
    directory = Path(directory)
    write_table(directory, "pages", pages, PAGE_SCHEMA, part)
    write_table(directory, "links", links, LINK_SCHEMA, part)
    write_table(directory, "skipped", skipped, SKIP_SCHEMA, part)
    return directory


def write_linked_ring(directory: str | Path, pages: int = 30) -> Path:
    """A crawl of ``pages`` pages, each naming and linking five others in its text (five links a
    page: links enough for the confidence model's folds)."""
    urls = [url(f"/p{i}/") for i in range(pages)]
    rows, links = [], []
    for i, source in enumerate(urls):
        named = [(f"page{(i + k) % pages}", urls[(i + k) % pages]) for k in (1, 2, 3, 5, 8)]
        text = " ".join(f"see {name} here." for name, _ in named)
        rows.append(page(source, f"Page {i}", text, blocks=blocks_of(text, named)))
        links += [link(source, target) for _, target in named]
    return write_crawl(directory, rows, links)


def url(path: str) -> str:
    return f"{BASE}{path}"


ESPRESSO = url("/coffee/espresso/")
POUR_OVER = url("/coffee/pour-over/")
GRINDER = url("/coffee/burr-grinder/")
TOMATOES = url("/garden/growing-tomatoes/")
COMPOST = url("/garden/compost/")
ROSES = url("/garden/pruning-roses/")
CHAIN = url("/bikes/chain-maintenance/")
TYRES = url("/bikes/tyre-pressure/")

_TEXTS = {
    ESPRESSO: ("How to pull a good espresso shot | Example Kitchen",
               "An espresso shot forces hot water through a puck of finely ground coffee at about nine bars "
               "of pressure. Dose eighteen grams of coffee into the portafilter basket, level it and tamp "
               "firmly. A good shot runs for twenty-five to thirty seconds and yields about thirty-six grams "
               "of liquid. If the shot runs fast and tastes sour, grind finer; if it runs slowly and tastes "
               "bitter, grind coarser. A burr grinder gives the even particle size that espresso needs, "
               "because a blade grinder leaves dust and boulders that extract unevenly. Fresh beans roasted "
               "within the last month give a thick crema. Preheat the cup and the group head so that the "
               "coffee does not lose heat on its way. Milk drinks such as a flat white start from the same "
               "shot, with steamed milk poured over it."),
    POUR_OVER: ("Pour-over coffee brewing guide | Example Kitchen",
                "Pour-over brewing lets you control every step of extraction. Rinse the paper filter with "
                "hot water, add medium-fine ground coffee, and pour a little water to let the coffee bloom "
                "for thirty seconds while carbon dioxide escapes. Then pour slowly in spirals, keeping the "
                "bed evenly wet. A ratio of one gram of coffee to sixteen grams of water is a good start. "
                "The total brew time should be around three minutes; a longer time means the grind is too "
                "fine. A gooseneck kettle makes the pour steady. Even grounds from a burr grinder matter "
                "here too, since fines clog the filter and slow the draw down. Light roasts shine in a "
                "pour-over, showing fruit and floral notes that a dark roast hides."),
    GRINDER: ("Choosing a burr grinder for coffee | Example Kitchen",
              "A burr grinder crushes coffee beans between two burrs set at a fixed distance, so every "
              "particle comes out close to the same size. Conical burrs are quiet and forgiving; flat burrs "
              "give a very uniform grind for espresso. Stepless adjustment helps when you dial in an "
              "espresso shot, while stepped grinders are fine for pour-over and French press. Clean the "
              "burrs every few weeks, because old coffee oils turn rancid and spoil the taste of fresh "
              "beans. Grind right before brewing: ground coffee loses its aroma within minutes. A hand "
              "grinder is cheap and travels well, and an electric grinder saves time every morning."),
    TOMATOES: ("Growing tomatoes at home | Example Garden",
               "Tomatoes need six to eight hours of direct sun, warm soil and steady watering. Start seeds "
               "indoors six weeks before the last frost and plant the seedlings deep, burying part of the "
               "stem so that it grows extra roots. Mix well-rotted compost into the planting hole, since "
               "tomatoes are hungry plants. Water at the base in the morning and mulch the soil to keep "
               "moisture even, which prevents blossom end rot and split fruit. Indeterminate varieties "
               "need a stake or a cage and regular removal of side shoots. Feed with a potassium-rich "
               "fertiliser once the first fruits set, and pick them when fully coloured."),
    COMPOST: ("Making compost in your garden | Example Garden",
              "Compost turns kitchen scraps and garden waste into dark, crumbly soil food. Mix green "
              "material such as vegetable peelings and grass clippings with brown material such as dry "
              "leaves, straw and cardboard, roughly one part green to two parts brown. Keep the heap as "
              "moist as a wrung-out sponge and turn it every couple of weeks to let air in; a hot heap "
              "breaks down in two or three months. Avoid meat and dairy, which attract pests. Finished "
              "compost smells earthy and improves the structure of clay and sandy soils alike. Spread it "
              "around tomatoes, roses and vegetables as a mulch or dig it into new beds."),
    ROSES: ("Pruning roses in late winter | Example Garden",
            "Prune roses in late winter or early spring, when the buds begin to swell. Use clean, sharp "
            "secateurs and cut just above an outward-facing bud at a slant, so that rain runs off. First "
            "remove dead, diseased and crossing stems, then open the centre of the bush to let air flow "
            "through, which keeps black spot away. Hybrid tea roses can be cut back hard to about a third "
            "of their height; shrub roses only need a light trim. After pruning, feed the roses and spread "
            "a thick mulch of compost around them. Deadhead faded flowers through the summer to keep new "
            "blooms coming."),
    CHAIN: ("Bicycle chain maintenance | Example Cycling",
            "A clean, lubricated chain makes a bicycle shift smoothly and saves the cassette and chainrings "
            "from early wear. Wipe the chain with a rag after wet rides, and every few hundred kilometres "
            "scrub it with degreaser and a brush. Dry it fully, then put one drop of chain lube on each "
            "roller while turning the pedals backwards, and wipe off the excess after a few minutes. "
            "Measure chain stretch with a chain checker: replace the chain at 0.5 percent wear on an "
            "eleven-speed drivetrain. A quick link lets you remove the chain without a chain tool."),
    TYRES: ("What tyre pressure should I ride? | Example Cycling",
            "The right tyre pressure depends on rider weight, tyre width and the road surface. Wider "
            "tyres run at lower pressure with the same rolling resistance and much more comfort. A road "
            "bicycle with 28 mm tyres often rides well at about five to six bar, while gravel tyres run "
            "at two to three bar. Check the pressure before every ride with a floor pump gauge, because "
            "inner tubes lose air slowly. Too little pressure causes pinch flats; too much makes the bike "
            "skittish on rough roads. Tubeless tyres can run lower still and seal small punctures."),
}

_CONTENT_LINKS = {ESPRESSO: [("burr grinder", GRINDER)], POUR_OVER: [("espresso", ESPRESSO)],
                  COMPOST: [("tomatoes", TOMATOES)]}
SITE: list[dict] = [page(u, title, text, headings=[], blocks=blocks_of(text, _CONTENT_LINKS.get(u, ())))
                    for u, (title, text) in _TEXTS.items()]
#: Existing links: the espresso page already links to the grinder with "burr grinder", and so on.
SITE_LINKS: list[dict] = [
    link(ESPRESSO, GRINDER, "burr grinder"),
    link(POUR_OVER, ESPRESSO, "espresso"),
    link(COMPOST, TOMATOES, "tomatoes"),
    link(CHAIN, TYRES, "tyre pressure", position="aside"),
    *[link(u, url("/"), "Home", position="nav") for u in _TEXTS],
]


def write_site(directory: str | Path, **kwargs: object) -> Path:
    """The SITE crawl, with SITE_LINKS."""
    return write_crawl(directory, SITE, SITE_LINKS, **kwargs)


def later(row: dict, **changes: object) -> dict:
    """A copy of a row fetched one day later, with ``changes``."""
    changed = dict(row, fetched_at=row["fetched_at"] + timedelta(days=1), **changes)
    if "text" in changes:
        changed["content_hash"] = hashlib.sha1(str(changes["text"]).encode()).hexdigest()
    return changed


@functools.cache
def bundled_model():  # noqa: ANN201 - postprocess.stages.embed.Embedder
    """The bundled model, loaded once per test session (it takes seconds)."""
    from postprocess.stages.embed import load_model

    return load_model(None)
