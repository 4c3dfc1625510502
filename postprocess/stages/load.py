"""Load a crawl directory: merge part files, keep the newest fetch per URL, resolve aliases.

postprocess imports nothing of ``linkspider`` but its schema module
(``linkspider.items``, free of Scrapy): every part file's schema version is checked
against it and the columns postprocess needs are checked by name, so a crawl
written by another version fails with one line saying what to do.
"""

from __future__ import annotations

import functools
import sys
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from itertools import compress
from pathlib import Path
from typing import Any, TypeVar

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from linkspider.items import READABLE_VERSIONS, TABLES
from postprocess.background import Background, available_workers, worth_a_fork
from postprocess.errors import InputError
from postprocess.memory import drop_file_pages
from postprocess.stages.links import Link, LinkTable
from postprocess.stages.spill import BatchFile, SpillFile, mapped

__all__ = ["Block", "Crawl", "Link", "LinkTable", "Page", "build_crawl", "load_crawl"]

PAGE_COLUMNS = ("url", "status", "title", "h1", "headings", "text", "lang", "noindex", "thin",
                "content_hash", "kind", "blocks", "fetched_at")
#: meta_description is not read: no stage uses it (~200 bytes a page held for nothing).
PAGE_OPTIONAL = ("word_count", "published", "modified", "depth", "job")
LINK_COLUMNS = ("source_url", "target_url", "anchor_text", "position", "fetched_at")
LINK_OPTIONAL = ("nofollow", "internal", "job")
SKIP_COLUMNS = ("url", "reason", "alias_of")
SKIP_OPTIONAL = ("fetched_at", "job")
ALIAS_REASONS = ("redirect", "canonicalised")
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class Block:
    """One block of a page's main content (``linkspider.items.BLOCK_TYPE``)."""

    kind: str
    text: str
    code: tuple[tuple[int, int], ...] = ()  # inline code spans in ``text``
    links: tuple[tuple[int, int, str | None], ...] = ()  # existing links: start, end, target URL


@dataclass(frozen=True, slots=True)
class Page:
    """One page of the crawl (newest fetch of its canonical URL)."""

    url: str
    title: str = ""
    h1: str = ""
    headings: tuple[str, ...] = ()
    text: str = ""  # the loader's pages hold a ``StoredText``, read when asked for (``_PageText``)
    status: int = 200
    lang: str | None = None
    noindex: bool = False
    thin: bool = False
    content_hash: str = ""
    word_count: int = 0
    published: str | None = None
    modified: str | None = None
    depth: int | None = None
    fetched_at: datetime = _EPOCH
    job: str | None = None
    kind: str = "content"  # content | listing | navigation | code | other
    blocks: Sequence[Block] = ()  # a tuple, or the loader's StoredBlocks (made into Blocks when read)


class StoredText:
    """A page's text in the loader's ``BlockStore``: ``Page.text`` reads it from there when asked.
    ``written``: whether it holds anything but whitespace (``has_text``), found when it was loaded."""

    __slots__ = ("_row", "_store", "written")

    def __init__(self, store: BlockStore, row: int, written: bool) -> None:
        self._store, self._row, self.written = store, row, written

    def read(self) -> str:
        return self._store.text(self._row)


class _PageText:
    """``Page.text``: the string the page was made with, or the one its ``StoredText`` reads (the
    loader's pages keep their texts compressed; a reader gets a string and never sees the store)."""

    def __init__(self, slot: Any) -> None:  # noqa: ANN401 - the slot's member descriptor
        self._slot = slot

    def __get__(self, page: Page | None, owner: type | None = None) -> Any:  # noqa: ANN401
        if page is None:
            return self
        return text_of(self._slot.__get__(page, owner))

    def __set__(self, page: Page, value: str | StoredText) -> None:
        self._slot.__set__(page, value)


Page.text = _PageText(Page.text)  # type: ignore[assignment, misc]


def text_source(page: Page) -> str | StoredText:
    """``page``'s text as the page holds it: the string, or the ``StoredText`` that reads it (pickled,
    the store's place, not the text)."""
    return Page.text._slot.__get__(page, Page)  # type: ignore[attr-defined]


def text_of(source: str | StoredText) -> str:
    """The text a ``text_source`` stands for."""
    return source.read() if type(source) is StoredText else source  # type: ignore[union-attr, return-value]


@functools.cache
def _not_whitespace() -> str:
    """An RE2 pattern that matches any character ``str.isspace`` (so ``str.strip``) does not count as
    whitespace: a text it matches is one whose ``strip()`` is not empty."""
    spaces = (c for c in map(chr, range(sys.maxunicode + 1)) if c.isspace())
    return "[^" + "".join(f"\\x{{{ord(c):x}}}" for c in spaces) + "]"


def has_text(page: Page) -> bool:
    """Whether ``page``'s text holds anything but whitespace (``page.text.strip()``); a loaded page's
    is known without reading its text from the store."""
    source = text_source(page)
    if type(source) is StoredText:
        return source.written  # type: ignore[union-attr]
    return bool(source.strip())  # type: ignore[union-attr]


def _written(texts: pa.Array) -> list[bool]:
    """Whether each text holds anything but whitespace (a null: no), as ``has_text`` answers it."""
    return pc.fill_null(pc.match_substring_regex(texts, _not_whitespace()), False).to_pylist()


class PageValues(Sequence[T]):
    """``read(page)`` of each page, made when asked for (a pass over the pages' texts without holding
    them all: ``PageValues(pages, lambda p: p.text)``); slices are ``PageValues`` too."""

    def __init__(self, pages: Sequence[Page], read: Callable[[Page], T]) -> None:
        self._pages, self._read = pages, read

    def __len__(self) -> int:
        return len(self._pages)

    def __getitem__(self, i):  # noqa: ANN001, ANN204 - as list's
        if isinstance(i, slice):
            return PageValues(self._pages[i], self._read)
        return self._read(self._pages[i])


