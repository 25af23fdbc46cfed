"""The robots.txt download's edges: an ``IgnoreRequest`` from another downloader
middleware (an HTTP cache replaying offline), the package's own deadline whatever the
download handler does, and the downloader room a robots.txt download runs in.

Real crawls against local servers, except the port of Scrapy's own unit test of an
ignored robots.txt request, which drives the middleware with a stand-in engine.
"""

from __future__ import annotations

import logging
import time
from typing import TYPE_CHECKING, Any
from unittest import mock
from urllib.parse import urlsplit

import pytest
from scrapy import Request, signals
from scrapy.core.downloader.handlers.http11 import HTTP11DownloadHandler
from scrapy.exceptions import IgnoreRequest
from scrapy.utils.asyncio import call_later
from scrapy.utils.defer import deferred_f_from_coro_f, maybe_deferred_to_future
from scrapy.utils.test import get_crawler
from twisted.internet.defer import Deferred

from scrapy_robots_std import RobotsTxtDisallowed, RobotsTxtStdMiddleware
from scrapy_robots_std.scrapy import transfer as transfer_module
from scrapy_robots_std.scrapy.download import FETCH_META
from scrapy_robots_std.scrapy.origin import origin_of
from tests.helpers.crawl import (
    MW_LOGGER,
    RULES,
    HostileSpider,
    assert_no_errors,
    pages_served,
    robots_fetches,
    run_crawl,
    serve_pages,
    settings,
    stat,
)
from tests.helpers.server import HostileServer, Reply

if TYPE_CHECKING:
    from collections.abc import AsyncIterator
    from pathlib import Path
    from typing import Self

    from scrapy.crawler import Crawler
    from scrapy.http import Response

    from scrapy_robots_std.cache import CacheEntry
    from tests.helpers.crawl import CrawlResult

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
    # One download, not retried; the downloader's room was raised while it ran.
    assert asked == [("http://site.local/robots.txt", 17)]
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


# -- B. the package enforces its own deadline ---------------------------------------


class DeafToTimeouts(HTTP11DownloadHandler):
    """Scrapy's HTTP/1.1 handler, deaf to ``download_timeout`` as some third-party
    handlers are: every download may take 30 s."""

    async def download_request(self, request: Request) -> Response:
        deaf = request.replace(meta={**request.meta, "download_timeout": 30})
        return await super().download_request(deaf)


class NotesRobotsTxt:
    """A downloader middleware noting when each robots.txt request starts
    (``time.time()``, as log records), and the downloader's ``total_concurrency``
    as each request goes through."""

    started: list[float]
    rooms: list[tuple[str, int]]

    def __init__(self, crawler: Crawler) -> None:
        self.crawler = crawler
        NotesRobotsTxt.started = []
        NotesRobotsTxt.rooms = []

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        return cls(crawler)

    def process_request(self, request: Request) -> None:
        if FETCH_META in request.meta:
            NotesRobotsTxt.started.append(time.time())
        assert self.crawler.engine is not None
        total = self.crawler.engine.downloader.total_concurrency
        NotesRobotsTxt.rooms.append((urlsplit(request.url).path, total))


NOTES = {f"{__name__}.NotesRobotsTxt": 50}


@deferred_f_from_coro_f
async def test_the_fetch_timeout_holds_whatever_the_download_handler_does(
    hostile: HostileServer,
) -> None:
    """robots.txt answers after 3 s; the handler would wait 30; the verdict
    (unreachable) comes about 1 s after the request, from the package's own cancel,
    like a timeout of the handler's."""
    hostile.add_route("/robots.txt", Reply(200, {}, RULES, delay=3.0))
    urls = serve_pages(hostile)
    result = await run_crawl(
        urls,
        settings(
            DOWNLOAD_HANDLERS={"http": f"{__name__}.DeafToTimeouts"},
            DOWNLOADER_MIDDLEWARES=NOTES,
            ROBOTS_STD_FETCH_TIMEOUT=1,
            ROBOTS_STD_FETCH_RETRIES=0,
            CONCURRENT_REQUESTS=4,
        ),
    )
    [started] = NotesRobotsTxt.started
    [verdict] = [
        r
        for r in result.logs
        if r.name == MW_LOGGER and "is unreachable" in r.getMessage()
    ]
    assert 0.9 <= verdict.created - started < 2.5
    assert (
        "(DownloadTimeoutError: Getting " + hostile.url("/robots.txt")
    ) in verdict.getMessage()
    assert stat(result, "robots_std/verdict/unreachable") == 1
    assert stat(result, "robots_std/dropped/unreachable") == 2
    assert stat(result, "robots_std/fetch/deadline") == 1
    assert (
        stat(
            result,
            "robotstxt/exception_count/<class 'scrapy.exceptions.DownloadTimeoutError'>",
        )
        == 1
    )
    assert stat(result, "robots_std/fetch/cancelled") is None
    assert pages_served(hostile) == set()
    # The room it had in the downloader was given back when it was cancelled: the
    # pages (dropped after this middleware) see the limit as it was.
    assert sorted(NotesRobotsTxt.rooms) == [
        ("/private/b", 4),
        ("/public/a", 4),
        ("/robots.txt", 5),
    ]
    assert result.crawler.engine is None or (
        result.crawler.engine.downloader.total_concurrency == 4
    )
    assert_no_errors(result)


