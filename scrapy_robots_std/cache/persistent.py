"""The shared part of the persistent backends (SQLite, Redis), and what happens when
their store fails.

A persistent backend keeps nothing in memory: every ``get`` reads the store and parses
the stored body again (:mod:`scrapy_robots_std.cache.record`), every ``put`` writes
it. In a crawl the middleware keeps the one in-memory layer in front of it
(:class:`~scrapy_robots_std.cache.MemoryCache`, bounded by
``ROBOTS_STD_CACHE_MAX_ORIGINS`` and ``ROBOTS_STD_CACHE_MAX_BYTES``): a fresh verdict is
served from there, and the store is read only on a local miss or a stale local entry
(:meth:`PersistentCache.newer`), and written once per fetch.

A store that fails (Redis down, a locked or damaged file) is never a reason to allow
anything: the crawl goes on with its in-memory layer alone, which at worst means
this process fetches a robots.txt another one already has. One WARNING says so, a
stat counts every failed operation, and the store is tried again after
``retry_interval`` seconds.
"""

from __future__ import annotations

import dataclasses
import logging
import threading
import time
from typing import TYPE_CHECKING, Any, Final, TypeVar

from twisted.python import threadable

from scrapy_robots_std import stats as _report  # the stat keys
from scrapy_robots_std.cache.record import (
    build_entry,
    dump_meta,
    load_meta,
    pack_body,
)
from scrapy_robots_std.policy import Verdict

if TYPE_CHECKING:
    from collections.abc import Callable

    from scrapy.statscollectors import StatsCollector

    from scrapy_robots_std.cache.base import CacheEntry
    from scrapy_robots_std.cache.record import Meta

__all__ = ["RETRY_INTERVAL", "PersistentCache"]

logger = logging.getLogger("scrapy_robots_std.cache")

#: Seconds between attempts to use a store that failed.
RETRY_INTERVAL: Final = 30.0

_T = TypeVar("_T")
_Read = tuple["bytes | None", "bytes | None"]
_NOTHING: Final[_Read] = (None, None)


