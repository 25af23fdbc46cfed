#!/usr/bin/env bash
# The package as users get it: build the sdist and the wheel, check them with
# twine, then install the wheel alone into a fresh virtual environment (outside
# this tree) and use it: import, `robots-std --version`, and a robots.txt from
# standard input through `python -m scrapy_robots_std`. Fails on any error.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT="$PWD"
bash scripts/bootstrap.sh
if ! .venv/bin/python -c "import build, twine" 2>/dev/null \
    || [ pyproject.toml -nt .venv/.installed-release ]; then
    .venv/bin/python -m pip install --quiet --disable-pip-version-check -e ".[release]"
    touch .venv/.installed-release
fi
VERSION="$(.venv/bin/python -c 'import scrapy_robots_std; print(scrapy_robots_std.__version__)')"

echo "== build: sdist and wheel into dist/"
rm -rf dist
.venv/bin/python -m build --outdir dist . >/tmp/robots-std-build.$$.log 2>&1 \
    || { cat /tmp/robots-std-build.$$.log >&2; rm -f /tmp/robots-std-build.$$.log; exit 1; }
rm -f /tmp/robots-std-build.$$.log
ls dist
WHEEL="dist/scrapy_robots_std-$VERSION-py3-none-any.whl"
SDIST="dist/scrapy_robots_std-$VERSION.tar.gz"
[ -f "$WHEEL" ] || { echo "error: $WHEEL was not built" >&2; exit 1; }
[ -f "$SDIST" ] || { echo "error: $SDIST was not built" >&2; exit 1; }

echo "== twine check --strict"
.venv/bin/twine check --strict dist/*

echo "== what the wheel holds"
.venv/bin/python - "$WHEEL" "$VERSION" <<'PY'
import sys
import zipfile

wheel, version = sys.argv[1], sys.argv[2]
names = zipfile.ZipFile(wheel).namelist()
info = f"scrapy_robots_std-{version}.dist-info/"
stray = [n for n in names if not n.startswith(("scrapy_robots_std/", info))]
assert not stray, f"files outside the package in the wheel: {stray[:10]}"
for needed in ("scrapy_robots_std/py.typed", f"{info}licenses/LICENSE", f"{info}entry_points.txt"):
    assert needed in names, f"{needed} is missing from the wheel"
print(f"{len(names)} files, all under scrapy_robots_std/ and its .dist-info")
PY

echo "== the wheel in a fresh virtual environment"
TMP="$(mktemp -d)"
trap 'rm -rf "$TMP"' EXIT
"$ROOT/.venv/bin/python" -c 'import sys; print(sys.base_prefix)' >/dev/null
BASE_PYTHON="$("$ROOT/.venv/bin/python" -c 'import sys, os; print(os.path.join(sys.base_prefix, "bin", "python3"))')"
"$BASE_PYTHON" -m venv "$TMP/venv"
"$TMP/venv/bin/python" -m pip install --quiet --disable-pip-version-check "$ROOT/$WHEEL"
cd "$TMP"  # away from the source tree, so only the installed wheel can be imported
"$TMP/venv/bin/python" - "$TMP/venv" "$VERSION" <<'PY'
import sys

import scrapy_robots_std
from scrapy_robots_std import Addon, RobotsTxt, RobotsTxtStdMiddleware, StdRobotParser

venv, version = sys.argv[1], sys.argv[2]
assert scrapy_robots_std.__file__.startswith(venv), scrapy_robots_std.__file__
assert scrapy_robots_std.__version__ == version
robots = RobotsTxt.parse(b"User-agent: *\nDisallow: /private\n")
assert not robots.allowed("https://example.com/private/x", "FooBot")
assert robots.allowed("https://example.com/public", "FooBot")
print("import scrapy_robots_std", version, "from", scrapy_robots_std.__file__)
PY
out="$("$TMP/venv/bin/robots-std" --version)"
[ "$out" = "robots-std $VERSION" ] || { echo "error: robots-std --version printed '$out'" >&2; exit 1; }
echo "robots-std --version: $out"
status=0
out="$("$TMP/venv/bin/python" -m scrapy_robots_std - FooBot \
    https://example.com/private/report.html https://example.com/private/press/ \
    https://example.com/ <<'ROBOTS'
# a robots.txt on standard input
User-agent: FooBot
Disallow: /private/
Allow: /private/press/

User-agent: *
Disallow: /
ROBOTS
)" || status=$?
printf '%s\n' "$out"
expected="DISALLOWED https://example.com/private/report.html
ALLOWED https://example.com/private/press/
ALLOWED https://example.com/
group: User-agent: FooBot
diagnostics: none"
[ "$out" = "$expected" ] || { echo "error: unexpected output from python -m scrapy_robots_std" >&2; exit 1; }
[ "$status" -eq 1 ] || { echo "error: exit status $status, expected 1 (one URL disallowed)" >&2; exit 1; }
echo "OK: the wheel installs and works in a fresh virtual environment"
