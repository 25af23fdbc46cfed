"""Crawl-delay, Request-rate and Sitemap lines in real crawls (issue 5).

The server's arrival times are the ground truth: with ``ROBOTS_STD_CRAWL_DELAY``
on, the pages of an origin that asks for a delay arrive at least that far apart,
while another origin in the same crawl is fetched at full speed (seen at its
download slot: no delay, several pages at once; arrival gaps only bound the delay
from below, as a loaded machine stretches them).
"""

from __future__ import annotations

import itertools
import logging
from typing import TYPE_CHECKING, Any, ClassVar
from urllib.parse import urlsplit

import pytest
from scrapy import signals
from scrapy.spiders import SitemapSpider
from scrapy.utils.defer import deferred_f_from_coro_f

from scrapy_robots_std import RobotsTxtStdMiddleware
from scrapy_robots_std.config import SettingsError
from tests.helpers.crawl import HostileSpider, run_crawl
from tests.helpers.crawl import settings as crawl_settings
from tests.helpers.names import loopback_names
from tests.helpers.server import Reply

if TYPE_CHECKING:
    from collections.abc import Iterable
    from pathlib import Path

    from scrapy import Request, Spider
    from scrapy.crawler import Crawler
    from scrapy.http import Response

    from tests.helpers.crawl import CrawlResult
    from tests.helpers.server import HostileServer

pytestmark = pytest.mark.crawl

MW_LOGGER = "scrapy_robots_std.scrapy.middleware"
SLOW = "slow.test"
FAST = "fast.test"


def settings(**overrides: Any) -> dict[str, Any]:
    """The crawl tests' add-on settings, with Crawl-delay honoured."""
    return crawl_settings(**{"ROBOTS_STD_CRAWL_DELAY": True, **overrides})


def site(
    server: HostileServer, host: str, robots: bytes, pages: Iterable[str]
) -> list[str]:
    """Serve ``robots`` and ``pages`` under ``host``; return the page URLs."""
    server.add_route("/robots.txt", Reply(200, {}, robots), host=host)
    urls = []
    for page in pages:
        server.add_route(
            page, Reply(200, {"Content-Type": "text/html"}, b"<p>ok</p>"), host=host
        )
        urls.append(server.url(page, host=host))
    return urls


def arrivals(server: HostileServer, host: str, pages: bool = True) -> list[float]:
    return sorted(
        r.arrived
        for r in server.requests
        if r.host == host and (r.path != "/robots.txt") == pages
    )


def gaps(times: list[float]) -> list[float]:
    return [later - earlier for earlier, later in itertools.pairwise(times)]


def watch_slots(crawler: Crawler, seen: dict[str, list[tuple[float, int]]]) -> None:
    """For each page downloaded (robots.txt aside), record its download slot's delay
    and how many of the slot's downloads were in flight (itself included), under the
    page's host."""

    def downloaded(response: Response, request: Request, spider: Spider) -> None:
        url = urlsplit(request.url)
        if url.path == "/robots.txt":
            return
        assert crawler.engine is not None
        downloader = crawler.engine.downloader
        slot = downloader.slots[downloader.get_slot_key(request)]
        seen.setdefault(url.hostname or "", []).append(
            (slot.download_delay(), len(slot.transferring))
        )

    # weak=False: nothing else holds this closure.
    crawler.signals.connect(downloaded, signal=signals.response_downloaded, weak=False)


def info_lines(result: CrawlResult) -> list[str]:
    return result.messages(logging.INFO, MW_LOGGER)


