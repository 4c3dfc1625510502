"""Byte strings kept on disk instead of in memory: the loader's compressed groups of blocks and texts.

A ``SpillFile`` appends each group's bytes to one temporary file, removed from its folder as soon
as it is made (nothing is left behind, even after a kill), and reads a group back with ``pread``:
the bytes then sit in the kernel's page cache, which the kernel frees under memory pressure,
instead of in the process (~3.4 KB a page that a million pages would hold in memory). ``pread``
reads at an offset without moving the file position, so a forked process reads the same file
(its copy of the descriptor) safely alongside its parent.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterable, Iterator, Sequence

import numpy as np
import pyarrow as pa


class SpillFile(Sequence[pa.Buffer]):
    """Groups of bytes in an unlinked temporary file (``TMPDIR``): ``spill[g]`` reads group ``g``."""

    def __init__(self, groups: Iterable[bytes | pa.Buffer] = (), folder: str | None = None) -> None:
        self._file = tempfile.TemporaryFile(prefix="linkspider-spill-", dir=folder)
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
        data = os.pread(self._file.fileno(), end - start, start)
        if len(data) != end - start:
            raise OSError(f"the spill file lost group {group} (read {len(data)} of {end - start} bytes)")
        return pa.py_buffer(data)

    def __iter__(self) -> Iterator[pa.Buffer]:
        return (self[g] for g in range(len(self)))

    @property
    def nbytes(self) -> int:
        """Bytes of all the groups (the file's size)."""
        return int(self.offsets[-1])

    def size_of(self, group: int) -> int:
        """Bytes of group ``group``, without reading it."""
        return int(self.offsets[group + 1] - self.offsets[group])
