"""What a command's peak RSS is made of: its main process's resident memory by mapping, at its peak.

RSS counts the pages of mapped files a process has touched as well as its own (anonymous) memory.
This runs the command, samples its process's ``/proc/PID/smaps_rollup`` every ``--every`` seconds,
and each time the RSS reaches a new peak reads ``/proc/PID/smaps`` for the resident kB of each
mapping (files by name, anonymous memory together); it prints the peak, when it came, the names of
the process's descendants then (``ls-…``: which step was running) and the largest mappings::

    python3 benchmarks/rss_by_mapping.py --json /tmp/rss.json -- \\
        python3 -m postprocess embed --crawl CRAWL --out OUT --encoder static

Reading ``smaps`` walks the process's page tables (~0.2 s for a million-page run's main process):
the sampling slows a large run a little; read its RSS figures, not its time.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import timing  # noqa: E402


def rollup(pid: int) -> dict[str, int]:
    """``smaps_rollup``'s kB fields (Rss, Anonymous, ...)."""
    fields = {}
    for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
        parts = line.split()
        if len(parts) >= 3 and parts[1].isdigit():
            fields[parts[0].rstrip(":")] = int(parts[1])
    return fields


def resident_by_mapping(pid: int) -> Counter[str]:
    """Resident kB of each mapping of ``pid``, by file name (anonymous mappings as ``[anon]``)."""
    resident: Counter[str] = Counter()
    name = "[anon]"
    for line in Path(f"/proc/{pid}/smaps").read_text().splitlines():
        parts = line.split()
        if not parts:
            continue
        if "-" in parts[0] and not parts[0].endswith(":"):  # a mapping's header line
            name = parts[5] if len(parts) > 5 else "[anon]"
        elif parts[0] == "Rss:":
            resident[name] += int(parts[1])
    return resident


def children(pid: int) -> list[str]:
    """The names (``comm``: postprocess's ``ls-…``) of ``pid``'s descendants."""
    return sorted(timing._name(child) for child in timing._tree(pid)[1:])


def watch(command: list[str], every: float) -> dict[str, object]:
    """Run ``command`` and follow its process's RSS: the peak, and what it was made of."""
    started = time.perf_counter()
    process = subprocess.Popen(command)
    peak: dict[str, object] = {"rss_kb": 0}
    while process.poll() is None:
        try:
            now = rollup(process.pid)
            if now.get("Rss", 0) > int(peak["rss_kb"]):  # type: ignore[call-overload]
                peak = {"rss_kb": now["Rss"], "anonymous_kb": now.get("Anonymous", 0),
                        "seconds": round(time.perf_counter() - started, 1),
                        "children": children(process.pid),
                        "by_mapping_kb": dict(resident_by_mapping(process.pid).most_common(12))}
        except (OSError, ValueError, KeyError):
            pass  # the process left between two reads
        time.sleep(every)
    return {"command": command, "returncode": process.returncode,
            "seconds": round(time.perf_counter() - started, 1), "peak": peak}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--every", type=float, default=0.5, help="seconds between samples")
    parser.add_argument("--json", type=Path, help="also write the result here")
    parser.add_argument("command", nargs=argparse.REMAINDER, help="-- then the command")
    args = parser.parse_args()
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command:
        parser.error("no command given (after --)")
    result = watch(command, args.every)
    peak = result["peak"]
    print(f"peak RSS {peak['rss_kb']:,} kB at {peak.get('seconds')} s, {peak.get('anonymous_kb', 0):,} kB "
          f"anonymous; children then: {', '.join(peak.get('children', [])) or 'none'}")
    for name, kb in peak.get("by_mapping_kb", {}).items():
        print(f"  {kb:>12,} kB  {name}")
    if args.json:
        args.json.write_text(json.dumps(result, indent=1))
    sys.exit(result["returncode"])


if __name__ == "__main__":
    main()
