"""Real crawls through the add-on against scripted, often hostile, local servers.

Every test runs a real Scrapy crawl (engine, downloader, every default middleware)
against servers on 127.0.0.1 / ::1 started by the fixtures. The page requests that
reach the server are the ground truth: a disallowed page must never appear there.
"""

from __future__ import annotations

import itertools
import logging
import resource
import time
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

import pytest
from scrapy import Request, Spider, signals
from scrapy.utils.defer import deferred_f_from_coro_f

from scrapy_robots_std import (
    RobotsTxtDisallowed,
    RobotsTxtStdMiddleware,
    StdRobotParser,
)
from scrapy_robots_std.scrapy.origin import origin_of
from tests.helpers.crawl import (
    MW_LOGGER,
    PAGES,
    RULES,
    DownloadAsyncSpider,
    HostileSpider,
    assert_no_errors,
    drop_lines,
    pages_served,
    robots_fetches,
    run_crawl,
    serve_pages,
    settings,
    stat,
    use_as_http_proxy,
)
from tests.helpers.names import loopback_names
from tests.helpers.server import (
    BlackHole,
    Garbage,
    GzipBomb,
    LyingLength,
    Reply,
    Reset,
    Sequence,
    Streaming,
    Trickle,
)

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Iterator, Mapping

    from scrapy.crawler import Crawler
    from scrapy.http import Response

    from scrapy_robots_std.cache import CacheEntry
    from tests.helpers.crawl import CrawlResult
    from tests.helpers.server import HostileServer

pytestmark = pytest.mark.crawl


def notices(result: CrawlResult) -> list[str]:
    """The INFO lines of decisions that change what is crawled."""
    return [
        m
        for m in result.messages(logging.INFO, MW_LOGGER)
        if m.startswith("robots.txt ")
        and ("no restrictions for this origin" in m or "are ignored" in m)
    ]


# -- 200, 404 and the status policy ----------------------------------------------------


@deferred_f_from_coro_f
async def test_200_rules_apply_and_the_drop_names_the_rule(
    hostile: HostileServer,
) -> None:
    hostile.add_route("/robots.txt", Reply(200, {}, b"# hi\n" + RULES))
    urls = serve_pages(hostile)
    result = await run_crawl(urls, settings())

    assert pages_served(hostile) == {"/public/a"}
    [failure] = result.failures
    assert isinstance(failure, RobotsTxtDisallowed)
    assert failure.decision.rule is not None
    assert (failure.decision.rule.line, failure.decision.rule.directive) == (
        3,
        "Disallow",
    )
    assert failure.robots_url == hostile.url("/robots.txt")
    [line] = drop_lines(result)
    assert urls[1] in line
    assert hostile.url("/robots.txt") in line
    assert 'line 3 "Disallow: /private/" (User-agent: *)' in line
    assert str(failure) in line
    assert stat(result, "robotstxt/forbidden") == 1
    assert stat(result, "robots_std/dropped/rule") == 1
    assert stat(result, "robots_std/verdict/parse") == 1
    assert stat(result, "robotstxt/request_count") == 1
    assert stat(result, "robotstxt/response_count") == 1
    assert stat(result, "robotstxt/response_status_count/200") == 1
    assert robots_fetches(hostile) == 1
    assert_no_errors(result)


@deferred_f_from_coro_f
async def test_404_whose_body_looks_like_rules_means_no_restrictions(
    hostile: HostileServer,
) -> None:
    hostile.add_route("/robots.txt", Reply(404, {}, b"User-agent: *\nDisallow: /\n"))
    result = await run_crawl(serve_pages(hostile), settings())
    assert pages_served(hostile) == set(PAGES)
    assert stat(result, "robots_std/verdict/allow-all") == 1
    assert stat(result, "robotstxt/response_status_count/404") == 1
    assert result.failures == []


STATUS_CASES = [
    # status, standard, pages served, verdict, attempts
    (401, "rfc9309", set(PAGES), "allow-all", 1),
    (403, "rfc9309", set(PAGES), "allow-all", 1),
    (401, "1994", set(), "disallow-all", 1),
    (403, "1994", set(), "disallow-all", 1),
    (410, "rfc9309", set(PAGES), "allow-all", 1),
    (410, "1994", set(PAGES), "allow-all", 1),
    (404, "1994", set(PAGES), "allow-all", 1),
    (429, "rfc9309", set(), "unreachable", 3),
    (500, "rfc9309", set(), "unreachable", 3),
    (500, "1994", set(), "unreachable", 3),
    (503, "1994", set(), "unreachable", 3),
]


