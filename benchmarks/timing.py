"""Run a command the way the benchmarks measure it: wall time and peak memory.

GNU time's peak RSS is that of the largest single process; a run that forks a second worker
needs the memory of the whole process tree at once, so the tree's proportional set size (PSS:
pages two processes share counted half to each) is sampled as well, every ``SAMPLE_SECONDS``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SAMPLE_SECONDS = 0.25
#: The peak PSS of the process tree of the last ``timed`` command, in kB (0 where /proc has none).
LAST_TREE_PSS_KB = 0


def _tree(pid: int) -> list[int]:
    """``pid`` and its descendants (Linux /proc)."""
    found, todo = [], [pid]
    while todo:
        current = todo.pop()
        found.append(current)
        try:
            todo += [int(c) for c in Path(f"/proc/{current}/task/{current}/children").read_text().split()]
        except OSError:
            continue
    return found


def _pss_kb(pid: int) -> int:
    try:
        for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
            if line.startswith("Pss:"):
                return int(line.split()[1])
    except OSError:
        pass
    return 0


def _sample_tree(process: subprocess.Popen, peak: list[int]) -> None:
    while process.poll() is None:
        peak[0] = max(peak[0], sum(_pss_kb(pid) for pid in _tree(process.pid)))
        time.sleep(SAMPLE_SECONDS)


def timed(command: list[str], what: str) -> tuple[float, int, subprocess.CompletedProcess[str]]:
    """Run ``command`` in the repository root under ``/usr/bin/time``: (wall seconds, peak RSS
    in kB, the finished process); exits with the end of its stderr when it fails."""
    global LAST_TREE_PSS_KB
    started = time.perf_counter()
    process = subprocess.Popen(["/usr/bin/time", "-f", "%e %M", *command], cwd=ROOT, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True)
    peak = [0]
    sampler = threading.Thread(target=_sample_tree, args=(process, peak), daemon=True)
    sampler.start()
    stdout, stderr = process.communicate()
    wall = time.perf_counter() - started
    sampler.join()
    LAST_TREE_PSS_KB = peak[0] if os.path.isdir("/proc") else 0
    done = subprocess.CompletedProcess(process.args, process.returncode, stdout, stderr)
    if done.returncode != 0:
        sys.exit(f"{what} failed: {done.stderr.strip()[-800:]}")
    return wall, int(done.stderr.strip().splitlines()[-1].split()[1]), done


def postprocess_run(crawl: Path, out: Path, extra: list[str]) -> tuple[float, int, dict]:
    """``python -m postprocess run``: (wall seconds, peak RSS in kB, its summary.json)."""
    wall, rss_kb, _ = timed([sys.executable, "-m", "postprocess", "run", "--crawl", str(crawl),
                             "--out", str(out), *extra], f"postprocess on {crawl}")
    return wall, rss_kb, json.loads((out / "summary.json").read_text())
