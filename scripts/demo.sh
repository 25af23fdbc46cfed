#!/usr/bin/env bash
# Start a local demo site and crawl it with example_project (no internet needed).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/bootstrap.sh
exec .venv/bin/python example_project/run_demo.py "$@"
