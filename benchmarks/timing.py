"""Run a command the way the benchmarks measure it: wall time, CPU time and peak memory.

GNU time's peak RSS is that of the largest single process; a run that forks a second worker
needs the memory of the whole process tree at once, so the tree's proportional set size (PSS:
pages two processes share counted half to each) is sampled as well, every ``SAMPLE_SECONDS`` or,
where a sample takes long (a large run), ``SAMPLE_WAIT_FACTOR`` times as long as it took.
RSS and PSS count the pages of mapped files (the Annoy index, the chunk vectors) that a process
has read: page cache the kernel frees under memory pressure. The anonymous part (``Pss_Anon``:
the processes' own memory, which nothing but an exit frees) is sampled apart, for the tree and
for the largest process.
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
#: The sampler waits at least this many times as long as its last sample took: reading
#: ``smaps_rollup`` walks a process's page tables (a million synthetic pages: ~190 ms for the main
#: process, ~130 for its child, so sampling every 0.25 s kept ~57% of a core busy and held the
#: processes' memory-map lock while their mmap and munmap waited), so a large run is sampled less
#: often, at ~10% of a core at most, rather than slowed by its own measurement.
SAMPLE_WAIT_FACTOR = 10
#: The peak PSS of the process tree of the last ``timed`` command, in kB (0 where /proc has none).
LAST_TREE_PSS_KB = 0
#: The peak anonymous PSS of that tree, and of its largest process, in kB (sampled).
LAST_TREE_ANON_KB = 0
LAST_PROCESS_ANON_KB = 0
#: The CPU seconds (user + system) of the last ``timed`` command's whole process tree: every process
#: it forked and waited for included. On this machine it moves far less than the wall clock.
LAST_CPU_SECONDS = 0.0
#: When the last ``timed`` command's largest process reached its peak RSS (``VmHWM``, the kernel's
#: high-water mark, which a sample between two moments of a short spike still sees): (seconds into
#: the run, by the first sample that saw it; the process's name; its peak in kB). GNU time's peak is
#: that process's, and a short spike is missed by the samples of RSS.
LAST_PEAK_AT: tuple[float, str, int] = (0.0, "", 0)
#: Set to a file's path: each sample's anonymous PSS, per process and for the tree, is written
#: there as a line (seconds, tree MB, then pid:MB:name:CPU seconds:peak RSS MB of each process):
#: which step holds the peak, and which stretches keep one core idle.
TIMELINE_ENV = "LINKSPIDER_MEMORY_TIMELINE"


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


def _rollup_kb(pid: int) -> tuple[int, int]:
    """(PSS, anonymous PSS) of one process in kB; zeros when it is gone."""
    pss = anon = 0
    try:
        for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
            if line.startswith("Pss:"):
                pss = int(line.split()[1])
            elif line.startswith("Pss_Anon:"):
                anon = int(line.split()[1])
    except OSError:
        pass
    return pss, anon


def _high_water_kb(pid: int) -> int:
    """A process's peak RSS so far (``VmHWM``) in kB; 0 when it is gone."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    except OSError:
        pass
    return 0


def _name(pid: int) -> str:
    """A process's name (``/proc/PID/comm``: postprocess names its forked children after their work,
    ``ls-…``), without spaces; "?" when it is gone."""
    try:
        return "_".join(Path(f"/proc/{pid}/comm").read_text().split()) or "?"
    except OSError:
        return "?"


