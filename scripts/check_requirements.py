"""Exit 0 when this Python environment has every pinned requirement (``name==version``), else 1.

    python3 scripts/check_requirements.py requirements.txt

Prints the first few missing or different packages. Used by scripts/setup.sh, so that a
second virtualenv (or a fresh one) in a checkout that already ran setup is still set up.
"""

from __future__ import annotations

import importlib.metadata
import re
import sys

PIN = re.compile(r"^([A-Za-z0-9_.\-]+)==([^\s;]+)")


def missing(path: str) -> list[str]:
    """Requirement lines this environment does not satisfy."""
    out = []
    for raw in open(path, encoding="utf-8"):
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        match = PIN.match(line)
        if match is None:
            out.append(line)  # not a pin: let pip decide
            continue
        name, version = match.groups()
        try:
            installed = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            out.append(f"{line} (not installed)")
            continue
        if installed.split("+")[0] != version.split("+")[0]:
            out.append(f"{line} (installed {installed})")
    return out


def main(argv: list[str]) -> int:
    lacking = missing(argv[1] if len(argv) > 1 else "requirements.txt")
    if lacking:
        print("setup: this environment lacks " + "; ".join(lacking[:3])
              + (f" and {len(lacking) - 3} more" if len(lacking) > 3 else ""), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv))
