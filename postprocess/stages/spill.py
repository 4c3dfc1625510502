"""Data kept on disk instead of in memory: the loader's blocks and texts, before and after packing,
and the ranking's score parts before the caps.

The files are temporary files in ``TMPDIR``, removed from their folder as soon as they are made
(nothing is left behind, even after a kill); what they hold sits in the kernel's page cache, which
the kernel frees under memory pressure, instead of in the process.

* ``BatchFile``: the batches as they are read (uncompressed, ~13 KB a page), written to an Arrow
  IPC file and mapped back once (shared: the packing drops what it has read from the process's
  resident set, ``memory.drop_file_pages``), to be packed in page order.
* ``SpillFile``: the packed, compressed groups (~3.4 KB a page that a million pages would hold in
  memory), each read back with ``pread``. ``pread`` reads at an offset without moving the file
  position, so a forked process reads the same file (its copy of the descriptor) safely alongside
  its parent; pickled, it is opened again by another process of the same machine (through the
  making process's ``/proc/PID/fd``, while that process lives).
* ``ArrayFile``: arrays appended as they come (the score parts of every scored pair before the
  caps: ~50 pairs a page, 48 bytes each), each read back whole (``OnDisk.read``).
* ``mapped_zeros``: an array written once and then read (the TF-IDF matrix's values and columns,
  ~8 bytes a (page, term) pair, ~0.13 GB at 100k pages), made in file pages from the start.
* ``mapped``: an array read through the run and never written (the link table's columns: 15 bytes
  a link, ~0.1 GB at 100k pages) copied to a file of its own and mapped back read-only, so its
  pages are the page cache's, shared with a forked process without a copy.
"""

from __future__ import annotations

import mmap
import os
import tempfile
from collections.abc import Iterable, Iterator, Sequence

import numpy as np
import pyarrow as pa


def read_at(fd: int, length: int, offset: int, what: str) -> bytes:
    """``length`` bytes of the open file ``fd`` from ``offset`` (``pread``: the file position stays);
    an OSError naming ``what`` when the file holds fewer."""
    data = os.pread(fd, length, offset)
    if len(data) != length:
        raise OSError(f"{what} is cut short (read {len(data)} of {length} bytes)")
    return data


def write_at(fd: int, data: memoryview, offset: int) -> None:
    """All of ``data`` written to the open file ``fd`` from ``offset`` (``pwrite`` until none is left)."""
    written = 0
    while written < len(data):
        written += os.pwrite(fd, data[written:], offset + written)


class SpillFile(Sequence[pa.Buffer]):
    """Groups of bytes in an unlinked temporary file (``TMPDIR``): ``spill[g]`` reads group ``g``."""

    def __init__(self, groups: Iterable[bytes | pa.Buffer] = ()) -> None:
        self._file = tempfile.TemporaryFile(prefix="linkspider-spill-")
        self._path = f"/proc/{os.getpid()}/fd/{self._file.fileno()}"  # where another process opens it
        ends = [0]
        for group in groups:
            data = memoryview(group)
            self._file.write(data)
            ends.append(ends[-1] + len(data))
        self._file.flush()
        self.offsets = np.asarray(ends, dtype=np.int64)  # group g is bytes offsets[g]..offsets[g + 1]

    def __len__(self) -> int:
        return len(self.offsets) - 1

    def __getitem__(self, group):  # noqa: ANN001, ANN204 - an int, as a list takes
        if not -len(self) <= group < len(self):
            raise IndexError("spilled group out of range")
        group %= len(self)
        start, end = int(self.offsets[group]), int(self.offsets[group + 1])
        return pa.py_buffer(read_at(self._file.fileno(), end - start, start, f"spilled group {group}"))

    def __iter__(self) -> Iterator[pa.Buffer]:
        return (self[g] for g in range(len(self)))

    @property
    def nbytes(self) -> int:
        """Bytes of all the groups (the file's size)."""
        return int(self.offsets[-1])

    def __reduce__(self) -> tuple[object, ...]:
        return _reopened, (self._path, self.offsets)


def _reopened(path: str, offsets: np.ndarray) -> SpillFile:
    """A pickled ``SpillFile`` in another process: the same file, opened again (an OSError naming it
    where it cannot be: the process that made it has ended, or another machine)."""
    spill = SpillFile.__new__(SpillFile)
    try:
        spill._file = open(path, "rb")  # noqa: SIM115 - held as long as the spill file is
    except OSError as error:
        raise OSError(f"spilled groups at {path} cannot be opened again here: {error.strerror}") from None
    spill._path, spill.offsets = path, offsets
    return spill