@pytest.mark.parametrize(
    ("status", "standard", "served", "verdict", "attempts"), STATUS_CASES
)
@deferred_f_from_coro_f
async def test_status_policy(
    hostile: HostileServer,
    status: int,
    standard: str,
    served: set[str],
    verdict: str,
    attempts: int,
) -> None:
    hostile.add_route("/robots.txt", Reply(status, {}, b"User-agent: *\nAllow: /\n"))
    result = await run_crawl(
        serve_pages(hostile), settings(ROBOTS_STD_STANDARD=standard)
    )
    assert pages_served(hostile) == served
    assert stat(result, f"robots_std/verdict/{verdict}") == 1
    assert robots_fetches(hostile) == attempts
    assert stat(result, f"robotstxt/response_status_count/{status}") == attempts
    dropped = len(PAGES) - len(served)
    assert len(result.failures) == dropped
    if dropped:
        reason = "http-status" if verdict == "disallow-all" else "unreachable"
        assert stat(result, f"robots_std/dropped/{reason}") == dropped
        assert all(isinstance(f, RobotsTxtDisallowed) for f in result.failures)
        assert all(f.decision.reason == reason for f in result.failures)  # type: ignore[attr-defined]
        [first, *_] = drop_lines(result)
        assert f"HTTP {status}" in first
    assert_no_errors(result)


@deferred_f_from_coro_f
async def test_503_retry_after_is_honoured(hostile: HostileServer) -> None:
    hostile.add_route(
        "/robots.txt",
        Sequence(Reply(503, {"Retry-After": "1"}, b""), Reply(200, {}, RULES)),
    )
    result = await run_crawl(
        serve_pages(hostile), settings(ROBOTS_STD_RETRY_BACKOFF=0.05)
    )
    first, second = (r.arrived for r in hostile.requests_for("/robots.txt"))
    assert second - first >= 0.95
    assert pages_served(hostile) == {"/public/a"}
    assert stat(result, "robots_std/fetch/retries") == 1
    assert stat(result, "robots_std/verdict/parse") == 1


@deferred_f_from_coro_f
async def test_500_then_200_recovers(hostile: HostileServer) -> None:
    hostile.add_route("/robots.txt", Sequence(Reply(500), Reply(200, {}, RULES)))
    result = await run_crawl(serve_pages(hostile), settings())
    assert pages_served(hostile) == {"/public/a"}
    assert robots_fetches(hostile) == 2
    assert stat(result, "robots_std/verdict/parse") == 1
    assert stat(result, "robots_std/verdict/unreachable") is None
    assert stat(result, "robots_std/dropped/rule") == 1


@deferred_f_from_coro_f
async def test_retry_after_beyond_the_wait_budget_gives_up(
    hostile: HostileServer,
) -> None:
    hostile.add_route("/robots.txt", Reply(503, {"Retry-After": "3600"}, b""))
    result = await run_crawl(
        serve_pages(hostile),
        settings(ROBOTS_STD_RETRY_AFTER_MAX=30, ROBOTS_STD_MAX_WAIT=2),
    )
    assert robots_fetches(hostile) == 1
    assert pages_served(hostile) == set()
    assert stat(result, "robots_std/dropped/unreachable") == 2
    assert result.elapsed < 10


# -- redirects -------------------------------------------------------------------------


def redirect(to: str, status: int = 301) -> Reply:
    return Reply(status, {"Location": to}, b"")


@deferred_f_from_coro_f
async def test_redirect_to_the_same_host(hostile: HostileServer) -> None:
    hostile.add_route("/robots.txt", redirect("/real-robots.txt"))
    hostile.add_route("/real-robots.txt", Reply(200, {}, RULES))
    result = await run_crawl(serve_pages(hostile), settings())
    assert pages_served(hostile) - {"/real-robots.txt"} == {"/public/a"}
    assert stat(result, "robotstxt/response_status_count/301") == 1


@deferred_f_from_coro_f
async def test_redirect_to_another_host(
    hostile: HostileServer, hostile_b: HostileServer
) -> None:
    hostile.add_route("/robots.txt", redirect(hostile_b.url("/robots.txt"), 302))
    hostile_b.add_route("/robots.txt", Reply(200, {}, RULES))
    await run_crawl(serve_pages(hostile), settings())
    assert pages_served(hostile) == {"/public/a"}
    assert robots_fetches(hostile_b) == 1


def chain(server: HostileServer, hops: int) -> None:
    """/robots.txt redirects ``hops`` times; the end of the chain has RULES."""
    names = ["/robots.txt"] + [f"/hop{i}.txt" for i in range(1, hops + 1)]
    for here, there in itertools.pairwise(names):
        server.add_route(here, redirect(there, 307))
    server.add_route(names[-1], Reply(200, {}, RULES))


@deferred_f_from_coro_f
async def test_five_redirects_are_followed(hostile: HostileServer) -> None:
    chain(hostile, 5)
    result = await run_crawl(serve_pages(hostile), settings())
    assert {p for p in pages_served(hostile) if not p.startswith("/hop")} == {
        "/public/a"
    }
    assert stat(result, "robots_std/verdict/parse") == 1


