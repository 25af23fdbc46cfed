#!/usr/bin/env bash
# Parser benchmark against Protego, urllib.robotparser and robotspy; extra
# arguments go to benchmarks/parsers.py (e.g. --quick, --markdown benchmarks/RESULTS.md).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/bootstrap.sh
.venv/bin/python -m pip install --quiet --disable-pip-version-check -e ".[test,bench]"
exec .venv/bin/python benchmarks/parsers.py "$@"
