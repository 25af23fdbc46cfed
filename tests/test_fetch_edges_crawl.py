"""The robots.txt download's edges: an ``IgnoreRequest`` from another downloader
middleware (an HTTP cache replaying offline).

Real crawls against local servers, except the port of Scrapy's own unit test of an
ignored robots.txt request, which drives the middleware with a stand-in engine.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any
from unittest import mock
from urllib.parse import urlsplit

import pytest
from hostile import HostileServer, HostileSpider, Reply, run_crawl
from scrapy import Request
from scrapy.exceptions import IgnoreRequest
from scrapy.utils.asyncio import call_later
from scrapy.utils.defer import deferred_f_from_coro_f, maybe_deferred_to_future
from scrapy.utils.test import get_crawler
from test_middleware_crawl import (
    MW_LOGGER,
    RULES,
    assert_no_errors,
    pages_served,
    robots_fetches,
    serve_pages,
    settings,
    stat,
)
from twisted.internet.defer import Deferred

from scrapy_robots_std import RobotsTxtDisallowed, RobotsTxtStdMiddleware
from scrapy_robots_std.scrapy.origin import origin_of

if TYPE_CHECKING:
    from collections.abc import AsyncIterator
    from pathlib import Path

    from hostile import CrawlResult
    from scrapy.crawler import Crawler
    from scrapy.http import Response
    from typing_extensions import Self

    from scrapy_robots_std.cache import CacheEntry

pytestmark = pytest.mark.crawl

IGNORED_LINE = "was not downloaded: a downloader middleware ignored the request"


def ignored_warnings(result: CrawlResult) -> list[str]:
    return [m for m in result.messages(logging.WARNING, MW_LOGGER) if IGNORED_LINE in m]


# -- A. an IgnoreRequest on the robots.txt request is final --------------------------


class IgnoresRobotsTxt:
    """A downloader middleware that will not download robots.txt (as an HTTP cache
    replaying offline does for what it does not hold), and notes the verdict each
    page finds in the cache on its way through."""

    entries: list[CacheEntry | None]

    def __init__(self, crawler: Crawler) -> None:
        self.crawler = crawler
        IgnoresRobotsTxt.entries = []

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        return cls(crawler)

    def process_request(self, request: Request) -> None:
        if urlsplit(request.url).path == "/robots.txt":
            # A control character: the log line must show it escaped.
            raise IgnoreRequest(f"not in the test's cache\x1b[31m: {request.url}")
        mw = self.crawler.get_downloader_middleware(RobotsTxtStdMiddleware)
        origin = origin_of(request.url)
        assert mw is not None
        assert origin is not None
        IgnoresRobotsTxt.entries.append(mw.store.memory.get(origin.key))


IGNORES = {f"{__name__}.IgnoresRobotsTxt": 950}


@deferred_f_from_coro_f
async def test_an_ignored_robots_txt_request_means_no_restrictions(
    hostile: HostileServer,
) -> None:
    hostile.add_route("/robots.txt", Reply(200, {}, RULES))  # never asked for
    urls = serve_pages(hostile)
    result = await run_crawl(urls, settings(DOWNLOADER_MIDDLEWARES=IGNORES))

    # Allowed, as without a robots.txt: the Disallow rule it would have had is moot.
    assert pages_served(hostile) == {"/public/a", "/private/b"}
    assert robots_fetches(hostile) == 0
    assert result.failures == []
    # Final: one request, no retry, no "unreachable".
    assert stat(result, "robotstxt/request_count") == 1
    assert stat(result, "robots_std/fetch/retries") is None
    assert stat(result, "robots_std/verdict/ignored") == 1
    assert stat(result, "robots_std/verdict/allow-all") == 1
    assert stat(result, "robots_std/verdict/unreachable") is None
    assert not any(k.startswith("robotstxt/exception_count/") for k in result.stats)
    assert not any(k.startswith("robots_std/dropped/") for k in result.stats)
    # One WARNING names the robots.txt URL and the exception's message, escaped.
    robots_url = hostile.url("/robots.txt")
    [line] = ignored_warnings(result)
    assert line.startswith(f"robots.txt {robots_url} {IGNORED_LINE} (IgnoreRequest: ")
    assert "not in the test's cache\\x1b[31m: " in line
    assert "\x1b" not in line
    assert line.endswith("no restrictions for this origin, as without a robots.txt")
    # The cache entry says why.
    [entry, *others] = IgnoresRobotsTxt.entries
    assert entry is not None
    assert all(other == entry for other in others)
    assert (entry.verdict, entry.reason) == ("allow-all", "ignored")
    assert entry.detail.startswith(
        "not downloaded: a downloader middleware ignored the request (IgnoreRequest: "
        "not in the test's cache"
    )
    assert_no_errors(result)


class AgainLaterSpider(HostileSpider):
    """Asks for its first start URL, then for each of ``later`` after ``pause``
    seconds: past a verdict's expiry."""

    def __init__(
        self, *args: Any, later: list[str], pause: float, **kwargs: Any
    ) -> None:
        super().__init__(*args, **kwargs)
        self.later = list(later)
        self.pause = pause

    async def start(self) -> AsyncIterator[Request]:
        yield Request(self.start_urls[0], callback=self.parse, errback=self.on_error)

    async def parse(self, response: Response) -> AsyncIterator[Request]:  # type: ignore[override]
        super().parse(response)
        if self.later:
            await sleep(self.pause)
            yield Request(self.later.pop(0), callback=self.parse, errback=self.on_error)


