"""benchmarks/rss_by_mapping.py: what a command's peak RSS is made of, mapping by mapping."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

#: Maps a 48 MB file, reads every page, then holds it a moment; and a child named ``ls-child``.
MAPS = """
import ctypes, mmap, os, sys, time
path = sys.argv[1]
with open(path, "wb") as f:
    for _ in range(48):  # a MB at a time: the process's own memory stays small
        f.write(b"\\1" * (1 << 20))
with open(path, "rb") as f:
    region = mmap.mmap(f.fileno(), 0, prot=mmap.PROT_READ)
sum(region[i] for i in range(0, len(region), 4096))
pid = os.fork()
if pid == 0:
    ctypes.CDLL(None).prctl(15, b"ls-child")
    time.sleep(3)
    os._exit(0)
time.sleep(2)
os.kill(pid, 9)
os.waitpid(pid, 0)
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux's /proc/PID/smaps")
def test_the_peak_is_broken_down_by_mapped_file_and_the_step_then(tmp_path):
    done = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "rss_by_mapping.py"), "--every", "0.1",
                           "--json", str(tmp_path / "rss.json"), "--", sys.executable, "-c", MAPS,
                           str(tmp_path / "mapped.bin")], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    import json

    peak = json.loads((tmp_path / "rss.json").read_text())["peak"]
    assert peak["by_mapping_kb"][str(tmp_path / "mapped.bin")] >= 48 << 10
    assert peak["rss_kb"] >= peak["anonymous_kb"] + (48 << 10)
    assert "ls-child" in peak["children"]
    assert f"{tmp_path / 'mapped.bin'}" in done.stdout and "ls-child" in done.stdout
