"""The latency benchmark's spider: requests every page of the case, records each fate.

Its ``start()`` yields one request per URL of the case, in the case's order (site by
site, biggest sites first): what ``start_urls`` would do, except that the requests
can be filtered as duplicates (``dont_filter`` stays False, so a crawl resumed from
a ``JOBDIR`` does not fetch again what the stopped run had seen) and carry an
errback. No link is followed: the set of requested URLs cannot depend on the layer.

Each URL ends as *fetched* (its response, status 200, reached ``parse``), *dropped*
(the errback got an ``IgnoreRequest`` that is not an ``HttpError``: what both
robots.txt layers raise for a disallowed URL) or *error* (anything else).
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

import scrapy
from scrapy.exceptions import IgnoreRequest
from scrapy.spidermiddlewares.httperror import HttpError

if TYPE_CHECKING:
    from collections.abc import AsyncIterator

    from twisted.python.failure import Failure


class LatencySpider(scrapy.Spider):
    name = "latency"

    def __init__(self, urls: list[str] | None = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.urls = urls or []
        self.fetched: list[str] = []
        self.dropped: list[str] = []
        self.errors: dict[str, str] = {}
        #: (time.perf_counter() at the response, its download_latency) per page
        self.timeline: list[tuple[float, float]] = []

    async def start(self) -> AsyncIterator[Any]:
        for url in self.urls:
            yield scrapy.Request(url, callback=self.parse, errback=self.failed)

    def parse(self, response: Any, **kwargs: Any) -> None:
        if response.status == 200:
            self.fetched.append(response.url)
            latency = response.meta.get("download_latency", 0.0)
            self.timeline.append((time.perf_counter(), latency))
        else:
            self.errors[response.url] = f"status {response.status}"

    def failed(self, failure: Failure) -> None:
        request = getattr(failure, "request", None)
        url = request.url if request is not None else "?"
        error = failure.value
        if isinstance(error, IgnoreRequest) and not isinstance(error, HttpError):
            self.dropped.append(url)
        else:
            self.errors[url] = repr(failure.value)[:200]