class SlowFirstSpider(HostileSpider):
    """A slow page that is not checked goes first; the checked start URLs follow
    once it is in the downloader."""

    def __init__(self, *args: Any, slow: str, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.slow = slow

    async def start(self) -> AsyncIterator[Request]:
        yield Request(
            self.slow,
            callback=self.parse,
            errback=self.on_error,
            meta={"dont_obey_robotstxt": True},
        )
        await sleep(0.5)
        async for request in super().start():
            yield request


@deferred_f_from_coro_f
async def test_time_in_the_slots_queue_does_not_count(hostile: HostileServer) -> None:
    """The origin's slot downloads one at a time and is busy for 2.5 s with a page
    when robots.txt is asked for: its 1 s counts from the start of its transfer, as
    a download handler counts ``download_timeout``, and it is parsed."""
    hostile.add_route("/slow", Reply(200, {}, b"slow", delay=2.5))
    hostile.add_route("/robots.txt", Reply(200, {}, RULES))
    urls = serve_pages(hostile)
    result = await run_crawl(
        urls,
        settings(
            DOWNLOAD_SLOTS={"127.0.0.1": {"concurrency": 1}},
            ROBOTS_STD_FETCH_TIMEOUT=1,
            ROBOTS_STD_FETCH_RETRIES=0,
        ),
        spider_cls=SlowFirstSpider,
        spider_kwargs={"slow": hostile.url("/slow")},
    )
    [slow] = hostile.requests_for("/slow")
    [robots] = hostile.requests_for("/robots.txt")
    assert robots.arrived - slow.arrived >= 2.0  # it waited in the slot's queue
    assert stat(result, "robots_std/verdict/parse") == 1
    assert stat(result, "robots_std/fetch/deadline") is None
    assert pages_served(hostile) == {"/slow", "/public/a"}
    assert_no_errors(result)


# -- C. a robots.txt download has a room of its own in the downloader ----------------


class RecordedTimer:
    def __init__(self, timer: Any) -> None:
        self.timer = timer
        self.cancelled = False

    def cancel(self) -> None:
        self.cancelled = True
        self.timer.cancel()


@deferred_f_from_coro_f
async def test_a_robots_txt_download_has_a_room_of_its_own(
    hostile: HostileServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``total_concurrency`` is one higher while robots.txt downloads and back to
    ``CONCURRENT_REQUESTS`` for the pages; the download's deadline timer is
    cancelled when it ends first."""
    timers: list[RecordedTimer] = []
    real_call_later = transfer_module.call_later

    def recording_call_later(delay: float, func: Any, *args: Any) -> Any:
        timer = real_call_later(delay, func, *args)
        if getattr(func, "__name__", "") != "_deadline_passed":
            return timer
        timers.append(RecordedTimer(timer))
        return timers[-1]

    monkeypatch.setattr(transfer_module, "call_later", recording_call_later)
    hostile.add_route("/robots.txt", Reply(200, {}, RULES, delay=0.3))
    urls = serve_pages(hostile, ("/public/a", "/public/b", "/private/c"))
    totals: list[int] = []
    middlewares: list[RobotsTxtStdMiddleware] = []

    def on_crawler(crawler: Crawler) -> None:
        def closed() -> None:
            assert crawler.engine is not None
            totals.append(crawler.engine.downloader.total_concurrency)
            mw = crawler.get_downloader_middleware(RobotsTxtStdMiddleware)
            assert mw is not None
            middlewares.append(mw)

        crawler.signals.connect(closed, signals.spider_closed, weak=False)

    result = await run_crawl(
        urls,
        settings(DOWNLOADER_MIDDLEWARES=NOTES, CONCURRENT_REQUESTS=3),
        on_crawler=on_crawler,
    )
    # The pages go through this middleware before the drop of /private/c.
    assert sorted(NotesRobotsTxt.rooms) == [
        ("/private/c", 3),
        ("/public/a", 3),
        ("/public/b", 3),
        ("/robots.txt", 4),
    ]
    assert totals == [3]
    [mw] = middlewares
    assert mw.book.fetcher.download.rooms == 0
    assert [timer.cancelled for timer in timers] == [True]
    assert stat(result, "robots_std/fetch/deadline") is None
    assert pages_served(hostile) == {"/public/a", "/public/b"}
    assert_no_errors(result)
