"""benchmarks/timing.py: a command's wall time, peak memory and the CPU time of its whole process tree."""

from __future__ import annotations

import sys
from pathlib import Path

from crawlkit import module_from_file

ROOT = Path(__file__).resolve().parents[1]

#: Burns 0.3 s of CPU in a forked child and 0.3 s in itself, then waits for the child.
BUSY = """
import os, time
def burn(seconds):
    end = time.process_time() + seconds
    while time.process_time() < end:
        pass
pid = os.fork()
burn(0.3)
if pid == 0:
    os._exit(0)
os.waitpid(pid, 0)
"""


def test_the_cpu_time_of_a_command_counts_every_process_it_forked():
    timing = module_from_file("timing", ROOT / "benchmarks" / "timing.py")
    wall, rss_kb, done = timing.timed([sys.executable, "-c", BUSY], "the busy command")
    assert done.returncode == 0 and rss_kb > 0 and wall > 0
    # both processes' 0.3 s (GNU time reports hundredths), and Python's start
    assert 0.58 <= timing.LAST_CPU_SECONDS < 0.6 + 2.0
