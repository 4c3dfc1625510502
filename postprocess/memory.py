"""Hand the memory a pass freed back to the system, instead of keeping it for later.

Both allocators under a run keep what was freed: Arrow's pool (mimalloc) keeps buffers for
reuse, and the C heap (glibc's malloc) keeps freed blocks wherever a live one sits above
them. After a pass that makes and drops hundreds of megabytes of small objects (the
TF-IDF fit's tokens, a cache read's batches), the process stays that large for the rest of
the run; a forked child that allocates into those kept pages copies them, so the pair of
processes pays twice. ``give_back`` is called between stages and before each fork.

The cyclic garbage collector's full collections walk every tracked object of the heap, and a
run's heap grows to millions of them; CPython starts one each time the objects that survived its
younger collections come to a quarter of those it holds, so a growing heap is walked again and
again. ``full_collections_between_stages`` leaves the young generations collected as they fill
and collects the whole heap once at each stage's end.

Files mapped into the process (the page and chunk vectors, the page index, the loader's batches,
the TF-IDF matrix) are read through the page cache, but every page of them the process has touched
stays in its resident set until the mapping goes: at a million pages the loader's batches alone
put ~13 GB of file pages in the main process's RSS, beside its own memory. ``drop_file_pages``
takes them out (the data stays in the page cache and in the file, and is mapped again by the next
read of it, a minor fault), and ``give_back`` does it too.
"""

from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import functools
import gc
import sys
from collections.abc import Iterator


@functools.cache
def _libc() -> ctypes.CDLL | None:
    """The C library, or None where it cannot be loaded."""
    name = ctypes.util.find_library("c")
    try:
        return ctypes.CDLL(name) if name else None
    except OSError:
        return None


@functools.cache
def _trim() -> ctypes._CFuncPtr | None:
    """glibc's ``malloc_trim``, or None where the C library has none (macOS, musl)."""
    return getattr(_libc(), "malloc_trim", None)


#: ``madvise``'s advice that drops a range's pages from the process (Linux's value).
_MADV_DONTNEED = 4


@functools.cache
def _madvise() -> ctypes._CFuncPtr | None:
    """The C library's ``madvise``, or None where there is none."""
    function = getattr(_libc(), "madvise", None)
    if function is not None:
        function.argtypes = (ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int)
        function.restype = ctypes.c_int
    return function


def shared_file_mappings(maps: str) -> list[tuple[int, int]]:
    """The (start, end) addresses of the shared mappings of files in ``/proc/PID/maps``'s text: the
    ones whose pages are the file's (a private mapping's written pages would be lost by a drop)."""
    found = []
    for line in maps.splitlines():
        fields = line.split(maxsplit=5)
        if len(fields) == 6 and fields[1][3:4] == "s" and fields[5].startswith("/"):
            start, end = fields[0].split("-")
            found.append((int(start, 16), int(end, 16)))
    return found


def drop_file_pages() -> int:
    """Take the pages of every shared file mapping out of this process's resident set
    (``MADV_DONTNEED``): nothing is lost, the next read maps them again from the page cache.
    The bytes of mappings so advised (0 where the system has no ``/proc/self/maps``)."""
    madvise = _madvise()
    if madvise is None:
        return 0
    try:
        with open("/proc/self/maps") as maps:
            ranges = shared_file_mappings(maps.read())
    except OSError:
        return 0
    dropped = 0
    for start, end in ranges:
        if madvise(start, end - start, _MADV_DONTNEED) == 0:
            dropped += end - start
    return dropped


def give_back() -> None:
    """Return the freed memory both allocators keep (Arrow's ``release_unused``, ``malloc_trim``),
    and the mapped files' pages (``drop_file_pages``)."""
    drop_file_pages()
    arrow = sys.modules.get("pyarrow")  # not imported: nothing of its to give back
    if arrow is not None:
        arrow.default_memory_pool().release_unused()
    trim = _trim()
    if trim is not None:
        trim(0)


#: A threshold for the oldest generation that a run never reaches: no full collection starts by
#: itself (100k synthetic pages: 49 of them took 11.0 s of the main process's CPU, 3% of it).
NO_AUTOMATIC_FULL_COLLECTION = 1 << 30


@contextlib.contextmanager
def full_collections_between_stages() -> Iterator[None]:
    """Inside: the young generations are collected as they fill, the whole heap only when
    ``end_of_stage`` says so; the collector's thresholds are as they were afterwards."""
    before = gc.get_threshold()
    gc.set_threshold(before[0], before[1], NO_AUTOMATIC_FULL_COLLECTION)
    try:
        yield
    finally:
        gc.set_threshold(*before)


def end_of_stage() -> None:
    """A stage's end: its cyclic garbage collected (the whole heap), then what it freed handed back."""
    gc.collect()
    give_back()
