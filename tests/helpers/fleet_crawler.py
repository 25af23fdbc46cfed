"""One crawler process of a fleet sharing robots.txt verdicts through RedisCache.

    python -m tests.helpers.fleet_crawler REDIS_URL PREFIX ORIGINS OUT_JSON

Crawls ``/public/page`` and ``/private/page`` of ``http://o<N>.test`` for N below
ORIGINS, through the HTTP proxy in ``http_proxy`` (the test's HostileServer, which
answers for every host name), with the add-on and RedisCache; writes its stats and
the URLs that reached the spider to OUT_JSON. The asyncio reactor (Scrapy's default).

Once Scrapy is imported and the crawler built, it prints ``ready`` and waits for a
line on standard input, so the test can start the whole fleet at the same moment.

Two environment variables, for the takeover test (tests/test_fleet_takeover.py):

* ``FLEET_TRACE_CLAIMS=1``: print ``claim <origin> <token>`` for every claim this
  process wins (the token is the value of ``<prefix>:claim:<origin>`` in Redis), and
  send this process's PID in the User-Agent (``FleetBot/1.0 (...; pid <PID>)``), so
  the server's request log tells the processes apart.
* ``FLEET_CLAIM_LEASE=<seconds>``: the fleet claims' lease
  (``scrapy_robots_std.scrapy.store.CLAIM_LEASE``) instead of the default.
"""

from __future__ import annotations

import os
import sys
import threading
from typing import Any

import scrapy_robots_std.scrapy.store
from scrapy_robots_std.cache import RedisCache
from tests.helpers.crawl import HostileSpider, crawl_in_process

TRACE_CLAIMS = os.environ.get("FLEET_TRACE_CLAIMS") == "1"


_PRINTING = threading.Lock()


class TracingRedisCache(RedisCache):
    """RedisCache that prints each claim it wins, with the token it stored.

    Claims run on several store threads at once: one line at a time."""

    def claim(self, origin: str, seconds: float) -> bool:
        won = super().claim(origin, seconds)
        token = self._claims.get(origin)
        if won and token is not None:
            with _PRINTING:
                print(f"claim {origin} {token}", flush=True)
        return won


def fleet_settings(redis_url: str, prefix: str) -> dict[str, Any]:
    agent = "FleetBot/1.0 (+http://example.invalid)"
    backend = "scrapy_robots_std.cache.RedisCache"
    if TRACE_CLAIMS:
        agent = f"FleetBot/1.0 (+http://example.invalid; pid {os.getpid()})"
        backend = "tests.helpers.fleet_crawler.TracingRedisCache"
    return {
        "ROBOTSTXT_OBEY": True,
        "ADDONS": {"scrapy_robots_std.Addon": 0},
        "USER_AGENT": agent,
        "ROBOTS_STD_CACHE_BACKEND": backend,
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
    lease = os.environ.get("FLEET_CLAIM_LEASE")
    if lease:
        scrapy_robots_std.scrapy.store.CLAIM_LEASE = float(lease)  # type: ignore[misc]
    urls = [
        f"http://o{n}.test/{kind}/page"
        for n in range(origins)
        for kind in ("public", "private")
    ]
    crawl_in_process(
        fleet_settings(redis_url, prefix),
        HostileSpider,
        out,
        _report,
        wait_for_go=True,
        start_urls=urls,
    )


def _report(spider: Any) -> dict[str, Any]:
    return {
        "responses": [url for url, _ in spider.responses],
        "failures": [type(failure.value).__name__ for failure in spider.failures],
    }


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4])
