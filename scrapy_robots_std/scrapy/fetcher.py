"""One origin's robots.txt fetch cycle: store, claim, attempts, redirects, retries.

:meth:`Fetcher.fetch` turns an origin into a :class:`~scrapy_robots_std.cache.CacheEntry`.
It never raises for anything a site or a store does: every failure is an outcome
that :func:`scrapy_robots_std.policy.fetch_verdict` turns into a verdict. Downloads
go through ``crawler.engine.download_async``, so proxies, headers and the other
downloader middlewares apply; redirects and retries are this module's own, so they
can be counted and bounded.
"""

from __future__ import annotations

import dataclasses
import logging
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final
from urllib.parse import urljoin

from scrapy import signals
from scrapy.exceptions import IgnoreRequest, StopDownload
from scrapy.http import Request
from scrapy.http.request import NO_CALLBACK
from scrapy.utils.asyncio import call_later
from scrapy.utils.defer import maybe_deferred_to_future
from twisted.internet.defer import CancelledError, Deferred
from w3lib.url import safe_url_string

from scrapy_robots_std import policy
from scrapy_robots_std import stats as _stats
from scrapy_robots_std.cache.base import CacheEntry
from scrapy_robots_std.robotstxt.parser import MAX_BODY_BYTES
from scrapy_robots_std.robotstxt.robots import RobotsTxt
from scrapy_robots_std.safetext import safe
from scrapy_robots_std.scrapy.origin import Origin, origin_of

if TYPE_CHECKING:
    from collections.abc import Callable

    from scrapy.crawler import Crawler
    from scrapy.http import Headers, Response
    from scrapy.spiders import Spider

    from scrapy_robots_std.config import Config
    from scrapy_robots_std.scrapy.report import Report
    from scrapy_robots_std.scrapy.store import Store

__all__ = ["FETCH_META", "Fetched", "Fetcher", "unreachable_entry"]

logger = logging.getLogger("scrapy_robots_std.scrapy.middleware")

#: Marks this package's own robots.txt requests (value: byte count so far).
FETCH_META: Final = "robots_std_fetch"
#: Polling for another process's verdict (shared caches): first and longest pause.
_POLL_MIN: Final = 0.05
_POLL_MAX: Final = 0.5
#: How often a sleeping cycle checks whether the crawl is stopping (seconds).
_STOP_CHECK: Final = 0.25
_STALE_MARK: Final = " (stale copy; now "


@dataclass(frozen=True)
class Fetched:
    """A fetch cycle's result: the entry to keep, and what it was parsed from."""

    entry: CacheEntry
    #: the rules with their diagnostics, when this process parsed a body just now
    robots: RobotsTxt | None = None
    body: bytes | None = None


