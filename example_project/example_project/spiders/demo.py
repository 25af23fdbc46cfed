"""The ``demo`` spider: crawl one site, following its links, and note what robots.txt refused.

    scrapy crawl demo -a start_url=http://127.0.0.1:8000/

``run_demo.py`` (one directory up) serves a small local site and runs this spider on it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

import scrapy
from scrapy.exceptions import IgnoreRequest

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Iterator

    from scrapy.http import Response
    from twisted.python.failure import Failure


class DemoSpider(scrapy.Spider):
    name = "demo"

    def __init__(self, start_url: str | None = None, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.start_urls = [start_url] if start_url else []
        self.origin = urlsplit(start_url).netloc if start_url else ""
        #: URLs that the robots.txt middleware refused
        self.refused: list[str] = []

    async def start(self) -> AsyncIterator[scrapy.Request]:
        if not self.start_urls:
            self.logger.error("Give a site: scrapy crawl demo -a start_url=URL")
        for url in self.start_urls:
            yield scrapy.Request(url, errback=self.on_error)

    def parse(self, response: Response) -> Iterator[dict[str, Any] | scrapy.Request]:
        yield {"url": response.url, "title": response.css("title::text").get()}
        for href in response.css("a::attr(href)").getall():
            url = response.urljoin(href)
            if urlsplit(url).netloc == self.origin:  # stay on the site
                yield scrapy.Request(url, callback=self.parse, errback=self.on_error)

    def on_error(self, failure: Failure) -> None:
        request = failure.request  # type: ignore[attr-defined]
        if isinstance(failure.value, IgnoreRequest):
            self.refused.append(request.url)
            self.logger.info("Not crawled (%s): %s", failure.value, request.url)
        else:
            self.logger.error("Failed: %s: %s", request.url, failure.value)
