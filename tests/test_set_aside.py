"""Attributes held in a temporary file through a block (``SetAside``): away in it, the same after it."""

from __future__ import annotations

import gc
import tracemalloc
import weakref
from collections import Counter, defaultdict

import numpy as np
import pytest

from postprocess.stages.set_aside import SetAside


class Holder:
    """Tables of the kinds the anchor finder holds, and one attribute that stays."""

    def __init__(self, n: int = 1000) -> None:
        self.names = {f"https://example.com/{i}/": [("page", str(i)), ("number", str(i))] for i in range(n)}
        self.uses = defaultdict(Counter, {f"/p{i}": Counter({("word", str(i % 7)): i}) for i in range(n)})
        self.hashes = np.arange(n, dtype=np.uint64) * 2654435761
        self.kept = ["stays"]


def test_the_attributes_are_away_in_the_block_and_the_same_after_it():
    holder = Holder()
    before = (dict(holder.names), dict(holder.uses), holder.hashes.copy())
    kept = holder.kept
    aside = SetAside(holder, ("names", "uses", "hashes"))
    with aside.away():
        for name in ("names", "uses", "hashes"):
            with pytest.raises(AttributeError):
                getattr(holder, name)
        assert holder.kept is kept
    assert holder.names == before[0] and holder.uses == before[1]
    assert np.array_equal(holder.hashes, before[2]) and holder.hashes.dtype == np.uint64
    assert isinstance(holder.uses, defaultdict) and holder.uses["new"] == Counter()  # its kind kept
    assert holder.kept is kept


def test_an_error_in_the_block_still_brings_them_back():
    holder = Holder(10)
    aside = SetAside(holder, ("names",))
    with pytest.raises(RuntimeError), aside.away():
        raise RuntimeError("the ranking failed")
    assert len(holder.names) == 10


def test_each_block_reads_back_what_the_first_wrote():
    """Written once: the attributes must not change between blocks (a second block does not write
    them again; a change made between them is not kept)."""
    holder = Holder(10)
    aside = SetAside(holder, ("names",))
    with aside.away():
        pass
    holder.names["https://example.com/new/"] = []
    with aside.away():
        pass
    assert len(holder.names) == 10


def test_the_block_holds_less_memory():
    """Inside the block the attributes' memory is let go (tracemalloc: Python's and NumPy's)."""
    tracemalloc.start()
    try:
        empty = tracemalloc.get_traced_memory()[0]
        holder = Holder(20_000)
        made = tracemalloc.get_traced_memory()[0] - empty
        aside = SetAside(holder, ("names", "uses", "hashes"))
        with aside.away():
            inside = tracemalloc.get_traced_memory()[0] - empty
        after = tracemalloc.get_traced_memory()[0] - empty
    finally:
        tracemalloc.stop()
    assert made > 5_000_000
    assert inside < made / 10
    assert after > made / 2  # read back


def test_a_holder_that_keeps_its_set_aside_goes_when_let_go():
    """No cycle through the holder: a run's heap frozen before a fork is never collected, so a
    finder kept alive by a cycle would stay to the run's end."""
    holder = Holder(10)
    holder.aside = SetAside(holder, ("names",))
    with holder.aside.away():
        pass
    gone = weakref.ref(holder)
    collecting = gc.isenabled()
    gc.disable()
    try:
        del holder
        assert gone() is None
    finally:
        if collecting:
            gc.enable()
