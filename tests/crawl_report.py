"""What a crawler subprocess of the tests reports: its stats and what its spider saw.

The runner scripts (fleet_crawler.py, redis_worker.py, jobdir_crawler.py) end with
``write_report(crawler, out, ...)``; the tests read the JSON back.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from scrapy.crawler import Crawler


def write_report(crawler: Crawler, out: str, **fields: Any) -> None:
    """Write the crawl's scalar stats, plus ``fields``, to ``out`` as JSON."""
    assert crawler.stats is not None
    stats = {
        key: value
        for key, value in crawler.stats.get_stats().items()
        if isinstance(value, (int, float, str))
    }
    with open(out, "w", encoding="utf-8") as handle:
        json.dump({"stats": stats, **fields}, handle)
