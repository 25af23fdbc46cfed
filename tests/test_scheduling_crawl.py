"""Scheduling in real crawls (issue 23): robots.txt is fetched ahead of need, within
ROBOTS_STD_FETCH_CONCURRENCY, and an origin waiting for its robots.txt never holds
back another origin's pages. Host names ``*.test`` resolve to 127.0.0.1
(``loopback_dns``), so each origin has its own download slot."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest
from scrapy import Request
from scrapy.squeues import PickleLifoDiskQueue
from scrapy.utils.defer import deferred_f_from_coro_f

from tests.helpers.crawl import HostileSpider, run_crawl, settings
from tests.helpers.server import Reply

if TYPE_CHECKING:
    from pathlib import Path

    from tests.helpers.names import LoopbackResolver
    from tests.helpers.server import HostileServer

pytestmark = pytest.mark.crawl

ALLOW_ALL = b"User-agent: *\nDisallow: /private\n"


@deferred_f_from_coro_f
async def test_robots_txt_is_fetched_while_the_downloader_is_full(
    hostile: HostileServer, loopback_dns: LoopbackResolver
) -> None:
    """Two slow pages of busy.test fill CONCURRENT_REQUESTS = 2. The three other
    origins' robots.txt are asked for as soon as their requests are queued, not
    when the downloader has room for their pages."""
    routes = {("busy.test", "/robots.txt"): Reply(body=ALLOW_ALL)}
    for n in (1, 2):
        routes[("busy.test", f"/slow{n}")] = Reply(body=b"slow", delay=1.5)
    others = [f"o{n}.test" for n in range(3)]
    for host in others:
        routes[(host, "/robots.txt")] = Reply(body=ALLOW_ALL)
        routes[(host, "/page")] = Reply(body=b"page")
    hostile.set_routes(routes)
    urls = [hostile.url(f"/slow{n}", host="busy.test") for n in (1, 2)]
    urls += [hostile.url("/page", host=host) for host in others]
    result = await run_crawl(urls, settings(CONCURRENT_REQUESTS=2))
    assert sorted(result.responses) == sorted(urls)
    slow = hostile.requests_for("/slow1", "busy.test")[0]
    for host in others:
        [robots] = hostile.requests_for("/robots.txt", host)
        # The slow pages answer 1.5 s after they arrived; robots.txt came first.
        assert robots.arrived < slow.arrived + 1.0, host
    assert result.stats["robots_std/wait/held"] >= 3


@deferred_f_from_coro_f
async def test_fetches_in_flight_stay_within_the_bound(
    hostile: HostileServer, loopback_dns: LoopbackResolver
) -> None:
    """Six new origins, robots.txt answering in 0.5 s, at most two fetches at once:
    a third robots.txt request arrives only once one of the first two is done."""
    hosts = [f"b{n}.test" for n in range(6)]
    routes = {}
    for host in hosts:
        routes[(host, "/robots.txt")] = Reply(body=ALLOW_ALL, delay=0.5)
        routes[(host, "/page")] = Reply(body=b"page")
    hostile.set_routes(routes)
    urls = [hostile.url("/page", host=host) for host in hosts]
    result = await run_crawl(urls, settings(ROBOTS_STD_FETCH_CONCURRENCY=2))
    assert sorted(result.responses) == sorted(urls)
    arrivals = sorted(r.arrived for r in hostile.requests_for("/robots.txt"))
    assert len(arrivals) == len(hosts)
    for earlier, later in zip(arrivals[:-2], arrivals[2:], strict=True):
        assert later - earlier >= 0.4
    # Unbounded (the default: CONCURRENT_REQUESTS = 16) they all start at once.
    hostile.set_routes(routes)
    result = await run_crawl(urls, settings())
    assert sorted(result.responses) == sorted(urls)
    arrivals = sorted(r.arrived for r in hostile.requests_for("/robots.txt"))
    assert arrivals[-1] - arrivals[0] < 0.4


@deferred_f_from_coro_f
async def test_a_slow_robots_txt_holds_back_no_other_origin(
    hostile: HostileServer, loopback_dns: LoopbackResolver
) -> None:
    """slow.test's requests come first and its robots.txt takes 2 s: the other
    origins' pages are all fetched meanwhile, and slow.test's are checked after."""
    routes = {
        ("slow.test", "/robots.txt"): Reply(body=ALLOW_ALL, delay=2.0),
        ("slow.test", "/page"): Reply(body=b"page"),
        ("slow.test", "/private"): Reply(body=b"private"),
    }
    fast = [f"f{n}.test" for n in range(4)]
    for host in fast:
        routes[(host, "/robots.txt")] = Reply(body=ALLOW_ALL)
        routes[(host, "/page")] = Reply(body=b"page")
    hostile.set_routes(routes)
    slow_urls = [hostile.url(p, host="slow.test") for p in ("/page", "/private")]
    fast_urls = [hostile.url("/page", host=host) for host in fast]
    result = await run_crawl(slow_urls + fast_urls, settings(CONCURRENT_REQUESTS=2))
    assert sorted(result.responses) == sorted([slow_urls[0], *fast_urls])
    [robots] = hostile.requests_for("/robots.txt", "slow.test")
    for host in fast:
        [page] = hostile.requests_for("/page", host)
        assert page.arrived < robots.arrived + 1.5, host
    [slow_page] = hostile.requests_for("/page", "slow.test")
    assert slow_page.arrived >= robots.arrived + 1.9
    assert hostile.requests_for("/private", "slow.test") == []
    assert result.stats["robots_std/dropped/rule"] == 1


class NoFileForSome(PickleLifoDiskQueue):  # type: ignore[misc]
    """A disk queue that cannot store requests whose URL holds ``/nofile``, as a
    disk queue past ``ulimit -n`` cannot open its file."""

    def push(self, obj: Any) -> None:
        if "/nofile" in obj.url:
            raise OSError(24, "Too many open files")
        super().push(obj)


@deferred_f_from_coro_f
async def test_a_request_the_disk_queue_cannot_take_is_kept_in_memory(
    hostile: HostileServer, loopback_dns: LoopbackResolver, tmp_path: Path
) -> None:
    """Issue 27, point 2: with JOBDIR, a disk queue that fails (EMFILE) loses no
    request; Scrapy's scheduler keeps it in memory and counts it."""
    routes = {("d.test", "/robots.txt"): Reply(body=ALLOW_ALL, delay=0.3)}
    paths = ["/page1", "/page2", "/nofile1", "/nofile2"]
    for path in paths:
        routes[("d.test", path)] = Reply(body=b"page")
    hostile.set_routes(routes)
    urls = [hostile.url(path, host="d.test") for path in paths]
    result = await run_crawl(
        urls,
        settings(
            JOBDIR=str(tmp_path / "job"),
            SCHEDULER_DISK_QUEUE=f"{__name__}.NoFileForSome",
            SCHEDULER_START_DISK_QUEUE=f"{__name__}.NoFileForSome",
        ),
    )
    assert sorted(result.responses) == sorted(urls)
    assert result.stats["scheduler/unserializable"] == 2
    assert result.stats["scheduler/enqueued/memory"] == 2
    assert result.stats["scheduler/enqueued/disk"] == 2