@dataclass(frozen=True)
class _Attempt:
    """What one fetch attempt (with its redirect hops) produced."""

    outcome: policy.FetchOutcome
    detail: str
    response: Response | None = None
    robots_url: str = ""
    retry_after: float | None = None


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
        self._in_flight = 0
        #: set when the spider closes: cycles still running end at once
        self.closing = False

    def stopping(self) -> bool:
        """The crawl is shutting down: start nothing new, end sleeps early."""
        if self.closing or not self.crawler.crawling:
            return True
        engine = self.crawler.engine
        return engine is None or not engine.running

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
        stored = await self.store.get(origin.key)
        if stored is not None and stored.fresh():
            decided(Fetched(stored))
            return True
        claimed = await self._claim_or_wait(origin, started)
        if isinstance(claimed, CacheEntry):
            decided(Fetched(claimed))
            return True
        try:
            fetched = await self._attempts(origin, started, stored or stale)
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

    async def _claim_or_wait(self, origin: Origin, started: float) -> bool | CacheEntry:
        """With a store shared between processes, fetch only under the origin's claim.

        ``True``: this process holds the claim. ``False``: fetch without one (no
        shared store, or waiting has used the budget but one attempt's time). An
        entry: another process stored it. A claim lapses soon after its holder dies
        (it is renewed while held), and then exactly one of the waiting processes
        takes it over.
        """
        if not self.store.shared:
            return False
        cfg = self.config
        give_up = started + cfg.max_wait - min(cfg.fetch_timeout, cfg.max_wait / 2)
        pause = _POLL_MIN
        while not self.stopping():
            if await self.store.claim(origin.key):
                # The holder may have stored its verdict just before we claimed.
                entry = await self.store.get(origin.key)
                if entry is not None and entry.fresh():
                    await self.store.release(origin.key)
                    self._inc(_stats.CACHE_SHARED)
                    return entry
                return True
            entry = await self.store.get(origin.key)
            if entry is not None and entry.fresh():
                self._inc(_stats.CACHE_SHARED)
                return entry
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
            attempt = await self._attempt(origin, min(cfg.fetch_timeout, remaining))
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
        attempt: _Attempt,
        verdict: policy.FetchVerdict,
        attempts: int,
        stale: CacheEntry | None,
    ) -> Fetched:
        cfg = self.config
        now = time.time()
        detail = attempt.detail
        if verdict.verdict == policy.UNREACHABLE and attempts > 1:
            detail = f"{detail} after {attempts} attempts"
        robots: RobotsTxt | None = None
        body: bytes | None = None
        if verdict.verdict == policy.PARSE and attempt.response is not None:
            body = attempt.response.body
            robots = RobotsTxt.parse(body, cfg.standard)
        header_max_age = None
        if attempt.response is not None:
            header_max_age = policy.max_age(
                header_text(attempt.response.headers, b"Cache-Control")
            )
        ttl = policy.cache_ttl(
            verdict,
            header_max_age=header_max_age,
            ttl=cfg.cache_ttl,
            min_ttl=cfg.cache_min_ttl,
            unreachable_ttl=cfg.unreachable_ttl,
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
        )
        self._inc(_stats.verdict(verdict.verdict))
        if verdict.verdict != policy.UNREACHABLE:
            self.report.origin_recovered(origin.robots_url)
        elif stale is not None and stale.verdict != policy.UNREACHABLE:
            # RFC 9309 2.4: a cached copy may stand in while the origin is down.
            self._inc(_stats.verdict("stale"))
            entry = dataclasses.replace(
                stale,
                detail=stale_detail(stale.detail, entry.detail),
                expires_at=entry.expires_at,
            )
            robots = body = None
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
        return Fetched(entry, robots, body)

    async def _attempt(self, origin: Origin, timeout: float) -> _Attempt:
        """Fetch robots.txt once, following up to five redirects ourselves."""
        deadline = time.monotonic() + max(timeout, 0.001)
        url = origin.robots_url
        seen = {url}
        hops = 0
        while True:
            request = self._request(url, deadline - time.monotonic())
            self._inc(_stats.ROBOTS_REQUESTS)
            self._watch(+1)
            try:
                response = await self.crawler.engine.download_async(request)
            except CancelledError:
                raise
            except Exception as exc:  # noqa: BLE001 -- every failure is an outcome
                return self._failed(exc, hops, url)
            finally:
                self._watch(-1)
            status = response.status
            self._inc(_stats.ROBOTS_RESPONSES)
            self._inc(_stats.robots_status(status))
            if 300 <= status < 400 and b"Location" in response.headers:
                target = _redirect_target(response)
                problem = None
                if target is None or origin_of(target) is None:
                    problem = policy.REDIRECT_BAD_LOCATION
                elif target in seen:
                    problem = policy.REDIRECT_LOOP
                elif hops >= policy.MAX_REDIRECTS:
                    problem = policy.REDIRECT_TOO_MANY
                if problem is not None:
                    return _Attempt(
                        policy.FetchOutcome(redirect_failure=problem, redirects=hops),
                        f"{problem} after {hops} redirect(s), last to {target}",
                        robots_url=url,
                    )
                assert target is not None
                seen.add(target)
                hops += 1
                url = target
                continue
            return _Attempt(
                policy.FetchOutcome(status=status, redirects=hops),
                f"HTTP {status}" + (f" from {url}" if hops else ""),
                response=response,
                robots_url=url,
                retry_after=policy.parse_retry_after(
                    header_text(response.headers, b"Retry-After")
                ),
            )

    def _failed(self, exc: Exception, hops: int, url: str) -> _Attempt:
        message = str(exc) or type(exc).__name__
        if isinstance(exc, IgnoreRequest):
            name = "IgnoreRequest"
        else:
            name = type(exc).__name__
            self._inc(_stats.robots_exception(exc))
        return _Attempt(
            policy.FetchOutcome(error=name, redirects=hops),
            f"{name}: {message[:200]}",
            robots_url=url,
        )

    def _request(self, url: str, timeout: float) -> Request:
        return Request(
            url,
            priority=1000,
            callback=NO_CALLBACK,
            dont_filter=True,
            meta={
                FETCH_META: 0,
                "dont_obey_robotstxt": True,
                "dont_redirect": True,  # hops are counted and capped here
                "dont_retry": True,  # retries and backoff are ours
                "dont_merge_cookies": True,  # no cookies sent or stored
                "allow_offsite": True,  # robots.txt may redirect anywhere
                "download_timeout": max(round(timeout, 2), 0.01),
                # No size cap on the wire: the body is cut at 500 KiB as it arrives
                # (_bytes_received); compressed bodies get a cap in _headers_received.
                "download_maxsize": 0,
            },
        )

    # -- size limits on the wire, watched only while a robots.txt download runs --

    def _watch(self, change: int) -> None:
        """Connect the two size receivers while any robots.txt download runs: each
        costs a dispatch per page response otherwise."""
        before = self._in_flight
        self._in_flight += change
        if (before == 0) == (self._in_flight == 0):
            return
        connect = self._in_flight > 0
        edit = (
            self.crawler.signals.connect if connect else self.crawler.signals.disconnect
        )
        edit(self._headers_received, signals.headers_received)
        edit(self._bytes_received, signals.bytes_received)

    def _headers_received(
        self, headers: Headers, body_length: int, request: Request, spider: Spider
    ) -> None:
        if FETCH_META not in request.meta:
            return
        encoding = header_text(headers, b"Content-Encoding")
        if encoding and encoding.strip().lower() not in ("identity", ""):
            # Bounds what HttpCompressionMiddleware may inflate (a gzip bomb).
            request.meta["download_maxsize"] = self.config.max_decompressed_size

    def _bytes_received(self, data: bytes, request: Request, spider: Spider) -> None:
        received = request.meta.get(FETCH_META)
        if received is None:
            return
        received += len(data)
        request.meta[FETCH_META] = received
        if received > MAX_BODY_BYTES:
            # The parser reads 512,000 bytes and drops the partial last line.
            raise StopDownload(fail=False)

    def _inc(self, key: str) -> None:
        self._stats.inc_value(key)


