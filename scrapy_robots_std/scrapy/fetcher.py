"""One origin's robots.txt fetch cycle: the store, the fleet's claim, the attempts
and their retries, and the verdict.

:meth:`Fetcher.fetch` turns an origin into a :class:`~scrapy_robots_std.cache.CacheEntry`.
It never raises for anything a site or a store does: every failure is an outcome
that :func:`scrapy_robots_std.policy.fetch_verdict` turns into a verdict. One attempt
(a download and its redirects) is :mod:`scrapy_robots_std.scrapy.download`'s.
"""

from __future__ import annotations

import dataclasses
import hashlib
import logging
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

from scrapy.utils.asyncio import call_later
from scrapy.utils.defer import maybe_deferred_to_future
from twisted.internet.defer import Deferred

from scrapy_robots_std import policy
from scrapy_robots_std import stats as _stats
from scrapy_robots_std.cache.base import CacheEntry
from scrapy_robots_std.robotstxt.robots import RobotsTxt
from scrapy_robots_std.safetext import safe
from scrapy_robots_std.scrapy.download import Attempt, RobotsDownload, header_text

if TYPE_CHECKING:
    from collections.abc import Callable

    from scrapy.crawler import Crawler
    from scrapy.http import Response

    from scrapy_robots_std.config import Config
    from scrapy_robots_std.scrapy.origin import Origin
    from scrapy_robots_std.scrapy.report import Report
    from scrapy_robots_std.scrapy.store import Store

__all__ = ["Fetched", "Fetcher", "describe", "stale_detail", "unreachable_entry"]

logger = logging.getLogger("scrapy_robots_std.scrapy.middleware")

#: Polling for another process's verdict (shared caches): first and longest pause.
_POLL_MIN: Final = 0.05
_POLL_MAX: Final = 0.5
#: How often a sleeping cycle checks whether the crawl is stopping (seconds).
_STOP_CHECK: Final = 0.25
_STALE_MARK: Final = " (stale copy; now "
#: Origins remembered as warned about an ignored robots.txt request.
_IGNORED_REMEMBERED: Final = 10_000


@dataclass(frozen=True)
class Fetched:
    """A fetch cycle's result: the entry to keep, and what it was parsed from."""

    entry: CacheEntry
    #: the rules with their diagnostics, when this process parsed a body just now
    robots: RobotsTxt | None = None
    body: bytes | None = None
    #: where the entry came from (the audit record says it)
    source: policy.FetchSource = policy.FetchSource.DOWNLOAD