#: Pages whose blocks are compressed together (LZ4): reading a page decompresses its group (~300 KB),
#: which is kept until a page of another group is read, so a pass over the pages in order
#: decompresses each group once.
GROUP_PAGES = 32
#: The groups' codec. A run decompresses every group several times (the finder's passes, the
#: ranking, the anchors: 19 s of CPU at 100k synthetic pages with zstd); LZ4 decompresses the 10k
#: crawl's blocks in 0.05 s where zstd level 1 took 0.13, and compresses them in 0.17 s, not 0.30,
#: for groups ~1.5x as large (32 MB, not 22): they are in a spill file, not in memory.
_CODEC = pa.Codec("lz4_frame")


class BlockStore:
    """Every page's blocks as Arrow list arrays, and its text, compressed in groups of ``GROUP_PAGES``
    pages in the crawl's page order (blocks and texts apart: a pass over the texts does not
    decompress the blocks): blocks ~2.6 KB a page where Arrow holds ~9 KB and Python objects
    ~27 KB. The loader ``add``s each batch's blocks and text columns (they wait in a temporary
    file, ``BatchFile``), then ``pack``s them in page order into compressed groups (in a second
    temporary file, ``SpillFile``), so neither is in memory; a page's ``Block`` objects and text are
    made when they are read, the last page's kept."""

    def __init__(self) -> None:
        self._batches: BatchFile | None = BatchFile()  # each batch's blocks and texts, until ``pack``
        self.chunks: list[pa.Array] = []  # the batches' blocks columns, mapped from it while packing
        self.text_chunks: list[pa.Array] = []  # and their text columns
        self.size = 0
        self.groups: Sequence[pa.Buffer] = ()  # compressed Arrow IPC streams of GROUP_PAGES pages' blocks
        self.text_groups: Sequence[pa.Buffer] = ()  # and of their texts (each a ``SpillFile`` once packed)
        self.order = np.zeros(0, dtype=np.int64)  # the row at each packed place
        self.place = np.zeros(0, dtype=np.int64)  # the packed place of each row (-1: dropped)
        self._open: dict[str, tuple[int, pa.Array | None]] = {}  # per kind: the group last decompressed
        self._last: tuple[int, tuple[Block, ...]] = (-1, ())
        self._last_text: tuple[int, str] = (-1, "")
        # ``block_texts``: the last group read that way, for a set of kinds (its blocks' starts, which
        # are of those kinds, their texts)
        self._group_texts: tuple[tuple[int, frozenset[str]], np.ndarray, list[bool], list[str]] | None = None
        # ``code_spans``: the last group read that way, for a set of kinds (each page's code spans)
        self._group_code: tuple[tuple[int, frozenset[str]], list[list[str]]] | None = None

    def add(self, column: pa.Array, texts: pa.Array) -> int:
        """Keep a batch's blocks column and text column (written to the batch file); the number of its
        first row."""
        first = self.size
        if self._batches is None:
            raise RuntimeError("the store is packed: no batch can be added")
        self._batches.write(pa.record_batch([column, texts], names=["blocks", "text"]))
        self.size += len(column)
        return first

    def pack(self, rows: Sequence[int]) -> None:
        """Compress the rows' blocks and texts in groups, in the order of ``rows`` (the loader's page
        order, so passes over the pages read each group once); rows not in ``rows`` are dropped."""
        self.order = np.asarray(rows, dtype=np.int64)
        self.place = np.full(self.size, -1, dtype=np.int64)
        self.place[self.order] = np.arange(len(self.order))
        batches = self._batches.read() if self._batches is not None else []
        self._batches = None
        self.chunks = [batch.column(0) for batch in batches]
        self.text_chunks = [batch.column(1) for batch in batches]
        del batches
        self.groups = _packed(self.chunks, self.order)
        self.chunks = []
        self.text_groups = _packed(self.text_chunks, self.order)
        self.text_chunks = []
        self._open = {}
        self._last, self._last_text = (-1, ()), (-1, "")
        self._group_texts = self._group_code = None

    def __getstate__(self) -> dict[str, object]:
        """Pickled (for a fresh process, ``background``): the packed groups (their files opened again
        there, ``SpillFile``) and places; not the groups last read."""
        if self._batches is not None and self.size:
            raise TypeError("a block store is pickled once packed")
        state = dict(self.__dict__)
        state.update(_batches=None, chunks=[], text_chunks=[], _open={}, _last=(-1, ()), _last_text=(-1, ""),
                     _group_texts=None, _group_code=None)
        return state

    def _place(self, row: int) -> tuple[int, int]:
        place = int(self.place[row])
        if place < 0:
            raise KeyError(f"row {row} was not kept")
        return divmod(place, GROUP_PAGES)

    def _column(self, group: int, kind: str = "blocks") -> pa.Array:
        """Group ``group`` of ``kind`` (blocks or texts) decompressed; each kind's last one is kept."""
        number, column = self._open.get(kind, (-1, None))
        if number != group:
            column = _decompressed((self.groups if kind == "blocks" else self.text_groups)[group])
            self._open[kind] = (group, column)
        return column  # type: ignore[return-value]

    def blocks(self, row: int) -> tuple[Block, ...]:
        if self._last[0] != row:
            group, offset = self._place(row)
            self._last = (row, _blocks(self._column(group)[offset].as_py()))
        return self._last[1]

    def block_texts(self, row: int, kinds: frozenset[str]) -> list[str]:
        """The texts of row ``row``'s blocks of ``kinds``, in block order, as ``blocks`` would give
        them (a block without a kind, null or "", is "other"; without a text, ""), read from the kind
        and text columns of the row's group: no ``Block`` made, no link or code span read (for the
        passes that read texts alone). The group's columns are kept until another group is read this
        way."""
        group, offset = self._place(row)
        if self._group_texts is None or self._group_texts[0] != (group, kinds):
            column = self._column(group)
            blocks = column.flatten()
            wanted = _of_kinds(blocks, kinds)
            lengths = pc.fill_null(pc.list_value_length(column), 0).to_numpy(zero_copy_only=False)
            starts = np.concatenate([[0], np.cumsum(lengths)])
            texts = pc.fill_null(pc.struct_field(blocks, "text"), "").to_pylist()
            self._group_texts = ((group, kinds), starts, wanted.to_pylist(), texts)
        _, starts, wanted_list, texts = self._group_texts
        start, end = int(starts[offset]), int(starts[offset + 1])
        return list(compress(texts[start:end], wanted_list[start:end]))

    def code_spans(self, row: int, kinds: frozenset[str]) -> list[str]:
        """The inline code of row ``row``'s blocks of ``kinds`` (each span's text, ``text[start:end]``,
        in block and span order), as its ``Block`` objects give it, read from its group's columns: no
        ``Block`` made, only the blocks with code spans read (the finder's defined names: making
        every page's blocks for them was ~13% of its build). The group's spans are kept until another
        group is read this way."""
        group, offset = self._place(row)
        if self._group_code is None or self._group_code[0] != (group, kinds):
            self._group_code = ((group, kinds), _code_spans(self._column(group), kinds))
        return self._group_code[1][offset]

    def text(self, row: int) -> str:
        if self._last_text[0] != row:
            group, offset = self._place(row)
            self._last_text = (row, self._column(group, "texts")[offset].as_py() or "")
        return self._last_text[1]

    def links_in(self, kinds: Iterable[str], groups: Iterable[int] | None = None
                 ) -> Iterator[tuple[np.ndarray, pa.Array]]:
        """(row, target URL) of every link inside a block of ``kinds``, a group of pages at a time
        (in packed order, and in block order within a group): read from the columns, no ``Block``
        made, never every link's URL at once (~60 bytes a link, 5M links at 100k pages). ``groups``:
        only those groups (numbers below ``len(self.groups)``), in the order given."""
        wanted = pa.array(sorted(kinds), pa.string())
        for group in range(len(self.groups)) if groups is None else groups:
            chunk = _decompressed(self.groups[group])
            blocks = chunk.flatten()
            block_row = self.order[pc.list_parent_indices(chunk).to_numpy() + group * GROUP_PAGES]
            kind, links = pc.struct_field(blocks, "kind"), pc.struct_field(blocks, "links")
            prose = pc.fill_null(pc.is_in(kind, value_set=wanted), False).to_numpy(zero_copy_only=False)
            link_block = pc.list_parent_indices(links).to_numpy()
            keep = prose[link_block]
            yield block_row[link_block][keep], pc.struct_field(links.flatten(), "url").filter(pa.array(keep))


