#!/usr/bin/env bash
# The README's test command: set up, lint, run the whole test suite.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
python3 -m ruff check linkspider postprocess deploy tests benchmarks scripts
python3 -m pytest -q "$@"
