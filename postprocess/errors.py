"""The errors postprocess reports as one line: bad input (exit status 2), and a machine that cannot
hold the run's files (a full disk, a folder it may not write: exit status 74, sysexits' EX_IOERR)."""

from __future__ import annotations

import errno
import shutil
import tempfile
from collections.abc import Sequence
from pathlib import Path

EXIT_INPUT_ERROR = 2
#: A full disk, a folder it may not write, too many open files: not the input's fault, not a bug.
EXIT_ENVIRONMENT_ERROR = 74
#: The errno values of ``environment_problem``, with what the line says.
ENVIRONMENT_ERRNOS = {
    errno.ENOSPC: "no space left on device", errno.EDQUOT: "disk quota exceeded",
    errno.EACCES: "permission denied", errno.EPERM: "operation not permitted",
    errno.EROFS: "read-only file system", errno.EMFILE: "too many open files",
    errno.ENFILE: "too many open files on the system",
}
PREFIX = "linkspider postprocess: error: "


class InputError(Exception):
    """Bad input (crawl, options, model): the message is one line naming the problem."""

    def __init__(self, message: str) -> None:
        super().__init__(" ".join(str(message).split()))


def _free(path: Path) -> str:
    """``path``'s disk's free space, as a person reads it ("0 B", "3.2 GB")."""
    try:
        free = float(shutil.disk_usage(path).free)
    except OSError:
        return "?"
    if free < 1000:
        return f"{free:.0f} B"
    for unit in ("KB", "MB"):
        free /= 1000
        if round(free, 1) < 1000:
            return f"{free:.1f} {unit}"
    return f"{free / 1000:.1f} GB"


def environment_problem(error: OSError, folders: Sequence[Path] = ()) -> str | None:
    """One line for an ``OSError`` the machine caused (``ENVIRONMENT_ERRNOS``), naming the file and,
    for a full disk, the free space of ``folders`` and of the temporary folder (``TMPDIR``, where the
    second processes' files go); None for any other error (a bug: its traceback is wanted)."""
    what = ENVIRONMENT_ERRNOS.get(error.errno or 0)
    if what is None:
        return None
    line = f"{what}: {error.filename}" if error.filename else what
    if error.errno in (errno.ENOSPC, errno.EDQUOT):
        places = [("output folder", Path(f)) for f in folders] + [("TMPDIR", Path(tempfile.gettempdir()))]
        shown = []
        for label, place in places:
            existing = next((p for p in (place, *place.parents) if p.exists()), place)
            shown.append(f"{label} {place} has {_free(existing)} free")
        line += " (" + "; ".join(shown) + ": free space there, or set TMPDIR to a larger disk)"
    return line
