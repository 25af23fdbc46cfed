"""Crawl-delay and Request-rate: what a robots.txt asks, and what a slot must do.

The functions are pure: :func:`asked_delay` reads what a robots.txt asks,
:func:`plan_delay` caps it and :func:`slot_timing` works out a slot's timing.
:class:`SlotPoliteness` applies them to Scrapy's downloader slots.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

import scrapy.core.downloader as _scrapy_downloader
from scrapy import signals

from scrapy_robots_std import stats as _stats
from scrapy_robots_std.safetext import safe

if TYPE_CHECKING:
    from collections.abc import Callable

    from scrapy.crawler import Crawler
    from scrapy.http import Request, Response
    from scrapy.spiders import Spider

    from scrapy_robots_std.cache.base import CacheEntry
    from scrapy_robots_std.config import Config
    from scrapy_robots_std.robotstxt.parser import RequestRate
    from scrapy_robots_std.robotstxt.robots import RobotsTxt

__all__ = [
    "AskedDelay",
    "DelayPlan",
    "SlotPoliteness",
    "asked_delay",
    "plan_delay",
    "slot_timing",
]

logger = logging.getLogger("scrapy_robots_std.scrapy.middleware")

CRAWL_DELAY: Final = "Crawl-delay"
REQUEST_RATE: Final = "Request-rate"


@dataclass(frozen=True)
class AskedDelay:
    """The seconds between requests a robots.txt asks of a crawler, and why."""

    seconds: float
    #: ``"Crawl-delay"`` or ``"Request-rate"``: the stricter of the two decides.
    directive: str
    #: The value as the log shows it: ``"2"`` or ``"1/5s"``.
    written: str


@dataclass(frozen=True)
class DelayPlan:
    """The delay the crawl applies for an :class:`AskedDelay`."""

    asked: AskedDelay
    seconds: float
    capped: bool


def asked_delay(
    crawl_delay: float | None, request_rate: RequestRate | None
) -> AskedDelay | None:
    """The stricter of ``Crawl-delay`` and ``Request-rate``; None when neither asks.

    ``Request-rate: N/T`` allows N requests per T seconds, so it asks T/N seconds
    between requests. A zero delay asks nothing.
    """
    asked: AskedDelay | None = None
    if crawl_delay is not None and crawl_delay > 0:
        asked = AskedDelay(crawl_delay, CRAWL_DELAY, f"{crawl_delay:g}")
    if request_rate is not None:
        interval = request_rate.seconds / request_rate.requests
        if interval > 0 and (asked is None or interval > asked.seconds):
            written = f"{request_rate.requests}/{request_rate.seconds:g}s"
            asked = AskedDelay(interval, REQUEST_RATE, written)
    return asked


def plan_delay(asked: AskedDelay, cap: float) -> DelayPlan:
    """Cap the asked delay at ``cap`` seconds (``ROBOTS_STD_CRAWL_DELAY_MAX``)."""
    if asked.seconds > cap:
        return DelayPlan(asked, cap, capped=True)
    return DelayPlan(asked, asked.seconds, capped=False)


def slot_timing(delay: float, jitter: float, floor: float) -> tuple[float, float]:
    """A slot's new ``(delay, jitter)`` so that no gap between requests is below
    ``floor``, changing the user's timing as little as possible.

    Scrapy waits ``delay * (1 ± jitter)`` (never below zero) between a slot's
    requests. A slot already slow enough is left alone, so ``DOWNLOAD_DELAY`` or a
    delay AutoThrottle chose is never lowered. Otherwise a delay below the floor is
    raised to it without jitter, and a larger delay keeps its mean with only as
    much jitter as the floor allows.
    """
    jitter = max(jitter, 0.0)
    if delay * (1.0 - jitter) >= floor:
        return delay, jitter
    if delay <= floor:
        return floor, 0.0
    narrowed = 1.0 - floor / delay
    if delay * (1.0 - narrowed) < floor:  # rounding: no jitter rather than too little
        return delay, 0.0
    return delay, narrowed


class SlotPoliteness:
    """Applies a robots.txt's delay to Scrapy's downloader slot for its origin.

    While a delay applies, the slot downloads one request at a time and its delay
    is at least the asked one (capped by ``ROBOTS_STD_CRAWL_DELAY_MAX``), counted
    from the end of one download to the start of the next. Slots the user set in
    ``DOWNLOAD_SLOTS`` keep the user's timing.
    """

    def __init__(
        self,
        crawler: Crawler,
        config: Config,
        lookup: Callable[[Request], tuple[str, CacheEntry, str] | None],
    ) -> None:
        self.crawler = crawler
        self.config = config
        #: request -> (origin key, its entry, the crawler's token), or None
        self._lookup = lookup
        self._user_slots = frozenset(crawler.settings.getdict("DOWNLOAD_SLOTS"))
        self._noted: set[str] = set()
        if config.crawl_delay:
            crawler.signals.connect(
                self._on_request, signals.request_reached_downloader
            )
            # After AutoThrottle's own handler, which may lower the slot's delay.
            crawler.signals.connect(self._on_response, signals.response_downloaded)

    def note(
        self, origin: str, robots: RobotsTxt, robots_url: str, token: str, slot: str
    ) -> None:
        """Count and log, once per origin, the delay its robots.txt asks for."""
        asked = _asked(robots, token)
        if asked is not None:
            self._note(origin, asked, robots_url, slot, just_fetched=True)

    def _note(
        self,
        origin: str,
        asked: AskedDelay,
        robots_url: str,
        slot: str,
        *,
        just_fetched: bool,
    ) -> None:
        if origin in self._noted:
            return
        if len(self._noted) >= self.config.cache_max_origins:
            self._noted.clear()  # bounded; an origin may be reported again
        self._noted.add(origin)
        self._inc(_stats.DELAY_ASKED)
        if not self.config.crawl_delay:
            return
        values: dict[str, object] = {
            "url": safe(robots_url),
            "directive": asked.directive,
            "written": safe(asked.written),
            "slot": safe(slot),
        }
        extra = {"spider": self.crawler.spider}
        if slot in self._user_slots:
            self._inc(_stats.DELAY_IGNORED)
            logger.info(
                "robots.txt %(url)s asks for %(directive)s %(written)s; ignored "
                "because DOWNLOAD_SLOTS sets the timing of slot %(slot)r",
                values,
                extra=extra,
            )
            return
        plan = plan_delay(asked, self.config.crawl_delay_max)
        self._inc(_stats.DELAY_APPLIED)
        downloader_slot = self.crawler.engine.downloader.slots.get(slot)
        if just_fetched and downloader_slot is not None:
            # The robots.txt response just arrived: the first page waits from here.
            downloader_slot.lastseen = max(downloader_slot.lastseen, _slot_clock())
        self.crawler.stats.max_value(_stats.DELAY_MAX_SECONDS, plan.seconds)
        values["seconds"] = f"{plan.seconds:g}"
        if plan.capped:
            self._inc(_stats.DELAY_CAPPED)
            logger.info(
                "robots.txt %(url)s asks for %(directive)s %(written)s; capped at "
                "%(seconds)s s between requests to slot %(slot)r "
                "(ROBOTS_STD_CRAWL_DELAY_MAX)",
                values,
                extra=extra,
            )
        else:
            logger.debug(
                "robots.txt %(url)s asks for %(directive)s %(written)s: at least "
                "%(seconds)s s between requests to slot %(slot)r, one at a time",
                values,
                extra=extra,
            )

    def _floor(self, request: Request, slot: str) -> float | None:
        """The seconds robots.txt asks between requests like this one, capped."""
        found = self._lookup(request)
        if found is None:
            return None
        origin, entry, token = found
        if entry.robots is None:
            return None
        asked = _asked(entry.robots, token)
        if asked is None:
            return None
        if origin not in self._noted:  # a verdict another process fetched
            self._note(origin, asked, entry.robots_url, slot, just_fetched=False)
        return plan_delay(asked, self.config.crawl_delay_max).seconds

    def _apply(self, request: Request, *, responded: bool) -> bool:
        key = request.meta.get("download_slot")
        if key is None or key in self._user_slots:
            return False
        slot = self.crawler.engine.downloader.slots.get(key)
        floor = self._floor(request, key) if slot is not None else None
        if slot is None or floor is None:
            return False
        # One download at a time: the gap is from the end of one download to the
        # start of the next (Yandex's reading), whatever the slot's concurrency.
        slot.concurrency = 1
        if hasattr(slot, "jitter"):  # Scrapy 2.19+
            slot.delay, slot.jitter = slot_timing(slot.delay, slot.jitter, floor)
        elif slot.delay * (0.5 if slot.randomize_delay else 1.0) < floor:
            # Older Scrapy: a boolean ±50 % randomisation, all or nothing.
            slot.delay, slot.randomize_delay = max(slot.delay, floor), False
        if responded:
            slot.lastseen = max(slot.lastseen, _slot_clock())
        return True

    def _on_request(self, request: Request, spider: Spider) -> None:
        # request_reached_downloader: the slot exists and its queue is not yet
        # processed, so the first request after the verdict already waits.
        if self._apply(request, responded=False):
            self._inc(_stats.DELAY_REQUESTS)

    def _on_response(
        self, response: Response, request: Request, spider: Spider
    ) -> None:
        # AutoThrottle adjusts the slot's delay on this signal; put the floor back
        # before the downloader takes the slot's next request.
        self._apply(request, responded=True)

    def _inc(self, key: str) -> None:
        self.crawler.stats.inc_value(key)


def _asked(robots: RobotsTxt, token: str) -> AskedDelay | None:
    try:
        return asked_delay(robots.crawl_delay(token), robots.request_rate(token))
    except ValueError:  # a token the parser refuses: nothing to apply
        return None


#: The clock of ``Slot.lastseen``: ``monotonic`` since Scrapy 2.19, ``time`` before.
_slot_clock: Callable[[], float] = getattr(
    _scrapy_downloader, "monotonic", getattr(_scrapy_downloader, "time", time.time)
)
