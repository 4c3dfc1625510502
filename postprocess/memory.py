"""Hand the memory a pass freed back to the system, instead of keeping it for later.

Both allocators under a run keep what was freed: Arrow's pool (mimalloc) keeps buffers for
reuse, and the C heap (glibc's malloc) keeps freed blocks wherever a live one sits above
them. After a pass that makes and drops hundreds of megabytes of small objects (the
TF-IDF fit's tokens, a cache read's batches), the process stays that large for the rest of
the run; a forked child that allocates into those kept pages copies them, so the pair of
processes pays twice. ``give_back`` is called between stages and before each fork.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
import sys


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