def _cpu_seconds(pid: int) -> float:
    """A process's CPU seconds so far (user + system, ``/proc/PID/stat``); 0 when it is gone."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / _CLOCK_TICKS


_CLOCK_TICKS = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


def _sample_tree(process: subprocess.Popen, peak: list[int]) -> None:
    """Peaks of [tree PSS, tree anonymous PSS, largest process's anonymous PSS] into ``peak``, and
    where the largest process's peak RSS was reached into ``LAST_PEAK_AT``; each sample also to the
    file ``TIMELINE_ENV`` names, when it is set: seconds, the tree's anonymous PSS (MB), then
    ``pid:MB:name:CPU seconds:peak RSS MB`` for each process that has some."""
    global LAST_PEAK_AT
    timeline = os.environ.get(TIMELINE_ENV)
    started = time.perf_counter()
    LAST_PEAK_AT = (0.0, "", 0)
    with open(timeline, "w") if timeline else open(os.devnull, "w") as out:
        while process.poll() is None:
            sampled = time.perf_counter()
            pids = _tree(process.pid)
            figures = [_rollup_kb(pid) for pid in pids]
            highs = [_high_water_kb(pid) for pid in pids]
            peak[0] = max(peak[0], sum(pss for pss, _ in figures))
            peak[1] = max(peak[1], sum(anon for _, anon in figures))
            peak[2] = max(peak[2], max((anon for _, anon in figures), default=0))
            top = max(range(len(pids)), key=highs.__getitem__, default=None)
            if top is not None and highs[top] > LAST_PEAK_AT[2]:
                LAST_PEAK_AT = (round(sampled - started, 2), _name(pids[top]), highs[top])
            if timeline:
                each = " ".join(
                    f"{pid}:{anon / 1024:.0f}:{_name(pid)}:{_cpu_seconds(pid):.2f}:{high / 1024:.0f}"
                    for pid, (_, anon), high in zip(pids, figures, highs, strict=True) if anon)
                tree = sum(anon for _, anon in figures) / 1024
                out.write(f"{time.perf_counter() - started:.2f}\t{tree:.0f}\t{each}\n")
                out.flush()
            time.sleep(max(SAMPLE_SECONDS, SAMPLE_WAIT_FACTOR * (time.perf_counter() - sampled)))


def timed(command: list[str], what: str) -> tuple[float, int, subprocess.CompletedProcess[str]]:
    """Run ``command`` in the repository root under ``/usr/bin/time``: (wall seconds, peak RSS
    in kB, the finished process), its tree's CPU seconds in ``LAST_CPU_SECONDS``; exits with the end
    of its stderr when it fails."""
    global LAST_TREE_PSS_KB, LAST_TREE_ANON_KB, LAST_PROCESS_ANON_KB, LAST_CPU_SECONDS
    started = time.perf_counter()
    process = subprocess.Popen(["/usr/bin/time", "-f", "%e %M %U %S", *command], cwd=ROOT,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    peak = [0, 0, 0]
    sampler = threading.Thread(target=_sample_tree, args=(process, peak), daemon=True)
    sampler.start()
    stdout, stderr = process.communicate()
    wall = time.perf_counter() - started
    sampler.join()
    LAST_TREE_PSS_KB, LAST_TREE_ANON_KB, LAST_PROCESS_ANON_KB = peak if os.path.isdir("/proc") else (0, 0, 0)
    done = subprocess.CompletedProcess(process.args, process.returncode, stdout, stderr)
    if done.returncode != 0:
        sys.exit(f"{what} failed: {done.stderr.strip()[-800:]}")
    figures = done.stderr.strip().splitlines()[-1].split()
    LAST_CPU_SECONDS = float(figures[2]) + float(figures[3])
    return wall, int(figures[1]), done


def postprocess_run(crawl: Path, out: Path, extra: list[str],
                    command: str = "run") -> tuple[float, int, dict]:
    """``python -m postprocess COMMAND``: (wall seconds, peak RSS in kB, its summary.json; empty for a
    command that writes none, as ``embed`` alone)."""
    wall, rss_kb, _ = timed([sys.executable, "-m", "postprocess", command, "--crawl", str(crawl),
                             "--out", str(out), *extra], f"postprocess {command} on {crawl}")
    summary = out / "summary.json"
    return wall, rss_kb, json.loads(summary.read_text()) if command == "run" else {}