@deferred_f_from_coro_f
async def test_crawl_delay_spaces_one_origin_while_another_runs_at_full_speed(
    hostile: HostileServer,
) -> None:
    with loopback_names():
        slow = site(
            hostile,
            SLOW,
            b"User-agent: *\nCrawl-delay: 2\nDisallow: /private/\n",
            [f"/page/{n}" for n in range(5)],
        )
        fast = site(
            hostile, FAST, b"User-agent: *\nDisallow:\n", [f"/p/{n}" for n in range(20)]
        )
        slots: dict[str, list[tuple[float, int]]] = {}
        result = await run_crawl(
            slow + fast, settings(), on_crawler=lambda c: watch_slots(c, slots)
        )

    slow_pages = arrivals(hostile, SLOW)
    [slow_robots] = arrivals(hostile, SLOW, pages=False)
    assert len(slow_pages) == 5
    # The robots.txt request counts too: the first page waits the delay after it.
    assert slow_pages[0] - slow_robots >= 2.0
    assert min(gaps(slow_pages)) >= 2.0, gaps(slow_pages)

    fast_pages = arrivals(hostile, FAST)
    assert len(fast_pages) == 20
    # All 20 fast pages are in before the slow origin's second page.
    assert fast_pages[-1] < slow_pages[1]
    # Full speed, seen where the delay acts (the download slot) rather than in
    # arrival gaps, which a loaded machine stretches: the fast origin's slot has no
    # delay and downloads several pages at once; the slow one's, one at a time.
    assert {delay for delay, _ in slots[FAST]} == {0.0}
    assert max(transferring for _, transferring in slots[FAST]) > 1
    assert {delay for delay, _ in slots[SLOW]} == {2.0}
    assert max(transferring for _, transferring in slots[SLOW]) == 1

    assert result.stats["robots_std/delay/asked"] == 1
    assert result.stats["robots_std/delay/applied"] == 1
    assert result.stats["robots_std/delay/max_seconds"] == 2.0
    assert result.stats["robots_std/delay/requests"] == 5
    assert "robots_std/delay/capped" not in result.stats


@deferred_f_from_coro_f
async def test_crawl_delay_means_one_download_at_a_time_at_any_concurrency(
    hostile: HostileServer,
) -> None:
    """With 8 concurrent requests allowed per domain and pages that take 0.4 s to
    answer, a 0.3 s Crawl-delay still holds from the end of one download to the
    start of the next: the slot downloads one page at a time."""
    answer, delay = 0.4, 0.3
    pages = [f"/page/{n}" for n in range(4)]
    with loopback_names():
        hostile.add_route(
            "/robots.txt",
            Reply(200, {}, f"User-agent: *\nCrawl-delay: {delay}\n".encode()),
            host=SLOW,
        )
        for page in pages:
            hostile.add_route(
                page, Reply(200, {}, b"<p>ok</p>", delay=answer), host=SLOW
            )
        urls = [hostile.url(page, host=SLOW) for page in pages]
        result = await run_crawl(
            urls, settings(CONCURRENT_REQUESTS=16, CONCURRENT_REQUESTS_PER_DOMAIN=8)
        )
    slow_pages = arrivals(hostile, SLOW)
    assert len(slow_pages) == len(pages)
    # Each page arrives after the previous one was answered, plus the delay.
    assert min(gaps(slow_pages)) >= answer + delay - 0.02, gaps(slow_pages)
    assert result.stats["robots_std/delay/applied"] == 1


@deferred_f_from_coro_f
async def test_crawl_delay_is_off_by_default(hostile: HostileServer) -> None:
    with loopback_names():
        urls = site(
            hostile, SLOW, b"User-agent: *\nCrawl-delay: 5\n", ["/a", "/b", "/c"]
        )
        result = await run_crawl(urls, settings(ROBOTS_STD_CRAWL_DELAY=False))
    pages = arrivals(hostile, SLOW)
    assert len(pages) == 3
    assert pages[-1] - pages[0] < 1.0
    # Counted, so a user can see that robots.txt asked for a delay.
    assert result.stats["robots_std/delay/asked"] == 1
    assert "robots_std/delay/applied" not in result.stats
    assert "robots_std/delay/requests" not in result.stats


@deferred_f_from_coro_f
async def test_request_rate_when_stricter_than_crawl_delay(
    hostile: HostileServer,
) -> None:
    robots = b"User-agent: *\nCrawl-delay: 0.2\nRequest-rate: 2/3s\n"
    with loopback_names():
        urls = site(hostile, SLOW, robots, ["/a", "/b", "/c"])
        result = await run_crawl(urls, settings())
    assert min(gaps(arrivals(hostile, SLOW))) >= 1.5
    assert result.stats["robots_std/delay/max_seconds"] == 1.5


