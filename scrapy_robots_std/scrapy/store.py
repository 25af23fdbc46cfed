"""The cache backend as the crawl sees it: memory in front, a store reached off-thread.

Every request is checked against :attr:`Store.memory` only (a
:class:`~scrapy_robots_std.cache.MemoryCache`), the crawl's one in-memory layer,
bounded by ``ROBOTS_STD_CACHE_MAX_ORIGINS`` and ``ROBOTS_STD_CACHE_MAX_BYTES``. A
persistent or shared backend (``SqliteCache``, ``RedisCache``, or a user's class) is
read on a local miss and written once per fetch, always through
:class:`~scrapy_robots_std.cache.offthread.OffThread`, so a slow file or Redis never
blocks the reactor; ``SqliteCache`` and ``RedisCache`` keep no entries in memory of
their own. When the backend is a ``MemoryCache`` it is the memory itself and there is
no store behind it.

Fleet claims are leases: :data:`CLAIM_LEASE` seconds, renewed every third of that
while the fetch goes on, so the claim of a process that died lapses soon and one
waiting process takes it over.
"""

from __future__ import annotations

import contextlib
from typing import TYPE_CHECKING, Final

from scrapy.utils.misc import build_from_crawler, load_object
from twisted.internet.task import LoopingCall

from scrapy_robots_std import stats as _stats
from scrapy_robots_std.cache.base import SharedFetches
from scrapy_robots_std.cache.memory import MemoryCache
from scrapy_robots_std.cache.offthread import OffThread
from scrapy_robots_std.cache.persistent import PersistentCache

if TYPE_CHECKING:
    from scrapy.crawler import Crawler

    from scrapy_robots_std.cache.base import CacheEntry, RobotsCache
    from scrapy_robots_std.config import Config

__all__ = ["CLAIM_LEASE", "Store"]

#: Seconds a fleet claim lasts unless renewed.
CLAIM_LEASE: Final = 10.0


class Store:
    """``memory`` for every lookup; ``get``/``put``/``claim`` reach the backend."""

    def __init__(self, crawler: Crawler, config: Config) -> None:
        backend: RobotsCache = build_from_crawler(
            load_object(config.cache_backend), crawler
        )
        self._stats = crawler.stats
        self._backend: RobotsCache | None
        if isinstance(backend, MemoryCache):
            self.memory = backend
            self._backend = None
        else:
            self.memory = MemoryCache(config.cache_max_origins, config.cache_max_bytes)
            self._backend = backend
        self._shared = isinstance(backend, SharedFetches)
        describe = getattr(backend, "describe", None)
        self._thread = OffThread(
            describe() if callable(describe) else type(backend).__name__,
            deadline=max(2.0, 2 * config.redis_timeout),
            stats=crawler.stats,
            workers=getattr(backend, "store_workers", 1),
        )
        self._claims: set[str] = set()
        self._renewal = LoopingCall(self._renew_claims)

    @property
    def shared(self) -> bool:
        """Processes share this store and take turns fetching (claims)."""
        return self._shared

    @property
    def name(self) -> str:
        # Not ``self._backend or ...``: a backend's truth is its __len__, which for
        # SqliteCache opens its connection, on this thread rather than its own.
        backend = self.memory if self._backend is None else self._backend
        return type(backend).__name__

    def put_in_memory(self, entry: CacheEntry) -> None:
        evicted = self.memory.put(entry)
        if evicted:
            self._stats.inc_value(_stats.CACHE_EVICTION, evicted)
        self._stats.max_value(_stats.CACHE_BYTES_PEAK, self.memory.peak_bytes)

    def compiled(self, entry: CacheEntry, url: str, token: str) -> None:
        """Compile ``entry``'s rules for ``token`` now (and read its usage lines),
        and count what that keeps against the memory's byte bound (an entry is
        stored before any check)."""
        robots = entry.robots
        if robots is None:
            return
        # A URL the parser cannot read compiles nothing: measured as it is.
        with contextlib.suppress(ValueError):
            if robots.has_usage_rules:
                # Checks access too; reads the usage lines, so what usage queries
                # keep is measured rather than bounded from above.
                robots.usage(url, token)
            else:
                robots.allowed(url, token)
        evicted = self.memory.resize(entry.origin)
        if evicted:
            self._stats.inc_value(_stats.CACHE_EVICTION, evicted)
        self._stats.max_value(_stats.CACHE_BYTES_PEAK, self.memory.peak_bytes)

    async def open(self) -> None:
        if self._backend is not None:
            self._thread.start()
            await self._thread.call(None, self._backend.open)

    async def close(self) -> None:
        if self._renewal.running:
            self._renewal.stop()
        if self._backend is not None:
            await self._thread.call(None, self._backend.close)
            self._thread.stop()
        self.memory.close()

    async def get(
        self, origin: str, known: CacheEntry | None = None
    ) -> CacheEntry | None:
        """The backend's entry (fresh or not); ``None`` if none. ``known``: this
        process's own expired copy, which a persistent backend compares with its
        record before it reads (and parses) the body. Memory is written by the book
        alone, when the fetch cycle decides."""
        backend = self._backend
        if backend is None:
            return None
        if known is not None and isinstance(backend, PersistentCache):
            return await self._thread.call(None, backend.newer, origin, known)
        return await self._thread.call(None, backend.get, origin)

    async def put(self, entry: CacheEntry, body: bytes | None) -> None:
        """Write ``entry`` to the backend (memory already has it)."""
        if self._backend is not None:
            evicted = await self._thread.call(0, self._backend.put, entry, body)
            if evicted:
                self._stats.inc_value(_stats.CACHE_EVICTION, evicted)

    async def claim(self, origin: str) -> bool:
        """``True``: this process fetches ``origin`` (and renews the claim)."""
        backend = self._backend
        if not isinstance(backend, SharedFetches):
            return True
        # No answer in time is no claim: poll again rather than fetch beside the
        # process that may hold it.
        won = await self._thread.call(False, backend.claim, origin, CLAIM_LEASE)
        if won:
            self._claims.add(origin)
            if not self._renewal.running:
                self._renewal.start(CLAIM_LEASE / 3, now=False)
        return won

    async def release(self, origin: str) -> None:
        self._claims.discard(origin)
        if not self._claims and self._renewal.running:
            self._renewal.stop()
        backend = self._backend
        if isinstance(backend, SharedFetches):
            await self._thread.call(None, backend.release, origin)

    def _renew_claims(self) -> None:
        backend = self._backend
        if not isinstance(backend, SharedFetches):
            return
        for origin in list(self._claims):
            # Queued on the store's thread; a lost claim only means another process
            # may fetch this origin too.
            self._thread.submit(backend.renew, origin, CLAIM_LEASE)
