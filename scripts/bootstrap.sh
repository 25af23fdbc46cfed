#!/usr/bin/env bash
# Create .venv (once) and install the package with its test extras into it.
# Idempotent: a second run only re-checks the install.
# `bootstrap.sh test` (what scripts/test.sh runs) also makes sure of the program the
# tests start themselves, redis-server: installed with apt-get when it is missing and
# that is possible (root, apt-get on PATH), otherwise a clear stop before any test.
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
if [ "${1:-}" = "test" ] && ! command -v redis-server >/dev/null 2>&1; then
    if [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null 2>&1; then
        echo "redis-server not found: installing Debian's redis-server package (apt-get)" >&2
        export DEBIAN_FRONTEND=noninteractive
        apt-get update -qq
        apt-get install -y -qq redis-server >/dev/null
    fi
    if ! command -v redis-server >/dev/null 2>&1; then
        cat >&2 <<'EOF'
error: redis-server is missing. The RedisCache and scrapy-redis tests start their
own redis-server on 127.0.0.1, so the program must be on PATH. Install it, then run
scripts/test.sh again:
    Debian, Ubuntu:  sudo apt-get install redis-server
    Fedora:          sudo dnf install redis
    macOS:           brew install redis
(scripts/test.sh installs it itself when run as root where apt-get is available.)
EOF
        exit 1
    fi
fi
