"""The package's pure layers import one way (docs/design.md, "Module map").

``usage/`` (usage preferences, whatever states them) imports nothing else of the
package; ``robotstxt/`` imports ``usage/`` and nothing else of the package.
Neither imports Scrapy or Twisted.  Imports under ``TYPE_CHECKING`` count too.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "scrapy_robots_std"
#: Each pure layer, and the parts of the package it may import.
LAYERS = {
    "usage": ("scrapy_robots_std.usage",),
    "robotstxt": ("scrapy_robots_std.robotstxt", "scrapy_robots_std.usage"),
}
FOREIGN = ("scrapy", "twisted")


def _modules(path: Path) -> list[tuple[int, str]]:
    """``(line, module)`` for every import of ``path`` (all absolute here)."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            assert node.level == 0, f"{path.name}:{node.lineno}: a relative import"
            found.append((node.lineno, node.module or ""))
    return found


def _inside(module: str, packages: tuple[str, ...]) -> bool:
    return any(module == p or module.startswith(f"{p}.") for p in packages)


@pytest.mark.parametrize("layer", sorted(LAYERS))
def test_a_pure_layer_imports_only_the_layers_below_it(layer: str) -> None:
    allowed = LAYERS[layer]
    problems = [
        f"{path.relative_to(PACKAGE)}:{line}: {module}"
        for path in sorted((PACKAGE / layer).glob("*.py"))
        for line, module in _modules(path)
        if (_inside(module, ("scrapy_robots_std",)) and not _inside(module, allowed))
        or _inside(module, FOREIGN)
    ]
    assert problems == []
