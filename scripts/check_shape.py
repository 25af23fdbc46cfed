"""The package's size and shape targets (issue 24), checked in CI.

* ``scrapy_robots_std/robotstxt/`` holds at most 2,500 lines in all (its two usage
  modules, which read a robots.txt's usage lines, included; the usage-preference
  model, vocabularies and RFC 9651 parser live in ``scrapy_robots_std/usage/`` and
  are not counted);
* no function or method is longer than 60 lines;
* no class is longer than 300 lines.

Cyclomatic complexity (at most 15 per function) is ruff's C901, configured in
pyproject.toml. Usage: ``.venv/bin/python scripts/check_shape.py``; exit 1 and
one line per miss when a target is missed.
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "scrapy_robots_std"
PARSER_LINES = 2_500
FUNCTION_LINES = 60
CLASS_LINES = 300


def misses() -> list[str]:
    found = []
    parser_lines = sum(
        len(path.read_text(encoding="utf-8").splitlines())
        for path in (PACKAGE / "robotstxt").glob("*.py")
    )
    if parser_lines > PARSER_LINES:
        found.append(f"robotstxt/: {parser_lines} lines (at most {PARSER_LINES})")
    for path in sorted(PACKAGE.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                limit = FUNCTION_LINES
            elif isinstance(node, ast.ClassDef):
                limit = CLASS_LINES
            else:
                continue
            size = (node.end_lineno or node.lineno) - node.lineno + 1
            if size > limit:
                where = f"{path.relative_to(ROOT)}:{node.lineno}"
                found.append(f"{where} {node.name}: {size} lines (at most {limit})")
    return found


def main() -> int:
    found = misses()
    for line in found:
        print(line)
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
