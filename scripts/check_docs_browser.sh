#!/usr/bin/env bash
# The docs as a reader sees them: build the site strictly (scripts/docs.sh, from a
# clean docs/_build/html), open every page in headless Chromium at 1280 px and 390 px,
# and fail if a page or its main content is wider than the window, if a table does not
# fit its column, or if an internal link or #anchor is broken (README.md's links to
# docs/*.md#anchor included). Screenshots of the index, Settings and Stats pages at
# both widths go to docs/_build/screenshots/.
#
#   bash scripts/check_docs_browser.sh             # build, then check
#   bash scripts/check_docs_browser.sh --no-build  # check the site already built
#
# Other arguments go to scripts/check_docs_browser.py (e.g. --pages settings.html).
# Chromium is Debian's `chromium` package (CHROMIUM=/path/to/chromium for another):
# installed with apt-get when it is missing and that is possible (root, apt-get on
# PATH), as CI runs. Not part of scripts/test.sh; CI runs it after the docs build.
set -euo pipefail
cd "$(dirname "$0")/.."

build=1
if [ "${1:-}" = "--no-build" ]; then
    build=0
    shift
fi

if [ "$build" = 1 ]; then
    # A clean build: no page left over from an earlier build (a page since removed,
    # a module page of another theme) is checked.
    rm -rf docs/_build/html
    bash scripts/docs.sh -q
else
    bash scripts/bootstrap.sh
fi

chromium="${CHROMIUM:-chromium}"
if ! command -v "$chromium" >/dev/null 2>&1; then
    if [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null 2>&1; then
        echo "chromium not found: installing Debian's chromium package (apt-get)" >&2
        export DEBIAN_FRONTEND=noninteractive
        apt-get update -qq
        apt-get install -y -qq chromium >/dev/null
    fi
    if ! command -v "$chromium" >/dev/null 2>&1; then
        cat >&2 <<'EOF'
error: chromium is missing. The browser check opens every page of the docs in
headless Chromium. Install it, then run scripts/check_docs_browser.sh again:
    Debian:  sudo apt-get install chromium
    Others:  any Chromium or Chrome, named with CHROMIUM=/path/to/chrome
(the script installs Debian's package itself when run as root where apt-get is
available, as in CI).
EOF
        exit 1
    fi
fi

exec .venv/bin/python scripts/check_docs_browser.py docs/_build/html \
    --chromium "$chromium" --readme README.md \
    --screenshots docs/_build/screenshots "$@"
