"""The per-request cost of each robots.txt layer's check, measured without a crawl.

    python -m benchmarks.crawl.request_path [--rounds N] [--origins N] [--pages N]

Variant (a)'s site (every page allowed), every origin's robots.txt already parsed
and cached, and each page request taken through what the layer does to it in a
crawl, in this process, with no network:

* robots.txt off: Scrapy sends ``request_scheduled`` (the baseline: no layer).
* built-in: ``request_scheduled`` with no receiver of the layer, then
  ``RobotsTxtMiddleware.process_request`` (its parser cached for the netloc).
* scrapy-robots-std: ``request_scheduled`` with the add-on's receiver connected,
  then ``RobotsTxtStdMiddleware.process_request`` (a fresh cache entry).

Fresh ``Request`` objects each round, made outside the timing with their URL parse
already cached (``urlparse_cached``), as the scheduler's downloader-aware queue
leaves it in a crawl for every way. CPU time per request, the best
of N rounds: a short measurement on a machine whose speed drifts, so the fastest
round is the least disturbed. The wall-clock cost of a crawl has more in it (the
robots.txt requests themselves, parsing, garbage collection); this is the part that
grows with every page.
"""

from __future__ import annotations

import argparse
import sys
import time
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Callable, Coroutine

    from scrapy import Request


def _run(coro: Coroutine[Any, Any, None]) -> None:
    """Drive a coroutine that must finish without waiting (a cached verdict)."""
    try:
        coro.send(None)
    except StopIteration:
        return
    coro.close()
    raise RuntimeError("the check waited: the verdict was not cached")


def _then_process_request(
    scheduled: Callable[[Request], None], middleware: Any
) -> Callable[[Request], None]:
    """The signal, then the middleware's check, as a crawl takes a page request."""

    def check(request: Request) -> None:
        scheduled(request)
        _run(middleware.process_request(request))

    return check


def _layers(site: Any) -> dict[str, Callable[[Request], None]]:
    from scrapy import Spider, signals
    from scrapy.downloadermiddlewares.robotstxt import RobotsTxtMiddleware
    from scrapy.exceptions import IgnoreRequest
    from scrapy.robotstxt import ProtegoRobotParser
    from scrapy.utils.test import get_crawler

    from benchmarks.cache_memory import stored_entry
    from benchmarks.crawl.crawl import settings_for
    from scrapy_robots_std import RobotsTxt, RobotsTxtStdMiddleware

    checks: dict[str, Callable[[Request], None]] = {}
    for way in ("off", "builtin", "ours"):
        crawler = get_crawler(Spider, settings_for(way, 10.0, smoke=False))
        spider = Spider("bench")
        crawler.spider = spider
        send = crawler.signals.send_catch_log

        def scheduled(
            request: Request, send: Any = send, spider: Spider = spider
        ) -> None:
            send(
                signals.request_scheduled,
                request=request,
                spider=spider,
                dont_log=IgnoreRequest,
            )

        if way == "off":
            checks[way] = scheduled
        elif way == "builtin":
            builtin = RobotsTxtMiddleware.from_crawler(crawler)
            for origin in site.origins:
                netloc = f"{origin.host}:{site.port}"
                builtin._parsers[netloc] = ProtegoRobotParser.from_crawler(
                    crawler, site.robots_body(origin)
                )

            checks[way] = _then_process_request(scheduled, builtin)
        else:
            ours = RobotsTxtStdMiddleware.from_crawler(crawler)
            for origin in site.origins:
                robots = RobotsTxt.parse(site.robots_body(origin))
                ours.cache.put(
                    stored_entry(site.home(origin), robots.without_diagnostics())
                )
            checks[way] = _then_process_request(scheduled, ours)
    return checks


def _requests(urls: list[str]) -> list[Request]:
    from scrapy import Request
    from scrapy.utils.httpobj import urlparse_cached

    requests = [Request(url) for url in urls]
    for request in requests:
        urlparse_cached(request)
    return requests


def measure(site: Any, rounds: int) -> dict[str, float]:
    """Best-of-``rounds`` CPU seconds per request, for each way."""

    urls = [url for origin in site.origins for url in site.expected_pages(origin)]
    checks = _layers(site)
    # One untimed pass: first queries build each token's rule index (a per-origin
    # cost, paid once per crawl, not per request).
    warm = _requests(urls)
    for check in checks.values():
        for request in warm:
            check(request)
    best = dict.fromkeys(checks, float("inf"))
    for _ in range(rounds):
        for way, check in checks.items():  # interleaved
            requests = _requests(urls)
            start = time.process_time()
            for request in requests:
                check(request)
            best[way] = min(best[way], (time.process_time() - start) / len(urls))
    return best


def main(argv: list[str] | None = None) -> int:
    from benchmarks.crawl.site import build
    from benchmarks.machine import cpu_model

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--origins", type=int, default=500)
    parser.add_argument("--pages", type=int, default=50)
    args = parser.parse_args(argv)
    site = build("a", origins=args.origins, pages=args.pages, port=8000)
    pages = sum(len(site.expected_pages(o)) for o in site.origins)
    best = measure(site, args.rounds)
    print(
        f"per-request check, variant (a) site: {len(site.origins):,} origins, "
        f"{pages:,} page requests; CPU {cpu_model()}; best of {args.rounds} rounds"
    )
    base = best["off"]
    print(f"{'way':20} {'µs/request':>11} {'layer µs':>9} {'layer s, all pages':>19}")
    for way, label in (
        ("off", "robots.txt off"),
        ("builtin", "built-in (Protego)"),
        ("ours", "scrapy-robots-std"),
    ):
        layer = best[way] - base
        print(
            f"{label:20} {1e6 * best[way]:>11.2f} {1e6 * layer:>9.2f} "
            f"{layer * pages:>19.3f}"
        )
    print(
        "layer µs: the way's time minus robots-off's (the request_scheduled signal "
        "alone); layer s: that times the site's page requests"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
