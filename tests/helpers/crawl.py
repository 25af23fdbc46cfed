"""The tests' one crawl helper: a spider that records, a runner, and what they share.

:func:`run_crawl` runs a real Scrapy crawl on the running reactor (either reactor)
and returns a :class:`CrawlResult`: the stats, what reached the spider, every log
record. :func:`crawl_in_process` is the same crawl for a subprocess of its own
(``CrawlerProcess``; the worker modules beside this one), ending in a JSON report.

Also here, for the crawl tests: :func:`settings` (the add-on with short timeouts),
the pages a server is given (:func:`serve_pages`) and served (:func:`pages_served`),
and the spiders more than one test module crawls with.
"""

from __future__ import annotations

import json
import logging
import sys
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from scrapy import Request, Spider
from scrapy.utils.test import get_crawler

from scrapy_robots_std import RobotsTxtDisallowed
from tests.helpers.server import Reply

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Callable, Iterable, Mapping

    import pytest
    from scrapy.crawler import Crawler
    from scrapy.http import Response
    from twisted.python.failure import Failure

    from tests.helpers.server import HostileServer

__all__ = [
    "DEFAULT_CRAWL_SETTINGS",
    "MW_LOGGER",
    "PAGES",
    "RULES",
    "CrawlResult",
    "DownloadAsyncSpider",
    "HostileSpider",
    "LaterSpider",
    "assert_no_errors",
    "crawl_in_process",
    "drop_lines",
    "pages_served",
    "robots_fetches",
    "run_crawl",
    "serve_pages",
    "settings",
    "stat",
    "use_as_http_proxy",
    "write_report",
]

MW_LOGGER = "scrapy_robots_std.scrapy.middleware"
RULES = b"User-agent: *\nDisallow: /private/\n"
PAGES = ("/public/a", "/private/b")


# -- spiders -----------------------------------------------------------------------------
class HostileSpider(Spider):
    """Requests every start URL at once; records responses and errback failures."""

    name = "hostile"

    def __init__(
        self,
        *args: Any,
        start_urls: list[str] | None = None,
        request_meta: Mapping[str, Any] | None = None,
        dont_filter: bool = False,
        **kwargs: Any,
    ) -> None:
        super().__init__(*args, **kwargs)
        self.start_urls = list(start_urls or [])
        self.request_meta = dict(request_meta or {})
        self.dont_filter = dont_filter
        # URLs and requests, not responses: a gzip bomb's body is not worth keeping.
        self.responses: list[tuple[str, Request]] = []
        self.failures: list[Failure] = []

    async def start(self) -> AsyncIterator[Request]:
        for url in self.start_urls:
            yield Request(
                url,
                callback=self.parse,
                errback=self.on_error,
                meta=dict(self.request_meta),
                # True would also bypass OffsiteMiddleware, i.e. allowed_domains
                dont_filter=self.dont_filter,
            )

    def parse(self, response: Response) -> None:
        self.responses.append((response.url, response.request or Request(response.url)))

    def on_error(self, failure: Failure) -> None:
        self.failures.append(failure)


class LaterSpider(HostileSpider):
    """Requests ``/slow`` (answered after a while) and ``first``; once ``/slow``
    arrives, the ``later`` paths, whose origin's verdict has expired by then."""

    first: tuple[str, ...] = ()
    later: tuple[str, ...] = ()

    async def start(self) -> AsyncIterator[Request]:
        for url in (*self.first, self.slow):
            yield Request(url, callback=self.parse_first, errback=self.on_error)

    def parse_first(self, response: Response) -> Any:
        self.parse(response)
        if response.url == self.slow:
            for url in self.later:
                yield Request(url, callback=self.parse, errback=self.on_error)

    slow: str = ""


