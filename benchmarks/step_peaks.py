"""Each step's peak memory: a postprocess command run with named functions watched, in one process.

Before a watched function runs, the process's high-water mark (``VmHWM``) is reset to its RSS
(``/proc/self/clear_refs``); after, the mark is the most the step held, however short the moment
(a 1-s sampler misses a 2-s spike). Each call prints one line on stderr: the RSS it started from,
its peak and the rise, the RSS it ended at, and its seconds, indented by nesting (a step's peak
counts its inner steps'). The report's steps are watched unless ``--watch`` names others:

    python benchmarks/step_peaks.py report --crawl /work/runs/scale/crawl-1000000 \\
        --out /work/runs/scale/out-1000000 [--watch postprocess.apps.report.graph:Edges.plus ...]

Resetting the mark also resets what GNU time reports for the process: use the lines, not it.
Linux only (``/proc``).
"""

from __future__ import annotations

import functools
import importlib
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

#: The report's steps (``module:attribute``; a class's method as ``Class.method``).
REPORT_STEPS = (
    "postprocess.apps.report:write_suggestions", "postprocess.apps.report:analyse",
    "postprocess.apps.report:summary", "postprocess.apps.report:write_html",
    "postprocess.apps.report.analysis:link_graph", "postprocess.apps.report.analysis:depth_scenarios",
    "postprocess.apps.report.analysis:InboundLinks", "postprocess.apps.report.analysis:crawl_health",
    "postprocess.apps.report.analysis:crawl_trend", "postprocess.apps.report.analysis:orphan_table",
    "postprocess.apps.report.graph:Edges.plus", "postprocess.apps.report.graph:Edges.depths",
    "postprocess.apps.report.graph:Edges.inbound_counts",
)


def status_mb() -> dict[str, int]:
    """This process's ``VmRSS`` and ``VmHWM`` in MiB."""
    found = {}
    with open("/proc/self/status") as handle:
        for line in handle:
            key, _, value = line.partition(":")
            if key in ("VmRSS", "VmHWM"):
                found[key] = int(value.split()[0]) // 1024
    return found


class StepPeaks:
    """Wraps functions so that each call reports the most memory it held (``report`` gets each line)."""

    def __init__(self, report: Callable[[str], None] = lambda line: print(line, file=sys.stderr, flush=True)):
        self.report = report
        self._inner_peaks: list[list[int]] = []

    def watch(self, owner: object, name: str, label: str | None = None) -> None:
        """Replace ``owner.name`` (a function or a method) by a watched one."""
        function = getattr(owner, name)
        label = label or name

        @functools.wraps(function)
        def watched(*args: object, **kwargs: object) -> object:
            before = status_mb()["VmRSS"]
            with open("/proc/self/clear_refs", "w") as handle:
                handle.write("5")  # the high-water mark from here
            self._inner_peaks.append([])
            started = time.perf_counter()
            try:
                return function(*args, **kwargs)
            finally:
                now = status_mb()
                peak = max([now["VmHWM"], *self._inner_peaks.pop()])
                if self._inner_peaks:
                    self._inner_peaks[-1].append(peak)
                self.report(f"STEP {'  ' * len(self._inner_peaks)}{label:<28} start {before:6d} MiB  "
                            f"peak {peak:6d} (+{peak - before:5d})  end {now['VmRSS']:6d}  "
                            f"{time.perf_counter() - started:7.1f} s")

        setattr(owner, name, watched)

    def watch_path(self, path: str) -> None:
        """``module:attribute`` or ``module:Class.method``."""
        module_name, _, attribute = path.partition(":")
        owner: object = importlib.import_module(module_name)
        *outer, name = attribute.split(".")
        for part in outer:
            owner = getattr(owner, part)
        self.watch(owner, name, attribute)


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    watched = list(REPORT_STEPS)
    if "--watch" in argv:
        at = argv.index("--watch")
        ends = next((i for i in range(at + 1, len(argv)) if argv[i].startswith("--")), len(argv))
        watched, argv = argv[at + 1:ends], argv[:at] + argv[ends:]
    peaks = StepPeaks()
    for path in watched:
        peaks.watch_path(path)
    from postprocess import cli

    return cli.main(argv)


if __name__ == "__main__":
    raise SystemExit(main())