def _of_kinds(blocks: pa.StructArray, kinds: frozenset[str]) -> pa.BooleanArray:
    """Which of the blocks are of ``kinds`` (a block without a kind, null or "", is "other", as
    ``_blocks`` makes it)."""
    kind = pc.struct_field(blocks, "kind")
    wanted = pc.fill_null(pc.is_in(kind, value_set=pa.array(sorted(kinds), pa.string())), False)
    if "other" in kinds:
        wanted = pc.or_(wanted, pc.fill_null(pc.equal(kind, ""), True))
    return wanted


def _code_spans(column: pa.ListArray, kinds: frozenset[str]) -> list[list[str]]:
    """For each page of a group's blocks column, the texts of the code spans in its blocks of
    ``kinds``, in block and span order; only the blocks holding spans are made Python values."""
    spans: list[list[str]] = [[] for _ in range(len(column))]
    blocks = column.flatten()
    code = pc.struct_field(blocks, "code")
    counts = pc.fill_null(pc.list_value_length(code), 0).to_numpy(zero_copy_only=False)
    chosen = np.flatnonzero(_of_kinds(blocks, kinds).to_numpy(zero_copy_only=False) & (counts > 0))
    if not len(chosen):
        return spans
    pages = pc.list_parent_indices(column).to_numpy()[chosen].tolist()
    taken = pa.array(chosen)
    texts = pc.fill_null(pc.struct_field(blocks, "text"), "").take(taken).to_pylist()
    for page, text, codes in zip(pages, texts, code.take(taken).to_pylist(), strict=True):
        spans[page].extend(text[c["start"]:c["end"]] for c in codes)
    return spans


#: Rows gathered from the chunks at once while packing: a chunk's ``take`` costs ~30 µs whatever it
#: takes, and a group's 32 rows in URL order lie in as many chunks, so taking each group's rows from
#: its chunks made ~2M calls at a million pages (193 s of a 224-s load). A block of this many rows
#: (~75 MB of blocks uncompressed) takes from each chunk once, then is cut into its groups.
PACK_BLOCK_ROWS = 8192


def _packed(chunks: list[pa.Array], order: np.ndarray) -> SpillFile:
    """The rows ``order`` of the chunks (one column, rows numbered across the chunks), compressed in
    groups of ``GROUP_PAGES``, each group written to the spill file as it is made. The rows are taken
    from the chunks they are in, ``PACK_BLOCK_ROWS`` at a time, never from the chunks joined: joining
    them first held the whole column twice (~18 KB a page for blocks and texts at 100k pages)."""
    if not chunks:
        return SpillFile()
    starts = np.cumsum([0] + [len(chunk) for chunk in chunks])
    block = max(GROUP_PAGES, PACK_BLOCK_ROWS // GROUP_PAGES * GROUP_PAGES)  # whole groups

    def steps() -> Iterator[pa.Buffer]:
        for start in range(0, len(order), block):
            yield from _groups(chunks, starts, order[start:start + block])
            # the batch file's pages this step read leave the process's resident set (mapped, they
            # stayed there: ~13 KB a page, 13 GB at a million pages, beside the loader's own memory)
            drop_file_pages()

    return SpillFile(steps())


def _groups(chunks: list[pa.Array], starts: np.ndarray, rows: np.ndarray) -> Iterator[pa.Buffer]:
    """Rows ``rows`` of the chunks (chunk k holds rows ``starts[k]`` on), in that order, compressed
    ``GROUP_PAGES`` at a time."""
    chunk_of = np.searchsorted(starts, rows, side="right") - 1
    pieces = [chunks[k].take(pa.array(rows[chunk_of == k] - starts[k])) for k in np.unique(chunk_of).tolist()]
    joined = pieces[0] if len(pieces) == 1 else pa.concat_arrays(pieces)  # by chunk, then in ``rows`` order
    del pieces
    place = np.empty(len(rows), dtype=np.int64)
    place[np.argsort(chunk_of, kind="stable")] = np.arange(len(rows))
    in_order = joined.take(pa.array(place))
    del joined
    for start in range(0, len(rows), GROUP_PAGES):
        yield _compressed(in_order.slice(start, GROUP_PAGES))


def _compressed(column: pa.Array) -> pa.Buffer:
    batch = pa.record_batch([column], names=["values"])
    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, batch.schema, options=pa.ipc.IpcWriteOptions(compression=_CODEC)) as writer:
        writer.write_batch(batch)
    return sink.getvalue()


