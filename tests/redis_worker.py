"""One worker of a scrapy-redis fleet whose shared queue is RobotsAwareRedisQueue.

    python redis_worker.py REDIS_URL OUT_JSON [URL ...]

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

from crawl_report import write_report
from hostile import HostileSpider
from scrapy.crawler import CrawlerProcess


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
    process = CrawlerProcess(settings)
    crawler = process.create_crawler(HostileSpider)
    print("ready", flush=True)
    sys.stdin.readline()
    process.crawl(crawler, start_urls=urls)
    process.start()
    spider = crawler.spider
    assert isinstance(spider, HostileSpider)
    write_report(
        crawler,
        out,
        responses=[url for url, _ in spider.responses],
        failures=[
            {
                "url": failure.request.url,  # type: ignore[attr-defined]
                "type": type(failure.value).__name__,
                "message": str(failure.value),
            }
            for failure in spider.failures
        ],
    )


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], sys.argv[3:])
