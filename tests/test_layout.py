"""The test suite's layout: what the tests share lives in tests/helpers, nowhere else.

A test module imports no other test module, no ``conftest`` and nothing from
``benchmarks/``; the benchmarks serve their sites with the tests' server stack
rather than with HTTP servers of their own.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
TESTS = ROOT / "tests"
#: Modules the suite may import from tests/: the helpers package and tests itself.
SHARED = ("tests", "tests.helpers")
#: An import in code, or in a script a test hands to ``python -c``.
_BENCHMARKS_IN_TEXT = re.compile(r"(?:^|[\"';])\s*(?:from|import)\s+benchmarks\b")


def _sources(root: Path) -> list[Path]:
    return sorted(path for path in root.rglob("*.py") if "data" not in path.parts)


def _imported(path: Path) -> list[tuple[int, str]]:
    package = path.relative_to(ROOT).with_suffix("").parts[:-1]
    return _imports(path.read_text(encoding="utf-8"), package)


def _imports(source: str, package: tuple[str, ...]) -> list[tuple[int, str]]:
    """``(line, module)`` for every import in ``source``, nested and relative ones too.

    A relative import is resolved against ``package``, and ``from X import name``
    also yields ``X.name`` (it may be a module)."""
    found: list[tuple[int, str]] = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = package[: len(package) - node.level + 1] if node.level else ()
            module = ".".join([*base, *filter(None, [node.module])])
            found.append((node.lineno, module))
            found += [(node.lineno, f"{module}.{alias.name}") for alias in node.names]
    return found


def _forbidden(module: str) -> str | None:
    """Why importing ``module`` from the test suite breaks the layout, or None."""
    parts = module.split(".")
    if parts[0] == "benchmarks":
        return "imports from benchmarks/"
    if parts[0] == "tests":
        parts = parts[1:]
        if not parts or parts[0] == "helpers":
            return None
    name = parts[0]
    if name.startswith("test_") or name == "conftest":
        return "imports another test module"
    if (TESTS / f"{name}.py").is_file():
        return "imports a module of tests/ outside tests/helpers"
    return None


def test_no_test_module_imports_another_test_module_or_benchmarks() -> None:
    problems = []
    for path in _sources(TESTS):
        where = path.relative_to(ROOT)
        for line, module in _imported(path):
            why = _forbidden(module)
            if why is not None:
                problems.append(f"{where}:{line}: {why} ({module})")
        for number, text in enumerate(path.read_text().splitlines(), start=1):
            if _BENCHMARKS_IN_TEXT.search(text):
                problems.append(f"{where}:{number}: names benchmarks: {text.strip()}")
    assert problems == []


def test_tests_holds_only_test_modules_beside_the_helpers() -> None:
    loose = [
        path.name
        for path in TESTS.glob("*.py")
        if not path.name.startswith("test_")
        and path.name not in ("__init__.py", "conftest.py")
    ]
    assert loose == [], "shared code belongs in tests/helpers/"


@pytest.mark.parametrize("root", ["tests", "benchmarks"])
def test_only_the_helpers_implement_http_servers(root: str) -> None:
    """HTTP server classes (the stdlib's, Twisted's) appear in no test or benchmark:
    they serve with tests/helpers/server.py and loop_server.py."""
    offenders = [
        f"{path.relative_to(ROOT)}:{line} ({module})"
        for path in _sources(ROOT / root)
        if TESTS / "helpers" not in path.parents
        for line, module in _imported(path)
        if module.split(".")[0] in ("socketserver",)
        or module.startswith(("http.server", "twisted.web.server"))
    ]
    assert offenders == []


@pytest.mark.parametrize(
    ("module", "why"),
    [
        ("test_middleware_crawl", "imports another test module"),
        ("tests.test_middleware_crawl", "imports another test module"),
        ("tests.conftest", "imports another test module"),
        ("benchmarks.hostile", "imports from benchmarks/"),
        ("tests.helpers.crawl", None),
        ("scrapy_robots_std.cache", None),
    ],
)
def test_the_layout_check_tells_forbidden_imports(module: str, why: str | None) -> None:
    assert _forbidden(module) == why


def test_the_layout_check_sees_relative_and_nested_imports() -> None:
    source = (
        "from .test_x import y\nfrom . import conftest\ndef f():\n    import hostile\n"
    )
    modules = [module for _, module in _imports(source, ("tests",))]
    assert modules == [
        "tests.test_x",
        "tests.test_x.y",
        "tests",
        "tests.conftest",
        "hostile",
    ]
    assert [_forbidden(m) for m in ("tests.test_x", "tests.conftest")] == [
        "imports another test module"
    ] * 2