def _decompressed(packed: pa.Buffer) -> pa.Array:
    return pa.ipc.open_stream(packed).read_next_batch().column(0)


class StoredBlocks(Sequence):
    """One page's blocks in a ``BlockStore``: a sequence of ``Block`` equal to the tuple it stands for."""

    __slots__ = ("_row", "_store")

    def __init__(self, store: BlockStore, row: int) -> None:
        self._store, self._row = store, row

    @property
    def where(self) -> tuple[BlockStore, int]:
        """The store and the row these blocks are in."""
        return self._store, self._row

    def _tuple(self) -> tuple[Block, ...]:
        return self._store.blocks(self._row)

    def __getitem__(self, i):  # noqa: ANN001, ANN204 - as tuple's
        return self._tuple()[i]

    def __len__(self) -> int:
        return len(self._tuple())

    def __iter__(self) -> Iterator[Block]:
        return iter(self._tuple())

    def __eq__(self, other: object) -> bool:
        if isinstance(other, StoredBlocks | tuple | list):
            return self._tuple() == tuple(other)
        return NotImplemented

    def __hash__(self) -> int:
        return hash(self._tuple())

    def __repr__(self) -> str:
        return repr(self._tuple())


def block_texts(page: Page, kinds: frozenset[str]) -> list[str]:
    """The texts of ``page``'s blocks of ``kinds``, in block order: from the store's columns when its
    blocks are stored (``BlockStore.block_texts``: no ``Block`` made), else from its blocks."""
    blocks = page.blocks
    if isinstance(blocks, StoredBlocks):
        store, row = blocks.where
        return store.block_texts(row, kinds)
    return [b.text for b in blocks if b.kind in kinds]


def code_spans(page: Page, kinds: frozenset[str]) -> list[str]:
    """The texts of the inline code spans in ``page``'s blocks of ``kinds``, in block and span order:
    from the store's columns when its blocks are stored (``BlockStore.code_spans``), else from its
    blocks."""
    blocks = page.blocks
    if isinstance(blocks, StoredBlocks):
        store, row = blocks.where
        return store.code_spans(row, kinds)
    return [b.text[start:end] for b in blocks if b.kind in kinds for start, end in b.code]


@dataclass(frozen=True)
class Crawl:
    """A loaded crawl: pages, links and the alias map (alias URL → page URL)."""

    pages: list[Page]
    links: Sequence[Link]  # a LinkTable from the loader; any sequence of Link works
    aliases: dict[str, str] = field(default_factory=dict)
    directory: str = ""

    def page_index(self) -> dict[str, int]:
        """URL → position in ``pages``."""
        return {p.url: i for i, p in enumerate(self.pages)}


def _part_files(directory: Path, table: str) -> list[Path]:
    return sorted((directory / table).glob("part-*.parquet"))


@dataclass
class BadParts:
    """Part files skipped with ``--skip-bad-parts``: (path, rows it held or None when unknown, why)."""

    parts: list[tuple[Path, int | None, str]] = field(default_factory=list)

    @property
    def rows(self) -> int:
        return sum(n or 0 for _, n, _ in self.parts)

    def describe(self) -> str:
        unknown = sum(1 for _, n, _ in self.parts if n is None)
        rows = f"{self.rows} rows"
        if unknown:
            rows += f" (and the rows of {unknown} part(s) whose footer is lost)"
        return f"skipped {len(self.parts)} unreadable part file(s), {rows}: " + ", ".join(
            str(path) for path, _, _ in self.parts[:3]) + (" …" if len(self.parts) > 3 else "")


def _first_line(exc: Exception) -> str:
    return str(exc).splitlines()[0] if str(exc) else type(exc).__name__


def _rows_in(path: Path) -> int | None:
    try:
        return pq.ParquetFile(path).metadata.num_rows
    except (OSError, pa.ArrowException):
        return None


def _checked_columns(path: Path, schema: pa.Schema, table: str, required: tuple[str, ...],
                     optional: tuple[str, ...]) -> list[str]:
    """The part's columns of ``required`` + ``optional``, after checking its version, that it
    has every required column, and their types (InputError, one line)."""
    check_version(path, schema)
    missing = [c for c in required if c not in schema.names]
    if missing:
        raise InputError(f"{table} part {path.name} has no column '{missing[0]}'")
    columns = list(required) + [c for c in optional if c in schema.names]
    check_types(path, table, schema, columns)
    return columns


def _read_parts(files: Iterable[Path], table: str, required: tuple[str, ...],
                optional: tuple[str, ...], job: Jobs, bad: BadParts | None = None) -> list[dict]:
    """Rows of every part file as dicts (the columns it has of ``required`` + ``optional``); a
    missing required column is an InputError. An unreadable part is an InputError naming it —
    or, with ``bad``, is skipped and recorded there."""
    columns = tuple(required) + tuple(optional)
    return [row for _, part, _ in _checked_parts(files, table, required, optional, columns, job, bad)
            for row in part.to_pylist()]


def check_version(path: Path, schema: pa.Schema) -> None:
    """One-line InputError when a part was written by another version of the crawl dataset."""
    version = (schema.metadata or {}).get(b"linkspider_schema_version", b"").decode() or "unknown"
    if version in READABLE_VERSIONS:
        return
    if version.isdigit() and int(version) < int(READABLE_VERSIONS[0]):
        raise InputError(f"{path} is crawl schema version {version}; postprocess needs version "
                         f"{READABLE_VERSIONS[0]} or later (content blocks and page kinds): "
                         "crawl the site again")
    raise InputError(f"{path} is crawl schema version {version}; this postprocess reads versions "
                     f"{' and '.join(READABLE_VERSIONS)}: use the linkspider that wrote it")