def unreachable_entry(
    origin: Origin, detail: str, ttl: float, reason: str = "network"
) -> CacheEntry:
    """An entry for a cycle that ended without an outcome (an internal error, or
    the crawl stopping: ``reason`` ``"shutdown"``)."""
    now = time.time()
    verdict = policy.FetchVerdict(policy.UNREACHABLE, reason)
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


def stale_detail(copy_detail: str, failure: str) -> str:
    """A stale copy's detail: its own reason and only the latest failure, so it does
    not grow each time the copy stands in again."""
    first = copy_detail.split(_STALE_MARK, 1)[0]
    return f"{first}{_STALE_MARK}{failure})"


def describe(verdict: policy.FetchVerdict, detail: str) -> str:
    if verdict.verdict == policy.UNREACHABLE:
        return f"unreachable ({detail}); everything is disallowed for now"
    if verdict.verdict == policy.DISALLOW_ALL:
        return f"{detail} means everything is disallowed in 1994 mode"
    if verdict.verdict == policy.ALLOW_ALL:
        return f"{detail} means no restrictions"
    return detail


def header_text(headers: Headers, name: bytes) -> str | None:
    value = headers.get(name)  # the last value, as bytes
    return None if value is None else value.decode("latin-1")


def _redirect_target(response: Response) -> str | None:
    location = response.headers[b"Location"] or b""
    try:
        return safe_url_string(
            urljoin(response.url, location.decode("latin-1").strip())
        )
    except ValueError:  # e.g. "http://[/x": not a URL at all
        return None
