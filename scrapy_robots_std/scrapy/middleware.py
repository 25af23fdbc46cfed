"""The downloader middleware: robots.txt per origin, fetched through the engine.

How a request travels (README "How it works" says the same for users):

1. ``process_request`` checks every request against its origin's verdict. A request
   whose origin has no fresh verdict starts the origin's robots.txt fetch (one per
   origin) and goes back to the engine (``_requeue``) rather than wait there holding
   a downloader slot.
2. While any fetch is in flight, ``request_scheduled`` is received: a request whose
   origin has no fresh verdict is *parked* instead of entering the scheduler (so is a
   requeued one). Parked requests hold none of the crawl's concurrency, so a
   black-holed origin cannot stall the others. The receiver is disconnected when no
   fetch is in flight, because it would otherwise run for every link the spider
   yields, duplicates included.
3. When the fetch cycle ends (a verdict, possibly after retries), the verdict is
   cached and the parked requests are scheduled again.
4. A request that reaches ``process_request`` a second time without a fresh verdict
   (``engine.download_async`` callers, which the engine does not reschedule; a verdict
   evicted or expired in between) waits for the origin's fetch there, with its own
   Deferred, so every waiter is checked.
"""

from __future__ import annotations

import dataclasses
import logging
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final
from urllib.parse import urljoin

import scrapy.core.downloader as _scrapy_downloader
from scrapy import signals
from scrapy.exceptions import (
    DontCloseSpider,
    IgnoreRequest,
    NotConfigured,
    StopDownload,
)
from scrapy.http import Request
from scrapy.http.request import NO_CALLBACK
from scrapy.utils.asyncio import call_later
from scrapy.utils.defer import deferred_from_coro, maybe_deferred_to_future
from scrapy.utils.httpobj import urlparse_cached
from scrapy.utils.misc import build_from_crawler, load_object
from twisted.internet.defer import CancelledError, Deferred
from w3lib.url import safe_url_string

from scrapy_robots_std import policy as _policy
from scrapy_robots_std import stats as _stats
from scrapy_robots_std.cache import CacheEntry, RobotsCache, SharedFetches
from scrapy_robots_std.config import Config, SettingsError
from scrapy_robots_std.robotstxt.parser import MAX_BODY_BYTES
from scrapy_robots_std.robotstxt.robots import Decision, RobotsTxt
from scrapy_robots_std.robotstxt.tokens import fallback_token, product_token
from scrapy_robots_std.scrapy import politeness as _politeness
from scrapy_robots_std.scrapy import report as _report
from scrapy_robots_std.scrapy.origin import Origin, origin_of
from scrapy_robots_std.scrapy.robotparser import StdRobotParser

if TYPE_CHECKING:
    from collections.abc import Callable

    from scrapy.crawler import Crawler
    from scrapy.http import Headers, Response
    from scrapy.spiders import Spider
    from scrapy.statscollectors import StatsCollector
    from typing_extensions import Self

__all__ = ["RobotsTxtDisallowed", "RobotsTxtStdMiddleware"]

logger = logging.getLogger(__name__)

#: Marks this middleware's own robots.txt requests (value: byte count so far).
FETCH_META: Final = "robots_std_fetch"
#: On the requests fed to ROBOTS_STD_SITEMAP_CALLBACK: the robots.txt listing the URL.
SITEMAP_META: Final = "robots_std_sitemap_of"
#: Set on a parked request when it is scheduled again, so it is not parked twice.
_RELEASED_META: Final = "_robots_std_released"
#: Set on a request sent back to the engine for lack of a verdict (_requeue); the
#: value is the request's own ``dont_filter``, given back when it returns.
_REQUEUED_META: Final = "_robots_std_requeued"
#: Decision reasons for verdicts that are not a rule of the file.
REASON_UNREACHABLE: Final = "unreachable"
REASON_HTTP_STATUS: Final = "http-status"
_TOKEN_CACHE_SIZE: Final = 256
#: URL prefixes (_memo_key) whose origin is remembered; the memo is emptied when full.
_ORIGIN_MEMO_SIZE: Final = 4096
#: Longer memo keys are not remembered (a query string before any ``/`` would make
#: one; a host name alone is at most 253 characters).
_MEMO_KEY_MAX: Final = 512
_STAT_CACHE_HIT: Final = _stats.stat("cache", "hit")
_STAT_CACHE_MISS: Final = _stats.stat("cache", "miss")
#: Polling for another process's verdict (shared caches): first and longest pause.
_SHARED_POLL_MIN: Final = 0.05
_SHARED_POLL_MAX: Final = 0.5
#: A claim outlives the fetch cycle's budget by this much (seconds).
_CLAIM_MARGIN: Final = 5.0


