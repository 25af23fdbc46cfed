"""TDMRep's ``/.well-known/tdmrep.json`` for the command line (``--purpose``).

When ROBOTS is an http(s) URL, its origin's ``/.well-known/tdmrep.json`` is fetched
with the same bounded fetch as robots.txt (:mod:`scrapy_robots_std.robots_source`:
redirects, 500 KiB, the timeout); a 404, another status or a failure is unset, as
in a crawl. Each URL then gets the statement of the file's first matching rule, and
what it means for the purpose (search is not affected).
"""

from __future__ import annotations

from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from scrapy_robots_std.policy import Verdict, fetch_verdict
from scrapy_robots_std.robots_source import _Fetch, _is_url
from scrapy_robots_std.tdmrep import WELL_KNOWN_PATH, TdmFile, parse_file

if TYPE_CHECKING:
    from scrapy_robots_std.tdmrep import TdmStatement

__all__ = ["file_url", "load_file", "meaning"]


def file_url(robots: str) -> str | None:
    """The tdmrep.json of ROBOTS's origin; ``None`` when ROBOTS is not a URL."""
    if not _is_url(robots):
        return None
    parts = urlsplit(robots)
    return f"{parts.scheme}://{parts.netloc}{WELL_KNOWN_PATH}"


def load_file(url: str, standard: str, timeout: float) -> tuple[TdmFile | None, str]:
    """The parsed file at ``url`` (``None``: unset), and what happened, in words."""
    fetched = _Fetch(url, timeout).run()
    verdict = fetch_verdict(fetched.outcome, standard)
    if verdict.verdict != Verdict.PARSE:
        why = fetched.detail or f"HTTP {fetched.status}"
        return None, f"{url}: {why}: unset"
    return parse_file(fetched.body), f"{url}: HTTP {fetched.status}"


def meaning(statement: TdmStatement | None, purpose: str) -> str:
    """What the statement says to ``purpose``: ``disallow``, ``allow`` or ``unknown``."""
    if statement is None or purpose == "search":
        return "unknown"
    return "disallow" if statement.reserved else "allow"
