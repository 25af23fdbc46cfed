"""The default backend: verdicts in this process's memory, bounded by count and bytes."""

from __future__ import annotations

from collections import OrderedDict
from itertools import islice
from typing import TYPE_CHECKING, Final

from scrapy_robots_std.cache.base import own_objects_bytes
from scrapy_robots_std.config import MIN_CACHE_MAX_BYTES

if TYPE_CHECKING:
    from typing import Self

    from scrapy.crawler import Crawler

    from scrapy_robots_std.cache.base import CacheEntry

__all__ = ["SIZE_STEP", "MemoryCache", "entry_bytes"]

#: Eviction looks at this many of the least recently used entries and drops the
#: largest of them: recency first, and among the old ones size.
_EVICTION_WINDOW: Final = 8
#: A CacheEntry with its times and body size and the cache's bookkeeping, before
#: its strings and the parsed rules (measured on CPython 3.11, rounded up).
_ENTRY_OVERHEAD: Final = 384
#: Sizes are counted in steps of this many bytes, rounded up: the cache keeps one
#: per entry, and a count of steps up to 256 (16 KiB, nearly every entry) is one of
#: CPython's shared small ints, not an int object per cached origin.
SIZE_STEP: Final = 64


def entry_bytes(entry: CacheEntry) -> int:
    """What ``entry`` keeps in memory, as the byte bound counts it: the parsed rules'
    own estimate (:meth:`RobotsTxt.memory_bytes`) and the entry's own strings,
    rounded up to a multiple of :data:`SIZE_STEP`."""
    size = _ENTRY_OVERHEAD + own_objects_bytes(entry)
    if entry.robots is not None:
        size += entry.robots.memory_bytes()
    if entry.tdm is not None:
        size += entry.tdm.memory_bytes()
    return -(-size // SIZE_STEP) * SIZE_STEP


class MemoryCache:
    """The default backend: a dict in this process, bounded two ways.

    ``max_origins`` bounds the number of entries (``ROBOTS_STD_CACHE_MAX_ORIGINS``),
    ``max_bytes`` their total size as ``entry_bytes`` counts it
    (``ROBOTS_STD_CACHE_MAX_BYTES``). Past either bound the least recently used
    entries go; past the byte bound, the largest of the few least recently used goes
    first, so one huge file does not push out many small ones. The entry just stored
    is never evicted by its own ``put``. An entry is measured when stored and, by
    :meth:`resize`, once compiled for the token that fetched it (the crawl does
    that); rules another token compiles later are not counted (each parsed file
    keeps at most 1 MiB, compiled state included, and its memo of tokens is bounded).
    """

    def __init__(self, max_origins: int = 10_000, max_bytes: int | None = None) -> None:
        if max_origins < 1:
            raise ValueError("max_origins must be at least 1")
        if max_bytes is not None and max_bytes < MIN_CACHE_MAX_BYTES:
            raise ValueError(f"max_bytes must be at least {MIN_CACHE_MAX_BYTES:,}")
        self.max_origins = max_origins
        self.max_bytes = max_bytes
        self._entries: OrderedDict[str, CacheEntry] = OrderedDict()
        self._sizes: dict[str, int] = {}  # in steps (SIZE_STEP)
        #: the total of the entries' sizes now, and the most it has been
        self.total_bytes = 0
        self.peak_bytes = 0

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        from scrapy_robots_std.config import Config

        config = Config.from_settings(crawler.settings)
        return cls(config.cache_max_origins, config.cache_max_bytes)

    def open(self) -> None:
        pass

    def close(self) -> None:
        self._entries.clear()
        self._sizes.clear()
        self.total_bytes = 0

    def get(self, origin: str) -> CacheEntry | None:
        entry = self._entries.get(origin)
        if entry is not None:
            self._entries.move_to_end(origin)
        return entry

    def put(self, entry: CacheEntry, body: bytes | None = None) -> int:
        """Store ``entry``; return how many entries it evicted. The body is for
        stores: the parsed entry is all this process needs."""
        origin = entry.origin
        steps = entry_bytes(entry) // SIZE_STEP
        self.total_bytes += (steps - self._sizes.get(origin, 0)) * SIZE_STEP
        self._sizes[origin] = steps
        self._entries[origin] = entry
        self._entries.move_to_end(origin)
        evicted = 0
        while len(self._entries) > self.max_origins:
            self._drop(next(iter(self._entries)))
            evicted += 1
        return evicted + self._evict_bytes(origin)

    def resize(self, origin: str) -> int:
        """Measure ``origin``'s entry again (its rules were compiled for a token
        since it was stored) and evict past the byte bound; return the evictions."""
        entry = self._entries.get(origin)
        if entry is None:
            return 0
        steps = entry_bytes(entry) // SIZE_STEP
        self.total_bytes += (steps - self._sizes[origin]) * SIZE_STEP
        self._sizes[origin] = steps
        return self._evict_bytes(origin)

    def _evict_bytes(self, keep: str) -> int:
        evicted = 0
        max_bytes = self.max_bytes
        while (
            max_bytes is not None
            and self.total_bytes > max_bytes
            and len(self._entries) > 1
        ):
            self._drop(self._largest_of_oldest(keep))
            evicted += 1
        self.peak_bytes = max(self.peak_bytes, self.total_bytes)
        return evicted

    def _largest_of_oldest(self, keep: str) -> str:
        oldest = [key for key in islice(self._entries, _EVICTION_WINDOW) if key != keep]
        return max(oldest, key=self._sizes.__getitem__)

    def _drop(self, origin: str) -> None:
        del self._entries[origin]
        self.total_bytes -= self._sizes.pop(origin) * SIZE_STEP

    def __len__(self) -> int:
        return len(self._entries)
