"""The ``demo`` spider: crawl from start pages on one or more origins, following links
between those origins, and note which requests robots.txt kept it away from.

From ``example_project/`` (the directory with ``scrapy.cfg``), with the package
installed in the repository's ``.venv``::

    ../.venv/bin/scrapy crawl demo -a start_urls=https://example.com/,https://example.org/

``start_urls`` is a comma-separated list. An origin is a scheme, host and port; the
spider follows links to the origins of its start URLs and nowhere else. Each origin's
robots.txt is obeyed (``ADDONS = {"scrapy_robots_std.Addon": 0}`` in ``settings.py``);
each dropped request is logged at DEBUG, and a summary at INFO when the spider closes.

``../run_demo.py`` serves a local site of several origins and runs this spider on it;
``../run_demo.py --serve`` only serves that site and prints the ``scrapy crawl``
command to run against it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

import scrapy
from scrapy.exceptions import IgnoreRequest

from scrapy_robots_std import RobotsTxtDisallowed, UsageDisallowed

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Iterator

    from scrapy.http import Response
    from twisted.python.failure import Failure


def _origin(url: str) -> tuple[str, str]:
    parts = urlsplit(url)
    return parts.scheme.lower(), parts.netloc.lower()


class DemoSpider(scrapy.Spider):
    name = "demo"

    def __init__(
        self, start_urls: str | list[str] = "", *args: Any, **kwargs: Any
    ) -> None:
        super().__init__(*args, **kwargs)
        if isinstance(start_urls, str):
            start_urls = start_urls.split(",")
        self.start_urls = [url.strip() for url in start_urls if url.strip()]
        self.origins = {_origin(url) for url in self.start_urls}
        #: URLs of the requests that robots.txt (or a usage preference) kept the
        #: spider away from
        self.refused: list[str] = []

    async def start(self) -> AsyncIterator[scrapy.Request]:
        if not self.start_urls:
            self.logger.error(
                "Give start URLs: scrapy crawl demo -a start_urls=URL,..."
            )
        for url in self.start_urls:
            yield scrapy.Request(url, errback=self.on_error)

    def parse(self, response: Response) -> Iterator[dict[str, Any] | scrapy.Request]:
        yield {"url": response.url, "title": response.css("title::text").get()}
        for link in response.css("a[href]"):
            url = response.urljoin(link.attrib["href"])
            if _origin(url) not in self.origins:
                continue
            # A link may declare what its content is for (<a data-purpose=train-ai>):
            # the request's usage purpose, instead of ROBOTS_STD_USAGE_PURPOSE.
            purpose = link.attrib.get("data-purpose")
            meta = {} if purpose is None else {"robots_std_usage_purpose": purpose}
            yield scrapy.Request(
                url, callback=self.parse, errback=self.on_error, meta=meta
            )

    def on_error(self, failure: Failure) -> None:
        request = failure.request  # type: ignore[attr-defined]
        if isinstance(failure.value, RobotsTxtDisallowed):
            # The middleware has logged why (DEBUG); failure.value.decision.rule is
            # the deciding line, or None when the robots.txt was unreachable.
            self.refused.append(request.url)
        elif isinstance(failure.value, UsageDisallowed):
            # A usage preference said no to the declared purpose (settings.py);
            # failure.value.decision.sources names the lines or headers.
            self.refused.append(request.url)
        elif isinstance(failure.value, IgnoreRequest):
            self.logger.info("Not crawled (%s): %s", failure.value, request.url)
        else:
            self.logger.error("Failed: %s: %s", request.url, failure.value)
