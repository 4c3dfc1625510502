"""Where postprocess's memory goes: ``run``'s stages in one process, RSS after each and its peak.

Runs the same stages as ``python -m postprocess run`` (load, embed, index, rank, anchors +
confidence, report) in this process and prints, per stage, the seconds, the resident memory
after it and the peak during it (the peak is reset before each stage through
``/proc/self/clear_refs``), then the size of the big structures left in memory.

    python benchmarks/memory_profile.py --crawl /work/runs/scale/crawl-10000 \
        --out /work/runs/scale/out-10000 --encoder static
"""

from __future__ import annotations

import argparse
import gc
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def status_mb(*keys: str) -> list[float]:
    """The fields ``keys`` of ``/proc/self/status`` (memory figures in kB there), in MB, in that order."""
    fields = {}
    for line in Path("/proc/self/status").read_text().splitlines():
        key, _, value = line.partition(":")
        if key in keys:
            fields[key] = int(value.split()[0]) / 1024
    return [fields[key] for key in keys]


def rss_mb() -> tuple[float, float]:
    """(current, peak since the last reset) resident memory in MB."""
    current, peak = status_mb("VmRSS", "VmHWM")
    return round(current, 1), round(peak, 1)


def reset_peak() -> None:
    try:
        Path("/proc/self/clear_refs").write_text("5")
    except OSError:
        pass


def main() -> int:
    from postprocess import cli
    from postprocess.options import options_from

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", type=Path, help="write the figures here too")
    known, rest = parser.parse_known_args()
    args = cli.build_parser("run").parse_args(["run", *rest])
    session = cli.Session(args=args, options=options_from(args), out=Path(args.out))
    stages = [("load", lambda s: s.get_crawl()), *[(f.__name__.removeprefix("stage_"), f)
                                                 for f in cli.RUNNERS["run"]]]
    figures: dict[str, object] = {"start_mb": rss_mb()[0], "stages": []}
    for name, stage in stages:
        gc.collect()
        reset_peak()
        started = time.perf_counter()
        stage(session)
        seconds = time.perf_counter() - started
        gc.collect()
        now, peak = rss_mb()
        row = {"stage": name, "seconds": round(seconds, 1), "rss_after_mb": now, "peak_mb": peak}
        figures["stages"].append(row)  # type: ignore[union-attr]
        print(json.dumps(row), file=sys.stderr, flush=True)
    if known.json:
        known.json.write_text(json.dumps(figures, indent=1))
    print(json.dumps(figures, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
