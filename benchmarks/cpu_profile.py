"""Where a postprocess run spends its CPU, in every process: by step and by function, per page.

Runs ``python -m postprocess run --encoder static`` under py-spy (``pip install py-spy``;
sampling from outside, every process the run forks included), then reads py-spy's raw stacks
and prints, for the whole process tree, the CPU seconds of each step (``STEPS``) and of the
functions that hold most of them, with milliseconds per page. A forked child's stacks start with its parent's
frames up to the fork, so its work counts in the step that forked it. py-spy counts a thread
that waits for a core as busy, so on a loaded machine the figures run a little above
``/usr/bin/time``'s user + sys.

    python3 benchmarks/cpu_profile.py --crawl /work/runs/scale/crawl-100000 \\
        --out /tmp/profiled --raw /tmp/profile.txt

``--out`` is a run's output folder (its ``cache/`` makes the run warm); ``--raw`` alone (no
``--crawl``) summarises an earlier profile again. ``--pages`` divides by that many pages.
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import subprocess
import sys
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

#: The steps of a run, each by the function that does it and that function's file: a stack counts
#: in the first of these it passes through, from the outermost frame (a confidence fold's ranking
#: counts in the learning, a forked child in the step that forked it).
STEPS = (("load", "Session.get_crawl", "cli.py"),
         ("lexical neighbours (TF-IDF)", "_lexical_neighbours", "lexical.py"),
         ("names in page texts", "NameIndex.__init__", "lexical.py"),
         ("anchor finder", "AnchorFinder.__init__", "anchors.py"),
         ("confidence learning", "learn_confidence", "pipeline.py"),
         ("ranking", "candidate_pool", "pipeline.py"),
         ("anchoring", "anchor_pool", "pipeline.py"),
         ("queue", "queue", "pipeline.py"),
         ("report", "stage_report", "cli.py"))
_PROCESS = re.compile(r"^process (\d+):")
_COUNTED = re.compile(r" \d+$")
_PATH = re.compile(r"\s*\(/.*?/(?=[^/]+\.py)")
_LINE = re.compile(r":\d+\)$")  # a frame's line number: a function counts once, whatever its line


def profile(crawl: Path, out: Path, raw: Path, rate: int, extra: list[str]) -> None:
    """Record the run's stacks into ``raw`` (py-spy's raw format, every process)."""
    spy = shutil.which("py-spy")
    if spy is None:
        raise SystemExit("cpu_profile: py-spy is not installed (pip install py-spy)")
    command = [spy, "record", "--subprocesses", "--rate", str(rate), "--format", "raw", "--output", str(raw),
               "--", sys.executable, "-m", "postprocess", "run", "--crawl", str(crawl), "--out", str(out),
               "--encoder", "static", *extra]
    done = subprocess.run(command, cwd=Path(__file__).resolve().parents[1], stdout=subprocess.DEVNULL)
    if done.returncode:  # postprocess's own one-line error is above, on stderr
        raise SystemExit(f"cpu_profile: the profiled run failed (exit {done.returncode}); "
                         f"{raw} is not a whole profile")


def _stacks(text: str) -> Iterator[str]:
    """py-spy's raw stacks, a line each ending in its count; a line that does not end so is joined to the
    next (a process started by ``python -c`` with a script of several lines, ``background``'s fresh
    children, has its command line's breaks in its stacks' text)."""
    pending = ""
    for line in text.splitlines():
        pending = f"{pending} {line}" if pending else line
        if _COUNTED.search(pending):
            yield pending
            pending = ""


def summarise(raw: Path, rate: int) -> tuple[Counter[str], Counter[str], Counter[str], float]:
    """CPU seconds by step, by function (the time of the calls it made included, counted once a
    stack) and by process, and the total, from py-spy's raw stacks sampled ``rate`` times a second."""
    steps: Counter[str] = Counter()
    functions: Counter[str] = Counter()
    processes: Counter[str] = Counter()
    total = 0.0
    for line in _stacks(raw.read_text()):
        stack, _, count = line.rpartition(" ")
        if not stack:
            continue
        seconds = int(count) / rate
        frames = stack.split(";")
        processes_in = list(map(_PROCESS.match, frames))
        pids = [m.group(1) for m in processes_in if m]
        frames = [_PATH.sub(" (", f) for f, m in zip(frames, processes_in, strict=True) if not m]
        total += seconds
        processes[pids[-1] if pids else "?"] += seconds
        steps[_step(frames)] += seconds
        for name in {_LINE.sub(")", f) for f in frames}:
            functions[name] += seconds
    return steps, functions, processes, total


def _step(frames: list[str]) -> str:
    """The step (``STEPS``) a stack counts in: the first its frames pass through, else "other"."""
    for frame in frames:
        for label, function, file in STEPS:
            if frame.startswith(f"{function} (") and f"{file}:" in frame:
                return label
    return "other"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--crawl", type=Path, help="the crawl to run on (none: only summarise --raw)")
    parser.add_argument("--out", type=Path, help="the run's output folder")
    parser.add_argument("--raw", type=Path, required=True, help="py-spy's raw stacks (written, or read)")
    parser.add_argument("--rate", type=int, default=20, help="samples a second (default 20)")
    parser.add_argument("--top", type=int, default=40, help="functions to list (default 40)")
    parser.add_argument("--pages", type=int, help="pages of the crawl, for the per-page figures")
    parser.add_argument("extra", nargs="*", help="more arguments for postprocess run (after --)")
    args = parser.parse_args(argv)
    if args.crawl is not None:
        if args.out is None:
            parser.error("--crawl needs --out")
        profile(args.crawl, args.out, args.raw, args.rate, args.extra)
    if not args.raw.is_file():
        parser.error(f"no profile at {args.raw}")
    pages = args.pages or _pages(args.out)
    steps, functions, processes, total = summarise(args.raw, args.rate)
    per_page = (lambda s: f"{1000 * s / pages:7.2f} ms/page") if pages else (lambda s: "")
    print(f"CPU, all {len(processes)} processes: {total:8.1f} s {per_page(total)}")
    for step, seconds in steps.most_common():
        print(f"  {step:<28} {seconds:8.1f} s {per_page(seconds)}")
    print("functions (their calls included):")
    for name, seconds in functions.most_common(args.top):
        print(f"  {seconds:8.1f} s {per_page(seconds)}  {name[:110]}")
    return 0


def _pages(out: Path | None) -> int | None:
    """Pages of the run in ``out`` (its summary.json), if there is one."""
    summary = out / "summary.json" if out is not None else None
    if summary is None or not summary.is_file():
        return None
    return json.loads(summary.read_text()).get("pages")


if __name__ == "__main__":
    raise SystemExit(main())
