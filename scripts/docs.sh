#!/usr/bin/env bash
# Build the docs site (Sphinx, docs/) into docs/_build/html, strictly: any warning
# (a broken reference, an autodoc problem, a page outside the toctree) fails the
# build, after all of them are reported. Extra arguments go to sphinx-build.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/bootstrap.sh
if ! .venv/bin/python -c "import sphinx, myst_parser" 2>/dev/null \
    || [ pyproject.toml -nt .venv/.installed-docs ]; then
    .venv/bin/python -m pip install --quiet --disable-pip-version-check -e ".[docs]"
    touch .venv/.installed-docs
fi
# -E: read every page again, so a warning is never hidden by an earlier build;
# -W --keep-going: warnings are errors, all reported; -n: every reference resolves.
exec .venv/bin/python -m sphinx -b html -E -W --keep-going -n "$@" docs docs/_build/html
