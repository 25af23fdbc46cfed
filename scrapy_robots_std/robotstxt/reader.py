"""SHIM (issue 24): the names the new line reader will define, taken from today's
parser until the access rewrite replaces this module."""

from scrapy_robots_std.robotstxt.parser import (
    MAX_BODY_BYTES,
    MAX_READ_BYTES,
    RFC9309,
    STANDARDS,
    STD1994,
)

__all__ = ["MAX_BODY_BYTES", "MAX_READ_BYTES", "RFC9309", "STANDARDS", "STD1994"]
