"""The benchmark spider: the same for every way; it records what happened to each URL.

With ``site.follow`` it starts from every origin's home page and follows the links
of every page (each page lists links to pages of its own and other origins); without
it, its start requests enumerate every page and no link is followed, so the set of
requested URLs cannot depend on what the robots.txt layer drops.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

from scrapy import Request, Spider, signals
from scrapy.exceptions import CloseSpider, IgnoreRequest
from scrapy.spidermiddlewares.httperror import HttpError
from scrapy.utils.httpobj import urlparse_cached

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Iterator

    from scrapy.crawler import Crawler
    from scrapy.http import Response
    from twisted.python.failure import Failure

    from benchmarks.crawl.site import Site

#: request.meta key: the origin index of the spider's own requests
ORIGIN = "bench_origin"


class BenchSpider(Spider):
    name = "bench"

    def __init__(
        self,
        site: Site,
        *,
        exclude_dead: bool = False,
        stop_when_healthy: bool = False,
        on_idle: Any = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self.site = site
        self.exclude_dead = exclude_dead
        self.stop_when_healthy = stop_when_healthy
        self.on_idle = on_idle
        self.origin_by_netloc = {f"{o.host}:{site.port}": o.index for o in site.origins}
        self.dead = {o.index for o in site.origins if o.dead}
        skip = self.dead if exclude_dead else set()
        self.expected = {
            url
            for o in site.origins
            if o.index not in skip
            for url in site.expected_pages(o)
        }
        self.healthy_expected = sum(
            len(site.expected_pages(o))
            for o in site.origins
            if o.index not in self.dead
        )
        self.pages: dict[str, int] = {}  # url -> HTTP status
        self.dropped: set[str] = set()
        self.errors: dict[str, str] = {}
        self.issued: set[str] = set()
        #: per origin: when its first request was scheduled, when its first request
        #: (robots.txt or page) reached the downloader, when its first page came in
        self.first_scheduled: dict[int, float] = {}
        self.first_contact: dict[int, float] = {}
        self.first_page: dict[int, float] = {}
        self.resolved: set[str] = set()
        self.healthy_resolved = 0
        self.t_open = 0.0
        self.t_last_healthy = 0.0
        self.t_healthy_done: float | None = None
        self.idle_done = False

    @classmethod
    def from_crawler(cls, crawler: Crawler, *args: Any, **kwargs: Any) -> BenchSpider:
        spider = super().from_crawler(crawler, *args, **kwargs)
        # Connected before any middleware exists, so these run first.
        crawler.signals.connect(spider._opened, signals.spider_opened)
        crawler.signals.connect(spider._scheduled, signals.request_scheduled)
        crawler.signals.connect(spider._received, signals.response_received)
        crawler.signals.connect(spider._reached, signals.request_reached_downloader)
        crawler.signals.connect(spider._idle, signals.spider_idle)
        return spider  # type: ignore[return-value]

    # -- requests ------------------------------------------------------------------

    def _origin(self, url: str) -> int | None:
        from urllib.parse import urlsplit

        return self.origin_by_netloc.get(urlsplit(url).netloc)

    def _request(self, url: str) -> Request | None:
        origin = self._origin(url)
        if origin is None or (self.exclude_dead and origin in self.dead):
            return None
        return Request(
            url, callback=self.parse, errback=self.failed, meta={ORIGIN: origin}
        )

    async def start(self) -> AsyncIterator[Any]:
        for url in self.site.seeds():
            request = self._request(url)
            if request is not None:
                yield request

    def parse(self, response: Response) -> Iterator[Request]:
        if self.t_healthy_done is not None and self.stop_when_healthy:
            raise CloseSpider("healthy-done")
        if not self.site.follow:
            return
        for href in response.css("a::attr(href)").getall():
            request = self._request(response.urljoin(href))
            if request is not None:
                yield request

    def failed(self, failure: Failure) -> None:
        request = failure.request  # type: ignore[attr-defined]
        if failure.check(HttpError):
            return  # a non-200 page: counted when it was received
        if failure.check(IgnoreRequest):  # what both layers raise for a drop
            self.dropped.add(request.url)
        else:
            self.errors[request.url] = repr(failure.value)[:200]
        self._resolved(request.url, request.meta[ORIGIN])

    # -- signals -------------------------------------------------------------------

    def _opened(self, spider: Spider) -> None:
        self.t_open = time.perf_counter()

    def _scheduled(self, request: Request, spider: Spider) -> None:
        origin = request.meta.get(ORIGIN)
        if origin is None:
            return
        self.issued.add(request.url)
        if origin not in self.first_scheduled:
            self.first_scheduled[origin] = time.perf_counter()

    def _reached(self, request: Request, spider: Spider) -> None:
        origin = request.meta.get(ORIGIN)
        if origin is None:  # a robots.txt request
            origin = self.origin_by_netloc.get(urlparse_cached(request).netloc)
        if origin is not None and origin not in self.first_contact:
            self.first_contact[origin] = time.perf_counter()

    def _received(self, response: Response, request: Request, spider: Spider) -> None:
        origin = request.meta.get(ORIGIN)
        if origin is None:
            return  # a robots.txt request
        now = time.perf_counter()
        self.pages[request.url] = response.status
        if response.status != 200:
            self.errors[request.url] = f"HTTP {response.status}"
        elif origin not in self.first_page:
            self.first_page[origin] = now
        if origin not in self.dead:
            self.t_last_healthy = now
        self._resolved(request.url, origin)

    def _resolved(self, url: str, origin: int) -> None:
        if url in self.resolved:
            return
        self.resolved.add(url)
        if origin in self.dead:
            return
        self.healthy_resolved += 1
        if self.healthy_resolved == self.healthy_expected:
            self.t_healthy_done = time.perf_counter()

    def _idle(self, spider: Spider) -> None:
        # Once, at the end of the crawl, before spider_closed clears anything.
        done = len(self.resolved) >= len(self.expected)
        if self.on_idle is not None and not self.idle_done and done:
            self.idle_done = True
            self.on_idle()
