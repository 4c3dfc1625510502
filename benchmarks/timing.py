"""Run a command the way the benchmarks measure it: wall time and peak RSS (GNU time)."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def timed(command: list[str], what: str) -> tuple[float, int, subprocess.CompletedProcess[str]]:
    """Run ``command`` in the repository root under ``/usr/bin/time``: (wall seconds, peak RSS
    in kB, the finished process); exits with the end of its stderr when it fails."""
    started = time.perf_counter()
    done = subprocess.run(["/usr/bin/time", "-f", "%e %M", *command], cwd=ROOT, capture_output=True,
                          text=True)
    wall = time.perf_counter() - started
    if done.returncode != 0:
        sys.exit(f"{what} failed: {done.stderr.strip()[-800:]}")
    return wall, int(done.stderr.strip().splitlines()[-1].split()[1]), done


def postprocess_run(crawl: Path, out: Path, extra: list[str]) -> tuple[float, int, dict]:
    """``python -m postprocess run``: (wall seconds, peak RSS in kB, its summary.json)."""
    wall, rss_kb, _ = timed([sys.executable, "-m", "postprocess", "run", "--crawl", str(crawl),
                             "--out", str(out), *extra], f"postprocess on {crawl}")
    return wall, rss_kb, json.loads((out / "summary.json").read_text())
