"""One origin's robots.txt fetch cycle: the store, the fleet's claim, the attempts
and their retries, and the verdict. The same cycle fetches an origin's
``/.well-known/tdmrep.json`` (an :class:`Origin` of that ``kind``), with one attempt
and :class:`~scrapy_robots_std.scrapy.tdmfile.TdmSettler` settling it.

:meth:`Fetcher.fetch` turns an origin into a :class:`~scrapy_robots_std.cache.CacheEntry`.
It never raises for anything a site or a store does: every failure is an outcome
that :func:`scrapy_robots_std.policy.fetch_verdict` turns into a verdict. One attempt
(a download and its redirects) is :mod:`scrapy_robots_std.scrapy.download`'s; the
entry the last attempt leaves, :mod:`scrapy_robots_std.scrapy.settle`'s.
"""

from __future__ import annotations

import logging
import time
from typing import TYPE_CHECKING, Final

from scrapy.utils.asyncio import call_later
from scrapy.utils.defer import maybe_deferred_to_future
from twisted.internet.defer import Deferred

from scrapy_robots_std import policy
from scrapy_robots_std import stats as _stats
from scrapy_robots_std.cache.base import ROBOTS_TXT, CacheEntry
from scrapy_robots_std.safetext import safe
from scrapy_robots_std.scrapy.download import RobotsDownload
from scrapy_robots_std.scrapy.settle import Fetched, Settler
from scrapy_robots_std.scrapy.tdmfile import TdmSettler

if TYPE_CHECKING:
    from collections.abc import Callable

    from scrapy.crawler import Crawler

    from scrapy_robots_std.config import Config
    from scrapy_robots_std.scrapy.download import Attempt
    from scrapy_robots_std.scrapy.origin import Origin
    from scrapy_robots_std.scrapy.report import Report
    from scrapy_robots_std.scrapy.store import Store

__all__ = ["Fetcher"]

logger = logging.getLogger("scrapy_robots_std.scrapy.middleware")

#: Polling for another process's verdict (shared caches): first and longest pause.
_POLL_MIN: Final = 0.05
_POLL_MAX: Final = 0.5
#: How often a sleeping cycle checks whether the crawl is stopping (seconds).
_STOP_CHECK: Final = 0.25