class RobotsTxtDisallowed(IgnoreRequest):
    """The ``IgnoreRequest`` a dropped request fails with.

    ``decision`` is the :class:`~scrapy_robots_std.Decision` (its ``rule`` is the
    deciding line, or ``None`` with a ``reason`` such as ``"unreachable"``);
    ``robots_url`` is the robots.txt that decided.
    """

    def __init__(self, message: str, decision: Decision, robots_url: str) -> None:
        super().__init__(message)
        self.decision = decision
        self.robots_url = robots_url


@dataclass
class _Fetch:
    """One origin's robots.txt fetch cycle in flight, and who waits for it."""

    origin: Origin
    trigger: Request
    started: float = field(default_factory=time.monotonic)
    parked: list[tuple[Request, float]] = field(default_factory=list)
    waiters: list[Deferred[CacheEntry]] = field(default_factory=list)
    #: keeps the running cycle referenced (an asyncio task may otherwise be collected)
    task: Deferred[None] | None = None
    #: ends a backoff sleep early (set while the cycle sleeps)
    wake: Callable[[], None] | None = None
    #: this process holds the origin's claim in a shared cache (SharedFetches)
    claimed: bool = False


@dataclass(frozen=True)
class _Attempt:
    """What one fetch attempt (with its redirect hops) produced."""

    outcome: _policy.FetchOutcome
    detail: str
    response: Response | None = None
    robots_url: str = ""
    retry_after: float | None = None


