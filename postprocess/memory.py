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
def _trim() -> ctypes._CFuncPtr | None:
    """glibc's ``malloc_trim``, or None where the C library has none (macOS, musl)."""
    name = ctypes.util.find_library("c")
    try:
        libc = ctypes.CDLL(name) if name else None
    except OSError:
        return None
    return getattr(libc, "malloc_trim", None)


def give_back() -> None:
    """Return the freed memory both allocators keep (Arrow's ``release_unused``, ``malloc_trim``)."""
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
