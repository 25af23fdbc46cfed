"""Where robots.txt verdicts are kept: the backend interface and the backends.

``ROBOTS_STD_CACHE_BACKEND`` names one of :class:`MemoryCache` (the default),
:class:`SqliteCache` or :class:`RedisCache`, or a class of the user's that implements
:class:`RobotsCache`. See :mod:`scrapy_robots_std.cache.base` for the interface.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from scrapy_robots_std.cache.base import CacheEntry, RobotsCache, SharedFetches
from scrapy_robots_std.cache.memory import MemoryCache

if TYPE_CHECKING:
    from scrapy_robots_std.cache.redis import RedisCache
    from scrapy_robots_std.cache.sqlite import SqliteCache

__all__ = [
    "CacheEntry",
    "MemoryCache",
    "RedisCache",
    "RobotsCache",
    "SharedFetches",
    "SqliteCache",
]


#: The persistent backends, imported on first use: they build on the classes above
#: (so they cannot be imported before them), and RedisCache needs redis-py.
#: "scrapy_robots_std.cache.SqliteCache" is the name users give in settings.
_BACKENDS = {
    "RedisCache": "scrapy_robots_std.cache.redis",
    "SqliteCache": "scrapy_robots_std.cache.sqlite",
}


def __getattr__(name: str) -> object:
    module = _BACKENDS.get(name)
    if module is not None:
        import importlib

        return getattr(importlib.import_module(module), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
