"""The loader: part merging, newest fetch, aliases, column checks, job selection."""

from __future__ import annotations

from datetime import timedelta

import pyarrow.parquet as pq
import pytest
from crawlkit import (
    COMPOST,
    ESPRESSO,
    GRINDER,
    POUR_OVER,
    SITE,
    SITE_LINKS,
    later,
    link,
    page,
    skip,
    url,
    write_crawl,
    write_site,
)

from linkspider.items import PAGE_SCHEMA
from postprocess.errors import InputError
from postprocess.stages.load import alias_map, build_crawl, load_crawl, require_linkable, resolve


def test_newer_page_row_wins_across_parts(tmp_path):
    write_site(tmp_path)
    newer = later(SITE[0], title="Espresso, revised", text="A new text about espresso shots and crema.")
    write_crawl(tmp_path, [newer], [], part="job2-0001")
    crawl = load_crawl(tmp_path)
    by_url = {p.url: p for p in crawl.pages}
    assert len(crawl.pages) == len(SITE)
    assert by_url[ESPRESSO].title == "Espresso, revised"
    assert by_url[ESPRESSO].text.startswith("A new text")


def test_links_come_from_the_sources_newest_fetch_only():
    old = link(ESPRESSO, GRINDER, "burr grinder")
    new = later(link(ESPRESSO, POUR_OVER, "pour-over"))
    crawl = build_crawl(SITE, [old, new], [])
    assert [(lk.source_url, lk.target_url) for lk in crawl.links] == [(ESPRESSO, POUR_OVER)]


@pytest.mark.parametrize(
    ("aliases", "start", "end"),
    [
        ({}, "a", "a"),
        ({"a": "b"}, "a", "b"),
        ({"a": "b", "b": "c"}, "a", "c"),  # chain
        ({"a": "b", "b": "a"}, "a", "b"),  # cycle: stops before coming back
        ({"a": "b", "b": "c", "c": "b"}, "a", "c"),
    ],
)
def test_resolve_follows_chains_and_stops_on_cycles(aliases, start, end):
    assert resolve(start, aliases) == end


def test_alias_map_takes_redirects_and_canonicals_only():
    rows = [skip("u1", "redirect", "p1"), skip("u2", "canonicalised", "p2"), skip("u3", "robots"),
            skip("u4", "redirect", None), skip("u5", "redirect", "u5")]
    assert alias_map(rows) == {"u1": "p1", "u2": "p2"}


def test_link_targets_are_rewritten_through_aliases():
    old_url = url("/coffee/espresso.html")
    short = url("/e")
    skipped = [skip(short, "redirect", old_url), skip(old_url, "canonicalised", ESPRESSO)]
    crawl = build_crawl(SITE, [link(POUR_OVER, short, "espresso")], skipped)
    assert crawl.links[0].target_url == ESPRESSO
    assert crawl.aliases[short] == old_url


def test_a_page_that_later_redirects_becomes_an_alias():
    moved = skip(COMPOST, "redirect", ESPRESSO, fetched_at=SITE[0]["fetched_at"] + timedelta(days=2))
    crawl = build_crawl(SITE, [link(POUR_OVER, COMPOST, "compost")], [moved])
    assert COMPOST not in {p.url for p in crawl.pages}
    assert crawl.links[0].target_url == ESPRESSO


def test_links_to_unknown_pages_are_kept():
    crawl = build_crawl(SITE, [link(ESPRESSO, url("/nowhere/"), "x")], [])
    assert crawl.links[0].target_url == url("/nowhere/")


def test_missing_column_is_named(tmp_path):
    write_site(tmp_path)
    table = pq.read_table(tmp_path / "pages" / "part-job1-0001.parquet").drop_columns(["text"])
    pq.write_table(table, tmp_path / "pages" / "part-job1-0001.parquet")
    with pytest.raises(InputError, match="has no column 'text'"):
        load_crawl(tmp_path)


def test_optional_columns_may_be_missing(tmp_path):
    write_site(tmp_path)
    path = tmp_path / "pages" / "part-job1-0001.parquet"
    pq.write_table(pq.read_table(path).drop_columns(["published", "depth", "job"]), path)
    assert len(load_crawl(tmp_path).pages) == len(SITE)


