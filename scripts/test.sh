#!/usr/bin/env bash
# The whole check, as CI runs it: lint, types, and the test suite under the
# asyncio reactor, then the Scrapy crawl tests again under the default reactor.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/bootstrap.sh
.venv/bin/ruff check .
.venv/bin/ruff format --check .
.venv/bin/mypy --strict scrapy_robots_std
.venv/bin/pytest -p no:cacheprovider "$@"
.venv/bin/pytest -p no:cacheprovider -o addopts="" --reactor=default -m crawl "$@"
