"""PartWriter: explicit schema, flush every N rows, atomic part files, unique names."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from datetime import UTC, datetime
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from linkspider.items import PAGE_SCHEMA, SCHEMA_VERSION, SKIP_SCHEMA
from linkspider.parquet import PartWriter, part_name, read_table

REPO = Path(__file__).resolve().parents[1]


def skip_row(i: int) -> dict[str, object]:
    return {
        "url": f"https://example.com/p{i}/",
        "reason": "parameter",
        "from_url": None,
        "alias_of": None,
        "detail": None,
        "fetched_at": datetime(2026, 1, 1, tzinfo=UTC),
        "job": "j1",
    }


def test_flushes_every_n_rows_and_at_close(tmp_path: Path) -> None:
    writer = PartWriter(tmp_path, SKIP_SCHEMA, "j1", flush_rows=3)
    for i in range(7):
        writer.add(skip_row(i))
    assert len(list(tmp_path.glob("part-*.parquet"))) == 2
    assert writer.pending == 1
    writer.close()
    parts = sorted(tmp_path.glob("part-*.parquet"))
    assert [pq.read_metadata(p).num_rows for p in parts] == [3, 3, 1]
    assert writer.rows_written == 7
    assert not list(tmp_path.glob(".tmp-*"))


def test_parts_carry_the_explicit_schema(tmp_path: Path) -> None:
    with PartWriter(tmp_path, SKIP_SCHEMA, "j1", flush_rows=100) as writer:
        writer.add(skip_row(1))
    table = read_table(tmp_path)
    assert table.schema.equals(SKIP_SCHEMA, check_metadata=False)
    assert table.schema.metadata[b"linkspider_schema_version"] == SCHEMA_VERSION.encode()
    assert table.column("url").to_pylist() == ["https://example.com/p1/"]


def test_all_null_optional_columns_keep_their_types(tmp_path: Path) -> None:
    row = {name: None for name in PAGE_SCHEMA.names}
    row["url"] = "https://example.com/"
    with PartWriter(tmp_path, PAGE_SCHEMA, "j1") as writer:
        writer.add(row)
    table = read_table(tmp_path)
    assert table.schema.field("depth").type == pa.int32()
    assert table.schema.field("headings").type == pa.list_(pa.string())


def test_a_row_that_breaks_the_schema_fails_and_leaves_no_file(tmp_path: Path) -> None:
    writer = PartWriter(tmp_path, SKIP_SCHEMA, "j1", flush_rows=10)
    bad = skip_row(1) | {"url": None}  # url is not nullable
    writer.add(bad)
    with pytest.raises((pa.ArrowInvalid, pa.ArrowTypeError, ValueError)):
        writer.flush()
    assert not list(tmp_path.iterdir())


def test_nothing_written_when_no_rows(tmp_path: Path) -> None:
    PartWriter(tmp_path / "pages", PAGE_SCHEMA, "j1").close()
    assert list((tmp_path / "pages").iterdir()) == []
    assert read_table(tmp_path / "pages", PAGE_SCHEMA).num_rows == 0


def test_part_names_are_unique_across_writers_and_safe(tmp_path: Path) -> None:
    names = set()
    for _ in range(3):
        with PartWriter(tmp_path, SKIP_SCHEMA, "a/b job", flush_rows=1) as writer:
            writer.add_many([skip_row(1), skip_row(2)])
        names.update(p.name for p in writer.parts)
    assert len(names) == 6
    assert all(n.startswith("part-a_b_job-") and "/" not in n for n in names)
    assert part_name("j", 7, stamp="S", pid=42) == "part-j-S-42-00007.parquet"


def test_flush_rows_must_be_positive(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="flush_rows"):
        PartWriter(tmp_path, SKIP_SCHEMA, "j1", flush_rows=0)


WRITER_FOREVER = textwrap.dedent(
    """
    import sys
    from datetime import UTC, datetime
    from linkspider.items import SKIP_SCHEMA
    from linkspider.parquet import PartWriter
    writer = PartWriter(sys.argv[1], SKIP_SCHEMA, "killed", flush_rows=200)
    i = 0
    while True:
        writer.add({"url": f"https://example.com/{i}/" + "x" * 200, "reason": "parameter",
                    "fetched_at": datetime.now(UTC), "job": "killed"})
        i += 1
    """
)


def test_killed_writer_leaves_only_complete_parts(tmp_path: Path) -> None:
    """SIGKILL at a random moment: every part-*.parquet is readable and whole."""
    proc = subprocess.Popen([sys.executable, "-c", WRITER_FOREVER, str(tmp_path)], cwd=REPO)
    try:
        deadline = time.monotonic() + 30
        while len(list(tmp_path.glob("part-*.parquet"))) < 5 and time.monotonic() < deadline:
            time.sleep(0.05)
    finally:
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
    parts = sorted(tmp_path.glob("part-*.parquet"))
    assert len(parts) >= 5
    for part in parts:
        assert pq.read_table(part).num_rows == 200
    rows = read_table(tmp_path)
    assert rows.num_rows == 200 * len(parts)
    assert len(set(rows.column("url").to_pylist())) == rows.num_rows


def test_flushes_when_the_buffer_reaches_its_byte_limit(tmp_path: Path) -> None:
    writer = PartWriter(tmp_path, SKIP_SCHEMA, "j1", flush_rows=1000, flush_bytes=200)
    for i in range(10):
        writer.add({**skip_row(i), "detail": "x" * 90})  # ~120 bytes a row: a part every 2 rows
    assert len(writer.parts) == 5 and writer.pending == 0
    assert [pq.read_table(p).num_rows for p in writer.parts] == [2] * 5


def test_flushes_when_the_oldest_row_has_waited_its_interval(tmp_path: Path) -> None:
    writer = PartWriter(tmp_path, SKIP_SCHEMA, "j1", flush_rows=1000, flush_seconds=0.3)
    writer.add(skip_row(0))
    assert not writer.due() and writer.parts == []
    time.sleep(0.35)
    assert writer.due()
    writer.add(skip_row(1))  # the next row finds the buffer overdue
    assert len(writer.parts) == 1 and pq.read_table(writer.parts[0]).num_rows == 2
    assert not writer.due()


def test_flush_limits_must_not_be_negative(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="negative"):
        PartWriter(tmp_path, SKIP_SCHEMA, "j1", flush_bytes=-1)
