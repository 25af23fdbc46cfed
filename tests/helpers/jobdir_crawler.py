"""One run of a resumable crawl (``JOBDIR``) with the add-on, for test_jobdir_resume.py.

    python -m tests.helpers.jobdir_crawler CONFIG_JSON OUT_JSON

CONFIG_JSON holds ``starts`` (the start URLs), ``links`` (URL -> the URLs its
response links to), ``settings`` (on top of the add-on's, ``JOBDIR`` among them)
and ``reactor`` (``"asyncio"`` or ``"default"``). Host names ``*.test`` resolve to
127.0.0.1 (:class:`tests.helpers.names.LoopbackResolver`). Run it again with the same JOBDIR to
resume. On the way out it writes OUT_JSON: the stats, every URL the spider
requested (start URLs are requested again by a resumed run, and the duplicate
filter drops those seen before), the URLs that reached the callback and the
errback failures (URL, exception type, drop reason).
"""

from __future__ import annotations

import json
import sys
from typing import TYPE_CHECKING, Any

from scrapy import Request, Spider

from tests.helpers.crawl import crawl_in_process

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Iterator

    from scrapy.http import Response
    from twisted.python.failure import Failure

REACTORS = {
    "asyncio": "twisted.internet.asyncioreactor.AsyncioSelectorReactor",
    "default": None,
}


def base_settings() -> dict[str, Any]:
    return {
        "ROBOTSTXT_OBEY": True,
        "ADDONS": {"scrapy_robots_std.Addon": 0},
        "USER_AGENT": "JobdirBot/1.0 (+http://example.invalid)",
        "TWISTED_DNS_RESOLVER": "tests.helpers.names.LoopbackResolver",
        "RETRY_ENABLED": False,
        "TELNETCONSOLE_ENABLED": False,
        "LOG_LEVEL": "DEBUG",
    }


class JobdirSpider(Spider):
    """Requests ``starts``, then for each response the ``links`` of its URL.

    Callbacks are spider methods and requests carry nothing else, so the disk
    queues of ``JOBDIR`` can store them.
    """

    name = "jobdir"

    def __init__(
        self,
        *args: Any,
        starts: list[str],
        links: dict[str, list[str]],
        **kwargs: Any,
    ) -> None:
        super().__init__(*args, **kwargs)
        self.starts = list(starts)
        self.links = dict(links)
        self.requested: list[str] = []
        self.responded: list[str] = []
        self.failures: list[tuple[str, str, str | None]] = []

    def request(self, url: str) -> Request:
        self.requested.append(url)
        return Request(url, callback=self.parse, errback=self.on_error)

    async def start(self) -> AsyncIterator[Request]:
        for url in self.starts:
            yield self.request(url)

    def parse(self, response: Response) -> Iterator[Request]:  # type: ignore[override]
        request = response.request
        url = request.url if request is not None else response.url
        self.responded.append(url)
        for link in self.links.get(url, ()):
            yield self.request(link)

    def on_error(self, failure: Failure) -> None:
        exc = failure.value
        decision = getattr(exc, "decision", None)
        self.failures.append(
            (
                failure.request.url,  # type: ignore[attr-defined]
                type(exc).__name__,
                getattr(decision, "reason", None),
            )
        )


def main(config_path: str, out: str) -> None:
    with open(config_path, encoding="utf-8") as handle:
        config = json.load(handle)
    settings = {
        **base_settings(),
        "TWISTED_REACTOR": REACTORS[config["reactor"]],
        **config["settings"],
    }
    crawl_in_process(
        settings,
        JobdirSpider,
        out,
        _report,
        starts=config["starts"],
        links=config["links"],
    )


def _report(spider: Any) -> dict[str, Any]:
    return {
        "requested": spider.requested,
        "responded": spider.responded,
        "failures": spider.failures,
    }


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
