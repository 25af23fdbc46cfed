"""Exact robots.txt for Scrapy: RFC 9309 and the 1994 standard.

The public API lives here; every other module is an implementation detail.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from scrapy_robots_std.robotstxt.parser import RequestRate
from scrapy_robots_std.robotstxt.reader import Diagnostic
from scrapy_robots_std.robotstxt.robots import Decision, RobotsTxt, Rule, parse

if TYPE_CHECKING:
    from scrapy_robots_std.config import SettingsError
    from scrapy_robots_std.pagerules import PageDirectives, PageStatement
    from scrapy_robots_std.robotstxt.usage_query import UsageSummary
    from scrapy_robots_std.scrapy.addon import Addon
    from scrapy_robots_std.scrapy.middleware import (
        RobotsTxtDisallowed,
        RobotsTxtStdMiddleware,
    )
    from scrapy_robots_std.scrapy.page import (
        PageDirectivesMiddleware,
        PageNoindexDropped,
        PageNoindexPipeline,
    )
    from scrapy_robots_std.scrapy.robotparser import StdRobotParser
    from scrapy_robots_std.scrapy.usage import UsageDisallowed
    from scrapy_robots_std.scrapy.waiting import RobotsAwarePriorityQueue
    from scrapy_robots_std.scrapy.waiting_redis import RobotsAwareRedisQueue
    from scrapy_robots_std.tdmrep import TdmRep, TdmStatement
    from scrapy_robots_std.usage.preferences import (
        PurposeDecision,
        UsagePreference,
        UsagePreferences,
        UsageSource,
    )
    from scrapy_robots_std.usage.vocab import (
        PURPOSES as USAGE_PURPOSES,
    )
    from scrapy_robots_std.usage.vocab import (
        REVISIONS as USAGE_REVISIONS,
    )

__version__ = "0.4.0"

__all__ = [
    "USAGE_PURPOSES",
    "USAGE_REVISIONS",
    "Addon",
    "Decision",
    "Diagnostic",
    "PageDirectives",
    "PageDirectivesMiddleware",
    "PageNoindexDropped",
    "PageNoindexPipeline",
    "PageStatement",
    "PurposeDecision",
    "RequestRate",
    "RobotsAwarePriorityQueue",
    "RobotsAwareRedisQueue",
    "RobotsTxt",
    "RobotsTxtDisallowed",
    "RobotsTxtStdMiddleware",
    "Rule",
    "SettingsError",
    "StdRobotParser",
    "TdmRep",
    "TdmStatement",
    "UsageDisallowed",
    "UsagePreference",
    "UsagePreferences",
    "UsageSource",
    "UsageSummary",
    "__version__",
    "parse",
]


#: Names imported on first use: most need Scrapy, and the parser stays importable
#: without it.
_LAZY_NAMES = {
    # a ValueError, raised when a ROBOTS_STD_* setting has a value that cannot be used
    "SettingsError": "scrapy_robots_std.config",
    "Addon": "scrapy_robots_std.scrapy.addon",
    "RobotsTxtDisallowed": "scrapy_robots_std.scrapy.middleware",
    "RobotsTxtStdMiddleware": "scrapy_robots_std.scrapy.middleware",
    "StdRobotParser": "scrapy_robots_std.scrapy.robotparser",
    "UsageDisallowed": "scrapy_robots_std.scrapy.usage",
    "RobotsAwarePriorityQueue": "scrapy_robots_std.scrapy.waiting",
    # needs scrapy-redis, an optional dependency
    "RobotsAwareRedisQueue": "scrapy_robots_std.scrapy.waiting_redis",
    # usage preferences (pure): what RobotsTxt.usage() returns, and its data
    "PurposeDecision": "scrapy_robots_std.usage.preferences",
    "UsagePreference": "scrapy_robots_std.usage.preferences",
    "UsagePreferences": "scrapy_robots_std.usage.preferences",
    "UsageSource": "scrapy_robots_std.usage.preferences",
    "UsageSummary": "scrapy_robots_std.robotstxt.usage_query",
    "USAGE_PURPOSES": "scrapy_robots_std.usage.vocab",
    "USAGE_REVISIONS": "scrapy_robots_std.usage.vocab",
    # page-level robots directives: what is read (pure), and what obeys them
    "PageDirectives": "scrapy_robots_std.pagerules",
    "PageStatement": "scrapy_robots_std.pagerules",
    "PageDirectivesMiddleware": "scrapy_robots_std.scrapy.page",
    "PageNoindexDropped": "scrapy_robots_std.scrapy.page",
    "PageNoindexPipeline": "scrapy_robots_std.scrapy.page",
    # TDMRep (pure): what a response's headers and meta tags say, meta["robots_std_tdm"]
    "TdmRep": "scrapy_robots_std.tdmrep",
    "TdmStatement": "scrapy_robots_std.tdmrep",
}

#: Public names that differ from the name in their module.
_RENAMED = {"USAGE_PURPOSES": "PURPOSES", "USAGE_REVISIONS": "REVISIONS"}


def __getattr__(name: str) -> object:
    module = _LAZY_NAMES.get(name)
    if module is not None:
        import importlib

        value = getattr(importlib.import_module(module), _RENAMED.get(name, name))
        globals()[name] = value  # found directly next time
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    """The module's names, the lazily imported public ones included, for ``dir()``
    and ``help()``: every name of ``__all__``, also one whose optional dependency
    (``RobotsAwareRedisQueue``: scrapy-redis) is not installed."""
    return sorted(set(globals()) | set(__all__))
