"""Setup notices what the Python environment in use lacks (not a stamp file in the checkout)."""

from __future__ import annotations

import importlib.metadata
import subprocess
import sys
import venv
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
CHECK = REPO / "scripts" / "check_requirements.py"


def check(python: str, requirements: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([python, str(CHECK), str(requirements)], capture_output=True, text=True,
                          check=False)


def test_the_environment_in_use_is_checked_pin_by_pin(tmp_path):
    pins = tmp_path / "requirements.txt"
    pins.write_text(f"# a comment\npytest=={importlib.metadata.version('pytest')}\n")
    assert check(sys.executable, pins).returncode == 0
    pins.write_text("pytest==0.0.1\n")
    done = check(sys.executable, pins)
    assert done.returncode == 1 and "pytest==0.0.1 (installed" in done.stderr


def test_a_fresh_virtualenv_in_a_checkout_that_ran_setup_is_still_set_up(tmp_path):
    """The checkout has run setup in this environment; a new virtualenv still lacks everything."""
    assert check(sys.executable, REPO / "requirements.txt").returncode == 0
    venv.EnvBuilder(with_pip=False).create(tmp_path / "venv")
    done = check(str(tmp_path / "venv" / "bin" / "python"), REPO / "requirements.txt")
    assert done.returncode == 1 and "(not installed)" in done.stderr
    assert ".setup-done" not in (REPO / "scripts" / "setup.sh").read_text()
