#!/usr/bin/env bash
# The whole check, as CI runs it: lint, types, and the test suite under the
# asyncio reactor, then the real Scrapy crawls (marker "crawl") again under
# the default Twisted reactor.  Extra arguments go to both pytest runs.
# Benchmark smoke runs (marker "bench") are opt-in and left out of both:
# run them with `.venv/bin/pytest -m bench` (tests/conftest.py deselects them
# whenever the -m expression does not name "bench").
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/bootstrap.sh
.venv/bin/ruff check .
.venv/bin/ruff format --check .
.venv/bin/mypy --strict scrapy_robots_std
.venv/bin/pytest -p no:cacheprovider "$@"
status=0
.venv/bin/pytest -p no:cacheprovider -o addopts="" --reactor=default -m "crawl and not bench" "$@" || status=$?
# 5 = nothing collected: fine when the arguments picked files without crawls.
if [ "$status" -eq 5 ] && [ "$#" -gt 0 ]; then
    status=0
fi
exit "$status"
