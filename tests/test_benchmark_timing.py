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


#: Burns 0.8 s of CPU, holding 64 MB, so the sampler sees it at work.
BURN = """
import time
held = bytearray(64 << 20)
end = time.process_time() + 0.8
while time.process_time() < end:
    pass
"""


def test_the_timeline_gives_each_process_its_memory_name_and_cpu_seconds(tmp_path, monkeypatch):
    timing = module_from_file("timing", ROOT / "benchmarks" / "timing.py")
    timeline = tmp_path / "timeline.tsv"
    monkeypatch.setenv(timing.TIMELINE_ENV, str(timeline))
    timing.timed([sys.executable, "-c", BURN], "the burning command")
    samples = []
    for line in timeline.read_text().splitlines():
        _, _, *processes = line.split("\t")
        for process in " ".join(processes).split():
            pid, mb, name, cpu, high = process.split(":")
            samples.append((name, float(mb), float(cpu), float(high)))
    python = [(mb, cpu, high) for name, mb, cpu, high in samples if name.startswith("python")]
    assert python, samples
    cpus = [cpu for _, cpu, _ in python]
    assert cpus == sorted(cpus) and 0.2 <= cpus[-1] <= 0.8 + 1.0
    assert max(mb for mb, _, _ in python) >= 60
    assert all(high >= mb for mb, _, high in python)  # its peak RSS so far: at least its memory now


#: Holds 200 MB for a moment, lets it go, then burns 1 s of CPU holding 20 MB.
SPIKE = """
import time
spike = bytearray(200 << 20)
for i in range(0, len(spike), 4096):
    spike[i] = 1
del spike
held = bytearray(20 << 20)
end = time.process_time() + 1.0
while time.process_time() < end:
    pass
"""


def test_the_run_says_where_its_largest_process_reached_its_peak():
    """A spike between two samples is still seen: the process's high-water mark (``VmHWM``) says
    which process reached the run's peak RSS, and the first sample after it says when."""
    timing = module_from_file("timing", ROOT / "benchmarks" / "timing.py")
    _, rss_kb, _ = timing.timed([sys.executable, "-c", SPIKE], "the spiking command")
    seconds, name, kib = timing.LAST_PEAK_AT
    assert name.startswith("python") and kib >= 200 * 1024 and abs(kib - rss_kb) < 16 * 1024
    assert 0 <= seconds < 2.0


def test_a_slow_sample_makes_the_sampler_wait_longer(monkeypatch):
    """Reading a large process's ``smaps_rollup`` takes long (~0.2 s at a million synthetic pages):
    the sampler then waits ``SAMPLE_WAIT_FACTOR`` times as long as its sample took, so it keeps ~10%
    of a core at most, where sampling every 0.25 s took ~57% and slowed the run it measured."""
    import time

    timing = module_from_file("timing", ROOT / "benchmarks" / "timing.py")
    samples: list[float] = []  # when each sample began (its processes listed)
    real, listed = timing._rollup_kb, timing._tree

    def slow(pid: int) -> tuple[int, int]:  # a sample takes at least 0.1 s
        time.sleep(0.1)
        return real(pid)

    def tree(pid: int) -> list[int]:
        samples.append(time.perf_counter())
        return listed(pid)

    monkeypatch.setattr(timing, "_rollup_kb", slow)
    monkeypatch.setattr(timing, "_tree", tree)
    timing.timed([sys.executable, "-c", "import time; time.sleep(4)"], "the sleeping command")
    gaps = [later - earlier for earlier, later in zip(samples, samples[1:], strict=False)]
    assert gaps and min(gaps) >= 0.1 * (timing.SAMPLE_WAIT_FACTOR + 1) * 0.95, gaps
    assert len(samples) <= 4 / (0.1 * timing.SAMPLE_WAIT_FACTOR) + 2
