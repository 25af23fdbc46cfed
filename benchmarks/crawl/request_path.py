"""The per-request cost of each robots.txt layer's check, measured without a crawl.

    python -m benchmarks.crawl.request_path [--rounds N] [--origins N] [--pages N]

Variant (a)'s site (every page allowed), every origin's robots.txt already parsed
and cached, and each request taken through what the layer does to it in a crawl,
in this process, with no network. Two paths:

* a page request, which is downloaded: Scrapy sends ``request_scheduled``, then the
  middleware's ``process_request`` checks it (robots.txt off: the signal alone;
  built-in: ``RobotsTxtMiddleware.process_request``, its parser cached for the
  netloc; scrapy-robots-std: the look ``RobotsAwarePriorityQueue`` takes at the
  verdict when it pops the request, then ``RobotsTxtStdMiddleware.process_request``
  with a fresh cache entry; nothing of ours receives ``request_scheduled``). The URL
  parse is cached beforehand (``urlparse_cached``), as the scheduler's
  downloader-aware queue leaves it in a crawl for every way.
* a duplicate link, which the scheduler's duplicate filter drops: only
  ``request_scheduled`` runs, on a request whose URL nobody has parsed yet. Every
  link of every page is scheduled, so in (a) these outnumber the page requests
  about six to one.

CPU time per request, the best of N interleaved rounds: a short measurement on a
machine whose speed drifts, so the fastest round is the least disturbed. The total
is each path's layer cost (minus robots-off's) times how often a crawl of the site
takes it. A crawl's cost has more in it (the robots.txt requests themselves,
parsing, garbage collection); this is the part that grows with every page and link.
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
    """The signal, then the middleware's check, as a crawl takes a page request
    (for ours, the scheduler queue's look at the verdict as well)."""
    book = getattr(middleware, "book", None)

    def check(request: Request) -> None:
        scheduled(request)
        if book is not None and book.pending_origin(request) is not None:
            raise RuntimeError("the verdict was not cached")
        _run(middleware.process_request(request))

    return check


def _layers(site: Any) -> dict[str, dict[str, Callable[[Request], None]]]:
    """Per path ("page", "link"), what each way does to a request on it."""
    from scrapy import Spider, signals
    from scrapy.downloadermiddlewares.robotstxt import RobotsTxtMiddleware
    from scrapy.exceptions import IgnoreRequest
    from scrapy.robotstxt import ProtegoRobotParser
    from scrapy.utils.test import get_crawler

    from benchmarks.cache_memory import stored_entry
    from benchmarks.crawl.crawl import settings_for
    from scrapy_robots_std import RobotsTxt, RobotsTxtStdMiddleware

    paths: dict[str, dict[str, Callable[[Request], None]]] = {"page": {}, "link": {}}
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

        middleware: Any = None
        if way == "builtin":
            middleware = RobotsTxtMiddleware.from_crawler(crawler)
            for origin in site.origins:
                netloc = f"{origin.host}:{site.port}"
                middleware._parsers[netloc] = ProtegoRobotParser.from_crawler(
                    crawler, site.robots_body(origin)
                )
        elif way == "ours":
            middleware = RobotsTxtStdMiddleware.from_crawler(crawler)
            for origin in site.origins:
                robots = RobotsTxt.parse(site.robots_body(origin))
                middleware.store.memory.put(
                    stored_entry(site.home(origin), robots.without_diagnostics())
                )
        paths["link"][way] = scheduled
        paths["page"][way] = (
            scheduled
            if middleware is None
            else _then_process_request(scheduled, middleware)
        )
    return paths


def _requests(urls: list[str], *, parsed: bool) -> list[Request]:
    from scrapy import Request
    from scrapy.utils.httpobj import urlparse_cached

    requests = [Request(url) for url in urls]
    if parsed:
        for request in requests:
            urlparse_cached(request)
    return requests


def scheduled_links(site: Any) -> int:
    """How many requests a crawl of (a)'s site schedules: the start requests and
    every link of every page (the home page's included)."""
    from benchmarks.crawl.site import page_links

    return len(site.seeds()) + sum(
        len(page_links(site, origin.index, page))
        for origin in site.origins
        for page in range(-1, len(origin.pages))
    )


def measure(site: Any, rounds: int) -> dict[str, dict[str, float]]:
    """Best-of-``rounds`` CPU seconds per request of each path, for each way."""

    urls = [url for origin in site.origins for url in site.expected_pages(origin)]
    paths = _layers(site)
    # One untimed pass: first queries build each token's rule index (a per-origin
    # cost, paid once per crawl, not per request).
    warm = _requests(urls, parsed=True)
    for check in paths["page"].values():
        for request in warm:
            check(request)
    best = {path: dict.fromkeys(ways, float("inf")) for path, ways in paths.items()}
    for _ in range(rounds):
        for path, ways in paths.items():
            for way, check in ways.items():  # interleaved
                requests = _requests(urls, parsed=path == "page")
                start = time.process_time()
                for request in requests:
                    check(request)
                elapsed = (time.process_time() - start) / len(urls)
                best[path][way] = min(best[path][way], elapsed)
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
    duplicates = scheduled_links(site) - pages
    best = measure(site, args.rounds)
    print(
        f"per-request check, variant (a) site: {len(site.origins):,} origins; a crawl "
        f"of it schedules {pages:,} page requests and {duplicates:,} duplicate links; "
        f"CPU {cpu_model()}; best of {args.rounds} rounds"
    )
    page, link = best["page"], best["link"]
    print(
        f"{'way':20} {'page µs':>8} {'layer µs':>9} {'link µs':>8} {'layer µs':>9} "
        f"{'layer s, crawl':>15}"
    )
    for way, label in (
        ("off", "robots.txt off"),
        ("builtin", "built-in (Protego)"),
        ("ours", "scrapy-robots-std"),
    ):
        page_layer = page[way] - page["off"]
        link_layer = link[way] - link["off"]
        total = page_layer * pages + link_layer * duplicates
        print(
            f"{label:20} {1e6 * page[way]:>8.2f} {1e6 * page_layer:>9.2f} "
            f"{1e6 * link[way]:>8.2f} {1e6 * link_layer:>9.2f} {total:>15.3f}"
        )
    print(
        "page: a request that is downloaded (request_scheduled, then process_request); "
        "link: one the scheduler drops as a duplicate (request_scheduled only); "
        "layer µs: the way's time minus robots-off's; layer s: page layer µs x page "
        "requests + link layer µs x duplicate links"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
