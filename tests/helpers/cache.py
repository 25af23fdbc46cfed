"""Cache entries and a stats collector for the cache backend tests and workers."""

from __future__ import annotations

import time
from collections import Counter
from typing import Any

from scrapy_robots_std.cache import CacheEntry
from scrapy_robots_std.robotstxt.robots import RobotsTxt

__all__ = ["Stats", "allow_all_entry", "parse_entry", "store_settings"]


def parse_entry(
    origin: str,
    body: bytes,
    *,
    standard: str = "rfc9309",
    ttl: float = 3600.0,
    fetched_at: float | None = None,
) -> CacheEntry:
    now = time.time() if fetched_at is None else fetched_at
    return CacheEntry(
        origin=origin,
        robots_url=origin.rsplit(":", 1)[0] + "/robots.txt",
        verdict="parse",
        reason="2xx",
        detail="HTTP 200",
        robots=RobotsTxt.parse(body, standard),
        status=200,
        fetched_at=now,
        expires_at=now + ttl,
    )


def allow_all_entry(origin: str, *, ttl: float = 3600.0) -> CacheEntry:
    now = time.time()
    return CacheEntry(
        origin=origin,
        robots_url=origin.rsplit(":", 1)[0] + "/robots.txt",
        verdict="allow-all",
        reason="4xx",
        detail="HTTP 404 means no restrictions",
        robots=None,
        status=404,
        fetched_at=now,
        expires_at=now + ttl,
    )


class Stats:
    """The part of Scrapy's StatsCollector the cache backends use."""

    def __init__(self) -> None:
        self.values: Counter[str] = Counter()

    def inc_value(self, key: str, count: int = 1, start: int = 0, **_: Any) -> None:
        self.values[key] += count

    def get_value(self, key: str, default: Any = None) -> Any:
        return self.values.get(key, default)


def store_settings(
    backend: str, directory: str, redis_url: str | None
) -> dict[str, Any]:
    """The settings of a crawl whose cache is ``backend`` (``sqlite``: a file in
    ``directory``; ``redis``: the server at ``redis_url``)."""
    if backend == "sqlite":
        return {
            "ROBOTS_STD_CACHE_BACKEND": "scrapy_robots_std.cache.SqliteCache",
            "ROBOTS_STD_CACHE_PATH": f"{directory}/robots.sqlite3",
        }
    return {
        "ROBOTS_STD_CACHE_BACKEND": "scrapy_robots_std.cache.RedisCache",
        "REDIS_URL": redis_url,
    }
