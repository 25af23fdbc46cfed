#!/usr/bin/env bash
# Create .venv (once) and install the package with its test extras into it.
# Idempotent: a second run only re-checks the install.
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON="${PYTHON:-python3}"
if [ ! -x .venv/bin/python ]; then
    "$PYTHON" -m venv .venv
fi
if ! .venv/bin/python -c "import scrapy_robots_std, pytest, pytest_twisted, xdist, hypothesis, ruff, mypy, redis, scrapy_redis" 2>/dev/null \
    || [ pyproject.toml -nt .venv/.installed ]; then
    .venv/bin/python -m pip install --quiet --disable-pip-version-check --upgrade pip
    .venv/bin/python -m pip install --quiet --disable-pip-version-check -e ".[test]"
    touch .venv/.installed
fi
