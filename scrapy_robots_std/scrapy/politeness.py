"""Crawl-delay and Request-rate: what a robots.txt asks, and what a slot must do.

Pure functions. The middleware reads the asked delay from the parsed robots.txt,
caps it with :func:`plan_delay`, and applies it to Scrapy's downloader slot with
the timing :func:`slot_timing` computes.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

if TYPE_CHECKING:
    from scrapy_robots_std.robotstxt.parser import RequestRate

__all__ = ["AskedDelay", "DelayPlan", "asked_delay", "plan_delay", "slot_timing"]

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