class RobotsTxtStdMiddleware:
    """Obey robots.txt (RFC 9309 or 1994) per origin; see the README for settings."""

    def __init__(self, crawler: Crawler) -> None:
        if not crawler.settings.getbool("ROBOTSTXT_OBEY"):
            raise NotConfigured("ROBOTSTXT_OBEY is off")
        self.crawler = crawler
        self.config = Config.from_settings(crawler.settings)
        self._stats: StatsCollector = crawler.stats
        # Bound once: each attribute of Scrapy 2.19's StatsCollector is looked up
        # through a __getattribute__ written in Python, and this one runs per request.
        self._inc_value = crawler.stats.inc_value
        backend = load_object(self.config.cache_backend)
        self.cache: RobotsCache = build_from_crawler(backend, crawler)
        self._shared = self.cache if isinstance(self.cache, SharedFetches) else None
        self._fetches: dict[str, _Fetch] = {}
        self._watching = False  # see _watch_while_fetching()
        self._tokens: dict[bytes, str] = {}
        # Every request is looked up twice (when scheduled, when downloaded): the
        # origin depends only on the URL up to its authority (_memo_key), so it is
        # worked out once per such prefix.
        self._origins: dict[str, Origin | None] = {}
        self._report = _report.Report(self.config.summary_top)
        self._report.dry_run = self.config.dry_run
        self._closed = False
        # Slots the user configured in DOWNLOAD_SLOTS keep the user's timing.
        self._user_slots = frozenset(crawler.settings.getdict("DOWNLOAD_SLOTS"))
        # Origins whose delay (and sitemaps) were already reported: once per origin.
        self._delays_noted: set[str] = set()
        self._sitemaps_fed: set[str] = set()
        spider = getattr(crawler, "spider", None)
        if spider is not None:
            self._sitemap_callback(spider)  # a bad name stops the crawl at start
        # While connected it runs for every request the spider yields, duplicates
        # included, so it is a plain function (the dispatcher calls one about 1 µs
        # faster than a bound method); the middleware keeps it alive (receivers are
        # held weakly). Connected only while a fetch is in flight: _watch_while_fetching.
        park = self._park_if_unknown

        def on_request_scheduled(request: Request, **_: Any) -> None:
            park(request)

        self._on_request_scheduled = on_request_scheduled
        if self.config.crawl_delay:
            crawler.signals.connect(
                self._slot_floor_on_request, signals.request_reached_downloader
            )
            # After AutoThrottle's own handler, which may lower the slot's delay.
            crawler.signals.connect(
                self._slot_floor_on_response, signals.response_downloaded
            )
        crawler.signals.connect(self._spider_idle, signals.spider_idle)
        crawler.signals.connect(self._spider_opened, signals.spider_opened)
        crawler.signals.connect(self._spider_closed, signals.spider_closed)

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        return cls(crawler)

    # -- the request path ----------------------------------------------------------

    async def process_request(self, request: Request) -> Request | None:
        origin = self._origin_to_check(request)
        if origin is None:
            return None
        meta = request.meta
        # A released request was counted when it was parked, a requeued one when it
        # was requeued.
        released = meta.pop(_RELEASED_META, False)
        requeued = _REQUEUED_META in meta
        if requeued:
            request.dont_filter = meta.pop(_REQUEUED_META)
        entry = self._fresh_entry(origin, count=not (released or requeued))
        if entry is None:
            fetch = self._fetches.get(origin.key) or self._start_fetch(origin, request)
            if not (released or requeued or self._closed):
                return self._requeue(request)
            waiter: Deferred[CacheEntry] = Deferred()
            fetch.waiters.append(waiter)
            waited_since = time.monotonic()
            entry = await maybe_deferred_to_future(waiter)
            self._record_wait(time.monotonic() - waited_since)
        self._check(request, entry)
        return None

    def _origin_to_check(self, request: Request) -> Origin | None:
        meta = request.meta
        if meta.get("dont_obey_robotstxt") or FETCH_META in meta:
            return None
        # Most scheduled requests are duplicate links the scheduler drops, so for
        # them parsing the URL would be the whole cost of this check; the memo is
        # keyed by the URL's text up to its authority instead (_memo_key).
        key = _memo_key(request.url)
        if key is not None:
            try:
                return self._origins[key]
            except KeyError:
                pass
        origin = origin_of(urlparse_cached(request))
        if key is not None:
            if len(self._origins) >= _ORIGIN_MEMO_SIZE:
                self._origins.clear()
            self._origins[key] = origin
        return origin

    def _fresh_entry(self, origin: Origin, *, count: bool = True) -> CacheEntry | None:
        entry = self.cache.get(origin.key)
        fresh = entry is not None and entry.fresh()
        if count:
            self._inc_value(_STAT_CACHE_HIT if fresh else _STAT_CACHE_MISS)
        return entry if fresh else None

    def _token(self, request: Request) -> str:
        if self.config.token is not None:
            return self.config.token
        header = request.headers.get(b"User-Agent") or self.config.default_user_agent
        key = header if isinstance(header, bytes) else str(header).encode()
        token = self._tokens.get(key)
        if token is None:
            standard = self.config.standard
            token = product_token(key, standard) or fallback_token(standard)
            if len(self._tokens) >= _TOKEN_CACHE_SIZE:
                self._tokens.clear()
            self._tokens[key] = token
        return token

    def _decide(self, request: Request, entry: CacheEntry) -> Decision:
        if entry.verdict == _policy.PARSE and entry.robots is not None:
            token = self._token(request)
            try:
                if entry.robots.allowed(request.url, token):
                    return _ALLOWED
                return entry.robots.decide(request.url, token)
            except ValueError as exc:
                logger.debug(
                    "Cannot check %(url)s against %(robots)s (%(error)s); allowing it",
                    {"url": request.url, "robots": entry.robots_url, "error": exc},
                    extra={"spider": self.crawler.spider},
                )
                return _ALLOWED
        if entry.verdict in (_policy.ALLOW_ALL, _policy.PARSE):
            return _ALLOWED
        if urlparse_cached(request).path == "/robots.txt":
            return Decision(True, None, "robots-txt")
        if entry.verdict == _policy.DISALLOW_ALL:
            return Decision(False, None, REASON_HTTP_STATUS)
        return Decision(False, None, REASON_UNREACHABLE)

    def _check(self, request: Request, entry: CacheEntry) -> None:
        decision = self._decide(request, entry)
        if decision.allowed:
            return
        if decision.rule is not None:
            reason = _stats.DROP_RULE
            why = _report.rule_text(entry.robots_url, decision.rule)
        else:
            reason = (
                _stats.DROP_STATUS
                if decision.reason == REASON_HTTP_STATUS
                else _stats.DROP_UNREACHABLE
            )
            why = f"{entry.robots_url}: {entry.detail}"
        self._report.dropped(
            entry.origin, reason, why if decision.rule is not None else None
        )
        if self.config.dry_run:
            self._inc("would_drop", reason)
            logger.debug(
                "Would be forbidden by robots.txt (dry run): %(request)s by %(why)s",
                {"request": request, "why": why},
                extra={"spider": self.crawler.spider},
            )
            return
        self._stats.inc_value("robotstxt/forbidden")
        self._inc("dropped", reason)
        logger.debug(
            "Forbidden by robots.txt: %(request)s by %(why)s",
            {"request": request, "why": why},
            extra={"spider": self.crawler.spider},
        )
        raise RobotsTxtDisallowed(
            f"Forbidden by robots.txt: {request} by {why}",
            decision,
            entry.robots_url,
        )

    # -- parking at scheduling time ------------------------------------------------

    def _requeue(self, request: Request) -> Request:
        """``request``, to be returned to the engine, which schedules it again: its
        origin's fetch is in flight now, so ``request_scheduled`` parks it."""
        # The scheduler's duplicate filter saw it on its way in; not a second time.
        request.meta[_REQUEUED_META] = request.dont_filter
        request.dont_filter = True
        return request

    def _park_if_unknown(self, request: Request) -> None:
        meta = request.meta
        if meta.get(_RELEASED_META):
            return
        origin = self._origin_to_check(request)
        if origin is None or self._closed:
            return
        if self._fresh_entry(origin, count=False) is not None:
            return  # counted in process_request
        if _REQUEUED_META not in meta:  # else counted when it was requeued
            self._inc_value(_STAT_CACHE_MISS)
        fetch = self._fetches.get(origin.key) or self._start_fetch(origin, request)
        fetch.parked.append((request, time.monotonic()))
        # Keeps the request out of the scheduler (and out of the downloader's
        # concurrency) until the verdict is known; see _release().
        raise IgnoreRequest("waiting for robots.txt")

    def _release(self, fetch: _Fetch) -> None:
        now = time.monotonic()
        for request, parked_since in fetch.parked:
            self._record_wait(now - parked_since)
            request.meta[_RELEASED_META] = True
            try:
                self.crawler.engine.crawl(request)
            except Exception:  # noqa: BLE001 -- the engine is closing: account for it
                request.meta.pop(_RELEASED_META, None)
                self._drop_at_shutdown(fetch.origin, [request])
        fetch.parked.clear()

    def _record_wait(self, seconds: float) -> None:
        self._inc("wait", "requests")
        key = _stats.stat("wait", "seconds")
        self._stats.set_value(key, round(self._stats.get_value(key, 0.0) + seconds, 3))
        self._stats.max_value(_stats.stat("wait", "max_seconds"), round(seconds, 3))

    def _spider_idle(self) -> None:
        if self._fetches:
            raise DontCloseSpider

    # -- fetching ------------------------------------------------------------------

    def _start_fetch(self, origin: Origin, trigger: Request) -> _Fetch:
        fetch = _Fetch(origin, trigger)
        self._fetches[origin.key] = fetch
        self._watch_while_fetching(True)
        fetch.task = deferred_from_coro(self._fetch_cycle(fetch))
        return fetch

    async def _fetch_cycle(self, fetch: _Fetch) -> None:
        entry: CacheEntry | None = None
        try:
            entry = await self._fetch_verdict(fetch)
        except Exception as exc:  # a bug here must not lose the parked requests
            logger.exception(
                "robots.txt fetch for %(origin)s failed unexpectedly",
                {"origin": fetch.origin.robots_url},
                extra={"spider": self.crawler.spider},
            )
            entry = self._unreachable_entry(fetch.origin, f"internal error: {exc!r}")
        finally:
            self._fetches.pop(fetch.origin.key, None)
            self._watch_while_fetching(bool(self._fetches))
            self._release_claim(fetch)
            if entry is None:  # cancelled at shutdown
                entry = self._unreachable_entry(fetch.origin, "the spider closed")
            for waiter in fetch.waiters:
                waiter.callback(entry)
            fetch.waiters.clear()
            if self._closed:
                self._drop_at_shutdown(fetch.origin, [r for r, _ in fetch.parked])
                fetch.parked.clear()
            else:
                self._release(fetch)

    async def _fetch_verdict(self, fetch: _Fetch) -> CacheEntry | None:
        cfg = self.config
        shared = await self._verdict_of_another_process(fetch)
        if shared is not None or self._closed:
            return shared
        attempts = 0
        while True:
            attempts += 1
            remaining = cfg.max_wait - (time.monotonic() - fetch.started)
            attempt = await self._attempt(fetch, min(cfg.fetch_timeout, remaining))
            if self._closed:
                return None
            verdict = _policy.fetch_verdict(attempt.outcome, cfg.standard)
            if not (verdict.retry and attempts <= cfg.fetch_retries):
                break
            delay = _policy.retry_delay(
                attempts,
                base=cfg.retry_backoff,
                retry_after=attempt.retry_after,
                cap=cfg.retry_after_max,
            )
            elapsed = time.monotonic() - fetch.started
            # A retry needs time to wait and still some time to fetch.
            if elapsed + delay + min(1.0, cfg.fetch_timeout) > cfg.max_wait:
                break
            self._inc("fetch", "retries")
            logger.info(
                "robots.txt %(url)s unreachable (%(detail)s); retry %(n)d of %(max)d "
                "in %(delay).1f s",
                {
                    "url": fetch.origin.robots_url,
                    "detail": attempt.detail,
                    "n": attempts,
                    "max": cfg.fetch_retries,
                    "delay": delay,
                },
                extra={"spider": self.crawler.spider},
            )
            await self._sleep(fetch, delay)
            if self._closed:
                return None
        return self._store(fetch, attempt, verdict, attempts)

    async def _verdict_of_another_process(self, fetch: _Fetch) -> CacheEntry | None:
        """With a cache shared between processes, fetch only under the origin's claim.

        Returns the verdict another process stored while this one waited for it, or
        ``None``: fetch here (with the claim, or without it once waiting has used
        the budget but one attempt's time, should the holder never deliver).
        """
        shared = self._shared
        if shared is None:
            return None
        cfg = self.config
        key = fetch.origin.key
        give_up = (
            fetch.started + cfg.max_wait - min(cfg.fetch_timeout, cfg.max_wait / 2)
        )
        pause = _SHARED_POLL_MIN
        while not self._closed:
            if shared.claim(key, cfg.max_wait + _CLAIM_MARGIN):
                fetch.claimed = True
                # The holder may have stored its verdict just before we claimed.
                return self._shared_entry(fetch.origin)
            entry = self._shared_entry(fetch.origin)
            now = time.monotonic()
            if entry is not None or now >= give_up:
                return entry
            await self._sleep(fetch, min(pause, give_up - now))
            pause = min(pause * 2, _SHARED_POLL_MAX)
        return None

    def _shared_entry(self, origin: Origin) -> CacheEntry | None:
        entry = self._fresh_entry(origin, count=False)
        if entry is not None:
            self._inc("cache", "shared")
        return entry

    def _release_claim(self, fetch: _Fetch) -> None:
        if fetch.claimed and self._shared is not None:
            fetch.claimed = False
            self._shared.release(fetch.origin.key)

    async def _sleep(self, fetch: _Fetch, seconds: float) -> None:
        done: Deferred[None] = Deferred()
        timer = call_later(seconds, done.callback, None)

        def wake_now() -> None:  # the spider is closing: stop waiting
            timer.cancel()
            if not done.called:
                done.callback(None)

        fetch.wake = wake_now
        try:
            await maybe_deferred_to_future(done)
        finally:
            fetch.wake = None

    def _store(
        self,
        fetch: _Fetch,
        attempt: _Attempt,
        verdict: _policy.FetchVerdict,
        attempts: int,
    ) -> CacheEntry:
        cfg = self.config
        origin = fetch.origin
        now = time.time()
        detail = attempt.detail
        if verdict.verdict == _policy.UNREACHABLE and attempts > 1:
            detail = f"{detail} after {attempts} attempts"
        robots: RobotsTxt | None = None
        if verdict.verdict == _policy.PARSE and attempt.response is not None:
            robots = RobotsTxt.parse(attempt.response.body, cfg.standard)
        header_max_age = None
        if attempt.response is not None:
            header_max_age = _policy.max_age(
                _header_text(attempt.response.headers, b"Cache-Control")
            )
        ttl = _policy.cache_ttl(
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
            detail=_describe(verdict, detail),
            # The cache lives for the crawl and nothing reads diagnostics from it;
            # the robots_parsed signal below still gets the full object.
            robots=None if robots is None else robots.without_diagnostics(),
            status=attempt.outcome.status,
            fetched_at=now,
            expires_at=now + ttl,
        )
        self._inc("verdict", verdict.verdict)
        if verdict.verdict == _policy.UNREACHABLE:
            stale = self.cache.get(origin.key)
            if stale is not None and stale.verdict != _policy.UNREACHABLE:
                # RFC 9309 2.4: a cached copy may stand in while the origin is down.
                self._inc("verdict", "stale")
                entry = dataclasses.replace(
                    stale,
                    detail=f"{stale.detail} (stale copy; now {entry.detail})",
                    expires_at=entry.expires_at,
                )
            else:
                self._report.origin_unreachable(origin.robots_url, entry.detail)
                logger.warning(
                    "robots.txt %(url)s is unreachable (%(detail)s): its requests "
                    "are dropped for the next %(ttl)d s",
                    {"url": origin.robots_url, "detail": detail, "ttl": ttl},
                    extra={"spider": self.crawler.spider},
                )
        else:
            self._report.origin_recovered(origin.robots_url)
        evicted = self.cache.put(entry, _body_to_keep(attempt, robots))
        if evicted:
            self._inc_by(evicted, "cache", "eviction")
        if robots is not None:
            if robots.truncated:
                self._inc("body", "truncated")
            deferred_from_coro(self._send_parsed(robots, fetch.trigger))
            asked = self._asked_delay(robots, self._token(fetch.trigger))
            if asked is not None:
                self._note_delay(origin.key, asked, entry.robots_url, fetch.trigger)
            self._feed_sitemaps(origin.key, robots, entry.robots_url)
        return entry

    async def _send_parsed(self, robots: RobotsTxt, request: Request) -> None:
        await self.crawler.signals.send_catch_log_async(
            signal=signals.robots_parsed,
            robotparser=StdRobotParser.from_robots(robots),
            request=request,
        )

    def _unreachable_entry(self, origin: Origin, detail: str) -> CacheEntry:
        now = time.time()
        verdict = _policy.FetchVerdict(_policy.UNREACHABLE, "network")
        return CacheEntry(
            origin=origin.key,
            robots_url=origin.robots_url,
            verdict=verdict.verdict,
            reason=verdict.reason,
            detail=_describe(verdict, detail),
            robots=None,
            status=None,
            fetched_at=now,
            expires_at=now,
        )

    async def _attempt(self, fetch: _Fetch, timeout: float) -> _Attempt:
        """Fetch robots.txt once, following up to five redirects ourselves."""
        deadline = time.monotonic() + max(timeout, 0.001)
        url = fetch.origin.robots_url
        seen = {url}
        hops = 0
        while True:
            request = self._robots_request(url, deadline - time.monotonic())
            self._stats.inc_value("robotstxt/request_count")
            try:
                response = await self.crawler.engine.download_async(request)
            except CancelledError:
                raise
            except Exception as exc:  # noqa: BLE001 -- every failure is an outcome
                return self._failed_attempt(exc, hops, url)
            status = response.status
            self._stats.inc_value("robotstxt/response_count")
            self._stats.inc_value(f"robotstxt/response_status_count/{status}")
            if 300 <= status < 400 and b"Location" in response.headers:
                location = response.headers[b"Location"] or b""
                target = safe_url_string(
                    urljoin(response.url, location.decode("latin-1").strip())
                )
                problem = None
                if origin_of(target) is None:
                    problem = _policy.REDIRECT_BAD_LOCATION
                elif target in seen:
                    problem = _policy.REDIRECT_LOOP
                elif hops >= _policy.MAX_REDIRECTS:
                    problem = _policy.REDIRECT_TOO_MANY
                if problem is not None:
                    return _Attempt(
                        _policy.FetchOutcome(redirect_failure=problem, redirects=hops),
                        f"{problem} after {hops} redirect(s), last to {target}",
                        robots_url=url,
                    )
                seen.add(target)
                hops += 1
                url = target
                continue
            return _Attempt(
                _policy.FetchOutcome(status=status, redirects=hops),
                f"HTTP {status}" + (f" from {url}" if hops else ""),
                response=response,
                robots_url=url,
                retry_after=_policy.parse_retry_after(
                    _header_text(response.headers, b"Retry-After")
                ),
            )

    def _failed_attempt(self, exc: Exception, hops: int, url: str) -> _Attempt:
        message = str(exc) or type(exc).__name__
        if isinstance(exc, IgnoreRequest):
            name = "IgnoreRequest"
        else:
            name = type(exc).__name__
            self._stats.inc_value(f"robotstxt/exception_count/{type(exc)}")
        return _Attempt(
            _policy.FetchOutcome(error=name, redirects=hops),
            f"{name}: {message[:200]}",
            robots_url=url,
        )

    def _robots_request(self, url: str, timeout: float) -> Request:
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

    # -- politeness: Crawl-delay / Request-rate ---------------------------------------

    def _asked_delay(
        self, robots: RobotsTxt, token: str
    ) -> _politeness.AskedDelay | None:
        try:
            return _politeness.asked_delay(
                robots.crawl_delay(token), robots.request_rate(token)
            )
        except ValueError:  # a token the parser refuses: nothing to apply
            return None

    def _note_delay(
        self,
        origin: str,
        asked: _politeness.AskedDelay,
        robots_url: str,
        request: Request,
        *,
        just_fetched: bool = True,
    ) -> None:
        """Count and log, once per origin, the delay its robots.txt asks for.

        Called when this process parses a robots.txt, and for a verdict that came
        from a shared or persistent cache when its first request reaches the
        downloader (``just_fetched`` False).
        """
        if origin in self._delays_noted:
            return
        if len(self._delays_noted) >= self.config.cache_max_origins:
            self._delays_noted.clear()  # bounded; an origin may be reported again
        self._delays_noted.add(origin)
        self._inc("delay", "asked")
        if not self.config.crawl_delay:
            return
        slot = self.crawler.engine.downloader.get_slot_key(request)
        values = {
            "url": robots_url,
            "directive": asked.directive,
            "written": asked.written,
            "slot": slot,
        }
        spider = {"spider": self.crawler.spider}
        if slot in self._user_slots:
            self._inc("delay", "ignored")
            logger.info(
                "robots.txt %(url)s asks for %(directive)s %(written)s; ignored "
                "because DOWNLOAD_SLOTS sets the timing of slot %(slot)r",
                values,
                extra=spider,
            )
            return
        plan = _politeness.plan_delay(asked, self.config.crawl_delay_max)
        self._inc("delay", "applied")
        downloader_slot = self.crawler.engine.downloader.slots.get(slot)
        if just_fetched and downloader_slot is not None:
            # The robots.txt response just arrived: the first page waits from here.
            downloader_slot.lastseen = max(downloader_slot.lastseen, _slot_clock())
        self._stats.max_value(_stats.stat("delay", "max_seconds"), plan.seconds)
        values["seconds"] = f"{plan.seconds:g}"
        if plan.capped:
            self._inc("delay", "capped")
            logger.info(
                "robots.txt %(url)s asks for %(directive)s %(written)s; capped at "
                "%(seconds)s s between requests to slot %(slot)r "
                "(ROBOTS_STD_CRAWL_DELAY_MAX)",
                values,
                extra=spider,
            )
        else:
            logger.debug(
                "robots.txt %(url)s asks for %(directive)s %(written)s: at least "
                "%(seconds)s s between requests to slot %(slot)r",
                values,
                extra=spider,
            )

    def _slot_floor(self, request: Request) -> float | None:
        """The seconds robots.txt asks between requests like this one, capped."""
        if request.meta.get("dont_obey_robotstxt") or FETCH_META in request.meta:
            return None
        origin = origin_of(urlparse_cached(request))
        if origin is None:
            return None
        entry = self.cache.get(origin.key)
        if entry is None or entry.robots is None:
            return None
        asked = self._asked_delay(entry.robots, self._token(request))
        if asked is None:
            return None
        if origin.key not in self._delays_noted:  # a verdict another process fetched
            self._note_delay(
                origin.key, asked, entry.robots_url, request, just_fetched=False
            )
        return _politeness.plan_delay(asked, self.config.crawl_delay_max).seconds

    def _raise_slot_delay(self, request: Request, *, responded: bool) -> bool:
        key = request.meta.get("download_slot")
        if key is None or key in self._user_slots:
            return False
        slot = self.crawler.engine.downloader.slots.get(key)
        floor = self._slot_floor(request) if slot is not None else None
        if slot is None or floor is None:
            return False
        if hasattr(slot, "jitter"):  # Scrapy 2.19+
            slot.delay, slot.jitter = _politeness.slot_timing(
                slot.delay, slot.jitter, floor
            )
        elif slot.delay * (0.5 if slot.randomize_delay else 1.0) < floor:
            # Older Scrapy: a boolean ±50 % randomisation, all or nothing.
            slot.delay, slot.randomize_delay = max(slot.delay, floor), False
        if responded:
            # Scrapy spaces the departures of a slot's requests; counting the delay
            # from this response instead means the server sees every gap >= floor,
            # however long connecting or answering took (Yandex's reading too:
            # from the end of one download to the start of the next).
            slot.lastseen = max(slot.lastseen, _slot_clock())
        return True

    def _slot_floor_on_request(self, request: Request, spider: Spider) -> None:
        # request_reached_downloader: the slot exists and its queue is not yet
        # processed, so the first request after the verdict already waits.
        if self._raise_slot_delay(request, responded=False):
            self._inc("delay", "requests")

    def _slot_floor_on_response(
        self, response: Response, request: Request, spider: Spider
    ) -> None:
        # AutoThrottle adjusts the slot's delay on this signal; put the floor back
        # before the downloader takes the slot's next request.
        self._raise_slot_delay(request, responded=True)

    # -- sitemaps --------------------------------------------------------------------

    def sitemaps(self, url: str) -> tuple[str, ...] | None:
        """The ``Sitemap:`` URLs of the robots.txt for ``url``'s origin.

        ``None`` when no verdict for that origin is cached (not fetched yet, or
        evicted); ``()`` when its robots.txt lists none or was not parsed (4xx,
        unreachable).
        """
        origin = origin_of(url)
        entry = self.cache.get(origin.key) if origin is not None else None
        if entry is None:
            return None
        return entry.robots.sitemaps if entry.robots is not None else ()

    def _sitemap_callback(self, spider: Spider) -> Callable[..., Any] | None:
        name = self.config.sitemap_callback
        if name is None:
            return None
        callback = getattr(spider, name, None)
        if not callable(callback):
            raise SettingsError(
                f"ROBOTS_STD_SITEMAP_CALLBACK: spider {spider.name!r} has no "
                f"method {name!r}"
            )
        return callback  # type: ignore[no-any-return]

    def _feed_sitemaps(self, origin: str, robots: RobotsTxt, robots_url: str) -> None:
        """Schedule each Sitemap URL once per origin, for ROBOTS_STD_SITEMAP_CALLBACK."""
        if self.config.sitemap_callback is None or not robots.sitemaps:
            return
        if origin in self._sitemaps_fed or self.crawler.spider is None:
            return
        if len(self._sitemaps_fed) >= self.config.cache_max_origins:
            self._sitemaps_fed.clear()  # bounded; the dupefilter still drops repeats
        self._sitemaps_fed.add(origin)
        callback = self._sitemap_callback(self.crawler.spider)
        for listed in robots.sitemaps:
            url = safe_url_string(urljoin(robots_url, listed))
            if origin_of(url) is None:
                self._inc("sitemaps", "invalid")
                continue
            request = Request(url, callback=callback, meta={SITEMAP_META: robots_url})
            self.crawler.engine.crawl(request)
            self._inc("sitemaps", "scheduled")

    # -- receivers needed only while a fetch is in flight ----------------------------

    def _watch_while_fetching(self, on: bool) -> None:
        """Connect the receivers that matter only while a robots.txt fetch is in
        flight, or disconnect them. Each costs a dispatch (about 3 µs) per event:
        ``request_scheduled`` fires for every link the spider yields, the other two
        for every page response, and they are only for parking and for bounding
        robots.txt downloads."""
        if on == self._watching:
            return
        self._watching = on
        change = self.crawler.signals.connect if on else self.crawler.signals.disconnect
        change(self._on_request_scheduled, signals.request_scheduled)
        change(self._headers_received, signals.headers_received)
        change(self._bytes_received, signals.bytes_received)

    # -- size limits on the wire -----------------------------------------------------

    def _headers_received(
        self,
        headers: Headers,
        body_length: int,
        request: Request,
        spider: Spider,
    ) -> None:
        if FETCH_META not in request.meta:
            return
        encoding = _header_text(headers, b"Content-Encoding")
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

    # -- lifecycle -----------------------------------------------------------------

    def _spider_opened(self, spider: Spider) -> None:
        self.cache.open()

    def _spider_closed(self, spider: Spider, reason: str) -> None:
        self._closed = True
        for fetch in list(self._fetches.values()):
            if fetch.wake is not None:
                fetch.wake()
            self._drop_at_shutdown(fetch.origin, [r for r, _ in fetch.parked])
            fetch.parked.clear()
        for origin, count in self._report.top_origins():
            self._stats.set_value(_stats.stat("dropped_by_origin", origin), count)
        logger.info(
            "%(summary)s", {"summary": self._report.summary()}, extra={"spider": spider}
        )
        self.cache.close()

    def _drop_at_shutdown(self, origin: Origin, requests: list[Request]) -> None:
        if not requests:
            return
        self._inc_by(len(requests), "dropped", _stats.DROP_SHUTDOWN)
        logger.warning(
            "%(n)d request(s) for %(origin)s were still waiting for its robots.txt "
            "when the spider closed; they were not sent",
            {"n": len(requests), "origin": origin.robots_url},
            extra={"spider": self.crawler.spider},
        )

    # -- stats ---------------------------------------------------------------------

    def _inc(self, *parts: str) -> None:
        self._stats.inc_value(_stats.stat(*parts))

    def _inc_by(self, count: int, *parts: str) -> None:
        self._stats.inc_value(_stats.stat(*parts), count)