class DownloadAsyncSpider(Spider):
    """Sends its requests with ``engine.download_async`` (no scheduler): the
    middleware's own wait path, not the parking one."""

    name = "download_async"

    def __init__(self, *args: Any, urls: list[str], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.urls = urls
        self.outcomes: dict[str, str] = {}

    async def start(self) -> AsyncIterator[Any]:
        from scrapy.utils.defer import deferred_from_coro, maybe_deferred_to_future
        from twisted.internet.defer import DeferredList

        async def one(url: str) -> None:
            try:
                await self.crawler.engine.download_async(Request(url))  # type: ignore[union-attr]
                self.outcomes[url] = "fetched"
            except RobotsTxtDisallowed:
                self.outcomes[url] = "dropped"
            except Exception as exc:  # noqa: BLE001 -- recorded for the assertion
                self.outcomes[url] = repr(exc)

        # Both reactors: gather through Twisted.
        await maybe_deferred_to_future(
            DeferredList(
                [deferred_from_coro(one(u)) for u in self.urls], consumeErrors=True
            )
        )
        return
        yield  # pragma: no cover


# -- running a crawl ---------------------------------------------------------------------


@dataclass
class CrawlResult:
    stats: dict[str, Any]
    #: URL of every response that reached the callback, in arrival order
    responses: list[str]
    #: the exception of every errback failure, in arrival order
    failures: list[BaseException]
    logs: list[logging.LogRecord]
    crawler: Crawler
    #: ``response.request`` for each entry of :attr:`responses`
    requests: list[Request] = field(default_factory=list)
    #: the request URL for each entry of :attr:`failures`
    failed_urls: list[str] = field(default_factory=list)
    #: wall-clock seconds the crawl took
    elapsed: float = 0.0

    @property
    def spider(self) -> Spider:
        assert self.crawler.spider is not None
        return self.crawler.spider

    def messages(
        self, level: int | None = None, logger_prefix: str | None = None
    ) -> list[str]:
        """Formatted log messages at ``level`` or above, from loggers under a prefix."""
        return [
            record.getMessage()
            for record in self.logs
            if (level is None or record.levelno >= level)
            and (
                logger_prefix is None
                or record.name == logger_prefix
                or record.name.startswith(logger_prefix.rstrip(".") + ".")
            )
        ]


class _ListHandler(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.NOTSET)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)


DEFAULT_CRAWL_SETTINGS: Mapping[str, Any] = {
    "TELNETCONSOLE_ENABLED": False,
    "DOWNLOAD_TIMEOUT": 10,
}


async def run_crawl(
    start_urls: Iterable[str] = (),
    settings: Mapping[str, Any] | None = None,
    *,
    spider_kwargs: Mapping[str, Any] | None = None,
    meta: Mapping[str, Any] | None = None,
    dont_filter: bool = False,
    spider_cls: type[Spider] = HostileSpider,
    on_crawler: Callable[[Crawler], None] | None = None,
    timeout: float | None = None,
) -> CrawlResult:
    """Crawl ``start_urls``, by default with a :class:`HostileSpider`; return what
    happened.

    ``settings`` go on top of :data:`DEFAULT_CRAWL_SETTINGS`; ``spider_kwargs``
    become spider attributes (``allowed_domains=[...]``); ``meta`` is copied into
    every start request. A spider that is not a :class:`HostileSpider` gets
    ``spider_kwargs`` alone (and ``start_urls`` if any are given), and the
    result's responses and failures stay empty: read its own records on
    ``result.spider``. ``on_crawler`` sees the crawler before it starts, e.g. to
    connect signals. With a ``timeout``, a crawl still running after that many
    seconds fails the test. Every log record emitted during the crawl, at every
    level, is kept.
    """
    crawler = get_crawler(spider_cls, {**DEFAULT_CRAWL_SETTINGS, **(settings or {})})
    if on_crawler is not None:
        on_crawler(crawler)
    kwargs = dict(spider_kwargs or {})
    start_urls = list(start_urls)
    if issubclass(spider_cls, HostileSpider):
        kwargs.update(start_urls=start_urls, request_meta=meta, dont_filter=dont_filter)
    elif start_urls:
        kwargs["start_urls"] = start_urls
    root = logging.getLogger()
    handler = _ListHandler()
    previous_level = root.level
    # The root logger drops DEBUG and INFO before any handler sees them.
    root.setLevel(logging.DEBUG)
    root.addHandler(handler)
    started = time.monotonic()
    try:
        await _bounded(crawler.crawl_async(**kwargs), timeout)
    finally:
        root.removeHandler(handler)
        root.setLevel(previous_level)
    spider = crawler.spider
    assert isinstance(spider, spider_cls)
    assert crawler.stats is not None
    responses = spider.responses if isinstance(spider, HostileSpider) else []
    failures = spider.failures if isinstance(spider, HostileSpider) else []
    return CrawlResult(
        stats=dict(crawler.stats.get_stats()),
        responses=[url for url, _ in responses],
        failures=[failure.value for failure in failures],
        logs=handler.records,
        crawler=crawler,
        requests=[request for _, request in responses],
        failed_urls=[
            failure.request.url  # type: ignore[attr-defined]
            for failure in failures
        ],
        elapsed=time.monotonic() - started,
    )