async def sleep(seconds: float) -> None:
    """Sleep on the running reactor (either reactor)."""
    done: Deferred[None] = Deferred()
    call_later(seconds, done.callback, None)
    await maybe_deferred_to_future(done)


@deferred_f_from_coro_f
async def test_an_ignored_robots_txt_request_warns_once_per_origin(
    hostile: HostileServer,
) -> None:
    """The verdict expires (a 1 s TTL) and robots.txt is asked for again, and ignored
    again: counted twice, logged once."""
    first, second = serve_pages(hostile, ("/public/a", "/public/b"))
    result = await run_crawl(
        [first],
        settings(DOWNLOADER_MIDDLEWARES=IGNORES, ROBOTS_STD_CACHE_TTL=1),
        spider_cls=AgainLaterSpider,
        spider_kwargs={"later": [second], "pause": 1.5},
    )
    assert pages_served(hostile) == {"/public/a", "/public/b"}
    assert stat(result, "robotstxt/request_count") == 2
    assert stat(result, "robots_std/verdict/ignored") == 2
    assert len(ignored_warnings(result)) == 1
    assert_no_errors(result)


@deferred_f_from_coro_f
async def test_ignore_robotstxt_request(caplog: pytest.LogCaptureFixture) -> None:
    """The semantics of Scrapy's own test of that name, for this middleware: the
    engine's download of robots.txt fails with ``IgnoreRequest`` a moment later; the
    request robots.txt was fetched for is let through (not ignored), and nothing is
    logged at ERROR (here: one WARNING, ours)."""
    crawler = get_crawler(HostileSpider, settings())
    engine = mock.MagicMock()
    engine.running = True
    engine.downloader.total_concurrency = 16
    asked: list[tuple[str, int]] = []

    async def ignore_request(request: Request) -> Response:
        asked.append((request.url, engine.downloader.total_concurrency))
        failed: Deferred[Response] = Deferred()
        call_later(0, failed.errback, IgnoreRequest())
        return await maybe_deferred_to_future(failed)

    engine.download_async.side_effect = ignore_request
    crawler.engine = engine
    crawler.crawling = True
    middleware = RobotsTxtStdMiddleware(crawler)
    with caplog.at_level(logging.DEBUG):
        assert (
            await middleware.process_request(Request("http://site.local/allowed"))
            is None
        )
    # One download, not retried.
    assert asked == [("http://site.local/robots.txt", 16)]
    assert engine.downloader.total_concurrency == 16
    assert [r for r in caplog.records if r.levelno >= logging.ERROR] == []
    [warning] = [r for r in caplog.records if r.levelno == logging.WARNING]
    assert warning.getMessage() == (
        f"robots.txt http://site.local/robots.txt {IGNORED_LINE} (IgnoreRequest); "
        "no restrictions for this origin, as without a robots.txt"
    )
    assert crawler.stats is not None
    assert crawler.stats.get_value("robots_std/verdict/ignored") == 1