_ALLOWED: Final = Decision(True, None, "allowed")

#: The clock of ``Slot.lastseen``: ``monotonic`` since Scrapy 2.19, ``time`` before.
_slot_clock: Callable[[], float] = getattr(
    _scrapy_downloader, "monotonic", getattr(_scrapy_downloader, "time", time.time)
)


def _memo_key(url: str) -> str | None:
    """The start of ``url`` that alone decides its origin, or ``None``: not remembered.

    That is the text before the first ``/`` after the first ``://``. Whatever
    follows it, ``urlsplit`` finds the scheme and the netloc within it, so equal
    keys mean equal origins (one origin spelled two ways has two keys, each worked
    out once).
    """
    start = url.find("://")
    if start < 0:
        return None
    end = url.find("/", start + 3)
    key = url if end < 0 else url[:end]
    return key if len(key) <= _MEMO_KEY_MAX else None


def _header_text(headers: Headers, name: bytes) -> str | None:
    value = headers.get(name)  # the last value, as bytes
    return None if value is None else value.decode("latin-1")


def _body_to_keep(attempt: _Attempt, robots: RobotsTxt | None) -> bytes | None:
    """The body a persistent cache stores with a verdict just parsed from it."""
    if robots is None or attempt.response is None:
        return None
    return attempt.response.body


def _describe(verdict: _policy.FetchVerdict, detail: str) -> str:
    if verdict.verdict == _policy.UNREACHABLE:
        return f"unreachable ({detail}); everything is disallowed for now"
    if verdict.verdict == _policy.DISALLOW_ALL:
        return f"{detail} means everything is disallowed in 1994 mode"
    if verdict.verdict == _policy.ALLOW_ALL:
        return f"{detail} means no restrictions"
    return detail