async def _bounded(crawling: Any, timeout: float | None) -> None:
    """Await the crawl; with a ``timeout``, fail the test if it runs longer."""
    if timeout is None:
        await crawling
        return
    import pytest
    from scrapy.utils.defer import deferred_from_coro, maybe_deferred_to_future
    from twisted.internet import defer, reactor

    running = deferred_from_coro(crawling)
    running.addTimeout(timeout, reactor)
    try:
        await maybe_deferred_to_future(running)
    except (defer.TimeoutError, defer.CancelledError):
        pytest.fail(f"the crawl hung: still running after {timeout} s")


# -- a crawl in a process of its own -----------------------------------------------------


def crawl_in_process(
    settings: Mapping[str, Any],
    spider_cls: type[Spider],
    out: str,
    report: Callable[[Spider], Mapping[str, Any]],
    *,
    wait_for_go: bool = False,
    **spider_kwargs: Any,
) -> None:
    """One crawl with ``CrawlerProcess``, for a worker process; its report to ``out``.

    With ``wait_for_go``, once Scrapy is imported and the crawler built it prints
    ``ready`` and waits for a line on standard input, so the test decides when the
    crawl starts. ``report(spider)`` gives the report's fields beside the stats
    (:func:`write_report`).
    """
    from scrapy.crawler import CrawlerProcess

    process = CrawlerProcess(dict(settings))
    crawler = process.create_crawler(spider_cls)
    if wait_for_go:
        print("ready", flush=True)
        sys.stdin.readline()
    process.crawl(crawler, **spider_kwargs)
    process.start()
    assert isinstance(crawler.spider, spider_cls)
    write_report(crawler, out, **report(crawler.spider))


def write_report(crawler: Crawler, out: str, **fields: Any) -> None:
    """Write the crawl's scalar stats, plus ``fields``, to ``out`` as JSON."""
    assert crawler.stats is not None
    stats = {
        key: value
        for key, value in crawler.stats.get_stats().items()
        if isinstance(value, (int, float, str))
    }
    with open(out, "w", encoding="utf-8") as handle:
        json.dump({"stats": stats, **fields}, handle)


# -- the crawl tests' settings, pages and checks -----------------------------------------


def settings(**overrides: Any) -> dict[str, Any]:
    """The add-on with timeouts short enough for tests."""
    base: dict[str, Any] = {
        "ROBOTSTXT_OBEY": True,
        "ADDONS": {"scrapy_robots_std.Addon": 0},
        "USER_AGENT": "TestBot/1.0 (+http://example.invalid)",
        "ROBOTS_STD_FETCH_TIMEOUT": 3,
        "ROBOTS_STD_FETCH_RETRIES": 2,
        "ROBOTS_STD_RETRY_BACKOFF": 0.1,
        "ROBOTS_STD_MAX_WAIT": 10,
        "RETRY_ENABLED": False,
    }
    base.update(overrides)
    return base


def serve_pages(
    server: HostileServer, pages: Iterable[str] = PAGES, host: str | None = None
) -> list[str]:
    for page in pages:
        server.add_route(
            page, Reply(200, {"Content-Type": "text/html"}, b"<p>ok</p>"), host=host
        )
    return [server.url(page, host=host) for page in pages]


def use_as_http_proxy(server: HostileServer, monkeypatch: pytest.MonkeyPatch) -> None:
    """Send every http request through ``server``, which routes by the host asked for:
    any host name, and port 80, without DNS or binding port 80."""
    monkeypatch.setenv("http_proxy", server.base_url)
    monkeypatch.delenv("no_proxy", raising=False)
    monkeypatch.delenv("NO_PROXY", raising=False)


def pages_served(server: HostileServer) -> set[str]:
    return {r.path for r in server.requests if not r.path.startswith("/robots")}


def robots_fetches(server: HostileServer, path: str = "/robots.txt") -> int:
    return len(server.requests_for(path))


def drop_lines(result: CrawlResult) -> list[str]:
    return [
        m
        for m in result.messages(logger_prefix=MW_LOGGER)
        if "Forbidden by robots.txt" in m
    ]


def assert_no_errors(result: CrawlResult) -> None:
    """Nothing at ERROR or above: no traceback in the crawl."""
    errors = [
        f"{r.name}: {r.getMessage()}" for r in result.logs if r.levelno >= logging.ERROR
    ]
    assert errors == []


def stat(result: CrawlResult, key: str) -> Any:
    return result.stats.get(key)
