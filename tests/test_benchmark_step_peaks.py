"""benchmarks/step_peaks.py: each watched step's peak memory, a short spike included."""

from __future__ import annotations

import re
from pathlib import Path
from types import SimpleNamespace

import numpy as np
from crawlkit import module_from_file

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"
step_peaks = module_from_file("step_peaks", BENCHMARKS / "step_peaks.py")


def _rise(line: str) -> int:
    return int(re.search(r"\(\+\s*(\d+)\)", line).group(1))


def test_a_steps_short_spike_is_its_peak_and_counts_in_the_step_around_it():
    """A step that holds 200 MB for a moment and frees it ends where it started, and its line still
    says +200 (not the process's larger moment before it); the step around it says the same."""
    lines: list[str] = []
    steps = SimpleNamespace()

    def spike() -> int:
        held = np.ones(200 * 1024 * 1024 // 8)  # written: resident
        return int(held[-1])

    def around() -> int:
        return steps.spike() + steps.spike()

    steps.spike, steps.around = spike, around
    peaks = step_peaks.StepPeaks(lines.append)
    peaks.watch(steps, "spike")
    peaks.watch(steps, "around")
    assert int(np.ones(400 * 1024 * 1024 // 8)[0]) == 1  # the process's high-water mark before
    assert steps.around() == 2
    assert [line.split()[1] for line in lines] == ["spike", "spike", "around"]
    assert all(190 <= _rise(line) < 260 for line in lines), lines
    assert lines[0].startswith("STEP   spike") and lines[2].startswith("STEP around")  # nested: indented


def test_a_class_method_is_watched_by_its_path(monkeypatch):
    from postprocess.apps.report import graph

    monkeypatch.setattr(graph.Edges, "inbound_counts", graph.Edges.inbound_counts)  # put back after
    lines: list[str] = []
    step_peaks.StepPeaks(lines.append).watch_path("postprocess.apps.report.graph:Edges.inbound_counts")
    edges = graph.Edges.from_pairs([("a", "b"), ("c", "b")], ["a", "b", "c"])
    assert edges.inbound_counts().tolist() == [0, 2, 0]
    assert len(lines) == 1 and "Edges.inbound_counts" in lines[0]
