#!/usr/bin/env bash
# The whole check, as CI runs it: lint, types, and the test suite under the
# asyncio reactor, then the real Scrapy crawls (marker "crawl") again under
# the default Twisted reactor.  Extra arguments go to both pytest runs.
# Benchmark smoke runs (marker "bench") are opt-in and left out of both:
# run them with `.venv/bin/pytest -m bench` (tests/conftest.py deselects them
# whenever the -m expression does not name "bench").
# Needs nothing beside the clone: scripts/bootstrap.sh makes .venv and installs
# redis-server (as root, with apt-get) or stops, naming it; the corpus tests read
# ../shared/corpus when it is there and tests/data/corpus_subset.tar.xz otherwise.
set -euo pipefail
cd "$(dirname "$0")/.."
# Keep bytecode (the tree's __pycache__/, ignored by git): with PYTHONDONTWRITEBYTECODE
# set, as some environments do, every pytest worker of both runs re-does pytest's
# assertion rewriting of every test module at collection (about 4 s of CPU each, 8
# collections), and every crawler or CLI subprocess compiles the package again.
unset PYTHONDONTWRITEBYTECODE
bash scripts/bootstrap.sh test
.venv/bin/ruff check .
.venv/bin/ruff format --check .
.venv/bin/mypy --strict scrapy_robots_std
.venv/bin/python scripts/check_shape.py  # function, class and parser sizes (issue 24)
# The crawls mostly wait on sockets and timers, so 4 workers (pytest-xdist) on the
# 2 cores; ROBOTS_STD_TEST_WORKERS overrides (1: no workers, for debugging).
WORKERS="${ROBOTS_STD_TEST_WORKERS:-4}"
if [ "$WORKERS" -gt 1 ]; then
    PARALLEL=(-n "$WORKERS")
else
    PARALLEL=(-p no:xdist)
fi
.venv/bin/pytest -p no:cacheprovider "${PARALLEL[@]}" "$@"
status=0
.venv/bin/pytest -p no:cacheprovider "${PARALLEL[@]}" -o addopts="" --reactor=default -m "crawl and not bench" "$@" || status=$?
# 5 = nothing collected: fine when the arguments picked files without crawls.
if [ "$status" -eq 5 ] && [ "$#" -gt 0 ]; then
    status=0
fi
exit "$status"
