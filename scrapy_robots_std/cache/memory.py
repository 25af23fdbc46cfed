"""The default backend: verdicts in this process's memory, least recently used out first."""

from __future__ import annotations

from collections import OrderedDict
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from scrapy.crawler import Crawler
    from typing_extensions import Self

    from scrapy_robots_std.cache.base import CacheEntry

__all__ = ["MemoryCache"]


class MemoryCache:
    """The default backend: a dict in this process, least recently used out first.

    ``max_origins`` bounds the number of entries (``ROBOTS_STD_CACHE_MAX_ORIGINS``);
    each entry's size is bounded by the parser's 500 KiB body limit.
    """

    def __init__(self, max_origins: int = 10_000) -> None:
        if max_origins < 1:
            raise ValueError("max_origins must be at least 1")
        self.max_origins = max_origins
        self._entries: OrderedDict[str, CacheEntry] = OrderedDict()

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        from scrapy_robots_std.config import Config

        return cls(Config.from_settings(crawler.settings).cache_max_origins)

    def open(self) -> None:
        pass

    def close(self) -> None:
        self._entries.clear()

    def get(self, origin: str) -> CacheEntry | None:
        entry = self._entries.get(origin)
        if entry is not None:
            self._entries.move_to_end(origin)
        return entry

    def put(self, entry: CacheEntry, body: bytes | None = None) -> int:
        # The parsed entry is all this process needs; the body is for stores.
        self._entries[entry.origin] = entry
        self._entries.move_to_end(entry.origin)
        evicted = 0
        while len(self._entries) > self.max_origins:
            self._entries.popitem(last=False)
            evicted += 1
        return evicted

    def __len__(self) -> int:
        return len(self._entries)