def check_types(path: Path, table: str, schema: pa.Schema, columns: Iterable[str]) -> None:
    """One-line InputError when a column has another type than the crawl contract's
    (``linkspider.items.TABLES``)."""
    contract = TABLES[table]
    for name in columns:
        if name in contract.names and not schema.field(name).type.equals(contract.field(name).type):
            raise InputError(f"{table} part {path.name}: column '{name}' is {schema.field(name).type}, "
                             f"the crawl dataset says {contract.field(name).type}")


def _blocks(rows: list[dict] | None) -> tuple[Block, ...]:
    return tuple(
        Block(b.get("kind") or "other", b.get("text") or "",
              tuple((c["start"], c["end"]) for c in b.get("code") or ()),
              tuple((k["start"], k["end"], k.get("url")) for k in b.get("links") or ()))
        for b in rows or ())


def _when(value: datetime | None) -> datetime:
    return value if value is not None else _EPOCH


def merge_pages(rows: Iterable[dict]) -> dict[str, dict]:
    """Newest row per URL (by fetched_at; a later part wins a tie)."""
    newest: dict[str, dict] = {}
    for row in rows:
        url = row.get("url")
        if not url:
            continue
        old = newest.get(url)
        if old is None or _when(row.get("fetched_at")) >= _when(old.get("fetched_at")):
            newest[url] = row
    return newest


def alias_map(rows: Iterable[dict]) -> dict[str, str]:
    """Alias URL → the URL it stands for, from redirect and canonicalised skips (newest wins)."""
    newest: dict[str, dict] = {}
    for row in rows:
        if row.get("reason") in ALIAS_REASONS and row.get("alias_of") and row.get("url"):
            if row["alias_of"] == row["url"]:
                continue
            old = newest.get(row["url"])
            if old is None or _when(row.get("fetched_at")) >= _when(old.get("fetched_at")):
                newest[row["url"]] = row
    return {url: row["alias_of"] for url, row in newest.items()}


def resolve(url: str, aliases: dict[str, str]) -> str:
    """Follow alias chains to the end; a cycle leaves the URL where the cycle starts."""
    seen = {url}
    while url in aliases:
        nxt = aliases[url]
        if nxt in seen:
            return url
        seen.add(nxt)
        url = nxt
    return url


def newest_links(rows: Iterable[dict]) -> list[dict]:
    """Keep each source's links from its newest fetch only."""
    rows = list(rows)
    latest: dict[str, datetime] = {}
    for row in rows:
        when = _when(row.get("fetched_at"))
        src = row["source_url"]
        if src not in latest or when > latest[src]:
            latest[src] = when
    return [r for r in rows if _when(r.get("fetched_at")) == latest[r["source_url"]]]


def _shared(value: str | None) -> str | None:
    """One string object for all the pages that have the same value of a field with few values
    (language, job, kind): ~55 bytes a page each, where every page held its own copy."""
    return sys.intern(value) if value is not None else None


def _page(row: dict, blocks: Sequence[Block] | None = None, text: StoredText | None = None) -> Page:
    return Page(
        url=row["url"],
        title=row.get("title") or "",
        h1=row.get("h1") or "",
        headings=tuple(h for h in (row.get("headings") or ()) if h),
        text=(row.get("text") or "") if text is None else text,  # type: ignore[arg-type]
        status=int(row["status"]) if row.get("status") is not None else 200,
        lang=_shared(row.get("lang") or None),
        noindex=bool(row.get("noindex")),
        thin=bool(row.get("thin")),
        content_hash=row.get("content_hash") or "",
        word_count=int(row.get("word_count") or 0),
        published=row.get("published") or None,
        modified=row.get("modified") or None,
        depth=row.get("depth"),
        fetched_at=_when(row.get("fetched_at")),
        job=_shared(row.get("job")),
        kind=_shared(row.get("kind") or "content"),
        blocks=_blocks(row.get("blocks")) if blocks is None else blocks,
    )


def _drop_realiased(pages: dict[str, object], when: dict[str, datetime], skip_rows: list[dict]
                    ) -> dict[str, str]:
    """The alias map; a URL recorded as a page and, later, as an alias (it now redirects) leaves
    ``pages`` (``when``: each page's fetch time) — the alias wins."""
    aliases = alias_map(skip_rows)
    alias_when = {r["url"]: _when(r.get("fetched_at")) for r in skip_rows if r.get("url") in aliases}
    for url in list(pages):
        if url in aliases and alias_when.get(url, _EPOCH) > when[url]:
            del pages[url]
    return {u: a for u, a in aliases.items() if u not in pages}


def build_crawl(page_rows: Iterable[dict], link_rows: Iterable[dict], skip_rows: Iterable[dict],
                directory: str = "") -> Crawl:
    """Merge raw rows into a Crawl (pure: the loader's logic without the files)."""
    pages = merge_pages(page_rows)
    skip_rows = list(skip_rows)
    aliases = _drop_realiased(pages, {u: _when(r.get("fetched_at")) for u, r in pages.items()}, skip_rows)
    links: list[Link] = []
    for row in newest_links(link_rows):
        source = resolve(row["source_url"], aliases)
        if source not in pages:
            continue
        links.append(Link(
            source_url=source,
            target_url=resolve(row["target_url"], aliases),
            anchor_text=row.get("anchor_text") or "",
            position=row.get("position") or "other",
            nofollow=bool(row.get("nofollow")),
            internal=True if row.get("internal") is None else bool(row["internal"]),
        ))
    ordered = sorted(pages.values(), key=lambda r: r["url"])
    return Crawl(pages=[_page(r) for r in ordered], links=LinkTable.from_links(links), aliases=aliases,
                 directory=directory)


#: Rows turned into Python objects at a time (the part files are read in batches of this many rows).
BATCH_ROWS = 2048


def micros(column: pa.ChunkedArray | pa.Array) -> np.ndarray:
    """Timestamps as int64 microseconds since the epoch (a missing one is the epoch)."""
    values = pc.cast(column, pa.timestamp("us", tz="UTC")).cast(pa.int64()).fill_null(0)
    return np.asarray(values.to_numpy(zero_copy_only=False), dtype=np.int64)


