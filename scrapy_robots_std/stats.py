"""The stat keys this package adds, and the reasons a request is dropped.

Scrapy's own ``robotstxt/*`` keys keep their built-in meaning; every other key is
``robots_std/<part>/<part>``, built by :func:`stat`, so the README's stats table has
one place to match.
"""

from __future__ import annotations

from typing import Final

#: Prefix of every stat key this package adds (Scrapy's ``robotstxt/*`` keys are
#: kept with their built-in meaning).
PREFIX: Final = "robots_std/"

# Why a request was dropped (the ``robots_std/dropped/<reason>`` keys).
DROP_RULE: Final = "rule"  # a Disallow rule of the robots.txt decided
DROP_UNREACHABLE: Final = "unreachable"  # robots.txt could not be fetched
DROP_STATUS: Final = "http-status"  # 1994 mode: robots.txt answered 401 or 403
DROP_SHUTDOWN: Final = "shutdown"  # still waiting for robots.txt when the spider closed


def stat(*parts: str) -> str:
    return PREFIX + "/".join(parts)