class Fetcher:
    """Fetches robots.txt through the engine, one cycle per call of :meth:`fetch`."""

    def __init__(
        self, crawler: Crawler, config: Config, store: Store, report: Report
    ) -> None:
        self.crawler = crawler
        self.config = config
        self.store = store
        self._stats = crawler.stats
        self.download = RobotsDownload(crawler, config, self.stopping)
        self.settler = Settler(crawler, config, report)
        #: settles the cycles of an origin's tdmrep.json (``Origin.kind``)
        self.tdm_settler = TdmSettler(crawler, config, report)
        #: set when the spider closes: cycles still running end at once
        self.closing = False
        # "Was running, is no longer": a crawl's crawler is already crawling when
        # its middlewares are built; the engine is seen running by later calls.
        self._crawled = crawler.crawling
        self._engine_ran = False

    def stopping(self) -> bool:
        """The crawl is shutting down: start nothing new, end sleeps early.

        Only a stop counts: the spider closing (its ``spider_closed``, or the
        engine's slot closing: ``CLOSESPIDER_*``, the idle finish, and every stop,
        which closes the spider), or a crawler or engine that ran and no longer
        does. An engine started without a crawl (``scrapy shell``: its crawler
        never crawls) or not started yet is not stopping.
        """
        if self.closing:
            return True
        crawling = self.crawler.crawling
        if crawling:
            self._crawled = True
        elif self._crawled:
            return True  # Crawler.stop_async (SIGINT) starts here
        try:
            engine = self.crawler.engine
        except RuntimeError:  # Scrapy 2.19: no engine yet; nothing is stopping
            return False
        # close_spider_async sets the slot's Deferred before it waits for the
        # downloads in progress, and Scrapy sends no signal until they end.
        closing = getattr(getattr(engine, "_slot", None), "closing", None)
        if isinstance(closing, Deferred):
            return True
        if engine.running:
            self._engine_ran = True
            return False
        return self._engine_ran

    async def fetch(
        self,
        origin: Origin,
        stale: CacheEntry | None,
        decided: Callable[[Fetched], None],
    ) -> bool:
        """Work out the origin's verdict and pass it to ``decided`` as soon as it is
        known (before it is written to the store); ``False`` if the crawl stopped
        first.

        ``stale`` is the last entry this process had (expired), which may stand in
        while the origin is unreachable (RFC 9309 2.4).
        """
        started = time.monotonic()
        stored = await self.store.get(origin.key, stale)
        if stored is not None and stored.fresh():
            decided(Fetched(stored, source=policy.FetchSource.STORE))
            return True
        known = stored or stale
        claimed = await self._claim_or_wait(origin, started, known)
        if isinstance(claimed, CacheEntry):
            decided(Fetched(claimed, source=policy.FetchSource.STORE))
            return True
        try:
            fetched = await self._attempts(origin, started, known)
            if fetched is None:
                return False
            decided(fetched)
            # Stored before the claim is released: a process that claims next
            # finds it, and does not fetch again.
            await self.store.put(fetched.entry, fetched.body)
            return True
        finally:
            if claimed:
                await self.store.release(origin.key)

    async def _claim_or_wait(
        self, origin: Origin, started: float, known: CacheEntry | None
    ) -> bool | CacheEntry:
        """With a store shared between processes, fetch only under the origin's claim.

        ``True``: this process holds the claim. ``False``: fetch without one (no
        shared store, or waiting has used the budget but one attempt's time). An
        entry: another process stored it. A claim lapses soon after its holder dies
        (it is renewed while held), and then exactly one of the waiting processes
        takes it over. ``known``: the newest copy seen (expired), so each poll reads
        the record's metadata and parses only a newer body.
        """
        if not self.store.shared:
            return False
        cfg = self.config
        give_up = started + cfg.max_wait - min(cfg.fetch_timeout, cfg.max_wait / 2)
        pause = _POLL_MIN
        while not self.stopping():
            if await self.store.claim(origin.key):
                # The holder may have stored its verdict just before we claimed.
                entry = await self.store.get(origin.key, known)
                if entry is not None and entry.fresh():
                    await self.store.release(origin.key)
                    self._inc(_stats.CACHE_SHARED)
                    return entry
                return True
            entry = await self.store.get(origin.key, known)
            if entry is not None and entry.fresh():
                self._inc(_stats.CACHE_SHARED)
                return entry
            known = entry or known
            now = time.monotonic()
            if now >= give_up:
                return False
            await self.sleep(min(pause, give_up - now))
            pause = min(pause * 2, _POLL_MAX)
        return False

    async def _attempts(
        self, origin: Origin, started: float, stale: CacheEntry | None
    ) -> Fetched | None:
        """Attempts and retries with backoff until one settles the verdict, within
        the wait budget; ``None`` if the crawl stopped first."""
        cfg = self.config
        attempts = 0
        while True:
            attempts += 1
            if self.stopping():
                return None
            remaining = cfg.max_wait - (time.monotonic() - started)
            attempt = await self.download.attempt(
                origin, min(cfg.fetch_timeout, remaining), stale
            )
            if attempt is None:  # the crawl stopped; the download was cancelled
                return None
            verdict = policy.fetch_verdict(attempt.outcome, cfg.standard)
            delay = self._retry_delay(attempt, verdict, attempts, started, origin.kind)
            if delay is None:
                settler = (
                    self.settler if origin.kind == ROBOTS_TXT else self.tdm_settler
                )
                return settler.settle(origin, attempt, verdict, attempts, stale)
            if self.stopping():
                return None
            self._inc(_stats.FETCH_RETRIES)
            logger.info(
                "robots.txt %(url)s unreachable (%(detail)s); retry %(n)d of %(max)d "
                "in %(delay).1f s",
                {
                    "url": safe(origin.robots_url),
                    "detail": safe(attempt.detail),
                    "n": attempts,
                    "max": cfg.fetch_retries,
                    "delay": delay,
                },
                extra={"spider": self.crawler.spider},
            )
            await self.sleep(delay)

    def _retry_delay(
        self,
        attempt: Attempt,
        verdict: policy.FetchVerdict,
        attempts: int,
        started: float,
        kind: str = ROBOTS_TXT,
    ) -> float | None:
        """How long to wait before the next attempt; ``None``: ``attempt`` is the
        last (its verdict is final, or the retries or the wait budget are used)."""
        cfg = self.config
        if not (verdict.retry and attempts <= cfg.fetch_retries):
            return None
        if kind != ROBOTS_TXT:
            return None  # a tdmrep.json gets one attempt: a failure is unset
        delay = policy.retry_delay(
            attempts,
            base=cfg.retry_backoff,
            retry_after=attempt.retry_after,
            cap=cfg.retry_after_max,
        )
        elapsed = time.monotonic() - started
        # A retry needs time to wait and still some time to fetch.
        if elapsed + delay + min(1.0, cfg.fetch_timeout) > cfg.max_wait:
            return None
        return delay

    async def sleep(self, seconds: float) -> None:
        """Wait ``seconds``, or less if the crawl starts stopping meanwhile."""
        end = time.monotonic() + seconds
        while not self.stopping():
            left = end - time.monotonic()
            if left <= 0:
                return
            done: Deferred[None] = Deferred()
            call_later(min(left, _STOP_CHECK), done.callback, None)
            await maybe_deferred_to_future(done)

    def _inc(self, key: str) -> None:
        self._stats.inc_value(key)