def _encode(column: pa.ChunkedArray | pa.Array, key: Callable[[str | None], int],
            memo: dict[str | None, int], dtype: type = np.int32) -> np.ndarray:
    """Each value's ``key`` (computed once per distinct value, ``memo`` across calls: ``key`` is called
    before the value enters ``memo``), as ``dtype`` (int32: the ids of every row of a part)."""
    chunks = column.chunks if isinstance(column, pa.ChunkedArray) else [column]
    out = []
    for chunk in chunks:
        encoded = pc.dictionary_encode(chunk, null_encoding="encode")
        values = encoded.dictionary.to_pylist()
        ids = np.fromiter((memo[v] if v in memo else memo.setdefault(v, key(v)) for v in values),
                          dtype=np.int64, count=len(values))
        indices = np.asarray(encoded.indices.to_numpy(zero_copy_only=False), dtype=np.int64)
        out.append(ids.astype(dtype)[indices] if len(values) else np.zeros(len(chunk), dtype=dtype))
    return np.concatenate(out) if out else np.zeros(0, dtype=dtype)


#: A job filter: one job (``--job``), several (a snapshot of the report's trend), or None (every row).
Jobs = str | frozenset[str] | None


def _of_jobs(column: pa.ChunkedArray | pa.Array, job: str | frozenset[str]) -> pa.Array:
    """Which rows of a job column belong to ``job`` (one job, or any of a set)."""
    if isinstance(job, str):
        return pc.equal(column, job)
    return pc.is_in(column, value_set=pa.array(sorted(job), pa.string()))


def _checked_parts(files: Iterable[Path], table: str, required: tuple[str, ...], optional: tuple[str, ...],
                   columns: tuple[str, ...], job: Jobs, bad: BadParts | None
                   ) -> Iterator[tuple[Path, pa.Table, list[str]]]:
    """Each readable part: (path, its ``columns`` filtered to ``job``, the columns it has of
    ``required`` + ``optional``), checked by ``_checked_columns``."""
    for path in files:
        try:
            wanted, present = _wanted_columns(path, table, required, optional, columns, job)
            part = pq.read_table(path, columns=wanted)
        except (OSError, pa.ArrowException) as exc:
            _skipped(path, exc, bad)
            continue
        if job is not None:
            part = part.filter(_of_jobs(part["job"], job))
        yield path, part, present
        del part  # not held while the next part is read (nor should the caller's loop hold it)


#: Rows of a links part read at a time (a synthetic 100k-page crawl's parts hold 1.4M links each:
#: read whole, a part's URL and anchor strings and their encodings were a ~0.5 GB transient).
LINK_BATCH_ROWS = 1 << 17


def _checked_batches(files: Iterable[Path], table: str, required: tuple[str, ...], optional: tuple[str, ...],
                     columns: tuple[str, ...], job: Jobs, bad: BadParts | None, rows: int | None = None
                     ) -> Iterator[tuple[Path, Iterator[pa.Table], list[str]]]:
    """``_checked_parts``, each part's rows read ``rows`` (``LINK_BATCH_ROWS``) at a time: (path, its
    batches as tables, its columns). A part that fails midway is the caller's to drop (``_each_batch``)."""
    rows = rows or LINK_BATCH_ROWS
    for path in files:
        try:
            wanted, present = _wanted_columns(path, table, required, optional, columns, job)
            file = pq.ParquetFile(path)
        except (OSError, pa.ArrowException) as exc:
            _skipped(path, exc, bad)
            continue

        def batches(file: pq.ParquetFile = file, wanted: list[str] = wanted) -> Iterator[pa.Table]:
            for batch in file.iter_batches(batch_size=rows, columns=wanted, use_threads=False):
                part = pa.Table.from_batches([batch])
                yield part.filter(_of_jobs(part["job"], job)) if job is not None else part

        yield path, batches(), present


def _each_batch(path: Path, batches: Iterator[pa.Table], bad: BadParts | None,
                use: Callable[[pa.Table], None]) -> bool:
    """``use`` on each batch of a part, in order; False when the part could not be read to its end
    (recorded in ``bad``; without it, an InputError): the caller drops what it made of its batches."""
    try:
        for part in batches:
            use(part)
    except (OSError, pa.ArrowException) as exc:
        _skipped(path, exc, bad)
        return False
    return True


def _wanted_columns(path: Path, table: str, required: tuple[str, ...], optional: tuple[str, ...],
                    columns: tuple[str, ...], job: Jobs) -> tuple[list[str], list[str]]:
    """The columns of ``columns`` to read from a part (with ``job`` when filtering by job) and the
    columns it has, after ``_checked_columns``."""
    schema = pq.read_schema(path)
    present = _checked_columns(path, schema, table, required, optional)
    if job is not None and "job" not in schema.names:
        raise InputError(f"{table} part {path.name} has no column 'job' (needed by --job)")
    wanted = [c for c in columns if c in present]
    wanted += ["job"] if job is not None and "job" not in wanted else []
    return wanted, present


def _skipped(path: Path, exc: Exception, bad: BadParts | None) -> None:
    """An unreadable part: an InputError naming it, or, with ``bad``, recorded there."""
    if bad is None:
        raise InputError(f"cannot read {path}: {exc} "
                         "(--skip-bad-parts reads the other parts)") from exc
    bad.parts.append((path, _rows_in(path), _first_line(exc)))


def _load_pages(files: list[Path], job: Jobs, bad: BadParts | None
                ) -> tuple[dict[str, tuple[int, int]], dict[str, datetime], list[tuple[Path, list[str]]]]:
    """The newest row of each URL (part number, row of the part, after the ``job`` filter) and its
    fetch time, read from the url and fetched_at columns only; and the parts read."""
    newest: dict[str, tuple[int, int, int]] = {}
    parts: list[tuple[Path, list[str]]] = []
    for path, part, present in _checked_parts(files, "pages", PAGE_COLUMNS, PAGE_OPTIONAL,
                                               ("url", "fetched_at"), job, bad):
        number = len(parts)
        parts.append((path, present))
        when = micros(part["fetched_at"]).tolist()
        for row, (url, fetched) in enumerate(zip(part["url"].to_pylist(), when, strict=True)):
            if not url:
                continue
            old = newest.get(url)
            if old is None or fetched >= old[2]:  # newest fetch; a later part or row wins a tie
                newest[url] = (number, row, fetched)
    when_of = {url: _EPOCH + timedelta(microseconds=t) for url, (_, _, t) in newest.items()}
    return {url: (n, r) for url, (n, r, _) in newest.items()}, when_of, parts


