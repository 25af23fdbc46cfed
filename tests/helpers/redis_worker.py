"""One worker of a scrapy-redis fleet whose shared queue is RobotsAwareRedisQueue.

    python -m tests.helpers.redis_worker REDIS_URL OUT_JSON [URL ...]

Crawls with scrapy-redis's scheduler and dupefilter, the add-on (which makes
:class:`~scrapy_robots_std.RobotsAwareRedisQueue` the queue class: the settings
below do not name it) and RedisCache, through the HTTP proxy in
``http_proxy`` (the test's HostileServer, which answers for every host name). The
URLs given become its start requests (pushed to the shared queue); a worker given
none only works through what the queue holds. At the end it writes its stats, the
URLs that reached the spider and every errback failure (URL, exception type and
message) to OUT_JSON; a worker killed with SIGKILL writes nothing.

Once Scrapy is imported and the crawler built, it prints ``ready`` and waits for a
line on standard input, so the test decides when each worker starts.

With ``ROBOTS_STD_WORKER_STOP_REDIS=PID:N`` in the environment the spider kills the
redis-server of that PID once its first N start requests are queued, and yields the
rest only when Redis refuses connections: an outage at a known point of the crawl.
Its start requests are ``dont_filter``, as Scrapy's own from ``start_urls`` are:
scrapy-redis's dupefilter, which needs Redis too, does not see them, so they reach
the queue.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import sys
import time
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from tests.helpers.crawl import HostileSpider, crawl_in_process

if TYPE_CHECKING:
    from collections.abc import AsyncIterator

    from scrapy import Request

#: How long the spider waits for a killed redis-server's port to refuse connections.
STOP_TIMEOUT = 10.0


class RedisGoneSpider(HostileSpider):
    """Kills the crawl's redis-server after its first ``stop_after`` start requests:
    the later ones are queued while Redis is gone."""

    def __init__(
        self, *args: Any, redis_pid: int, stop_after: int, redis_url: str, **kwargs: Any
    ) -> None:
        super().__init__(*args, **kwargs)
        self.redis_pid = redis_pid
        self.stop_after = stop_after
        self.redis_url = redis_url

    async def start(self) -> AsyncIterator[Request]:
        count = 0
        async for request in super().start():
            if count == self.stop_after:
                # The engine asks for the next start request once it has queued
                # the one before: the first stop_after are in Redis now.
                os.kill(self.redis_pid, signal.SIGKILL)
                _wait_refused(self.redis_url)
                self.logger.info("test: redis-server killed")
            count += 1
            yield request


def _wait_refused(redis_url: str) -> None:
    parts = urlsplit(redis_url)
    deadline = time.monotonic() + STOP_TIMEOUT
    while time.monotonic() < deadline:
        try:
            socket.create_connection((parts.hostname, parts.port), timeout=1).close()
        except OSError:
            return
        time.sleep(0.05)
    raise RuntimeError(f"{redis_url} still accepts connections")


def worker_settings(redis_url: str) -> dict[str, Any]:
    return {
        "ROBOTSTXT_OBEY": True,
        "ADDONS": {"scrapy_robots_std.Addon": 0},
        "USER_AGENT": "FleetBot/1.0 (+http://example.invalid)",
        "ROBOTS_STD_CACHE_BACKEND": "scrapy_robots_std.cache.RedisCache",
        "REDIS_URL": redis_url,
        "ROBOTS_STD_REDIS_PREFIX": "fleet",
        "ROBOTS_STD_FETCH_TIMEOUT": 10,
        "ROBOTS_STD_MAX_WAIT": 30,
        "RETRY_ENABLED": False,
        "TELNETCONSOLE_ENABLED": False,
        "LOG_LEVEL": "INFO",
        "CONCURRENT_REQUESTS": 32,
        # scrapy-redis; the add-on sets SCHEDULER_QUEUE_CLASS
        "SCHEDULER": "scrapy_redis.scheduler.Scheduler",
        "DUPEFILTER_CLASS": "scrapy_redis.dupefilter.RFPDupeFilter",
        "SCHEDULER_PERSIST": True,
    }


def main(redis_url: str, out: str, urls: list[str]) -> None:
    settings = worker_settings(redis_url)
    # A test's own settings on top (JSON), e.g. CLOSESPIDER_TIMEOUT.
    settings.update(json.loads(os.environ.get("ROBOTS_STD_WORKER_SETTINGS", "{}")))
    stop = os.environ.get("ROBOTS_STD_WORKER_STOP_REDIS")
    if stop:
        pid, after = stop.split(":")
        crawl_in_process(
            settings,
            RedisGoneSpider,
            out,
            _report,
            wait_for_go=True,
            start_urls=urls,
            redis_pid=int(pid),
            stop_after=int(after),
            redis_url=redis_url,
            dont_filter=True,
        )
        return
    crawl_in_process(
        settings, HostileSpider, out, _report, wait_for_go=True, start_urls=urls
    )


def _report(spider: Any) -> dict[str, Any]:
    return {
        "responses": [url for url, _ in spider.responses],
        "failures": [
            {
                "url": failure.request.url,
                "type": type(failure.value).__name__,
                "message": str(failure.value),
            }
            for failure in spider.failures
        ],
    }


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], sys.argv[3:])
