"""One crawler process of a fleet sharing robots.txt verdicts through RedisCache.

    python fleet_crawler.py REDIS_URL PREFIX ORIGINS OUT_JSON

Crawls ``/public/page`` and ``/private/page`` of ``http://o<N>.test`` for N below
ORIGINS, through the HTTP proxy in ``http_proxy`` (the test's HostileServer, which
answers for every host name), with the add-on and RedisCache; writes its stats and
the URLs that reached the spider to OUT_JSON. The asyncio reactor (Scrapy's default).

Once Scrapy is imported and the crawler built, it prints ``ready`` and waits for a
line on standard input, so the test can start the whole fleet at the same moment.
"""

from __future__ import annotations

import json
import sys
from typing import Any

from hostile import HostileSpider
from scrapy.crawler import CrawlerProcess


def fleet_settings(redis_url: str, prefix: str) -> dict[str, Any]:
    return {
        "ROBOTSTXT_OBEY": True,
        "ADDONS": {"scrapy_robots_std.Addon": 0},
        "USER_AGENT": "FleetBot/1.0 (+http://example.invalid)",
        "ROBOTS_STD_CACHE_BACKEND": "scrapy_robots_std.cache.RedisCache",
        "REDIS_URL": redis_url,
        "ROBOTS_STD_REDIS_PREFIX": prefix,
        "ROBOTS_STD_FETCH_TIMEOUT": 10,
        "ROBOTS_STD_MAX_WAIT": 30,
        "RETRY_ENABLED": False,
        "TELNETCONSOLE_ENABLED": False,
        "LOG_LEVEL": "INFO",
        "CONCURRENT_REQUESTS": 32,
    }


def main(redis_url: str, prefix: str, origins: int, out: str) -> None:
    urls = [
        f"http://o{n}.test/{kind}/page"
        for n in range(origins)
        for kind in ("public", "private")
    ]
    process = CrawlerProcess(fleet_settings(redis_url, prefix))
    crawler = process.create_crawler(HostileSpider)
    print("ready", flush=True)
    sys.stdin.readline()
    process.crawl(crawler, start_urls=urls)
    process.start()
    spider = crawler.spider
    assert isinstance(spider, HostileSpider)
    assert crawler.stats is not None
    report = {
        "stats": {
            key: value
            for key, value in crawler.stats.get_stats().items()
            if isinstance(value, (int, float, str))
        },
        "responses": [url for url, _ in spider.responses],
        "failures": [type(failure.value).__name__ for failure in spider.failures],
    }
    with open(out, "w", encoding="utf-8") as handle:
        json.dump(report, handle)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4])
