"""Some of an object's attributes held in a temporary file while a step that does not read them runs.

The anchor finder's name and link tables (~190 MB at 100k synthetic pages) are read by the
anchoring alone, never by the ranking, the run's largest step, which held them to its end.
``SetAside`` writes them once (pickled) to an unlinked temporary file in ``TMPDIR``, lets the
object's copy go for the length of a ``with away():`` block, and reads them back after it. The
attributes must not change between two blocks: what was written the first time is what every
later block reads back. The file is read with ``pread``, so that a forked process reading it
beside its parent does not move the parent's position in it.
"""

from __future__ import annotations

import contextlib
import io
import os
import pickle
import tempfile
import weakref
from collections.abc import Iterator, Sequence
from typing import IO

from postprocess.memory import give_back


class _ReadFrom(io.RawIOBase):
    """An open file read from its start with ``pread``: its own position, not the descriptor's."""

    def __init__(self, fd: int) -> None:
        super().__init__()
        self._fd, self._at = fd, 0

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: bytearray | memoryview) -> int:
        read = os.preadv(self._fd, [buffer], self._at)
        self._at += read
        return read


class SetAside:
    """The attributes ``names`` of ``holder``, let go and read back around a step (``away``)."""

    def __init__(self, holder: object, names: Sequence[str]) -> None:
        # a weak reference: a holder that keeps its ``SetAside`` would make a cycle, which a run's
        # heap frozen before its forks (``gc.freeze``) never collects (at a million pages the
        # finder, let go after the anchoring, stayed: +2.6 GB for the rest of the run)
        self._holder = weakref.ref(holder)
        self.names = tuple(names)
        self._file: IO[bytes] | None = None  # written at the first ``away``

    @property
    def holder(self) -> object | None:
        """The object whose attributes these are (None once it is gone)."""
        return self._holder()

    def _write(self, holder: object) -> None:
        state = {name: holder.__dict__[name] for name in self.names}
        file = tempfile.TemporaryFile(prefix="linkspider-aside-")
        try:
            pickle.dump(state, file, protocol=pickle.HIGHEST_PROTOCOL)
            file.flush()
        except BaseException:
            file.close()
            raise
        self._file = file

    def _read(self) -> dict[str, object]:
        assert self._file is not None
        with io.BufferedReader(_ReadFrom(self._file.fileno()), buffer_size=1 << 20) as source:
            return pickle.load(source)

    @contextlib.contextmanager
    def away(self) -> Iterator[None]:
        """Within the block the attributes are not the holder's (reading one is an AttributeError)
        and their memory is handed back; after it (an exception too) they are read back, equal to
        what they were."""
        holder = self.holder
        if holder is None:
            raise ReferenceError("the object these attributes were set aside from is gone")
        if self._file is None:
            self._write(holder)
        for name in self.names:
            del holder.__dict__[name]
        give_back()
        try:
            yield
        finally:
            holder.__dict__.update(self._read())