# -- A. the HTTP cache: fill it online, replay it offline ------------------------------


def cache_settings(tmp_path: Path, **overrides: Any) -> dict[str, Any]:
    return settings(
        HTTPCACHE_ENABLED=True,
        HTTPCACHE_DIR=str(tmp_path / "httpcache"),
        HTTPCACHE_EXPIRATION_SECS=0,
        **overrides,
    )


@deferred_f_from_coro_f
async def test_an_offline_replay_of_the_http_cache_obeys_robots_txt(
    tmp_path: Path, refused_port: int
) -> None:
    """A first crawl online fills the HTTP cache, robots.txt included (it goes
    through the engine and the cache middleware like a page); the replay, with the
    server gone and ``HTTPCACHE_IGNORE_MISSING``, obeys the cached robots.txt. An
    origin the first crawl never saw has no robots.txt in the cache: ignored, so no
    restrictions, and its page is then ignored by the cache middleware."""
    with HostileServer(name="replayed") as site:
        site.add_route("/robots.txt", Reply(200, {}, RULES))
        urls = serve_pages(site, ("/public/a", "/private/b"))
        online = await run_crawl(urls, cache_settings(tmp_path))
        assert pages_served(site) == {"/public/a"}
        assert robots_fetches(site) == 1
        assert stat(online, "httpcache/store") == 2  # robots.txt and /public/a
    # The server is stopped: nothing can be downloaded any more.
    unseen = f"http://127.0.0.1:{refused_port}/page"
    replay = await run_crawl(
        [*urls, unseen], cache_settings(tmp_path, HTTPCACHE_IGNORE_MISSING=True)
    )

    assert replay.responses == [urls[0]]  # from the cache
    assert stat(replay, "httpcache/hit") == 2  # robots.txt and /public/a
    failures = dict(zip(replay.failed_urls, replay.failures, strict=True))
    # The cached robots.txt applies: the disallowed page is still dropped.
    dropped = failures[urls[1]]
    assert isinstance(dropped, RobotsTxtDisallowed)
    assert dropped.decision.rule is not None
    assert dropped.decision.rule.pattern == "/private/"
    assert stat(replay, "robots_std/verdict/parse") == 1
    assert stat(replay, "robots_std/dropped/rule") == 1
    # The unseen origin: its robots.txt is not in the cache, so it has none; its
    # page passes this middleware and the cache middleware ignores it in turn.
    ignored = failures[unseen]
    assert isinstance(ignored, IgnoreRequest)
    assert not isinstance(ignored, RobotsTxtDisallowed)
    assert "not in cache" in str(ignored)
    assert stat(replay, "robots_std/verdict/ignored") == 1
    assert stat(replay, "robots_std/verdict/allow-all") == 1
    assert stat(replay, "robots_std/verdict/unreachable") is None
    assert stat(replay, "robotstxt/request_count") == 2  # one for each origin
    assert stat(replay, "httpcache/ignore") == 2  # its robots.txt and its page
    [line] = ignored_warnings(replay)
    assert f"http://127.0.0.1:{refused_port}/robots.txt" in line
    assert "Ignored request not in cache" in line
    assert_no_errors(replay)