@deferred_f_from_coro_f
async def test_an_expired_verdict_fetched_again_at_once_releases_its_origin(
    hostile: HostileServer, loopback_dns: LoopbackResolver, tmp_path: Path
) -> None:
    """A verdict of TTL 0 expires while its origin's pages download one at a time;
    the fetch asked for then is answered at once by the HTTP cache (synchronously
    under Twisted's default reactor). The origin must come out: it used to be held
    after its release and stay held for ever. CLOSESPIDER_TIMEOUT bounds a hang."""
    routes = {("one.test", "/robots.txt"): Reply(body=ALLOW_ALL)}
    pages = [f"/p{n}" for n in range(8)]
    for page in pages:
        routes[("one.test", page)] = Reply(body=b"page", delay=0.4)
    hostile.set_routes(routes)
    urls = [hostile.url(page, host="one.test") for page in pages]
    result = await run_crawl(
        urls,
        settings(
            CONCURRENT_REQUESTS=1,
            ROBOTS_STD_CACHE_TTL=0,
            ROBOTS_STD_CACHE_MIN_TTL=0,
            HTTPCACHE_ENABLED=True,
            HTTPCACHE_DIR=str(tmp_path / "httpcache"),
            CLOSESPIDER_TIMEOUT=20,
        ),
    )
    assert result.stats["finish_reason"] == "finished"
    assert sorted(result.responses) == sorted(urls)


class _Follows(HostileSpider):
    """Its ``/start`` page yields four more pages of the same origin."""

    def parse(self, response: Any) -> Any:  # type: ignore[override]
        super().parse(response)
        if response.url.endswith("/start"):
            for n in range(4):
                yield Request(response.urljoin(f"/next{n}"), callback=self.parse)


@deferred_f_from_coro_f
async def test_new_requests_of_an_expired_verdict_wait_in_the_scheduler(
    hostile: HostileServer,
    loopback_dns: LoopbackResolver,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A verdict of TTL 0: requests queued after it expired are held in the
    scheduler, never left to wait in the downloader holding its concurrency."""
    from scrapy_robots_std.scrapy.verdicts import VerdictBook

    waited_in_downloader: list[str] = []
    original = VerdictBook.wait

    async def counting_wait(self: VerdictBook, origin: Any, trigger: Any) -> Any:
        waited_in_downloader.append(trigger.url)
        return await original(self, origin, trigger)

    monkeypatch.setattr(VerdictBook, "wait", counting_wait)
    routes = {("ttl.test", "/robots.txt"): Reply(body=ALLOW_ALL)}
    routes[("ttl.test", "/start")] = Reply(body=b"start")
    for n in range(4):
        routes[("ttl.test", f"/next{n}")] = Reply(body=b"page")
    hostile.set_routes(routes)
    result = await run_crawl(
        [hostile.url("/start", host="ttl.test")],
        settings(ROBOTS_STD_CACHE_TTL=0, ROBOTS_STD_CACHE_MIN_TTL=0),
        spider_cls=_Follows,
    )
    assert len(result.responses) == 5
    assert waited_in_downloader == []
    assert result.stats["robots_std/wait/held"] >= 5
