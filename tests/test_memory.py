"""Freed memory handed back to the system between passes (``postprocess.memory``)."""

from __future__ import annotations

import gc
import sys
from pathlib import Path

import pytest

from postprocess.memory import _trim, give_back


def resident_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS"):
            return int(line.split()[1]) / 1024
    raise AssertionError("no VmRSS")


@pytest.mark.skipif(not sys.platform.startswith("linux") or _trim() is None, reason="glibc's malloc_trim")
def test_memory_freed_below_live_objects_goes_back_to_the_system():
    """Texts of a few KB (the C heap, not Python's small-object arenas), a few kept among them: freeing
    the rest leaves the process as large until ``give_back``."""
    before = resident_mb()
    dropped = [("x" * 3000) + str(i) for i in range(60_000)]
    kept = [("y" * 3000) + str(i) for i in range(0, 60_000, 500)]  # made after: they pin the heap's top
    made = resident_mb() - before
    del dropped
    gc.collect()
    freed = resident_mb() - before
    give_back()
    after = resident_mb() - before
    assert made > 150 and freed > 150  # ~180 MB made; freeing alone gives nothing back
    assert after < 50, (made, freed, after)
    assert len(kept) == 120