@deferred_f_from_coro_f
async def test_six_redirects_mean_no_restrictions(hostile: HostileServer) -> None:
    chain(hostile, 6)
    result = await run_crawl(serve_pages(hostile), settings())
    assert {p for p in pages_served(hostile) if not p.startswith("/hop")} == set(PAGES)
    assert robots_fetches(hostile, "/hop6.txt") == 0
    assert stat(result, "robots_std/verdict/allow-all") == 1
    [notice] = notices(result)
    assert notice == (
        f"robots.txt {hostile.url('/robots.txt')} gave too-many-redirects after 5 "
        f"redirect(s), last to {hostile.url('/hop6.txt')}: no restrictions for this "
        "origin"
    )


@pytest.mark.parametrize(
    "location", ["http://[/x", "http://example.com:99999/robots.txt", "ftp://a/r.txt"]
)
@deferred_f_from_coro_f
async def test_a_malformed_redirect_location_means_no_restrictions(
    hostile: HostileServer, location: str
) -> None:
    """An unfollowable Location is a redirect that cannot be followed: no
    restrictions, decided once and cached, no traceback (issue 16, point 5)."""
    hostile.add_route("/robots.txt", Reply(301, {"Location": location}))
    result = await run_crawl(serve_pages(hostile), settings())
    assert pages_served(hostile) == set(PAGES)
    assert robots_fetches(hostile) == 1
    assert stat(result, "robots_std/verdict/allow-all") == 1
    [notice] = notices(result)
    assert "gave bad-redirect-location after 0 redirect(s), last to " in notice
    assert_no_errors(result)


@deferred_f_from_coro_f
async def test_redirect_loop_means_no_restrictions(hostile: HostileServer) -> None:
    hostile.add_route("/robots.txt", redirect("/loop.txt"))
    hostile.add_route("/loop.txt", redirect("/robots.txt"))
    result = await run_crawl(serve_pages(hostile), settings())
    assert {p for p in pages_served(hostile) if p != "/loop.txt"} == set(PAGES)
    assert robots_fetches(hostile) == 1
    assert stat(result, "robots_std/verdict/allow-all") == 1
    [notice] = notices(result)
    assert "gave redirect-loop after 1 redirect(s)" in notice
    assert notice.endswith(": no restrictions for this origin")


@deferred_f_from_coro_f
async def test_redirect_from_http_to_https(
    hostile: HostileServer, hostile_tls: HostileServer
) -> None:
    hostile.add_route("/robots.txt", redirect(hostile_tls.url("/robots.txt")))
    hostile_tls.add_route("/robots.txt", Reply(200, {}, RULES))
    result = await run_crawl(serve_pages(hostile), settings())
    assert pages_served(hostile) == {"/public/a"}
    assert robots_fetches(hostile_tls) == 1
    assert stat(result, "robots_std/verdict/parse") == 1


@deferred_f_from_coro_f
async def test_redirect_to_another_domain_with_allowed_domains(
    hostile: HostileServer,
) -> None:
    with loopback_names():
        hostile.add_route(
            "/robots.txt",
            redirect(hostile.url("/robots.txt", host="other.test")),
            host="site.test",
        )
        hostile.add_route("/robots.txt", Reply(200, {}, RULES), host="other.test")
        urls = serve_pages(hostile, host="site.test")
        result = await run_crawl(
            urls, settings(), spider_kwargs={"allowed_domains": ["site.test"]}
        )
    assert pages_served(hostile) == {"/public/a"}
    assert [r.host for r in hostile.requests_for("/robots.txt")] == [
        "site.test",
        "other.test",
    ]
    assert stat(result, "robots_std/verdict/parse") == 1


# -- network failures ------------------------------------------------------------------


@pytest.mark.parametrize(
    "behaviour",
    [Reset(), Garbage(), LyingLength(RULES, declared=100_000)],
    ids=["reset", "garbage", "lying-content-length"],
)
@deferred_f_from_coro_f
async def test_broken_answers_make_the_origin_unreachable(
    hostile: HostileServer, behaviour: Any
) -> None:
    hostile.add_route("/robots.txt", behaviour)
    result = await run_crawl(serve_pages(hostile), settings())
    assert pages_served(hostile) == set()
    assert robots_fetches(hostile) == 3
    assert stat(result, "robots_std/verdict/unreachable") == 1
    assert stat(result, "robots_std/dropped/unreachable") == 2
    assert any(k.startswith("robotstxt/exception_count/") for k in result.stats)
    assert_no_errors(result)


@deferred_f_from_coro_f
async def test_only_the_exact_robots_txt_uri_is_exempt(hostile: HostileServer) -> None:
    """Unreachable robots.txt: everything is disallowed but /robots.txt itself;
    /robots.txt?x=1 is an ordinary URL (SPEC 2.1) and is dropped."""
    hostile.add_route("/robots.txt", Reply(503))
    urls = [hostile.url("/robots.txt"), hostile.url("/robots.txt?x=1")]
    result = await run_crawl(urls, settings(ROBOTS_STD_FETCH_RETRIES=0))
    assert stat(result, "robots_std/verdict/unreachable") == 1
    assert stat(result, "robots_std/dropped/unreachable") == 1
    [line] = drop_lines(result)
    assert "/robots.txt?x=1" in line
    # One fetch by the middleware, then the spider's own request for the file.
    assert robots_fetches(hostile) == 2
    assert "/robots.txt?x=1" not in {r.path for r in hostile.requests}


