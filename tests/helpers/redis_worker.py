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
"""

from __future__ import annotations

import json
import os
import sys
from typing import Any

from tests.helpers.crawl import HostileSpider, crawl_in_process


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
