"""Exact robots.txt for Scrapy: RFC 9309 and the 1994 standard.

The public API lives here; every other module is an implementation detail.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from scrapy_robots_std._parser import Diagnostic, RequestRate
from scrapy_robots_std._robots import Decision, RobotsTxt, Rule, parse

if TYPE_CHECKING:
    from scrapy_robots_std.scrapy_parser import StdRobotParser

__version__ = "0.1.0"

__all__ = [
    "Decision",
    "Diagnostic",
    "RequestRate",
    "RobotsTxt",
    "Rule",
    "StdRobotParser",
    "__version__",
    "parse",
]


def __getattr__(name: str) -> object:
    # The Scrapy backend imports Scrapy; the parser must stay importable without it.
    if name == "StdRobotParser":
        from scrapy_robots_std.scrapy_parser import StdRobotParser

        return StdRobotParser
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