@deferred_f_from_coro_f
async def test_connection_refused(refused_port: int) -> None:
    urls = [f"http://127.0.0.1:{refused_port}{p}" for p in PAGES]
    result = await run_crawl(urls, settings())
    assert stat(result, "robots_std/verdict/unreachable") == 1
    assert stat(result, "robotstxt/request_count") == 3
    assert stat(result, "robots_std/dropped/unreachable") == 2
    [first, *_] = drop_lines(result)
    assert "unreachable" in first
    assert "ConnectionRefusedError" in first
    assert_no_errors(result)


@deferred_f_from_coro_f
async def test_black_hole_times_out_and_the_crawl_finishes(
    hostile: HostileServer,
) -> None:
    hostile.add_route("/robots.txt", BlackHole(max_hold=30))
    result = await run_crawl(
        serve_pages(hostile),
        settings(ROBOTS_STD_FETCH_TIMEOUT=1, ROBOTS_STD_FETCH_RETRIES=0),
    )
    assert pages_served(hostile) == set()
    assert stat(result, "robots_std/dropped/unreachable") == 2
    assert 1 <= result.elapsed < 8
    assert_no_errors(result)


@deferred_f_from_coro_f
async def test_trickle_is_cut_by_the_robots_timeout(hostile: HostileServer) -> None:
    hostile.add_route("/robots.txt", Trickle(RULES * 10, interval=1.0))
    result = await run_crawl(
        serve_pages(hostile),
        settings(
            ROBOTS_STD_FETCH_TIMEOUT=1.5,
            ROBOTS_STD_FETCH_RETRIES=0,
            DOWNLOAD_TIMEOUT=60,
        ),
    )
    assert pages_served(hostile) == set()
    assert stat(result, "robots_std/verdict/unreachable") == 1
    assert result.elapsed < 10


@deferred_f_from_coro_f
async def test_the_wait_budget_bounds_every_request(hostile: HostileServer) -> None:
    hostile.add_route("/robots.txt", BlackHole(max_hold=30))
    result = await run_crawl(
        serve_pages(hostile),
        settings(
            ROBOTS_STD_FETCH_TIMEOUT=2,
            ROBOTS_STD_FETCH_RETRIES=5,
            ROBOTS_STD_MAX_WAIT=3,
        ),
    )
    assert result.elapsed < 8
    assert stat(result, "robots_std/wait/max_seconds") <= 4
    assert stat(result, "robots_std/dropped/unreachable") == 2


# -- size ------------------------------------------------------------------------------


@deferred_f_from_coro_f
async def test_gzip_bomb_does_not_exhaust_memory(hostile: HostileServer) -> None:
    hostile.add_route("/robots.txt", GzipBomb(decompressed_size=512 * 1024 * 1024))
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    result = await run_crawl(serve_pages(hostile), settings(ROBOTS_STD_FETCH_RETRIES=0))
    grown_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before
    assert grown_kib < 100 * 1024
    assert pages_served(hostile) == set()
    assert stat(result, "robots_std/verdict/unreachable") == 1
    assert stat(result, "robots_std/body/over_decompression_cap") == 1
    # HttpCompressionMiddleware's IgnoreRequest: a hostile body, not an ignored request
    assert stat(result, "robots_std/verdict/ignored") is None
    # Visible, with the setting that decided and the consequence.
    [warning] = [
        m for m in result.messages(logging.WARNING, MW_LOGGER) if "unreachable" in m
    ]
    assert (
        "(IgnoreRequest: the body inflates past ROBOTS_STD_MAX_DECOMPRESSED_SIZE "
        "(4,194,304 bytes)): its requests are dropped for the next 120 s"
    ) in warning


@deferred_f_from_coro_f
async def test_10_mb_body_is_cut_at_500_kib_without_downloading_the_rest(
    hostile: HostileServer,
) -> None:
    hostile.add_route(
        "/robots.txt",
        Streaming(size=10 * 1024 * 1024, line=b"User-agent: *\nDisallow: /private/\n"),
    )
    result = await run_crawl(serve_pages(hostile), settings())
    [record] = hostile.requests_for("/robots.txt")
    assert record.bytes_sent < 3 * 1024 * 1024
    assert pages_served(hostile) == {"/public/a"}
    assert stat(result, "robots_std/body/truncated") == 1
    assert notices(result) == [
        (
            f"robots.txt {hostile.url('/robots.txt')} is longer than 500 KiB: the "
            "lines after its first 512,000 bytes are ignored"
        )
    ]
    assert_no_errors(result)


