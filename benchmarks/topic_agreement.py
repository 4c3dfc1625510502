"""How many of a synthetic site's queue rows link two pages of the same topic, in two queues.

The synthetic crawls (``benchmarks/scale.py``) put each page in a topic, named in its URL
(``/t<topic>/``), with the topic's own words; their text is otherwise word salad, so an editor's
blind reading says little there. What it can say is whether a suggested link joins two pages of
one topic. For two queues of the same crawl (e.g. before and after a change), prints each one's
rows, the share within a topic, and the same for the rows only one of them has (by source, target
and anchor)::

    python3 benchmarks/topic_agreement.py BEFORE/suggestions.csv AFTER/suggestions.csv
"""

from __future__ import annotations

import argparse

import pyarrow.compute as pc
import pyarrow.csv as pv

#: a page's URL, all of it, with its topic's number as the only group
TOPIC = r"^https?://[^/]+/t(\d+)/.*$"


def rows(path: str) -> tuple[set[tuple[str, str, str]], set[tuple[str, str, str]]]:
    """The queue's (source, target, anchor) rows, and those whose source and target share a topic."""
    table = pv.read_csv(path, convert_options=pv.ConvertOptions(
        include_columns=["source_url", "target_url", "anchor"],
        column_types={"source_url": "string", "target_url": "string", "anchor": "string"}))
    sources = pc.replace_substring_regex(table["source_url"], TOPIC, r"\1")
    targets = pc.replace_substring_regex(table["target_url"], TOPIC, r"\1")
    same = pc.equal(sources, targets).to_pylist()
    keys = list(zip(table["source_url"].to_pylist(), table["target_url"].to_pylist(),
                    table["anchor"].to_pylist(), strict=True))
    return set(keys), {key for key, one in zip(keys, same, strict=True) if one}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("before")
    parser.add_argument("after")
    args = parser.parse_args()
    before, before_same = rows(args.before)
    after, after_same = rows(args.after)

    def line(label: str, keys: set, same: set) -> None:
        share = len(keys & same) / len(keys) if keys else 0.0
        print(f"{label}: {len(keys):,} rows, {share:.2%} within a topic")

    line("before", before, before_same)
    line("after", after, after_same)
    line("only before", before - after, before_same)
    line("only after", after - before, after_same)


if __name__ == "__main__":
    main()
