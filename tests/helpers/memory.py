"""What a parsed robots.txt keeps in memory, as ``tracemalloc`` sees it."""

from __future__ import annotations

import gc
import tracemalloc

from scrapy_robots_std import RobotsTxt
from tests.helpers.bodies import url

__all__ = ["kept_after_a_check"]


def kept_after_a_check(body: bytes, token: str) -> tuple[int, RobotsTxt]:
    """The bytes a file parsed from ``body`` keeps after one check for ``token``
    (its compiled rules included), and the parsed file."""
    gc.collect()
    tracemalloc.start()
    try:
        copy = bytes(bytearray(body))
        base = tracemalloc.get_traced_memory()[0] - len(copy)
        parsed = RobotsTxt.parse(copy)
        del copy
        parsed.allowed(url("/x"), token)
        gc.collect()
        return tracemalloc.get_traced_memory()[0] - base, parsed
    finally:
        tracemalloc.stop()