#: The page columns an outline of the crawl reads (``load_crawl(outline=True)``).
OUTLINE_COLUMNS = ("url", "depth", "kind", "fetched_at", "job")


def _page_objects(keep: dict[str, tuple[int, int]], parts: list[tuple[Path, list[str]]],
                  job: Jobs, outline: bool = False) -> list[Page]:
    """``Page`` objects of the kept rows, in URL order, read part by part in batches (``outline``:
    their URL, depth, kind, fetch time and job alone, no text or blocks)."""
    by_part: dict[int, dict[int, str]] = defaultdict(dict)
    for url, (number, row) in keep.items():
        by_part[number][row] = url
    pages: list[Page] = []
    store = None if outline else BlockStore()
    for number, rows in sorted(by_part.items()):
        path, present = parts[number]
        file = pq.ParquetFile(path)
        offset = 0
        columns = [c for c in present if not outline or c in OUTLINE_COLUMNS]  # a copy: += below
        columns += ["job"] if job is not None and "job" not in columns else []
        for batch in file.iter_batches(batch_size=BATCH_ROWS, columns=columns):
            if job is not None:
                batch = batch.filter(_of_jobs(batch["job"], job))
            wanted = [i for i in range(batch.num_rows) if offset + i in rows]
            if wanted:
                taken = batch.take(pa.array(wanted))
                if store is None:
                    pages.extend(_page(row, ()) for row in taken.to_pylist())
                else:
                    first = store.add(taken.column("blocks"), taken.column("text"))
                    written = _written(taken.column("text"))
                    rows_of = taken.drop_columns(["blocks", "text"]).to_pylist()
                    pages.extend(_page(row, StoredBlocks(store, first + i),
                                       StoredText(store, first + i, written[i]))
                                 for i, row in enumerate(rows_of))
            offset += batch.num_rows
    pages.sort(key=lambda p: p.url)
    if store is not None:
        store.pack([p.blocks.where[1] for p in pages])  # type: ignore[attr-defined]
    return pages


def _newest_fetches(files: list[Path], job: Jobs, bad: BadParts | None
                    ) -> tuple[list[Path], dict[str | None, int], np.ndarray]:
    """The parts that can be read, each source URL as written (its id: the order it is first
    met), and the newest fetch time of each (microseconds), read from the source_url and
    fetched_at columns only."""
    raw: dict[str | None, int] = {}  # its own memo for ``_encode``: a new source's id is its count
    latest = np.zeros(0, dtype=np.int64)
    readable: list[Path] = []
    for path, batches, _ in _checked_batches(files, "links", LINK_COLUMNS, LINK_OPTIONAL,
                                             ("source_url", "fetched_at"), job, bad):
        found = [latest.copy()]  # this part's fetches count once it is read to its end

        def newest(part: pa.Table, found: list[np.ndarray] = found) -> None:
            ids = _encode(part["source_url"], lambda v: len(raw), raw)
            found[0] = _padded(found[0], len(raw))
            np.maximum.at(found[0], ids, micros(part["fetched_at"]))

        if _each_batch(path, batches, bad, newest):
            readable.append(path)
            latest = found[0]
    return readable, raw, _padded(latest, len(raw))


def _padded(latest: np.ndarray, size: int) -> np.ndarray:
    """``latest`` grown to ``size`` sources; a source first met now has no fetch yet."""
    if size <= len(latest):
        return latest
    return np.concatenate([latest, np.full(size - len(latest), np.iinfo(np.int64).min, dtype=np.int64)])


def _load_links(files: list[Path], page_urls: Sequence[str], aliases: dict[str, str], job: Jobs,
                bad: BadParts | None, outline: bool = False) -> LinkTable:
    """The links of each source's newest fetch, sources and targets resolved through ``aliases``,
    as a ``LinkTable`` whose first URLs are ``page_urls`` (the pages', in their order: URL id = page
    number); ``outline``: without their anchor texts (every link's is "", the column not read).

    Two passes over the parts: the newest fetch of each source first (two columns), then each
    part's links, of which only the newest fetches' are kept as it is read. So what is held for
    every link of the crawl is the kept columns alone (~15 bytes a link), not every link's
    source, fetch time and ids until the last part is read.
    """
    urls: dict[str, int] = {url: i for i, url in enumerate(page_urls)}
    page_count = len(urls)
    anchors: dict[str, int] = {}
    positions: dict[str, int] = {}
    memos: dict[str, dict[str | None, int]] = {name: {} for name in ("target", "anchor", "position")}
    readable, raw, latest = _newest_fetches(files, job, bad)

    def source_id(url: str | None) -> int:
        found = urls.get(resolve(url or "", aliases), -1)
        return found if found < page_count else -1

    def target_id(url: str | None) -> int:
        return urls.setdefault(resolve(url or "", aliases), len(urls))

    source_of = np.fromiter(map(source_id, raw), dtype=np.int32, count=len(raw))  # raw source id → page
    columns: dict[str, list[np.ndarray]] = defaultdict(list)
    read = tuple(c for c in LINK_COLUMNS + LINK_OPTIONAL if not (outline and c == "anchor_text"))
    for path, batches, _ in _checked_batches(readable, "links", LINK_COLUMNS, LINK_OPTIONAL, read, job, bad):
        found: dict[str, list[np.ndarray]] = defaultdict(list)  # this part's: kept once it is read to its end

        def keep_newest(part: pa.Table, found: dict[str, list[np.ndarray]] = found) -> None:
            nonlocal latest, source_of
            sources = _encode(part["source_url"], lambda v: len(raw), raw)
            if len(raw) > len(source_of):  # a source the first pass did not see (the part changed since)
                latest = _padded(latest, len(raw))
                more = np.full(len(raw) - len(source_of), -1, dtype=np.int32)
                source_of = np.concatenate([source_of, more])
            page_of = source_of[sources]
            keep = (micros(part["fetched_at"]) == latest[sources]) & (page_of >= 0)
            found["source"].append(page_of[keep])
            # every row's target and anchor get their ids (in the order they are met), kept rows or not
            found["target"].append(_encode(part["target_url"], target_id, memos["target"])[keep])
            if outline:  # the anchor text "" for every link
                found["anchor"].append(np.full(int(keep.sum()), anchors.setdefault("", 0), dtype=np.int32))
            else:
                found["anchor"].append(_encode(part["anchor_text"],
                                               lambda v: anchors.setdefault(v or "", len(anchors)),
                                               memos["anchor"])[keep])
            found["position"].append(_encode(part["position"],
                                             lambda v: positions.setdefault(v or "other", len(positions)),
                                             memos["position"], np.uint8)[keep])
            names = part.column_names
            found["nofollow"].append(part["nofollow"].fill_null(False).to_numpy().astype(bool)[keep]
                                     if "nofollow" in names else np.zeros(int(keep.sum()), dtype=bool))
            found["internal"].append(part["internal"].fill_null(True).to_numpy().astype(bool)[keep]
                                     if "internal" in names else np.ones(int(keep.sum()), dtype=bool))

        if _each_batch(path, batches, bad, keep_newest):
            for name, arrays in found.items():
                columns[name].extend(arrays)
    if not columns:
        return LinkTable(list(urls), *(np.zeros(0, dtype=np.int64),) * 2, [], np.zeros(0, dtype=np.int64), [],
                         np.zeros(0, dtype=np.int64), np.zeros(0, dtype=bool), np.zeros(0, dtype=bool))

    def kept(name: str) -> np.ndarray:  # a column at a time, mapped from a file of its own (``mapped``)
        return mapped(np.concatenate(columns.pop(name)))

    return LinkTable(list(urls), kept("source"), kept("target"), list(anchors), kept("anchor"),
                     list(positions), kept("position"), kept("nofollow"), kept("internal"))


