"""What the crawl says when the spider opens: the setup in effect, and the
misconfigurations that would otherwise pass in silence.

One INFO line gives the standard, the token, the cache backend, the policies and
where waiting requests wait. A WARNING each: an unknown ``ROBOTS_STD_*`` setting
(with the closest valid name), a ``ROBOTSTXT_USER_AGENT`` that is not a product token
(with the token used instead), Scrapy's built-in ``RobotsTxtMiddleware`` enabled
beside this one, and a scheduler without a waiting queue of this package.
"""

from __future__ import annotations

import difflib
import logging
from typing import TYPE_CHECKING, Any

from scrapy.downloadermiddlewares.robotstxt import RobotsTxtMiddleware

from scrapy_robots_std.config import DEFAULTS
from scrapy_robots_std.safetext import safe
from scrapy_robots_std.scrapy.queues import PRIORITY_QUEUE, REDIS_QUEUE, queue_in_use

if TYPE_CHECKING:
    from collections.abc import Iterable

    from scrapy.crawler import Crawler

    from scrapy_robots_std.config import Config

__all__ = ["report_startup"]

logger = logging.getLogger("scrapy_robots_std.scrapy.middleware")

_PREFIX = "ROBOTS_STD_"


def report_startup(
    crawler: Crawler, config: Config, *, cache: str, queues: int
) -> None:
    """Log the setup; ``queues`` is how many of the scheduler's queues hold waiting
    requests for this package (0: they wait in the downloader)."""
    extra = {"spider": crawler.spider}
    _warn_unknown_settings(crawler, extra)
    _warn_user_agent(crawler, config, extra)
    if _builtin_enabled(crawler):
        logger.warning(
            "Scrapy's built-in RobotsTxtMiddleware is enabled beside "
            "RobotsTxtStdMiddleware: both fetch robots.txt and drop requests. Use "
            'ADDONS = {"scrapy_robots_std.Addon": 0}, or set it to None in '
            "DOWNLOADER_MIDDLEWARES",
            extra=extra,
        )
    queue = _report_queue(crawler, queues, extra)
    token = (
        f"token {config.token!r}"
        if config.token is not None
        else "token from each request's User-Agent"
    )
    logger.info(
        "robots.txt: standard %(standard)s, %(token)s, cache %(cache)s, "
        "unreachable for %(unreachable)gs, wait budget %(wait)gs, crawl-delay "
        "%(delay)s, dry run %(dry)s, usage preferences %(usage)s, page directives "
        "%(page)s, waiting requests in the %(where)s",
        {
            "standard": config.standard,
            "token": token,
            "cache": cache,
            "unreachable": config.unreachable_ttl,
            "wait": config.max_wait,
            "delay": "on" if config.crawl_delay else "off",
            "dry": "on" if config.dry_run else "off",
            "usage": _usage_policy(config),
            "page": config.page_directives,
            "where": f"scheduler's queue ({safe(queue)})" if queues else "downloader",
        },
        extra=extra,
    )


def _warn_unknown_settings(crawler: Crawler, extra: dict[str, Any]) -> None:
    for name in unknown_settings(crawler.settings):
        close = closest_setting(name)
        hint = f"; did you mean {close}?" if close else ""
        logger.warning(
            "Unknown setting %(name)s: no ROBOTS_STD_* setting has that name, so it "
            "changes nothing%(hint)s",
            {"name": safe(name), "hint": hint},
            extra=extra,
        )


def _warn_user_agent(crawler: Crawler, config: Config, extra: dict[str, Any]) -> None:
    """A ``ROBOTSTXT_USER_AGENT`` whose product token is not what was written."""
    raw = crawler.settings.get("ROBOTSTXT_USER_AGENT")
    if not isinstance(raw, (str, bytes)) or config.token is None:
        return
    written = raw.decode("utf-8", "replace") if isinstance(raw, bytes) else raw
    if written.split("/", 1)[0].strip() != config.token:
        logger.warning(
            "ROBOTSTXT_USER_AGENT %(raw)r is not a product token (letters, '_' "
            "and '-'); robots.txt groups are matched with %(token)r",
            {"raw": safe(written), "token": config.token},
            extra=extra,
        )


def _report_queue(crawler: Crawler, queues: int, extra: dict[str, Any]) -> str:
    """The scheduler's queue in use, after a WARNING if it holds no waiting
    requests."""
    setting, queue = queue_in_use(crawler.settings)
    if not queues:
        ours = REDIS_QUEUE if setting == "SCHEDULER_QUEUE_CLASS" else PRIORITY_QUEUE
        logger.warning(
            "The scheduler's queue %(queue)s (%(setting)s) does not hold the requests "
            "that wait for a robots.txt: they wait in the downloader, each holding a "
            "concurrency slot, and JOBDIR does not keep them; use %(setting)s = "
            "%(ours)r",
            {"queue": safe(queue), "setting": setting, "ours": ours},
            extra=extra,
        )
    elif setting == "SCHEDULER_PRIORITY_QUEUE" and crawler.settings.getint(
        "CONCURRENT_REQUESTS_PER_IP"
    ):
        logger.info(
            "CONCURRENT_REQUESTS_PER_IP is set, which Scrapy's "
            "DownloaderAwarePriorityQueue refuses: requests are taken by priority "
            "alone, as ScrapyPriorityQueue takes them, not from the least busy slot",
            extra=extra,
        )
    return queue


def _usage_policy(config: Config) -> str:
    """``exposed only``, or ``drop for train-ai (unknown: allow)``."""
    if config.usage_enforce == "off":
        return "exposed only"
    purpose = config.usage_purpose or "the purpose in each request's meta"
    policy = f"{config.usage_enforce} for {purpose}"
    if config.usage_enforce == "drop":
        policy += f" (unknown: {config.usage_unknown})"
    return policy


def unknown_settings(names: Iterable[object]) -> list[str]:
    """The ``ROBOTS_STD_*`` names among ``names`` (a settings object iterates over
    its names) that this package does not read."""
    return sorted(
        name
        for name in names
        if isinstance(name, str) and name.startswith(_PREFIX) and name not in DEFAULTS
    )


def closest_setting(name: str) -> str | None:
    """The valid ``ROBOTS_STD_*`` name closest to ``name``, if one is close. The
    shared prefix is left out of the comparison: it makes every name look close."""
    known = {valid[len(_PREFIX) :]: valid for valid in DEFAULTS}
    close = difflib.get_close_matches(name[len(_PREFIX) :], known, n=1, cutoff=0.6)
    return known[close[0]] if close else None


def _builtin_enabled(crawler: Crawler) -> bool:
    try:
        middlewares = crawler.engine.downloader.middleware.middlewares
    except (AttributeError, RuntimeError):
        return False
    return any(isinstance(mw, RobotsTxtMiddleware) for mw in middlewares)
