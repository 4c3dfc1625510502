"""Comparing checkouts on a noisy machine: each measured in fresh processes, taking turns.

``compare`` runs a script (``child``, given the checkout's root first, then ``args``) once per
checkout and turn, alternating the order each turn, and gives every run's result (the JSON object
the child prints last). ``table`` prints each figure's minimum, median and ratio to the first
checkout's minimum. Used by ``anchor_cpu.py`` and ``word_passes.py``.
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
from collections.abc import Callable, Sequence
from pathlib import Path


def measure(tool: str, child: str, checkout: Path, args: Sequence[str]) -> dict:
    """One fresh process in ``checkout``: what ``child`` prints last, as JSON."""
    done = subprocess.run([sys.executable, "-c", child, str(checkout), *args],
                          cwd=checkout, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        sys.exit(f"{tool}: {checkout} failed: {done.stderr.strip().splitlines()[-1:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def compare(tool: str, child: str, checkouts: Sequence[Path], args: Sequence[str], repeat: int
            ) -> dict[Path, list[dict]]:
    """Each checkout run ``repeat`` times, alternating (the paths, ``checkouts`` and ``args``, checked
    first)."""
    for path in (*checkouts, *map(Path, args)):
        if not path.exists():
            sys.exit(f"{tool}: {path} does not exist")
    runs: dict[Path, list[dict]] = {c: [] for c in checkouts}
    for turn in range(repeat):
        for checkout in checkouts if turn % 2 == 0 else list(reversed(checkouts)):
            runs[checkout].append(measure(tool, child, checkout.resolve(), args))
    return runs


def table(runs: dict[Path, list[dict]], figures: Sequence[str], read: Callable[[dict, str], float]) -> None:
    """Print each figure's minimum, median and ratio (of minimums) to the first checkout's, a row a
    checkout."""
    print("| checkout | " + " | ".join(f"{name} min | median | ratio" for name in figures) + " |")
    print("| --- |" + " ---: | ---: | ---: |" * len(figures))
    first = next(iter(runs.values()))
    base = {name: min(read(r, name) for r in first) for name in figures}
    for checkout, results in runs.items():
        cells = []
        for name in figures:
            seconds = [read(r, name) for r in results]
            cells.append(f"{min(seconds):.2f} s | {statistics.median(seconds):.2f} s | "
                         f"{min(seconds) / base[name]:.2f}")
        print(f"| {checkout} | " + " | ".join(cells) + " |")