@deferred_f_from_coro_f
async def test_receivers_are_connected_only_while_a_fetch_is_in_flight(
    hostile: HostileServer,
) -> None:
    """The headers_received / bytes_received receivers that bound a robots.txt
    download are connected only while one is in flight, and nothing of ours listens
    to request_scheduled: the pages (all requested after the verdict here: they
    wait for it) and the links they yield do not pay for them."""
    from pydispatch import dispatcher

    hostile.add_route("/robots.txt", Reply(200, {}, RULES))
    watched = (signals.request_scheduled, signals.bytes_received)
    seen: dict[str, list[str]] = {}

    def on_crawler(crawler: Crawler) -> None:
        def receivers(request: Request) -> None:
            seen[urlsplit(request.url).path] = [
                getattr(r, "__qualname__", repr(r))
                for signal in watched
                for r in dispatcher.liveReceivers(
                    dispatcher.getAllReceivers(crawler.signals.sender, signal)
                )
            ]

        def on_headers(request: Request, **_: Any) -> None:
            receivers(request)

        crawler.signals.connect(on_headers, signals.headers_received, weak=False)

    pages = serve_pages(hostile, ("/public/a", "/public/b", "/public/c"))
    result = await run_crawl(pages, settings(), on_crawler=on_crawler)
    assert pages_served(hostile) == {"/public/a", "/public/b", "/public/c"}
    ours = {"RobotsDownload._bytes_received"}
    assert ours <= set(seen["/robots.txt"])  # connected while the fetch was in flight
    for page in ("/public/a", "/public/b", "/public/c"):
        assert not ours & set(seen[page]), page
    for page in ("/public/a", "/public/b", "/public/c"):
        # Nothing of ours at all: no request_scheduled receiver either.
        assert not any(r.startswith(("Robots", "VerdictBook")) for r in seen[page])
    assert_no_errors(result)


# -- cookies, origins ------------------------------------------------------------------


@deferred_f_from_coro_f
async def test_robots_txt_cookies_never_reach_pages(hostile: HostileServer) -> None:
    hostile.add_route(
        "/robots.txt",
        Reply(200, {"Set-Cookie": "tracker=1; Path=/"}, b"User-agent: *\nAllow: /\n"),
    )
    await run_crawl(serve_pages(hostile), settings())
    page_requests = [r for r in hostile.requests if r.path in PAGES]
    assert len(page_requests) == 2
    assert all("cookie" not in r.headers for r in page_requests)