@pytest.mark.parametrize(
    ("setup", "message"),
    [
        (lambda d: None, "crawl directory not found"),
        (lambda d: (d / "pages").mkdir(parents=True), "pages/ has no part-"),
        (lambda d: write_crawl(d, []), "hold no rows"),
    ],
)
def test_empty_crawls_are_refused(tmp_path, setup, message):
    crawl_dir = tmp_path / "crawl"
    setup(crawl_dir)
    with pytest.raises(InputError, match=message):
        load_crawl(crawl_dir)


def test_unreadable_part_is_named(tmp_path):
    write_site(tmp_path)
    (tmp_path / "pages" / "part-broken.parquet").write_bytes(b"not parquet")
    with pytest.raises(InputError, match="part-broken.parquet"):
        load_crawl(tmp_path)


def test_job_selects_rows_of_one_job(tmp_path):
    write_site(tmp_path)
    other = page(url("/other/"), "Other", "Some other text about a different job.", job="job2")
    write_crawl(tmp_path, [other], [], part="job2-0001")
    assert [p.url for p in load_crawl(tmp_path, job="job2").pages] == [url("/other/")]
    assert len(load_crawl(tmp_path).pages) == len(SITE) + 1
    with pytest.raises(InputError, match="for job nope"):
        load_crawl(tmp_path, job="nope")


@pytest.mark.parametrize(
    ("pages", "message"),
    [
        ([page(ESPRESSO, "E", ""), page(GRINDER, "G", "  ")], "has main text"),
        ([page(ESPRESSO, "E", "Some text.")], "nothing to link"),
        ([page(ESPRESSO, "E", "Some text."), page(GRINDER, "G", "")], "nothing to link"),
    ],
)
def test_require_linkable(pages, message):
    with pytest.raises(InputError, match=message):
        require_linkable(build_crawl(pages, [], []))


def test_full_site_loads_with_types(tmp_path):
    write_site(tmp_path)
    crawl = load_crawl(tmp_path)
    require_linkable(crawl)
    assert len(crawl.links) == len(SITE_LINKS)
    first = crawl.pages[0]
    assert isinstance(first.headings, tuple) and first.status == 200 and first.lang == "en"


def test_an_older_crawl_is_named_with_what_to_do(tmp_path):
    """A crawl written before content blocks and page kinds (schema 1) stops with one line."""
    import pyarrow as pa

    old_fields = [f for f in PAGE_SCHEMA if f.name not in ("kind", "blocks")]
    old = pa.schema(old_fields, metadata={b"linkspider_schema_version": b"1"})
    row = {k: v for k, v in page(url("/a/"), "A", "Some text.").items() if k in old.names}
    (tmp_path / "pages").mkdir()
    pq.write_table(pa.Table.from_pylist([row], schema=old), tmp_path / "pages" / "part-old-0001.parquet")
    expected = r"schema version 1; postprocess needs version 2 .*crawl the site again"
    with pytest.raises(InputError, match=expected):
        load_crawl(tmp_path)
    newer = pa.schema(PAGE_SCHEMA, metadata={b"linkspider_schema_version": b"9"})
    pq.write_table(pa.Table.from_pylist([page(url("/a/"), "A", "x")], schema=newer),
                   tmp_path / "pages" / "part-old-0001.parquet")
    with pytest.raises(InputError, match="version 9; this postprocess reads versions 2 and 3"):
        load_crawl(tmp_path)


def test_a_schema_2_crawl_without_validators_still_loads(tmp_path):
    import pyarrow as pa

    v2 = pa.schema([f for f in PAGE_SCHEMA if f.name not in ("etag", "last_modified")],
                   metadata={b"linkspider_schema_version": b"2"})
    row = {k: v for k, v in page(url("/a/"), "A", "Some text.").items() if k in v2.names}
    (tmp_path / "pages").mkdir()
    pq.write_table(pa.Table.from_pylist([row], schema=v2), tmp_path / "pages" / "part-old-0001.parquet")
    assert [p.url for p in load_crawl(tmp_path).pages] == [url("/a/")]


def test_a_column_of_another_type_is_named(tmp_path):
    import pyarrow as pa

    fields = [pa.field("status", pa.string()) if f.name == "status" else f for f in PAGE_SCHEMA]
    odd = pa.schema(fields, metadata=PAGE_SCHEMA.metadata)
    row = {**page(url("/a/"), "A", "Some text."), "status": "200"}
    (tmp_path / "pages").mkdir()
    pq.write_table(pa.Table.from_pylist([row], schema=odd), tmp_path / "pages" / "part-x-0001.parquet")
    with pytest.raises(InputError, match="column 'status' is string, the crawl dataset says int32"):
        load_crawl(tmp_path)


