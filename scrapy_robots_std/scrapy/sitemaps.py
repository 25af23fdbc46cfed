"""``ROBOTS_STD_SITEMAP_CALLBACK``: a robots.txt's Sitemap lines fed to the spider."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Final
from urllib.parse import urljoin

from scrapy.http import Request
from w3lib.url import safe_url_string

from scrapy_robots_std import stats as _stats
from scrapy_robots_std.config import SettingsError
from scrapy_robots_std.scrapy.origin import origin_of

if TYPE_CHECKING:
    from collections.abc import Callable

    from scrapy.crawler import Crawler
    from scrapy.spiders import Spider

    from scrapy_robots_std.cache.memory import MemoryCache
    from scrapy_robots_std.config import Config
    from scrapy_robots_std.robotstxt.robots import RobotsTxt

__all__ = ["SITEMAP_META", "SitemapFeeder"]

#: On the requests fed to the callback: the robots.txt listing the URL.
SITEMAP_META: Final = "robots_std_sitemap_of"


class SitemapFeeder:
    """Schedules each Sitemap URL of a parsed robots.txt once per origin."""

    def __init__(self, crawler: Crawler, config: Config) -> None:
        self.crawler = crawler
        self.callback_name = config.sitemap_callback
        self._bound = config.cache_max_origins
        self._fed: set[str] = set()
        spider = getattr(crawler, "spider", None)
        if spider is not None:
            self.callback(spider)  # a bad name stops the crawl at start

    def callback(self, spider: Spider) -> Callable[..., Any] | None:
        name = self.callback_name
        if name is None:
            return None
        callback = getattr(spider, name, None)
        if not callable(callback):
            raise SettingsError(
                f"ROBOTS_STD_SITEMAP_CALLBACK: spider {spider.name!r} has no "
                f"method {name!r}"
            )
        return callback  # type: ignore[no-any-return]

    def feed(self, origin: str, robots: RobotsTxt, robots_url: str) -> None:
        spider = self.crawler.spider
        if self.callback_name is None or not robots.sitemaps or spider is None:
            return
        if origin in self._fed:
            return
        if len(self._fed) >= self._bound:
            self._fed.clear()  # bounded; the dupefilter still drops repeats
        self._fed.add(origin)
        callback = self.callback(spider)
        stats = self.crawler.stats
        for listed in robots.sitemaps:
            try:
                url = safe_url_string(urljoin(robots_url, listed))
            except ValueError:
                url = ""
            if origin_of(url) is None:
                stats.inc_value(_stats.SITEMAPS_INVALID)
                continue
            request = Request(url, callback=callback, meta={SITEMAP_META: robots_url})
            self.crawler.engine.crawl(request)
            stats.inc_value(_stats.SITEMAPS_SCHEDULED)

    def listed(self, url: str, memory: MemoryCache) -> tuple[str, ...] | None:
        """The ``Sitemap:`` URLs of the robots.txt for ``url``'s origin.

        ``None`` when no verdict for that origin is in ``memory`` (not fetched yet,
        or evicted); ``()`` when its robots.txt lists none or was not parsed.
        """
        origin = origin_of(url)
        entry = memory.get(origin.key) if origin is not None else None
        if entry is None:
            return None
        return entry.robots.sitemaps if entry.robots is not None else ()