def load_crawl(directory: str | Path, job: Jobs = None, bad: BadParts | None = None,
               outline: bool = False) -> Crawl:
    """Read ``pages/``, ``links/``, ``skipped/`` part files of a crawl directory (``job``: the rows of
    one job, or of a set of jobs, alone; ``bad``: skip unreadable parts and record them there,
    instead of stopping; ``outline``: the pages without text or blocks and the links without anchor
    texts, for the link structure alone).

    Column by column and part by part: the newest row of each URL is chosen from the url and
    fetched_at columns, only those rows become ``Page`` objects (in batches), and the links become
    a ``LinkTable`` without a Python object per link.
    """
    directory = Path(directory)
    if not directory.is_dir():
        raise InputError(f"crawl directory not found: {directory}")
    page_files = _part_files(directory, "pages")
    if not page_files:
        raise InputError(f"no pages in {directory}: pages/ has no part-*.parquet files")
    keep, when, parts = _load_pages(page_files, job, bad)
    if not keep:
        where = "" if job is None else f" for job {job}" if isinstance(job, str) else \
            f" for jobs {', '.join(sorted(job))}"
        raise InputError(f"no pages in {directory}{where}: the part files hold no rows")
    skip_rows = _read_parts(_part_files(directory, "skipped"), "skipped", SKIP_COLUMNS, SKIP_OPTIONAL, job,
                            bad)
    aliases = _drop_realiased(keep, when, skip_rows)
    link_files = _part_files(directory, "links")
    apart = None
    if worth_a_fork(len(keep), available_workers(), LINKS_APART_MIN_PAGES):
        page_urls = sorted(keep)  # the pages' order (``_page_objects``)
        apart = Background(_links_apart, link_files, page_urls, aliases, job, bad is not None, outline,
                           fresh=True, name="ls-load-links")
        del page_urls
    pages = _page_objects(keep, parts, job, outline)
    if apart is None:
        links = _load_links(link_files, [p.url for p in pages], aliases, job, bad, outline)
    else:
        links = _links_back(apart.result(), bad)
    pa.default_memory_pool().release_unused()  # the batches' buffers, back to the system
    return Crawl(pages=pages, links=links, aliases=aliases, directory=str(directory))


#: Crawls of fewer pages than this read their links in this process; larger ones in a fresh second
#: process while this one makes the pages (a new interpreter costs ~1 s of a core to start; at a
#: million synthetic pages the links took ~110 s of the load's ~270, the pages ~155).
LINKS_APART_MIN_PAGES = 50_000


def _links_apart(files: list[Path], page_urls: list[str], aliases: dict[str, str], job: Jobs,
                 record_bad: bool, outline: bool) -> tuple[LinkTable | None, str | None, list]:
    """In a fresh second process: ``_load_links``'s table (its columns travel pickled), or the
    InputError's line, and the parts skipped (``record_bad``: they are recorded, not an error)."""
    bad = BadParts() if record_bad else None
    try:
        links = _load_links(files, page_urls, aliases, job, bad, outline)
    except InputError as exc:
        return None, str(exc), []
    return links, None, bad.parts if bad is not None else []


def _links_back(answer: tuple[LinkTable | None, str | None, list], bad: BadParts | None) -> LinkTable:
    """``_links_apart``'s answer here: its error raised, its skipped parts recorded in ``bad``, its
    columns mapped from files again (as ``_load_links`` leaves them), one at a time."""
    links, error, skipped = answer
    if bad is not None:
        bad.parts.extend(skipped)
    if links is None:
        raise InputError(error or "the links could not be read")
    for name in LinkTable.COLUMNS:
        setattr(links, name, mapped(getattr(links, name)))
    return links


def require_linkable(crawl: Crawl) -> None:
    """Stop with one line when there is nothing to link: no text, or fewer than two pages."""
    with_text = [p for p in crawl.pages if has_text(p)]
    if not with_text:
        raise InputError(f"no page in {crawl.directory or 'the crawl'} has main text "
                         f"({len(crawl.pages)} pages, all with an empty text column)")
    if len(with_text) < 2:
        raise InputError(f"only one page with text in {crawl.directory or 'the crawl'}: nothing to link")