def _two_part_crawl(tmp_path):
    from crawlkit import SITE, SITE_LINKS, write_crawl

    crawl = write_crawl(tmp_path / "crawl", SITE[:4], SITE_LINKS, part="job1-0001")
    write_crawl(crawl, SITE[4:], [], part="job1-0002")
    return crawl, SITE


def test_a_truncated_part_is_named_and_stops_the_load(tmp_path):
    crawl, _ = _two_part_crawl(tmp_path)
    part = crawl / "pages" / "part-job1-0002.parquet"
    part.write_bytes(part.read_bytes()[:-30])  # the footer is gone
    with pytest.raises(InputError, match=r"cannot read .*part-job1-0002\.parquet.*--skip-bad-parts"):
        load_crawl(crawl)


def test_skip_bad_parts_reads_the_rest_and_counts_what_it_lost(tmp_path):
    from postprocess.stages.load import BadParts

    crawl, site = _two_part_crawl(tmp_path)
    truncated = crawl / "pages" / "part-job1-0002.parquet"
    truncated.write_bytes(truncated.read_bytes()[:-30])
    bad = BadParts()
    loaded = load_crawl(crawl, bad=bad)
    assert [p.url for p in loaded.pages] == sorted(p["url"] for p in site[:4])
    assert [path for path, _, _ in bad.parts] == [truncated]
    assert "skipped 1 unreadable part file(s)" in bad.describe() and "footer is lost" in bad.describe()


def test_a_part_with_corrupt_data_reports_its_rows(tmp_path):
    from postprocess.stages.load import BadParts

    crawl, site = _two_part_crawl(tmp_path)
    part = crawl / "pages" / "part-job1-0002.parquet"
    data = bytearray(part.read_bytes())
    row_group = pq.ParquetFile(part).metadata.row_group(0)
    columns = [row_group.column(i) for i in range(row_group.num_columns)]
    data_end = max((c.dictionary_page_offset if c.has_dictionary_page else c.data_page_offset)
                   + c.total_compressed_size for c in columns)  # the column chunks end, the footer follows
    middle = min(len(data) // 2, data_end)
    data[8:middle] = bytes(len(data[8:middle]))  # the pages' data zeroed; header and footer intact
    part.write_bytes(bytes(data))
    bad = BadParts()
    loaded = load_crawl(crawl, bad=bad)
    assert len(loaded.pages) == 4 and bad.rows == len(site) - 4


def test_a_links_part_unreadable_midway_is_dropped_whole(tmp_path, monkeypatch):
    """Links are read a batch at a time: a part whose second row group's target URLs are corrupt
    (read by the second pass alone, after its first batches) counts none of its links with
    --skip-bad-parts; without, the load stops naming it."""
    from crawlkit import SITE, SITE_LINKS, link, write_crawl

    from postprocess.stages import load
    from postprocess.stages.load import BadParts

    crawl = write_crawl(tmp_path / "crawl", SITE, SITE_LINKS, part="job1-0001")
    alone = load_crawl(crawl)
    extra = [link(SITE[i % len(SITE)]["url"], f"https://example.test/x{i}/", f"text {i}") for i in range(400)]
    write_crawl(crawl, [], extra, part="job1-0002")
    part = crawl / "links" / "part-job1-0002.parquet"
    pq.write_table(pq.read_table(part), part, row_group_size=200)
    meta = pq.ParquetFile(part).metadata
    column = meta.row_group(1).column(meta.schema.names.index("target_url"))
    start = column.dictionary_page_offset or column.data_page_offset
    data = bytearray(part.read_bytes())
    data[start:start + column.total_compressed_size] = bytes(column.total_compressed_size)
    part.write_bytes(bytes(data))
    monkeypatch.setattr(load, "LINK_BATCH_ROWS", 50)
    bad = BadParts()
    loaded = load_crawl(crawl, bad=bad)
    assert [path for path, _, _ in bad.parts] == [part]
    assert list(loaded.links) == list(alone.links)
    with pytest.raises(InputError, match=r"cannot read .*part-job1-0002\.parquet"):
        load_crawl(crawl)