class PersistentCache:
    """The shared part of the persistent backends; subclasses implement ``_store_*``
    and ``__len__``.

    ``standard`` is the crawl's: an entry stored under the other standard is a miss
    (its body would parse differently, and 1994's status policy differs).
    """

    #: the exceptions that mean "the store failed" (set by subclasses)
    _errors: tuple[type[Exception], ...] = ()
    #: how many threads may call this store at once (a SQLite connection belongs to
    #: the thread that opened it; a Redis client has a connection pool)
    store_workers: int = 1

    def __init__(
        self,
        *,
        standard: str,
        stats: StatsCollector | None = None,
        retry_interval: float = RETRY_INTERVAL,
    ) -> None:
        self.standard = standard
        self.retry_interval = retry_interval
        self._stats = stats
        #: ``time.monotonic()`` before which the failed store is left alone, and
        #: when the outage began (``None``: the store works)
        self._down_until: float | None = None
        self._down_since: float | None = None
        # Several worker threads may call a store at once (store_workers).
        self._state_lock = threading.Lock()
        self._closed = False

    # -- what a store implements -----------------------------------------------------

    def describe(self) -> str:
        """The store, for log lines: ``"Redis at redis://host:6379/0"``."""
        raise NotImplementedError

    def __len__(self) -> int:
        raise NotImplementedError

    def _store_open(self) -> None:
        raise NotImplementedError

    def _store_close(self) -> None:
        raise NotImplementedError

    def _store_read(
        self, origin: str, *, body: bool
    ) -> tuple[bytes | None, bytes | None]:
        """``(metadata, compressed body)`` as one consistent read; ``None`` if absent.
        With ``body=False`` the body is not read (``None``)."""
        raise NotImplementedError

    def _store_write(self, entry: CacheEntry, meta: bytes, blob: bytes | None) -> int:
        """Store (replace) one origin's record; return how many records it evicted."""
        raise NotImplementedError

    def _store_redate(self, entry: CacheEntry, meta: bytes) -> bool:
        """Replace the metadata of the stored record fetched at ``entry.fetched_at``
        (a stale copy standing in again, a 304 renewal), keeping its body; ``False``
        when there is no such record (expired, evicted, replaced): no change."""
        raise NotImplementedError

    # -- the RobotsCache interface ---------------------------------------------------

    def open(self) -> None:
        self._closed = False
        self._call(self._store_open, default=None)

    def close(self) -> None:
        """Close the store (its data stays)."""
        self._closed = True
        try:
            self._store_close()
        except self._errors as exc:
            logger.debug("Closing %s failed: %r", self.describe(), exc)

    def get(self, origin: str) -> CacheEntry | None:
        """The stored entry (fresh or not), its rules parsed again from the stored
        body; ``None`` when there is none or the store is down."""
        return self.newer(origin, None)

    def put(self, entry: CacheEntry, body: bytes | None = None) -> int:
        meta = dump_meta(entry, self.standard)
        if entry.verdict == Verdict.PARSE and body is None:
            # No body to store: a stale copy whose validity was extended.
            if self._call(self._store_redate, entry, meta, default=True) is False:
                # Without the body there is nothing to write: this process keeps
                # the renewal in memory, and other processes will fetch in full.
                self._inc(_report.CACHE_REDATE_MISSED)
            return 0
        blob = None if body is None else pack_body(body)
        return self._call(self._store_write, entry, meta, blob, default=0)

    # -- loading ---------------------------------------------------------------------

    def newer(self, origin: str, known: CacheEntry | None) -> CacheEntry | None:
        """The stored entry for ``origin`` if it is newer than ``known`` (the
        caller's own copy, expired), else ``None``; with ``known=None``, as
        :meth:`get`.

        With ``known`` the record's metadata is read first and its body only when
        it holds another fetch; the same fetch re-dated elsewhere (a stale copy
        standing in, a 304 revalidation) comes back as ``known`` with the new dates,
        not parsed again.
        """
        # Nothing known: read the body at once (one round trip).
        with_body = known is None
        raw, blob = self._call(
            self._store_read, origin, body=with_body, default=_NOTHING
        )
        meta = self._usable_meta(raw, origin)
        if meta is None:
            return None
        if known is not None and meta.fetched_at <= known.fetched_at:
            if (
                meta.fetched_at < known.fetched_at
                or meta.expires_at <= known.expires_at
            ):
                return None
            entry: CacheEntry | None = dataclasses.replace(
                known,
                detail=meta.detail,
                expires_at=meta.expires_at,
                etag=meta.etag,
                last_modified=meta.last_modified,
                checked_at=meta.checked_at,
            )
        else:
            if meta.verdict == Verdict.PARSE and not with_body:
                # Read again with the body, in one read, so the two match.
                raw, blob = self._call(
                    self._store_read, origin, body=True, default=_NOTHING
                )
                meta = self._usable_meta(raw, origin)
                if meta is None:
                    return None
            entry = build_entry(meta, blob)
        if entry is not None:
            self._inc(_report.CACHE_STORE_HIT)
        return entry

    def _usable_meta(self, raw: bytes | None, origin: str) -> Meta | None:
        if raw is None:
            return None
        meta = load_meta(raw)
        if meta is None or meta.origin != origin:
            # Damaged, hostile or foreign: a miss, fetched again.
            self._inc(_report.CACHE_STORE_INVALID)
            return None
        if meta.standard != self.standard:
            return None
        return meta

    # -- failures --------------------------------------------------------------------

    def _available(self) -> bool:
        if self._closed:
            return False
        return self._down_until is None or time.monotonic() >= self._down_until

    def _call(
        self, operation: Callable[..., _T], *args: Any, default: _T, **kwargs: Any
    ) -> _T:
        """``operation(*args, **kwargs)`` on the store, or ``default`` if it is down."""
        if not self._available():
            return default
        started = time.monotonic()
        try:
            result = operation(*args, **kwargs)
        except self._errors as exc:
            self._failed(exc)
            return default
        # Calls run side by side (store_workers): only one that started after the
        # outage began proves the store is back.
        with self._state_lock:
            back = self._down_since is not None and started > self._down_since
            if back:
                self._down_until = self._down_since = None
        if back:
            logger.info("%s is available again", self.describe())
        return result

    def _failed(self, exc: Exception) -> None:
        self._inc(_report.CACHE_STORE_ERROR)
        with self._state_lock:
            now = time.monotonic()
            first = self._down_until is None
            if first:
                self._down_since = now
            self._down_until = now + self.retry_interval
        self._reset_after_failure()
        message = (
            "%(store)s unavailable (%(error)s); using the in-process cache, "
            "next try in %(retry)d s"
        )
        args = {
            "store": self.describe(),
            "error": _error_text(exc),
            "retry": self.retry_interval,
        }
        # One warning per outage, not one per failed try.
        logger.log(logging.WARNING if first else logging.DEBUG, message, args)

    def _reset_after_failure(self) -> None:
        """Drop whatever the failed store left half-done (a subclass hook)."""

    def _inc(self, key: str) -> None:
        if self._stats is None:
            return
        if threadable.isInIOThread():  # type: ignore[no-untyped-call]
            self._stats.inc_value(key)
        else:
            # Called on a store thread: the stats belong to the reactor's.
            from twisted.internet import reactor

            reactor.callFromThread(self._stats.inc_value, key)


def _error_text(exc: Exception) -> str:
    text = str(exc) or type(exc).__name__
    return f"{type(exc).__name__}: {text[:200]}"
