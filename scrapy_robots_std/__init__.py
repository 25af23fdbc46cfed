"""Exact robots.txt for Scrapy: RFC 9309 and the 1994 standard.

The public API lives here; every other module is an implementation detail.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from scrapy_robots_std.robotstxt.parser import Diagnostic, RequestRate
from scrapy_robots_std.robotstxt.robots import Decision, RobotsTxt, Rule, parse

if TYPE_CHECKING:
    from scrapy_robots_std.scrapy.addon import Addon
    from scrapy_robots_std.scrapy.middleware import (
        RobotsTxtDisallowed,
        RobotsTxtStdMiddleware,
    )
    from scrapy_robots_std.scrapy.robotparser import StdRobotParser
    from scrapy_robots_std.scrapy.waiting import RobotsAwarePriorityQueue
    from scrapy_robots_std.scrapy.waiting_redis import RobotsAwareRedisQueue

__version__ = "0.4.0"

__all__ = [
    "Addon",
    "Decision",
    "Diagnostic",
    "RequestRate",
    "RobotsAwarePriorityQueue",
    "RobotsAwareRedisQueue",
    "RobotsTxt",
    "RobotsTxtDisallowed",
    "RobotsTxtStdMiddleware",
    "Rule",
    "StdRobotParser",
    "__version__",
    "parse",
]


#: Names that need Scrapy, imported on first use so the parser stays importable
#: without it.
_SCRAPY_NAMES = {
    "Addon": "scrapy_robots_std.scrapy.addon",
    "RobotsTxtDisallowed": "scrapy_robots_std.scrapy.middleware",
    "RobotsTxtStdMiddleware": "scrapy_robots_std.scrapy.middleware",
    "StdRobotParser": "scrapy_robots_std.scrapy.robotparser",
    "RobotsAwarePriorityQueue": "scrapy_robots_std.scrapy.waiting",
    # needs scrapy-redis, an optional dependency
    "RobotsAwareRedisQueue": "scrapy_robots_std.scrapy.waiting_redis",
}


def __getattr__(name: str) -> object:
    module = _SCRAPY_NAMES.get(name)
    if module is not None:
        import importlib

        return getattr(importlib.import_module(module), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