class Fetcher:
    """Fetches robots.txt through the engine, one cycle per call of :meth:`fetch`."""

    def __init__(
        self, crawler: Crawler, config: Config, store: Store, report: Report
    ) -> None:
        self.crawler = crawler
        self.config = config
        self.store = store
        self.report = report
        self._stats = crawler.stats
        self.download = RobotsDownload(crawler, config, self.stopping)
        #: set when the spider closes: cycles still running end at once
        self.closing = False
        #: origins whose robots.txt request another middleware ignored (warned once)
        self._ignored: set[str] = set()
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
            if not (verdict.retry and attempts <= cfg.fetch_retries):
                break
            delay = policy.retry_delay(
                attempts,
                base=cfg.retry_backoff,
                retry_after=attempt.retry_after,
                cap=cfg.retry_after_max,
            )
            elapsed = time.monotonic() - started
            # A retry needs time to wait and still some time to fetch.
            if elapsed + delay + min(1.0, cfg.fetch_timeout) > cfg.max_wait:
                break
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
        return await self._settle(origin, attempt, verdict, attempts, stale)

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

    async def _settle(
        self,
        origin: Origin,
        attempt: Attempt,
        verdict: policy.FetchVerdict,
        attempts: int,
        stale: CacheEntry | None,
    ) -> Fetched:
        cfg = self.config
        now = time.time()
        detail = attempt.detail
        if verdict.verdict == policy.Verdict.UNREACHABLE and attempts > 1:
            detail = f"{detail} after {attempts} attempts"
        robots: RobotsTxt | None = None
        body: bytes | None = None
        response = attempt.response
        if (
            verdict.verdict == policy.Verdict.PARSE
            and response is not None
            and not attempt.outcome.not_modified
        ):
            body = response.body
            robots = RobotsTxt.parse(body, cfg.standard)
        header_max_age = None
        if response is not None:
            header_max_age = policy.max_age(
                header_text(response.headers, b"Cache-Control")
            )
        ttl = policy.cache_ttl(
            verdict,
            header_max_age=header_max_age,
            ttl=cfg.cache_ttl,
            min_ttl=cfg.cache_min_ttl,
            unreachable_ttl=cfg.unreachable_ttl,
        )
        if attempt.outcome.not_modified and stale is not None:
            self.report.origin_recovered(origin.robots_url)
            return Fetched(
                self._renewed(stale, response, now, ttl),
                source=policy.FetchSource.REVALIDATED,
            )
        entry = CacheEntry(
            origin=origin.key,
            # After redirects: the file whose lines decide, so log lines point at it.
            robots_url=attempt.robots_url or origin.robots_url,
            verdict=verdict.verdict,
            reason=verdict.reason,
            detail=describe(verdict, detail),
            # The cache keeps no diagnostics; the robots_parsed signal gets them.
            robots=None if robots is None else robots.without_diagnostics(),
            status=attempt.outcome.status,
            fetched_at=now,
            expires_at=now + ttl,
            etag=_validator(response, b"ETag"),
            last_modified=_validator(response, b"Last-Modified"),
            body_sha256=None if body is None else hashlib.sha256(body).hexdigest(),
            body_bytes=None if body is None else len(body),
        )
        self._inc(_stats.verdict(verdict.verdict))
        if verdict.reason == policy.FetchReason.IGNORED:
            self._inc(_stats.VERDICT_IGNORED)
            self._warn_ignored(origin, detail)
        if verdict.verdict != policy.Verdict.UNREACHABLE:
            self.report.origin_recovered(origin.robots_url)
        elif stale is not None and stale.verdict != policy.Verdict.UNREACHABLE:
            # RFC 9309 2.4: a cached copy may stand in while the origin is down.
            self._inc(_stats.VERDICT_STALE)
            entry = dataclasses.replace(
                stale,
                detail=stale_detail(stale.detail, entry.detail),
                expires_at=entry.expires_at,
            )
            robots = body = None
            return Fetched(entry, source=policy.FetchSource.STALE)
        else:
            self.report.origin_unreachable(origin.robots_url, entry.detail)
            logger.warning(
                "robots.txt %(url)s is unreachable (%(detail)s): its requests "
                "are dropped for the next %(ttl)d s",
                {"url": safe(origin.robots_url), "detail": safe(detail), "ttl": ttl},
                extra={"spider": self.crawler.spider},
            )
        if robots is not None and robots.truncated:
            self._inc(_stats.BODY_TRUNCATED)
            self._notice(
                entry.robots_url,
                "is longer than 500 KiB: the lines after its first 512,000 bytes "
                "are ignored",
            )
        if attempt.outcome.redirect_failure is not None:
            self._notice(
                origin.robots_url, f"gave {detail}: no restrictions for this origin"
            )
        return Fetched(entry, robots, body)

    def _renewed(
        self, copy: CacheEntry, response: Response | None, now: float, ttl: float
    ) -> CacheEntry:
        """``copy``, which a 304 just confirmed: fresh again, its rules not parsed
        again, its body's identity (``fetched_at``) kept so stores only re-date it."""
        self._inc(_stats.CACHE_REVALIDATED)
        return dataclasses.replace(
            copy,
            detail=copy.detail.split(_STALE_MARK, 1)[0],
            expires_at=now + ttl,
            checked_at=now,
            # A 304 may carry new validators (RFC 9110 15.4.5); otherwise keep ours.
            etag=_validator(response, b"ETag") or copy.etag,
            last_modified=_validator(response, b"Last-Modified") or copy.last_modified,
        )

    def _warn_ignored(self, origin: Origin, detail: str) -> None:
        """The WARNING for a robots.txt request another downloader middleware
        ignored: once per origin and crawl, however often its verdict expires."""
        if origin.key in self._ignored:
            return
        if len(self._ignored) >= _IGNORED_REMEMBERED:
            self._ignored.clear()  # bounded; an origin may then be named again
        self._ignored.add(origin.key)
        logger.warning(
            "robots.txt %(url)s was not downloaded: a downloader middleware ignored "
            "the request (%(detail)s); no restrictions for this origin, as without a "
            "robots.txt",
            {"url": safe(origin.robots_url), "detail": safe(detail)},
            extra={"spider": self.crawler.spider},
        )

    def _notice(self, robots_url: str, consequence: str) -> None:
        """An INFO line for a decision that changes what is crawled (once per fetch,
        and so once per origin and verdict lifetime)."""
        logger.info(
            "robots.txt %(url)s %(consequence)s",
            {"url": safe(robots_url), "consequence": safe(consequence)},
            extra={"spider": self.crawler.spider},
        )

    def _inc(self, key: str) -> None:
        self._stats.inc_value(key)


def unreachable_entry(
    origin: Origin,
    detail: str,
    ttl: float,
    reason: policy.FetchReason = policy.FetchReason.NETWORK,
) -> CacheEntry:
    """An entry for a cycle that ended without an outcome (an internal error, or
    the crawl stopping: ``reason`` ``FetchReason.SHUTDOWN``)."""
    now = time.time()
    verdict = policy.FetchVerdict(policy.Verdict.UNREACHABLE, reason)
    return CacheEntry(
        origin=origin.key,
        robots_url=origin.robots_url,
        verdict=verdict.verdict,
        reason=verdict.reason,
        detail=describe(verdict, detail),
        robots=None,
        status=None,
        fetched_at=now,
        expires_at=now + ttl,
    )


def _validator(response: Response | None, name: bytes) -> str | None:
    if response is None:
        return None
    return policy.usable_validator(header_text(response.headers, name))


def stale_detail(copy_detail: str, failure: str) -> str:
    """A stale copy's detail: its own reason and only the latest failure, so it does
    not grow each time the copy stands in again."""
    first = copy_detail.split(_STALE_MARK, 1)[0]
    return f"{first}{_STALE_MARK}{failure})"


def describe(verdict: policy.FetchVerdict, detail: str) -> str:
    if verdict.reason == policy.FetchReason.IGNORED:
        return (
            f"not downloaded: a downloader middleware ignored the request ({detail}); "
            "no restrictions, as without a robots.txt"
        )
    if verdict.verdict == policy.Verdict.UNREACHABLE:
        return f"unreachable ({detail}); everything is disallowed for now"
    if verdict.verdict == policy.Verdict.DISALLOW_ALL:
        return f"{detail} means everything is disallowed in 1994 mode"
    if verdict.verdict == policy.Verdict.ALLOW_ALL:
        return f"{detail} means no restrictions"
    return detail
