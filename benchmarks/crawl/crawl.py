"""One crawl, in its own process: the runner starts one of these per measurement.

    python -m benchmarks.crawl.crawl SITE.json --way off|builtin|ours --out RESULT.json
        [--exclude-dead] [--stop-when-healthy] [--memory] [--record-urls]
        [--download-timeout S] [--smoke]

Writes a JSON object with wall time, CPU seconds and peak RSS of this process, what
happened to every URL (counts; the URLs themselves with ``--record-urls``), the
first-page latency per origin, the parser timers (layer.py) and, with ``--memory``,
the retained memory of the robots.txt cache (tracemalloc runs from the start of this
process, which slows the crawl: do not read timings from a ``--memory`` run).
"""

from __future__ import annotations

import argparse
import json
import resource
import statistics
import sys
import time
import tracemalloc
from pathlib import Path
from typing import Any

#: The settings every way shares (stated in benchmarks/README.md).
COMMON_SETTINGS: dict[str, Any] = {
    "CONCURRENT_REQUESTS": 16,
    "CONCURRENT_REQUESTS_PER_DOMAIN": 8,
    "DOWNLOAD_DELAY": 0,
    "AUTOTHROTTLE_ENABLED": False,
    "TELNETCONSOLE_ENABLED": False,
    "LOG_LEVEL": "WARNING",
    "DOWNLOAD_TIMEOUT": 10,
}

#: What differs between the three ways; nothing else does.
WAYS: dict[str, dict[str, Any]] = {
    "off": {"ROBOTSTXT_OBEY": False},
    "builtin": {"ROBOTSTXT_OBEY": True},
    "ours": {"ROBOTSTXT_OBEY": True, "ADDONS": {"scrapy_robots_std.Addon": 0}},
}

#: --smoke only: a dead origin must not hold the smoke test for 15 s.
SMOKE_OURS = {"ROBOTS_STD_FETCH_TIMEOUT": 2.0, "ROBOTS_STD_MAX_WAIT": 5.0}


def settings_for(way: str, download_timeout: float, *, smoke: bool) -> dict[str, Any]:
    from benchmarks.crawl.site import USER_AGENT

    settings = {**COMMON_SETTINGS, "USER_AGENT": USER_AGENT, **WAYS[way]}
    settings["DOWNLOAD_TIMEOUT"] = download_timeout
    if smoke and way == "ours":
        settings.update(SMOKE_OURS)
    return settings


def _cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def _percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    k = min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))
    return ordered[k]


def _summary(values: list[float]) -> dict[str, Any]:
    if not values:
        return {"n": 0, "median": None, "p95": None, "max": None}
    return {
        "n": len(values),
        "median": statistics.median(values),
        "p95": _percentile(values, 0.95),
        "max": max(values),
    }


def _interesting_stats(stats: dict[str, Any]) -> dict[str, Any]:
    keep = ("robotstxt/", "robots_std/", "downloader/", "retry/", "finish_reason")
    return {
        k: v
        for k, v in sorted(stats.items())
        if k.startswith(keep) and isinstance(v, (int, float, str))
    }


def run(args: argparse.Namespace) -> dict[str, Any]:
    from scrapy import signals
    from scrapy.crawler import CrawlerProcess

    from benchmarks.crawl.layer import install_timers, memory_probe
    from benchmarks.crawl.site import Site
    from benchmarks.crawl.spider import BenchSpider

    site = Site.load(args.site)
    timers = install_timers(args.way)
    settings = settings_for(args.way, args.download_timeout, smoke=args.smoke)
    process = CrawlerProcess(settings)
    crawler = process.create_crawler(BenchSpider)
    marks: dict[str, Any] = {}
    probe: dict[str, Any] = {}

    def opened(spider: Any) -> None:
        marks["t0"] = time.perf_counter()
        marks["cpu0"] = _cpu()

    def closed(spider: Any, reason: str) -> None:
        marks["t1"] = time.perf_counter()
        marks["cpu1"] = _cpu()
        marks["reason"] = reason

    crawler.signals.connect(opened, signals.spider_opened)
    crawler.signals.connect(closed, signals.spider_closed)
    on_idle = (lambda: probe.update(memory_probe(crawler))) if args.memory else None
    process.crawl(
        crawler,
        site=site,
        exclude_dead=args.exclude_dead,
        stop_when_healthy=args.stop_when_healthy,
        on_idle=on_idle,
    )
    process.start()

    spider: BenchSpider = crawler.spider  # type: ignore[assignment]
    t0 = marks["t0"]
    latencies = [
        spider.first_page[o] - spider.first_scheduled[o]
        for o in spider.first_page
        if o in spider.first_scheduled
    ]
    from_contact = [
        spider.first_page[o] - spider.first_contact[o]
        for o in spider.first_page
        if o in spider.first_contact
    ]
    pages_ok = [u for u, status in spider.pages.items() if status == 200]
    healthy_pages = sum(1 for u in pages_ok if spider._origin(u) not in spider.dead)
    result: dict[str, Any] = {
        "way": args.way,
        "variant": site.variant,
        "exclude_dead": args.exclude_dead,
        "memory": args.memory,
        "wall": marks["t1"] - t0,
        "cpu": marks["cpu1"] - marks["cpu0"],
        "maxrss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        "expected": len(spider.expected),
        "issued": len(spider.issued),
        "resolved": len(spider.resolved),
        "pages": len(pages_ok),
        "dropped": len(spider.dropped),
        "errors": len(spider.errors),
        "error_sample": sorted(spider.errors.items())[:5],
        "healthy_expected": spider.healthy_expected,
        "healthy_pages": healthy_pages,
        "t_last_healthy": spider.t_last_healthy - t0 if spider.t_last_healthy else None,
        "latency": _summary(latencies),
        "latency_contact": _summary(from_contact),
        "layer": timers.as_dict(),
        "stats": _interesting_stats(crawler.stats.get_stats()),
        "finish_reason": marks.get("reason"),
        "memprobe": probe,
    }
    if args.record_urls:
        result["page_urls"] = sorted(pages_ok)
        result["dropped_urls"] = sorted(spider.dropped)
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("site", type=Path)
    parser.add_argument("--way", choices=sorted(WAYS), required=True)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--exclude-dead", action="store_true")
    parser.add_argument("--stop-when-healthy", action="store_true")
    parser.add_argument("--memory", action="store_true")
    parser.add_argument("--record-urls", action="store_true")
    parser.add_argument("--download-timeout", type=float, default=10.0)
    parser.add_argument("--smoke", action="store_true")
    args = parser.parse_args(argv)
    if args.memory:
        # Before Scrapy is imported: every allocation of the crawl is traced.
        tracemalloc.start()
    result = run(args)
    args.out.write_text(json.dumps(result, default=str), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
