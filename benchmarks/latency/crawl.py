"""One crawl of the latency benchmark, in its own process (the runner starts one each).

    python -m benchmarks.latency.crawl --case a --way off|builtin|ours --port P
        --out RESULT.json [--jobdir DIR] [--smoke]

Scrapy's ``CrawlerProcess`` with the case's settings and the way's; the spider
(spider.py) requests every URL of the case. On ``spider_opened`` it creates
``RESULT.json.opened`` (the runner times a SIGINT from it). At the end it writes a
JSON object: the wall and CPU time from ``spider_opened`` to ``spider_closed``, the
process's peak RSS (``getrusage``), the URLs fetched and dropped, the errors, the
finish reason, a few stats and the file ``scrapy_robots_std`` was imported from (the
runner starts this module from the checkout it measures, so that checkout's package
comes first on ``sys.path``).
"""

from __future__ import annotations

import argparse
import json
import resource
import sys
import time
from pathlib import Path
from typing import Any

from benchmarks.latency.cases import USER_AGENT, case_for

#: What differs between the three ways; nothing else does. ``off`` keeps Scrapy's
#: default scheduler priority queue (DownloaderAwarePriorityQueue in Scrapy 2.19).
WAYS: dict[str, dict[str, Any]] = {
    "off": {"ROBOTSTXT_OBEY": False},
    "builtin": {"ROBOTSTXT_OBEY": True},
    "ours": {"ROBOTSTXT_OBEY": True, "ADDONS": {"scrapy_robots_std.Addon": 0}},
}

RESOLVER = "benchmarks.latency.resolver.BenchResolver"


def settings_for(case_name: str, way: str, *, smoke: bool) -> dict[str, Any]:
    case = case_for(case_name, smoke=smoke)
    return {
        "USER_AGENT": USER_AGENT,
        "CONCURRENT_REQUESTS": case.concurrency,
        "CONCURRENT_REQUESTS_PER_DOMAIN": case.per_domain,
        "DOWNLOAD_DELAY": 0,
        "AUTOTHROTTLE_ENABLED": False,
        "TELNETCONSOLE_ENABLED": False,
        "LOG_LEVEL": "WARNING",
        "DOWNLOAD_TIMEOUT": 30,
        "TWISTED_DNS_RESOLVER": RESOLVER,
        **WAYS[way],
    }


def _cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


_STATS = (
    "robotstxt/",
    "robots_std/",
    "downloader/request_count",
    "downloader/response_count",
    "downloader/exception_count",
    "scheduler/",
    "retry/",
    "finish_reason",
)


def run(args: argparse.Namespace) -> dict[str, Any]:
    from scrapy import signals
    from scrapy.crawler import CrawlerProcess

    import scrapy_robots_std
    from benchmarks.latency.spider import LatencySpider

    case = case_for(args.case, smoke=args.smoke)
    settings = settings_for(args.case, args.way, smoke=args.smoke)
    if args.jobdir is not None:
        settings["JOBDIR"] = str(args.jobdir)
    process = CrawlerProcess(settings)
    crawler = process.create_crawler(LatencySpider)
    marks: dict[str, Any] = {}
    opened_flag = Path(str(args.out) + ".opened")

    def opened(spider: Any) -> None:
        marks["t0"] = time.perf_counter()
        marks["cpu0"] = _cpu()
        opened_flag.touch()

    def closed(spider: Any, reason: str) -> None:
        marks["t1"] = time.perf_counter()
        marks["cpu1"] = _cpu()
        marks["reason"] = reason

    crawler.signals.connect(opened, signals.spider_opened)
    crawler.signals.connect(closed, signals.spider_closed)
    process.crawl(crawler, urls=case.urls(args.port))
    process.start()

    spider: LatencySpider = crawler.spider  # type: ignore[assignment]
    stats = crawler.stats.get_stats() if crawler.stats is not None else {}
    wall = marks["t1"] - marks["t0"]
    latency_sum = sum(latency for _, latency in spider.timeline)
    return {
        "case": args.case,
        "way": args.way,
        "wall": wall,
        "cpu": marks["cpu1"] - marks["cpu0"],
        "maxrss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        "fetched": spider.fetched,
        "dropped": spider.dropped,
        # Page downloads only (robots.txt responses do not reach the spider): the
        # mean download_latency, and the mean number of page downloads in flight
        # (their latencies summed over the wall time).
        "page_latency": latency_sum / len(spider.timeline) if spider.timeline else None,
        "in_flight": latency_sum / wall if wall > 0 else None,
        "timeline": [
            (round(t - marks["t0"], 4), round(latency, 4))
            for t, latency in spider.timeline
        ],
        "errors": len(spider.errors),
        "error_sample": sorted(spider.errors.items())[:5],
        "finish_reason": marks.get("reason"),
        "package": str(Path(scrapy_robots_std.__file__).parent),
        "stats": {
            k: v
            for k, v in sorted(stats.items())
            if k.startswith(_STATS)
            and "_by_origin/" not in k  # one stat per origin: thousands
            and isinstance(v, (int, float, str))
        },
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--case", required=True)
    parser.add_argument("--way", choices=sorted(WAYS), required=True)
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--jobdir", type=Path, default=None)
    parser.add_argument("--smoke", action="store_true")
    args = parser.parse_args(argv)
    result = run(args)
    args.out.write_text(json.dumps(result), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