@deferred_f_from_coro_f
async def test_delay_capped_by_the_maximum_and_logged_once(
    hostile: HostileServer,
) -> None:
    with loopback_names():
        urls = site(
            hostile, SLOW, b"User-agent: *\nCrawl-delay: 3600\n", ["/a", "/b", "/c"]
        )
        result = await run_crawl(urls, settings(ROBOTS_STD_CRAWL_DELAY_MAX=1))
    page_gaps = gaps(arrivals(hostile, SLOW))
    assert len(page_gaps) == 2
    assert min(page_gaps) >= 1.0
    assert max(page_gaps) < 3.0
    [line] = [m for m in info_lines(result) if "capped" in m]
    assert "asks for Crawl-delay 3600; capped at 1 s" in line
    assert hostile.url("/robots.txt", host=SLOW) in line
    assert result.stats["robots_std/delay/capped"] == 1
    assert result.stats["robots_std/delay/max_seconds"] == 1.0


@deferred_f_from_coro_f
async def test_download_slots_set_by_the_user_win(hostile: HostileServer) -> None:
    with loopback_names():
        urls = site(
            hostile, SLOW, b"User-agent: *\nCrawl-delay: 5\n", ["/a", "/b", "/c"]
        )
        result = await run_crawl(
            urls, settings(DOWNLOAD_SLOTS={SLOW: {"delay": 0, "concurrency": 8}})
        )
    pages = arrivals(hostile, SLOW)
    assert pages[-1] - pages[0] < 1.0
    [line] = [m for m in info_lines(result) if "DOWNLOAD_SLOTS" in m]
    assert f"ignored because DOWNLOAD_SLOTS sets the timing of slot '{SLOW}'" in line
    assert result.stats["robots_std/delay/ignored"] == 1
    assert "robots_std/delay/requests" not in result.stats


@deferred_f_from_coro_f
async def test_a_larger_download_delay_is_kept_with_its_jitter_narrowed(
    hostile: HostileServer,
) -> None:
    # DOWNLOAD_DELAY 1.6 with ±50 % jitter could wait 0.8 s; Crawl-delay 1.2 is
    # the floor, and the user's larger mean is kept.
    with loopback_names():
        urls = site(
            hostile,
            SLOW,
            b"User-agent: *\nCrawl-delay: 1.2\n",
            ["/a", "/b", "/c", "/d"],
        )
        await run_crawl(urls, settings(DOWNLOAD_DELAY=1.6, DOWNLOAD_DELAY_JITTER=0.5))
    page_gaps = gaps(arrivals(hostile, SLOW))
    assert len(page_gaps) == 3
    assert min(page_gaps) >= 1.2, page_gaps


@deferred_f_from_coro_f
async def test_autothrottle_does_not_lower_the_delay_below_robots_txt(
    hostile: HostileServer,
) -> None:
    # AutoThrottle sets the slot's delay from latency after every response (about
    # zero here); the robots.txt floor is put back before the next request leaves.
    with loopback_names():
        urls = site(
            hostile, SLOW, b"User-agent: *\nCrawl-delay: 1\n", ["/a", "/b", "/c", "/d"]
        )
        await run_crawl(
            urls,
            settings(
                AUTOTHROTTLE_ENABLED=True,
                AUTOTHROTTLE_START_DELAY=0,
                AUTOTHROTTLE_TARGET_CONCURRENCY=8,
            ),
        )
    page_gaps = gaps(arrivals(hostile, SLOW))
    assert len(page_gaps) == 3
    assert min(page_gaps) >= 1.0, page_gaps


@deferred_f_from_coro_f
async def test_1994_mode_has_no_crawl_delay(hostile: HostileServer) -> None:
    with loopback_names():
        urls = site(
            hostile, SLOW, b"User-agent: *\nCrawl-delay: 5\n", ["/a", "/b", "/c"]
        )
        result = await run_crawl(urls, settings(ROBOTS_STD_STANDARD="1994"))
    pages = arrivals(hostile, SLOW)
    assert len(pages) == 3
    assert pages[-1] - pages[0] < 1.0
    assert "robots_std/delay/asked" not in result.stats


# -- Sitemap lines ---------------------------------------------------------------------


class SitemapCrawl(HostileSpider, SitemapSpider):
    """A SitemapSpider with no sitemap_urls: the middleware feeds it the Sitemap
    lines of each robots.txt it parses. Pages go to HostileSpider.parse."""

    name = "sitemap-crawl"
    sitemap_rules: ClassVar = [("", "parse")]

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.sitemaps_seen: list[tuple[str, ...] | None] = []

    def parse(self, response: Response) -> None:
        super().parse(response)
        middleware = self.crawler.get_downloader_middleware(RobotsTxtStdMiddleware)
        assert middleware is not None
        self.sitemaps_seen.append(middleware.sitemaps(response.url))


