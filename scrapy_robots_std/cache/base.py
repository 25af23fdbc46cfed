"""The cache backend interface: what a backend stores and how it is asked.

The middleware talks to a :class:`RobotsCache`; which class it uses is chosen by the
``ROBOTS_STD_CACHE_BACKEND`` setting (default :class:`MemoryCache`). A backend stores
:class:`CacheEntry` objects by origin (``"https://example.com:443"``) and bounds its
own size; the middleware decides freshness from ``expires_at``, so a backend may hand
back an expired entry (the middleware uses it only as a stale copy when the origin
has become unreachable, as RFC 9309 2.4 allows).

Three backends ship: :class:`MemoryCache` (this process only), :class:`SqliteCache`
(a file, e.g. under ``JOBDIR``: survives a paused crawl) and :class:`RedisCache`
(shared by a fleet of crawlers, which also take turns fetching through
:class:`SharedFetches`). The last two keep nothing in memory themselves: in a crawl
the middleware keeps one :class:`MemoryCache` in front of any backend, so a fresh
verdict is served from memory and the store is read only on a local miss.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol, runtime_checkable

if TYPE_CHECKING:
    from scrapy_robots_std.robotstxt.robots import RobotsTxt

__all__ = ["CacheEntry", "RobotsCache", "SharedFetches"]


# slots: no per-entry __dict__ (about 100 bytes less per cached origin).
@dataclass(frozen=True, slots=True)
class CacheEntry:
    """One origin's robots.txt verdict.

    ``verdict`` is ``"parse"`` (``robots`` holds the rules), ``"allow-all"``,
    ``"disallow-all"`` (1994: 401/403) or ``"unreachable"``. ``reason`` is the
    bounded label the fetch policy gave (``"2xx"``, ``"4xx"``, ``"5xx"``, ...;
    ``"ignored"`` on an ``allow-all`` verdict when another downloader middleware
    raised ``IgnoreRequest`` on the robots.txt request) and ``detail`` a human
    sentence for log lines (``"HTTP 503 after 3 attempts"``).
    Times are ``time.time()`` seconds.

    ``etag`` and ``last_modified`` are the response's validators, sent back as
    ``If-None-Match`` / ``If-Modified-Since`` when the entry has expired; a ``304``
    renews the entry without parsing again. ``checked_at`` is when the server last
    confirmed the body (``None``: at ``fetched_at``, which stays the body's identity).
    ``body_sha256`` and ``body_bytes`` describe the body of a ``parse`` verdict.
    """

    origin: str
    robots_url: str
    verdict: str
    reason: str
    detail: str
    robots: RobotsTxt | None
    status: int | None
    fetched_at: float
    expires_at: float
    etag: str | None = None
    last_modified: str | None = None
    checked_at: float | None = None
    #: the body the rules were parsed from (as kept: at most ~500 KiB), for audits
    body_sha256: str | None = None
    body_bytes: int | None = None

    @property
    def confirmed_at(self) -> float:
        """When the server last stood by this body: fetched, or revalidated."""
        return self.fetched_at if self.checked_at is None else self.checked_at

    def fresh(self, now: float | None = None) -> bool:
        return (time.time() if now is None else now) < self.expires_at


@runtime_checkable
class RobotsCache(Protocol):
    """The interface a cache backend implements.

    ``get`` returns the entry for an origin (fresh or not) or ``None``; ``put``
    stores one and returns how many entries it evicted to stay within its bound.
    ``body`` is the robots.txt body the entry's rules were parsed from (``parse``
    verdicts fetched just now; ``None`` otherwise): a backend that persists entries
    stores it and parses it again when it loads the entry, so what it keeps does not
    depend on the parser's internals. ``open``/``close`` are called when the spider
    opens and closes. Backends are built with
    ``scrapy.utils.misc.build_from_crawler``, so a ``from_crawler`` classmethod may
    read settings.
    """

    def open(self) -> None: ...

    def close(self) -> None: ...

    def get(self, origin: str) -> CacheEntry | None: ...

    def put(self, entry: CacheEntry, body: bytes | None = None) -> int: ...

    def __len__(self) -> int: ...


@runtime_checkable
class SharedFetches(Protocol):
    """What a backend shared between processes adds so only one of them fetches.

    Optional: the middleware uses it when the backend has these methods. Before it
    fetches an origin's robots.txt it calls ``claim(origin, seconds)``: ``True``
    means this process fetches (the claim lapses by itself after ``seconds``, should
    the process die); ``False`` means another process is fetching, and the
    middleware polls ``get`` until that process's verdict arrives, trying to claim
    again each time. ``renew(origin, seconds)`` extends a claim held while the fetch
    goes on, so a short lease is enough and a dead holder's claim lapses soon.
    ``release(origin)`` ends this process's claim once the verdict is stored (or
    the fetch was given up). All three are called off the reactor thread.
    """

    def claim(self, origin: str, seconds: float) -> bool: ...

    def renew(self, origin: str, seconds: float) -> bool: ...

    def release(self, origin: str) -> None: ...