class BatchFile:
    """Record batches written to an unlinked temporary Arrow IPC file (``TMPDIR``) as they come, then
    mapped back read-only (``read``): the loader's uncompressed batches of blocks and texts wait there,
    as page cache, until they are packed in page order, instead of in the process (~13 KB a page)."""

    def __init__(self) -> None:
        self._file = tempfile.TemporaryFile(prefix="linkspider-batches-")
        self._writer: pa.ipc.RecordBatchFileWriter | None = None

    def write(self, batch: pa.RecordBatch) -> None:
        if self._writer is None:
            self._writer = pa.ipc.new_file(pa.PythonFile(self._file, mode="w"), batch.schema)
        self._writer.write_batch(batch)

    def read(self) -> list[pa.RecordBatch]:
        """Every batch written, in order, its columns backed by the mapped file."""
        if self._writer is None:
            return []
        self._writer.close()
        self._writer = None
        self._file.flush()
        # mapped shared (Arrow's own map is private): its pages can leave the process's resident set
        # as the packing goes (``memory.drop_file_pages``); the map holds the file open
        region = mmap.mmap(self._file.fileno(), 0, prot=mmap.PROT_READ)
        reader = pa.ipc.open_file(pa.BufferReader(pa.py_buffer(region)))
        return [reader.get_batch(i) for i in range(reader.num_record_batches)]


class OnDisk:
    """An array written to an ``ArrayFile``: its length, and ``read`` for its values. Pickled, it
    carries its values (another process cannot read this one's file)."""

    __slots__ = ("_file", "dtype", "offset", "size")

    def __init__(self, file: ArrayFile, offset: int, size: int, dtype: np.dtype) -> None:
        self._file, self.offset, self.size, self.dtype = file, offset, size, dtype

    def __len__(self) -> int:
        return self.size

    def read(self) -> np.ndarray:
        """The values, read from the file."""
        return self._file.read(self)

    def __reduce__(self) -> tuple[object, ...]:
        return np.asarray, (self.read(),)


class ArrayFile:
    """Arrays appended to an unlinked temporary file (``TMPDIR``) as they come (``write``), each read
    back with ``pread`` (``OnDisk.read``). The file goes when the last array on it does. Made in one
    process: a forked child that writes gets a file of its own."""

    def __init__(self) -> None:
        self._file = tempfile.TemporaryFile(prefix="linkspider-arrays-")
        self.owner = os.getpid()
        self._end = 0

    def write(self, values: np.ndarray) -> OnDisk:
        """``values`` on disk."""
        if os.getpid() != self.owner:
            raise RuntimeError("an ArrayFile is written by the process that made it")
        data = np.ascontiguousarray(values)
        view = memoryview(data).cast("B")
        write_at(self._file.fileno(), view, self._end)
        placed = OnDisk(self, self._end, len(data), data.dtype)
        self._end += len(view)
        return placed

    def read(self, placed: OnDisk) -> np.ndarray:
        length = placed.size * placed.dtype.itemsize
        data = read_at(self._file.fileno(), length, placed.offset, "a spilled array")
        return np.frombuffer(data, dtype=placed.dtype).copy()


def mapped(values: np.ndarray) -> np.ndarray:
    """``values`` copied to an unlinked temporary file (``TMPDIR``) and mapped back read-only: the
    same values, in file pages the kernel may drop and read again under memory pressure, never
    copied by a forked process, and not this process's own (anonymous) memory. The file goes when
    the array does. An empty array is returned as it is (no file maps nothing)."""
    data = np.ascontiguousarray(values)
    if not data.nbytes:
        return data
    view = memoryview(data).cast("B")
    with tempfile.TemporaryFile(prefix="linkspider-mapped-") as file:
        write_at(file.fileno(), view, 0)
        region = mmap.mmap(file.fileno(), len(view), prot=mmap.PROT_READ)  # holds the file open
    return np.frombuffer(region, dtype=data.dtype).reshape(data.shape)


def mapped_zeros(length: int, dtype: np.dtype | type) -> np.ndarray:
    """A writable array of ``length`` zeros of ``dtype`` in an unlinked temporary file (``TMPDIR``),
    mapped shared: what is written to it goes to file pages the kernel may write out and drop under
    memory pressure, not to this process's own (anonymous) memory; pickled, it is copied like any
    array. The file's space is reserved when it is made (``posix_fallocate``): a full ``TMPDIR`` is
    an OSError here, not a SIGBUS when a page of a sparse file is first written. The file goes when
    the array does. A length of 0 is an ordinary empty array."""
    kind = np.dtype(dtype)
    size = int(length) * kind.itemsize
    if not size:
        return np.zeros(int(length), dtype=kind)
    with tempfile.TemporaryFile(prefix="linkspider-mapped-") as file:
        os.posix_fallocate(file.fileno(), 0, size)
        region = mmap.mmap(file.fileno(), size)  # read and write, shared with the file; holds it open
    return np.frombuffer(region, dtype=kind)
