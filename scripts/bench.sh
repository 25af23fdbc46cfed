#!/usr/bin/env bash
# Parser benchmark against Protego, urllib.robotparser and robotspy; extra
# arguments go to benchmarks/parsers.py (e.g. --quick, --markdown benchmarks/RESULTS.md).
# `bash scripts/bench.sh crawl [ARGS]` runs the end-to-end crawl benchmark instead;
# ARGS go to `python -m benchmarks.crawl` (e.g. --smoke, --variants a,b).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/bootstrap.sh
.venv/bin/python -m pip install --quiet --disable-pip-version-check -e ".[test,bench]"
if [ "${1:-}" = "crawl" ]; then
    shift
    exec .venv/bin/python -m benchmarks.crawl "$@"
fi
exec .venv/bin/python benchmarks/parsers.py "$@"
