"""SHIM (issue 24): the names the new pattern module will define, taken from
today's matcher until the access rewrite replaces this module."""

from scrapy_robots_std.robotstxt.matcher import (
    index_html_directory,
    normalize_rfc9309,
    path_rfc9309,
    split_url,
    wildcard_work,
)
from scrapy_robots_std.robotstxt.wildcards import TRY_WORK, work_budget

__all__ = [
    "TRY_WORK",
    "index_html_directory",
    "normalize_rfc9309",
    "path_rfc9309",
    "split_url",
    "wildcard_work",
    "work_budget",
]