def sitemap_xml(urls: Iterable[str]) -> bytes:
    entries = "".join(f"<url><loc>{url}</loc></url>" for url in urls)
    return (
        '<?xml version="1.0" encoding="UTF-8"?>'
        '<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'
        f"{entries}</urlset>"
    ).encode()


@deferred_f_from_coro_f
async def test_sitemap_lines_feed_a_sitemap_spider_without_a_second_robots_fetch(
    hostile: HostileServer,
) -> None:
    page_urls = [hostile.url(p) for p in ("/public/1", "/public/2", "/private/3")]
    for path in ("/", "/public/1", "/public/2", "/private/3"):
        hostile.add_route(path, Reply(200, {"Content-Type": "text/html"}, b"<p/>"))
    hostile.add_route(
        "/sitemap.xml",
        Reply(200, {"Content-Type": "application/xml"}, sitemap_xml(page_urls)),
    )
    robots = (
        "User-agent: *\nDisallow: /private/\n"
        f"Sitemap: {hostile.url('/sitemap.xml')}\n"
        "Sitemap: /relative-sitemap.xml\n"
    )
    hostile.add_route("/robots.txt", Reply(200, {}, robots.encode()))
    hostile.add_route(
        "/relative-sitemap.xml",
        Reply(200, {"Content-Type": "application/xml"}, sitemap_xml([])),
    )

    result = await run_crawl(
        [hostile.url("/")],
        settings(ROBOTS_STD_SITEMAP_CALLBACK="_parse_sitemap"),
        spider_cls=SitemapCrawl,
    )

    served = [r.path for r in hostile.requests]
    assert served.count("/robots.txt") == 1
    assert served.count("/sitemap.xml") == 1
    assert served.count("/relative-sitemap.xml") == 1
    assert set(result.responses) == {hostile.url("/"), *page_urls[:2]}
    assert "/private/3" not in served
    assert result.stats["robots_std/sitemaps/scheduled"] == 2
    assert result.stats["robots_std/dropped/rule"] == 1
    spider = result.crawler.spider
    assert isinstance(spider, SitemapCrawl)
    listed = (hostile.url("/sitemap.xml"), "/relative-sitemap.xml")
    assert spider.sitemaps_seen == [listed] * 3


@deferred_f_from_coro_f
async def test_sitemap_callback_that_the_spider_lacks_stops_the_crawl_at_start(
    hostile: HostileServer,
) -> None:
    hostile.add_route("/robots.txt", Reply(200, {}, b"Sitemap: /s.xml\n"))
    with pytest.raises(SettingsError, match="ROBOTS_STD_SITEMAP_CALLBACK: spider"):
        await run_crawl(
            [hostile.url("/")], settings(ROBOTS_STD_SITEMAP_CALLBACK="no_such_method")
        )
    assert hostile.requests == []


@deferred_f_from_coro_f
async def test_a_delay_read_from_a_persistent_cache_applies_too(
    hostile: HostileServer, tmp_path: Path
) -> None:
    # The second crawl finds the verdict in the SQLite file: no robots.txt fetch,
    # yet its pages are spaced, and the delay is reported once.
    shared = settings(
        ROBOTS_STD_CACHE_BACKEND="scrapy_robots_std.cache.SqliteCache",
        ROBOTS_STD_CACHE_PATH=str(tmp_path / "robots.sqlite3"),
    )
    with loopback_names():
        urls = site(
            hostile, SLOW, b"User-agent: *\nCrawl-delay: 1\n", ["/a", "/b", "/c"]
        )
        await run_crawl(urls[:1], shared)
        first_crawl_ended = hostile.requests[-1].arrived
        result = await run_crawl(urls, shared)
    assert len(arrivals(hostile, SLOW, pages=False)) == 1  # the first crawl's
    second = [t for t in arrivals(hostile, SLOW) if t > first_crawl_ended]
    page_gaps = gaps(second)
    assert len(page_gaps) == 2
    assert min(page_gaps) >= 1.0, page_gaps
    assert result.stats["robots_std/cache/store_hit"] == 1
    assert result.stats["robots_std/delay/applied"] == 1