@deferred_f_from_coro_f
async def test_http_https_and_default_port_origins(
    hostile: HostileServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    use_as_http_proxy(hostile, monkeypatch)
    hostile.add_route("/robots.txt", Reply(200, {}, RULES), host="site.test")
    serve_pages(hostile, host="site.test")
    urls = [
        "http://site.test/public/a",
        "http://site.test:80/private/b",
        "http://SITE.test/private/b?x=1",
        "http://user:secret@site.test/public/a?y=2",
    ]
    result = await run_crawl(urls, settings())
    robots = hostile.requests_for("/robots.txt", host="site.test")
    assert len(robots) == 1
    assert "authorization" not in robots[0].headers
    site_paths = {
        r.path.split("?")[0] for r in hostile.requests if r.host == "site.test"
    }
    assert site_paths == {"/robots.txt", "/public/a"}
    assert stat(result, "robots_std/dropped/rule") == 2


@deferred_f_from_coro_f
async def test_http_and_https_are_two_origins(hostile_tls: HostileServer) -> None:
    hostile_tls.add_route("/robots.txt", Reply(200, {}, RULES))
    urls = serve_pages(hostile_tls)
    http_url = urls[0].replace(
        "https://", "http://"
    )  # same host and port, other scheme
    result = await run_crawl([*urls, http_url], settings(ROBOTS_STD_FETCH_RETRIES=0))
    assert pages_served(hostile_tls) == {"/public/a"}
    # The plain-http origin is a different origin with its own (failing) robots.txt.
    assert stat(result, "robots_std/verdict/parse") == 1
    assert stat(result, "robots_std/verdict/unreachable") == 1


@deferred_f_from_coro_f
async def test_idn_host(
    hostile: HostileServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    use_as_http_proxy(hostile, monkeypatch)
    host = "xn--bcher-kva.test"
    hostile.add_route("/robots.txt", Reply(200, {}, RULES), host=host)
    serve_pages(hostile, host=host)
    result = await run_crawl([f"http://bücher.test{p}" for p in PAGES], settings())
    assert [r.host for r in hostile.requests_for("/robots.txt")] == [host]
    assert {r.path for r in hostile.requests if r.path in PAGES} == {"/public/a"}
    assert stat(result, "robots_std/dropped/rule") == 1


@deferred_f_from_coro_f
async def test_ipv6_literal(hostile_v6: HostileServer) -> None:
    hostile_v6.add_route("/robots.txt", Reply(200, {}, RULES))
    urls = serve_pages(hostile_v6)
    assert urls[0].startswith("http://[::1]:")
    result = await run_crawl(urls, settings())
    assert pages_served(hostile_v6) == {"/public/a"}
    [failure] = result.failures
    assert isinstance(failure, RobotsTxtDisallowed)
    assert failure.robots_url == hostile_v6.url("/robots.txt")


# -- concurrency -----------------------------------------------------------------------


@deferred_f_from_coro_f
async def test_every_waiter_is_checked(hostile: HostileServer) -> None:
    """20 concurrent requests, half disallowed, during a 2 s robots.txt fetch."""
    hostile.add_route("/robots.txt", Reply(200, {}, RULES, delay=2.0))
    pages = [f"/{'private' if i % 2 else 'public'}/{i}" for i in range(20)]
    result = await run_crawl(serve_pages(hostile, pages), settings())
    served = pages_served(hostile)
    assert not {p for p in served if p.startswith("/private/")}
    assert len(served) == 10
    assert len(result.failures) == 10
    assert stat(result, "robots_std/dropped/rule") == 10
    assert robots_fetches(hostile) == 1
    assert stat(result, "robots_std/wait/requests") == 20
    assert stat(result, "robots_std/wait/max_seconds") >= 1.9


@deferred_f_from_coro_f
async def test_every_direct_download_waiter_is_checked(hostile: HostileServer) -> None:
    from scrapy.utils.test import get_crawler

    hostile.add_route("/robots.txt", Reply(200, {}, RULES, delay=1.0))
    pages = [f"/{'private' if i % 2 else 'public'}/{i}" for i in range(10)]
    urls = serve_pages(hostile, pages)
    crawler = get_crawler(
        DownloadAsyncSpider, {**settings(), "TELNETCONSOLE_ENABLED": False}
    )
    await crawler.crawl_async(urls=urls)
    spider = crawler.spider
    assert isinstance(spider, DownloadAsyncSpider)
    assert not {p for p in pages_served(hostile) if p.startswith("/private/")}
    assert sorted(spider.outcomes.values()) == ["dropped"] * 5 + ["fetched"] * 5
    assert robots_fetches(hostile) == 1


@deferred_f_from_coro_f
async def test_a_black_holed_origin_does_not_stall_the_others(
    hostile: HostileServer,
) -> None:
    timeout = 6.0
    healthy = [f"h{i}.test" for i in range(20)]
    with loopback_names():
        hostile.add_route("/robots.txt", BlackHole(max_hold=30), host="dead.test")
        urls = serve_pages(hostile, [f"/dead/{i}" for i in range(10)], host="dead.test")
        for host in healthy:
            hostile.add_route("/robots.txt", Reply(200, {}, RULES), host=host)
            urls += serve_pages(hostile, ["/public/1", "/public/2"], host=host)
        result = await run_crawl(
            urls,
            settings(
                CONCURRENT_REQUESTS=8,
                ROBOTS_STD_FETCH_TIMEOUT=timeout,
                ROBOTS_STD_FETCH_RETRIES=0,
            ),
        )
    [dead_robots] = hostile.requests_for("/robots.txt", host="dead.test")
    healthy_pages = [
        r for r in hostile.requests if r.host in healthy and r.path != "/robots.txt"
    ]
    assert len(healthy_pages) == 40
    assert max(r.arrived for r in healthy_pages) < dead_robots.arrived + timeout
    assert stat(result, "robots_std/dropped/unreachable") == 10


class FollowUpSpider(HostileSpider):
    """Its first response yields ``follow_ups``, the first of them with a higher
    priority (taken from the scheduler first)."""

    name = "follow_up"

    def __init__(self, *args: Any, follow_ups: list[str], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.follow_ups = list(follow_ups)

    def parse(self, response: Response) -> Iterator[Request]:  # type: ignore[override]
        super().parse(response)
        urls, self.follow_ups = self.follow_ups, []
        for i, url in enumerate(urls):
            yield Request(
                url, callback=self.parse, errback=self.on_error, priority=int(i == 0)
            )


@deferred_f_from_coro_f
async def test_a_request_reaching_the_downloader_without_a_verdict_holds_no_slot(
    hostile: HostileServer,
) -> None:
    """No fetch is in flight when dead.test's page is scheduled, so it is not parked
    then: it reaches process_request (first: its priority is higher), which starts the
    fetch and sends it back to the engine to be parked. Waiting there instead would
    hold one of the two slots while the robots.txt download holds the other, and
    live.test's pages would wait for the 5 s timeout."""
    timeout = 5.0
    with loopback_names():
        hostile.add_route("/robots.txt", BlackHole(max_hold=30), host="dead.test")
        hostile.add_route("/robots.txt", Reply(200, {}, RULES), host="live.test")
        [dead] = serve_pages(hostile, ["/dead/1"], host="dead.test")
        first, *rest = serve_pages(
            hostile, [f"/public/{i}" for i in range(8)], host="live.test"
        )
        result = await run_crawl(
            [first],
            settings(
                CONCURRENT_REQUESTS=2,
                ROBOTS_STD_FETCH_TIMEOUT=timeout,
                ROBOTS_STD_FETCH_RETRIES=0,
            ),
            spider_cls=FollowUpSpider,
            spider_kwargs={"follow_ups": [dead, *rest]},
        )
    [dead_robots] = hostile.requests_for("/robots.txt", host="dead.test")
    live_pages = [
        r for r in hostile.requests if r.host == "live.test" and r.path != "/robots.txt"
    ]
    assert len(live_pages) == 8
    assert max(r.arrived for r in live_pages) < dead_robots.arrived + timeout / 2
    assert result.failed_urls == [dead]
    assert stat(result, "robots_std/dropped/unreachable") == 1
    # one miss per origin: a requeued request is not counted again
    assert stat(result, "robots_std/cache/miss") == 2
    assert stat(result, "robots_std/cache/hit") == 7
    assert stat(result, "robots_std/wait/requests") == 2
    # the first live.test page was requeued: it comes back as it was sent
    assert first in result.responses
    for request in result.requests:
        assert request.dont_filter is False
        assert not [key for key in request.meta if key.startswith("_robots_std")]
    assert_no_errors(result)


# -- what the user sees ----------------------------------------------------------------


@deferred_f_from_coro_f
async def test_dont_obey_robotstxt_meta(hostile: HostileServer) -> None:
    hostile.add_route("/robots.txt", Reply(200, {}, RULES))
    result = await run_crawl(
        serve_pages(hostile), settings(), meta={"dont_obey_robotstxt": True}
    )
    assert pages_served(hostile) == set(PAGES)
    assert robots_fetches(hostile) == 0
    assert result.failures == []


TOKEN_ROBOTS = b"User-agent: TestBot\nDisallow: /public/\n\nUser-agent: OtherBot\nDisallow: /private/\n"


@pytest.mark.parametrize(
    ("extra", "served"),
    [
        ({}, {"/private/b"}),  # the User-Agent header's product token: TestBot
        ({"ROBOTSTXT_USER_AGENT": "OtherBot/2.0"}, {"/public/a"}),
        ({"USER_AGENT": "Nobody/1.0"}, set(PAGES)),  # no group names it, no * group
    ],
)
@deferred_f_from_coro_f
async def test_token_resolution(
    hostile: HostileServer, extra: Mapping[str, Any], served: set[str]
) -> None:
    hostile.add_route("/robots.txt", Reply(200, {}, TOKEN_ROBOTS))
    await run_crawl(serve_pages(hostile), settings(**extra))
    assert pages_served(hostile) == served


@deferred_f_from_coro_f
async def test_dry_run_logs_and_counts_without_dropping(hostile: HostileServer) -> None:
    hostile.add_route("/robots.txt", Reply(200, {}, RULES))
    result = await run_crawl(serve_pages(hostile), settings(ROBOTS_STD_DRY_RUN=True))
    assert pages_served(hostile) == set(PAGES)
    assert stat(result, "robots_std/would_drop/rule") == 1
    assert stat(result, "robotstxt/forbidden") is None
    assert any(
        "Would be forbidden by robots.txt (dry run)" in m for m in result.messages()
    )


@deferred_f_from_coro_f
async def test_robots_parsed_signal(hostile: HostileServer) -> None:
    hostile.add_route(
        "/robots.txt", Reply(200, {}, RULES + b"Sitemap: http://x.test/s.xml\n")
    )
    seen: list[tuple[Any, Request]] = []

    def connect(crawler: Crawler) -> None:
        def on_parsed(robotparser: Any, request: Request) -> None:
            seen.append((robotparser, request))

        crawler.signals.connect(on_parsed, signals.robots_parsed, weak=False)

    urls = serve_pages(hostile)
    await run_crawl(urls, settings(), on_crawler=connect)
    [(parser, request)] = seen
    assert isinstance(parser, StdRobotParser)
    assert parser.sitemaps == ("http://x.test/s.xml",)
    assert not parser.allowed(urls[1], "TestBot")
    assert request.url in urls


@deferred_f_from_coro_f
async def test_cache_keeps_no_diagnostics(hostile: HostileServer) -> None:
    """The signal's parser reports the misspelling; the cached copy keeps no notes."""
    hostile.add_route("/robots.txt", Reply(200, {}, RULES + b"Dissallow: /b/\n"))
    seen: list[tuple[StdRobotParser, CacheEntry | None]] = []

    def connect(crawler: Crawler) -> None:
        def on_parsed(robotparser: StdRobotParser, request: Request) -> None:
            # The entry is stored before the signal is sent (and the cache is
            # cleared when the spider closes).
            mw = crawler.get_downloader_middleware(RobotsTxtStdMiddleware)
            origin = origin_of(request.url)
            assert mw is not None
            assert origin is not None
            seen.append((robotparser, mw.store.memory.get(origin.key)))

        crawler.signals.connect(on_parsed, signals.robots_parsed, weak=False)

    urls = serve_pages(hostile, ["/public/a", "/b/c"])
    result = await run_crawl(urls, settings(), on_crawler=connect)
    [(parser, entry)] = seen
    assert [d.kind for d in parser.robots.diagnostics] == ["misspelling"]
    assert entry is not None
    assert entry.robots is not None
    assert entry.robots.diagnostics == ()
    assert not entry.robots.allowed(urls[1], "TestBot")
    assert result.stats["robots_std/dropped/rule"] == 1


@deferred_f_from_coro_f
async def test_summary_at_close(
    hostile: HostileServer, hostile_b: HostileServer
) -> None:
    hostile.add_route("/robots.txt", Reply(200, {}, RULES))
    hostile_b.add_route("/robots.txt", Reply(503))
    urls = serve_pages(
        hostile, ["/private/1", "/private/2", "/public/3"]
    ) + serve_pages(hostile_b)
    result = await run_crawl(urls, settings(ROBOTS_STD_FETCH_RETRIES=0))
    [summary] = [
        m for m in result.messages(logging.INFO, MW_LOGGER) if "top origins" in m
    ]
    assert "4 request(s) dropped (rule: 2, unreachable: 2)" in summary
    assert f'{hostile.url("/robots.txt")} line 2 "Disallow: /private/"' in summary
    assert hostile_b.url("/robots.txt") in summary.split("unreachable:")[-1]
    origin_keys = [
        k for k in result.stats if k.startswith("robots_std/dropped_by_origin/")
    ]
    assert len(origin_keys) == 2


@deferred_f_from_coro_f
async def test_lru_bound_evicts_origins(
    hostile: HostileServer, hostile_b: HostileServer
) -> None:
    for server in (hostile, hostile_b):
        server.add_route("/robots.txt", Reply(200, {}, RULES))
    urls = serve_pages(hostile) + serve_pages(hostile_b)
    result = await run_crawl(urls, settings(ROBOTS_STD_CACHE_MAX_ORIGINS=1))
    assert stat(result, "robots_std/cache/eviction") >= 1
    assert pages_served(hostile) == pages_served(hostile_b) == {"/public/a"}


class SlowSpider(Spider):
    """Asks for the second page after the robots.txt verdict has expired."""

    name = "slow"

    def __init__(
        self, *args: Any, urls: list[str], pause: float, **kwargs: Any
    ) -> None:
        super().__init__(*args, **kwargs)
        self.urls = urls
        self.pause = pause

    async def start(self) -> AsyncIterator[Any]:
        yield Request(self.urls[0], callback=self.later)

    async def later(self, response: Response) -> AsyncIterator[Any]:
        from scrapy.utils.defer import maybe_deferred_to_future
        from twisted.internet import reactor
        from twisted.internet.task import deferLater

        await maybe_deferred_to_future(deferLater(reactor, self.pause))  # type: ignore[arg-type]
        yield Request(self.urls[1], callback=self.done)

    def done(self, response: Response) -> None:
        pass


@deferred_f_from_coro_f
async def test_max_age_expiry_refetches(hostile: HostileServer) -> None:
    from scrapy.utils.test import get_crawler

    hostile.add_route(
        "/robots.txt",
        Reply(200, {"Cache-Control": "max-age=1"}, b"User-agent: *\nAllow: /\n"),
    )
    urls = serve_pages(hostile, ["/public/1", "/public/2"])
    crawler = get_crawler(
        SlowSpider,
        {**settings(ROBOTS_STD_CACHE_MIN_TTL=0), "TELNETCONSOLE_ENABLED": False},
    )
    started = time.monotonic()
    await crawler.crawl_async(urls=urls, pause=1.5)
    assert time.monotonic() - started >= 1.5
    assert robots_fetches(hostile) == 2
    assert pages_served(hostile) == {"/public/1", "/public/2"}


@deferred_f_from_coro_f
async def test_requests_still_waiting_when_the_spider_closes_are_counted(
    hostile: HostileServer, hostile_b: HostileServer
) -> None:
    hostile.add_route("/robots.txt", Reply(503))  # keeps retrying (backoff sleeps)
    hostile_b.add_route("/robots.txt", Reply(200, {}, b"User-agent: *\nAllow: /\n"))
    urls = serve_pages(hostile_b, ["/public/1"]) + serve_pages(hostile)
    result = await run_crawl(
        urls,
        settings(
            # not PAGECOUNT: robots.txt responses count as pages there
            CLOSESPIDER_TIMEOUT=1.5,
            ROBOTS_STD_FETCH_RETRIES=5,
            ROBOTS_STD_RETRY_BACKOFF=20,
            ROBOTS_STD_RETRY_AFTER_MAX=20,
            ROBOTS_STD_MAX_WAIT=60,
        ),
    )
    assert result.stats["finish_reason"] == "closespider_timeout"
    assert result.elapsed < 15  # the 20 s backoff was cut short
    assert pages_served(hostile) == set()
    assert pages_served(hostile_b) == {"/public/1"}
    # They wait in the scheduler's queue, which keeps them under JOBDIR and
    # discards them otherwise, as it does every request it holds at close.
    assert stat(result, "robots_std/wait/left_at_close") == 2
    assert any(
        "2 request(s) were still waiting for the robots.txt of 1 origin(s)" in m
        for m in result.messages(logging.WARNING)
    )
