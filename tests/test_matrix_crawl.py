"""The core real-crawl cases, each without an HTTP cache and from a warm HTTP cache.

Every case runs a real Scrapy crawl through the add-on against the hostile servers
of ``hostile.py``, in two modes:

- ``nocache``: one crawl, ``HTTPCACHE_ENABLED`` off;
- ``httpcache-second-run``: ``HTTPCACHE_ENABLED`` with Scrapy's ``DummyPolicy`` and
  ``HTTPCACHE_EXPIRATION_SECS = 0``; the same crawl twice with one ``HTTPCACHE_DIR``,
  so the second one is answered from the HTTP cache (robots.txt included), which
  answers without waiting for the network.

The invariant checked for every crawl (:func:`account`): nothing hangs (a bounded
wait on the crawl, ``CLOSESPIDER_TIMEOUT`` behind it, ``finish_reason`` must be
``finished``) and every request the spider made is accounted for: it reached the
spider's callback, or its errback with a ``RobotsTxtDisallowed`` whose reason is
counted under ``robots_std/dropped/<reason>`` (or its errback with an error that is
not robots.txt's). In the second run the responses the spider saw are counted, not
the server's hits.
"""

from __future__ import annotations

import itertools
import shutil
from collections import Counter
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import pytest
from scrapy import Request, Spider
from scrapy.utils.defer import (
    deferred_f_from_coro_f,
    maybe_deferred_to_future,
)

from scrapy_robots_std import RobotsTxtDisallowed
from tests.helpers.crawl import run_crawl
from tests.helpers.names import loopback_names
from tests.helpers.server import BlackHole, Reply, refused_port

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Callable, Iterable, Iterator, Mapping
    from pathlib import Path

    from scrapy.http import Response
    from twisted.python.failure import Failure

    from tests.helpers.server import HostileServer, RequestRecord

pytestmark = pytest.mark.crawl

NOCACHE = "nocache"
SECOND_RUN = "httpcache-second-run"
MODES = [NOCACHE, SECOND_RUN]

RULES = b"User-agent: *\nDisallow: /private/\n"
PAGE = Reply(200, {"Content-Type": "text/html"}, b"<p>ok</p>")

#: ``CLOSESPIDER_TIMEOUT``: a crawl still running then has hung (every case here
#: needs a few seconds at most).
CLOSE_AFTER = 10
#: The bounded wait on one crawl, should closing itself hang.
HARD_TIMEOUT = 25.0

DROPPED_PREFIX = "robots_std/dropped/"


def settings(tmp_path: Path, mode: str, **overrides: Any) -> dict[str, Any]:
    """The add-on with short timeouts, and the HTTP cache for the cached mode."""
    base: dict[str, Any] = {
        "ROBOTSTXT_OBEY": True,
        "ADDONS": {"scrapy_robots_std.Addon": 0},
        "USER_AGENT": "MatrixBot/1.0 (+http://example.invalid)",
        "TELNETCONSOLE_ENABLED": False,
        "DOWNLOAD_TIMEOUT": 10,
        "RETRY_ENABLED": False,
        "CLOSESPIDER_TIMEOUT": CLOSE_AFTER,
        "ROBOTS_STD_FETCH_TIMEOUT": 3,
        "ROBOTS_STD_FETCH_RETRIES": 2,
        "ROBOTS_STD_RETRY_BACKOFF": 0.1,
        "ROBOTS_STD_MAX_WAIT": 10,
    }
    if mode == SECOND_RUN:
        base.update(
            HTTPCACHE_ENABLED=True,
            HTTPCACHE_DIR=str(tmp_path / "httpcache"),
            HTTPCACHE_POLICY="scrapy.extensions.httpcache.DummyPolicy",
            HTTPCACHE_EXPIRATION_SECS=0,
        )
    else:
        assert mode == NOCACHE
        base["HTTPCACHE_ENABLED"] = False
    base.update(overrides)
    return base


def serve(server: HostileServer, paths: Iterable[str], host: str | None = None) -> None:
    for path in paths:
        server.add_route(path, PAGE, host=host)


def pages(prefix: str, count: int) -> list[str]:
    """``count`` paths, every other one under /private/ (disallowed by RULES)."""
    return [f"/{'private' if i % 2 else 'public'}/{prefix}{i}" for i in range(count)]


def disallowed(url: str) -> bool:
    return "/private/" in url


async def sleep(seconds: float) -> None:
    """Sleep on the running reactor (either reactor)."""
    from twisted.internet import reactor
    from twisted.internet.task import deferLater

    await maybe_deferred_to_future(deferLater(reactor, seconds))  # type: ignore[arg-type]


# -- spiders ---------------------------------------------------------------------------


class MatrixSpider(Spider):
    """Requests ``starts`` from ``start()`` (``pace`` seconds apart), and for each
    response the ``links`` listed for its URL. Records every request it made and
    what became of it: callback (with the response's flags) or errback."""

    name = "matrix"

    def __init__(
        self,
        *args: Any,
        starts: Iterable[str] = (),
        links: Mapping[str, Iterable[str]] | None = None,
        pace: float = 0.0,
        **kwargs: Any,
    ) -> None:
        super().__init__(*args, **kwargs)
        self.starts = list(starts)
        self.links = {url: list(urls) for url, urls in (links or {}).items()}
        self.pace = pace
        self.requested: list[str] = []
        self.responded: list[tuple[str, list[str]]] = []
        self.failures: list[tuple[str, BaseException]] = []

    def request(self, url: str) -> Request:
        self.requested.append(url)
        # cb_kwargs: the URL asked for, whatever happens to the request on its way
        return Request(
            url, callback=self.parse, errback=self.on_error, cb_kwargs={"asked": url}
        )

    async def start(self) -> AsyncIterator[Request]:
        for index, url in enumerate(self.starts):
            if self.pace and index:
                await sleep(self.pace)
            yield self.request(url)

    def parse(self, response: Response, asked: str) -> Iterator[Request]:  # type: ignore[override]
        self.responded.append((asked, list(response.flags)))
        for url in self.links.get(asked, ()):
            yield self.request(url)

    def on_error(self, failure: Failure) -> None:
        request = failure.request  # type: ignore[attr-defined]
        self.failures.append(
            (request.cb_kwargs.get("asked", request.url), failure.value)
        )


class StartUrlsSpider(Spider):
    """Scrapy's own ``start()`` from ``start_urls``: requests without an errback, so
    a dropped request shows only as a response that never came (and in the stats)."""

    name = "start_urls"

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.requested = list(self.start_urls)
        self.responded: list[tuple[str, list[str]]] = []
        self.failures: list[tuple[str, BaseException]] = []

    def parse(self, response: Response, **kwargs: Any) -> None:
        request = response.request
        url = request.url if request is not None else response.url
        self.responded.append((url, list(response.flags)))


# -- running and accounting ------------------------------------------------------------


@dataclass
class Run:
    """One crawl: what the spider asked for and saw, the stats, the server's log."""

    stats: dict[str, Any]
    requested: list[str]
    #: URL asked for -> flags of the response that reached the callback
    responded: dict[str, list[str]]
    failures: list[tuple[str, BaseException]]
    elapsed: float
    #: requests the servers saw during this crawl
    served: list[RequestRecord] = field(default_factory=list)
    errbacks: bool = True


@dataclass
class Accounting:
    responded: set[str]
    #: URL -> reason (``rule``, ``unreachable``, ``http-status``)
    dropped: dict[str, str]
    #: URL -> repr of an error that is not robots.txt's
    other: dict[str, str]


async def crawl(
    spider_cls: type[Spider],
    crawl_settings: Mapping[str, Any],
    servers: Iterable[HostileServer] = (),
    **spider_kwargs: Any,
) -> Run:
    """One crawl, bounded by :data:`HARD_TIMEOUT` whatever the crawl does."""
    servers = list(servers)
    before = [len(server.requests) for server in servers]
    result = await run_crawl(
        settings=crawl_settings,
        spider_cls=spider_cls,
        spider_kwargs=spider_kwargs,
        timeout=HARD_TIMEOUT,
    )
    crawler, elapsed = result.crawler, result.elapsed
    spider = crawler.spider
    assert isinstance(spider, (MatrixSpider, StartUrlsSpider))
    assert crawler.stats is not None
    stats = dict(crawler.stats.get_stats())
    assert stats.get("finish_reason") == "finished", (
        f"the crawl did not finish by itself: {stats.get('finish_reason')!r}"
    )
    responded: dict[str, list[str]] = {}
    for url, flags in spider.responded:
        assert url not in responded, f"{url} reached the callback twice"
        responded[url] = flags
    served = [
        record
        for server, start in zip(servers, before, strict=True)
        for record in server.requests[start:]
    ]
    return Run(
        stats=stats,
        requested=list(spider.requested),
        responded=responded,
        failures=list(spider.failures),
        elapsed=elapsed,
        served=served,
        errbacks=isinstance(spider, MatrixSpider),
    )


async def crawl_in_mode(
    mode: str,
    spider_cls: type[Spider],
    crawl_settings: Mapping[str, Any],
    servers: Iterable[HostileServer] = (),
    between: Callable[[], None] | None = None,
    **spider_kwargs: Any,
) -> list[Run]:
    """The crawl once (``nocache``), or twice on one HTTP cache (the second run is
    served from it: every response the spider sees there carries the ``cached``
    flag; ``between`` runs between the two). Each run is accounted for
    (:func:`account`) before it is returned."""
    servers = list(servers)
    runs = [await crawl(spider_cls, crawl_settings, servers, **spider_kwargs)]
    account(runs[0])
    if mode == SECOND_RUN:
        if between is not None:
            between()
        second = await crawl(spider_cls, crawl_settings, servers, **spider_kwargs)
        account(second)
        not_cached = [
            url for url, flags in second.responded.items() if "cached" not in flags
        ]
        assert not not_cached, f"not answered from the HTTP cache: {not_cached[:5]}"
        runs.append(second)
    return runs


def reason_of(exc: RobotsTxtDisallowed) -> str:
    return exc.decision.reason


def account(run: Run) -> Accounting:
    """Every request the spider made reached it or was dropped, and the stats agree.

    expected = every URL the spider requested == responded | dropped | other, the
    three disjoint; the ``robots_std/dropped/<reason>`` stats are exactly the drops
    by reason (no ``shutdown``: a finished crawl drops nothing for want of time);
    ``robotstxt/forbidden`` is their total.
    """
    repeats = [url for url, n in Counter(run.requested).items() if n > 1]
    assert not repeats, f"test bug: URLs requested twice {repeats[:5]}"
    expected = set(run.requested)
    responded = set(run.responded)
    dropped: dict[str, str] = {}
    other: dict[str, str] = {}
    for url, exc in run.failures:
        assert url not in dropped, f"{url} failed twice"
        assert url not in other, f"{url} failed twice"
        if isinstance(exc, RobotsTxtDisallowed):
            dropped[url] = reason_of(exc)
        else:
            other[url] = repr(exc)
    assert not responded & dropped.keys(), "reached the spider and was dropped"
    assert not responded & other.keys(), "reached the callback and the errback"
    stat_drops = {
        key[len(DROPPED_PREFIX) :]: value
        for key, value in run.stats.items()
        if key.startswith(DROPPED_PREFIX)
    }
    if not run.errbacks:
        # No errback: a dropped request is one that never came back; the stats
        # alone say why, so all of them must be for robots.txt reasons.
        unanswered = expected - responded
        assert sum(stat_drops.values()) == len(unanswered), (
            f"{len(unanswered)} request(s) got no response, but the drop stats "
            f"count {stat_drops}"
        )
        dropped = dict.fromkeys(unanswered, "?")
    outcome = responded | dropped.keys() | other.keys()
    missing = expected - outcome
    assert not missing, (
        f"{len(missing)} of {len(expected)} request(s) vanished (neither reached "
        f"the spider nor were dropped): {sorted(missing)[:5]}"
    )
    assert outcome == expected, f"not requested: {sorted(outcome - expected)[:5]}"
    if run.errbacks:
        assert stat_drops == dict(Counter(dropped.values())), (
            f"drop stats {stat_drops} != errbacks {dict(Counter(dropped.values()))}"
        )
    assert "shutdown" not in stat_drops
    assert run.stats.get("robotstxt/forbidden", 0) == len(dropped)
    return Accounting(responded, dropped, other)


def check(
    runs: list[Run],
    allowed: Iterable[str],
    dropped: Mapping[str, str],
) -> list[Accounting]:
    """Every run: exactly ``allowed`` reached the spider and ``dropped`` (URL ->
    reason) were dropped, nothing else failed; no disallowed page reached a server."""
    allowed = set(allowed)
    results = []
    for number, run in enumerate(runs, 1):
        acc = account(run)
        assert acc.other == {}, f"run {number}: {acc.other}"
        assert acc.responded == allowed, (
            f"run {number}: missing {sorted(allowed - acc.responded)[:5]}, "
            f"unexpected {sorted(acc.responded - allowed)[:5]}"
        )
        if run.errbacks:
            assert acc.dropped == dict(dropped), f"run {number}"
        else:
            assert acc.dropped.keys() == dict(dropped).keys(), f"run {number}"
            for reason, count in Counter(dropped.values()).items():
                assert run.stats.get(DROPPED_PREFIX + reason) == count, f"run {number}"
        leaked = [r.path for r in run.served if r.path.startswith("/private/")]
        assert not leaked, f"run {number}: disallowed pages fetched {leaked[:5]}"
        results.append(acc)
    return results


def evict_from_http_cache(tmp_path: Path, url: str) -> None:
    """Remove ``url``'s entry from the first run's (filesystem) HTTP cache: in the
    second run that fetch goes to the network while the rest answers at once."""
    found = [
        meta.parent
        for meta in (tmp_path / "httpcache").rglob("meta")
        if f"'url': {url!r}" in meta.read_text(encoding="utf-8")
    ]
    assert len(found) == 1, f"{url} in the HTTP cache: {found}"
    shutil.rmtree(found[0])


def round_robin(*groups: list[str]) -> list[str]:
    """The groups' items interleaved: one of each in turn, then the rest."""
    rounds = itertools.zip_longest(*groups)
    return [item for items in rounds for item in items if item is not None]


def robots_hits(run: Run, host: str | None = None, port: int | None = None) -> int:
    return sum(
        1
        for r in run.served
        if r.path == "/robots.txt"
        and (host is None or r.host == host)
        and (port is None or r.port == port)
    )


# -- one robots.txt fetch per origin, every waiter checked ------------------------------


@pytest.mark.parametrize("mode", MODES)
@deferred_f_from_coro_f
async def test_one_fetch_per_origin_and_every_waiter_checked(
    hostile: HostileServer, hostile_b: HostileServer, tmp_path: Path, mode: str
) -> None:
    """Four origins (another port, and three host names on one port), each with
    robots.txt answering slowly and 8 start URLs (half disallowed), requested in
    turn; every allowed a.test page links to two pages (allowed and disallowed) of
    each other origin, so requests are scheduled while origins still wait for their
    robots.txt. Between the runs of the cached mode the slowest origin's robots.txt
    leaves the HTTP cache: in the second run its fetch is in flight while the other
    origins' verdicts come from the cache without waiting."""
    delays = {"a.test": 0.2, "b.test": 0.6, "c.test": 0.6}
    hostile_b.add_route("/robots.txt", Reply(200, {}, RULES, delay=1.0))
    for host, delay in delays.items():
        hostile.add_route("/robots.txt", Reply(200, {}, RULES, delay=delay), host=host)
    origins: list[tuple[HostileServer, str | None]] = [(hostile_b, None)]
    origins += [(hostile, host) for host in delays]
    groups: list[list[str]] = []
    for n, (server, host) in enumerate(origins):
        paths = pages(f"s{n}-", 8)
        serve(server, paths, host)
        groups.append([server.url(path, host) for path in paths])
    starts = round_robin(*groups)
    links: dict[str, list[str]] = {}
    for url in starts:
        if url.startswith(hostile.url("/public/", "a.test")):
            name = url.rsplit("/", 1)[1]
            onward = []
            for server, host in origins:
                if host == "a.test":
                    continue
                linked = [f"/public/from-{name}", f"/private/from-{name}"]
                serve(server, linked, host)
                onward += [server.url(path, host) for path in linked]
            links[url] = onward
    everything = starts + [url for urls in links.values() for url in urls]
    assert len(everything) == 32 + 4 * 6

    with loopback_names():
        runs = await crawl_in_mode(
            mode,
            MatrixSpider,
            settings(tmp_path, mode),
            [hostile, hostile_b],
            between=lambda: evict_from_http_cache(
                tmp_path, hostile_b.url("/robots.txt")
            ),
            starts=starts,
            links=links,
        )

    check(
        runs,
        [url for url in everything if not disallowed(url)],
        {url: "rule" for url in everything if disallowed(url)},
    )
    for number, run in enumerate(runs, 1):
        assert sorted(run.requested) == sorted(everything), f"run {number}"
        assert run.stats.get("robotstxt/request_count") == len(origins), f"run {number}"
        for host in delays:
            assert robots_hits(run, host=host) <= 1, f"run {number}: {host}"
        assert robots_hits(run, port=hostile_b.port) <= 1, f"run {number}"
    first = runs[0]
    for host in delays:
        assert robots_hits(first, host=host) == 1, host
    assert robots_hits(first, port=hostile_b.port) == 1
    if mode == SECOND_RUN:  # evicted: fetched again, from the server
        assert robots_hits(runs[1], port=hostile_b.port) == 1


# -- start URLs only -----------------------------------------------------------------


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("spider_kind", ["start_urls", "start"])
@deferred_f_from_coro_f
async def test_start_urls_only(
    hostile: HostileServer,
    hostile_b: HostileServer,
    tmp_path: Path,
    mode: str,
    spider_kind: str,
) -> None:
    """Only start requests, from Scrapy's own ``start()`` over ``start_urls`` or
    from the spider's ``start()``, the two origins' in turn; the first origin
    answers robots.txt slowly, and in the cached mode leaves the HTTP cache between
    the runs (the other origin's verdict then comes while its fetch is in flight)."""
    hostile.add_route("/robots.txt", Reply(200, {}, RULES, delay=0.4))
    hostile_b.add_route(
        "/robots.txt",
        Reply(200, {}, b"User-agent: *\nDisallow: /private/\nDisallow: /x\n"),
    )
    paths_a, paths_b = pages("a", 10), [*pages("b", 10), "/x/1", "/public/x"]
    serve(hostile, paths_a)
    serve(hostile_b, paths_b)
    urls = round_robin(
        [hostile.url(p) for p in paths_a], [hostile_b.url(p) for p in paths_b]
    )
    by_second_rule = {hostile_b.url("/x/1")}

    def evict() -> None:
        evict_from_http_cache(tmp_path, hostile.url("/robots.txt"))

    if spider_kind == "start_urls":
        runs = await crawl_in_mode(
            mode,
            StartUrlsSpider,
            settings(tmp_path, mode),
            [hostile, hostile_b],
            between=evict,
            start_urls=urls,
        )
    else:
        runs = await crawl_in_mode(
            mode,
            MatrixSpider,
            settings(tmp_path, mode),
            [hostile, hostile_b],
            between=evict,
            starts=urls,
        )

    forbidden = {url for url in urls if disallowed(url)} | by_second_rule
    check(
        runs,
        [url for url in urls if url not in forbidden],
        dict.fromkeys(forbidden, "rule"),
    )
    for run in runs:
        assert run.stats.get("robotstxt/request_count") == 2


# -- redirects of robots.txt ---------------------------------------------------------


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("target", ["same-host", "other-host"])
@deferred_f_from_coro_f
async def test_robots_txt_redirects(
    hostile: HostileServer,
    hostile_b: HostileServer,
    tmp_path: Path,
    mode: str,
    target: str,
) -> None:
    """robots.txt redirects (on its own host, or to another origin's robots.txt,
    which is crawled too); the rules at the end of the chain decide."""
    if target == "same-host":
        hostile.add_route("/robots.txt", Reply(301, {"Location": "/real/robots.txt"}))
        hostile.add_route("/real/robots.txt", Reply(200, {}, RULES, delay=0.3))
    else:
        hostile.add_route(
            "/robots.txt", Reply(302, {"Location": hostile_b.url("/robots.txt")})
        )
    hostile_b.add_route("/robots.txt", Reply(200, {}, RULES, delay=0.3))
    paths_a, paths_b = pages("a", 8), pages("b", 4)
    serve(hostile, paths_a)
    serve(hostile_b, paths_b)
    starts = [hostile.url(p) for p in paths_a]
    if target == "other-host":
        starts += [hostile_b.url(p) for p in paths_b]

    runs = await crawl_in_mode(
        mode,
        MatrixSpider,
        settings(tmp_path, mode),
        [hostile, hostile_b],
        starts=starts,
    )

    check(
        runs,
        [url for url in starts if not disallowed(url)],
        {url: "rule" for url in starts if disallowed(url)},
    )
    for run in runs:
        status = "301" if target == "same-host" else "302"
        assert run.stats.get(f"robotstxt/response_status_count/{status}") == 1
    first = runs[0]
    assert robots_hits(first, port=hostile.port) == 1
    if target == "same-host":
        assert robots_hits(first, port=hostile_b.port) == 0
        assert [r.path for r in first.served].count("/real/robots.txt") == 1
    else:
        # the redirected fetch and hostile_b's own origin: at most one each
        assert 1 <= robots_hits(first, port=hostile_b.port) <= 2


# -- an unreachable origin beside a live one -----------------------------------------


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("dead", ["black-hole", "refused"])
@deferred_f_from_coro_f
async def test_unreachable_origin_beside_a_live_one(
    hostile: HostileServer,
    hostile_b: HostileServer,
    tmp_path: Path,
    mode: str,
    dead: str,
) -> None:
    """The dead origin's robots.txt never answers (black hole: one 1 s attempt) or
    refuses the connection (three attempts); its pages, start URLs and links from
    the live origin alike, are dropped as unreachable, and all the live origin's
    allowed pages arrive."""
    hostile.add_route("/robots.txt", Reply(200, {}, RULES))
    live_paths = pages("live", 10)
    serve(hostile, live_paths)
    live = [hostile.url(p) for p in live_paths]
    if dead == "black-hole":
        hostile_b.add_route("/robots.txt", BlackHole(max_hold=30))
        dead_base = hostile_b.base_url
        overrides = {"ROBOTS_STD_FETCH_TIMEOUT": 1, "ROBOTS_STD_FETCH_RETRIES": 0}
    else:
        dead_base = f"http://127.0.0.1:{refused_port()}"
        overrides = {"ROBOTS_STD_FETCH_TIMEOUT": 1, "ROBOTS_STD_FETCH_RETRIES": 2}
    overrides["ROBOTS_STD_MAX_WAIT"] = 3
    dead_starts = [f"{dead_base}/public/dead{i}" for i in range(6)]
    links = {
        url: [f"{dead_base}/public/linked{i}", f"{dead_base}/private/linked{i}"]
        for i, url in enumerate(live[:4:2])
    }
    # The dead origin first, then the two interleaved: the live origin's requests
    # are scheduled while the dead origin's robots.txt fetch is in flight.
    pairs = zip(live[:5], dead_starts[1:], strict=True)
    starts = [dead_starts[0], *itertools.chain.from_iterable(pairs), *live[5:]]
    everything = starts + [url for urls in links.values() for url in urls]
    dead_urls = [url for url in everything if url.startswith(dead_base)]

    runs = await crawl_in_mode(
        mode,
        MatrixSpider,
        settings(tmp_path, mode, **overrides),
        [hostile, hostile_b],
        starts=starts,
        links=links,
    )

    check(
        runs,
        [url for url in live if not disallowed(url)],
        {
            **{url: "rule" for url in live if disallowed(url)},
            **dict.fromkeys(dead_urls, "unreachable"),
        },
    )
    for number, run in enumerate(runs, 1):
        assert run.elapsed < 8, f"run {number}: {run.elapsed:.1f} s"
        assert run.stats.get("robots_std/verdict/unreachable") == 1, f"run {number}"
    if dead == "black-hole":
        # not cached by the HTTP cache: asked again (once) in every run
        for number, run in enumerate(runs, 1):
            assert robots_hits(run, port=hostile_b.port) == 1, f"run {number}"
        dead_pages = [r for r in hostile_b.requests if r.path != "/robots.txt"]
        assert dead_pages == []


# -- a verdict that expires mid-crawl ------------------------------------------------


@pytest.mark.parametrize("mode", MODES)
@deferred_f_from_coro_f
async def test_verdict_expires_mid_crawl(
    hostile: HostileServer, tmp_path: Path, mode: str
) -> None:
    """robots.txt says ``max-age=1``; the spider's ``start()`` asks for a page every
    0.2 s for 1.6 s, so the verdict expires mid-crawl and robots.txt is fetched
    again; every page, before and after, is checked."""
    hostile.add_route(
        "/robots.txt", Reply(200, {"Cache-Control": "max-age=1"}, RULES, delay=0.1)
    )
    paths = pages("p", 9)
    serve(hostile, paths)
    urls = [hostile.url(p) for p in paths]

    runs = await crawl_in_mode(
        mode,
        MatrixSpider,
        settings(tmp_path, mode, ROBOTS_STD_CACHE_MIN_TTL=0),
        [hostile],
        starts=urls,
        pace=0.2,
    )

    check(
        runs,
        [url for url in urls if not disallowed(url)],
        {url: "rule" for url in urls if disallowed(url)},
    )
    for number, run in enumerate(runs, 1):
        assert run.elapsed >= 1.6, f"run {number}"
        assert 2 <= run.stats.get("robotstxt/request_count", 0) <= 3, f"run {number}"
    if mode == NOCACHE:
        [run] = runs
        fetches = [r.arrived for r in run.served if r.path == "/robots.txt"]
        assert 2 <= len(fetches) <= 3
        # one at a time: never again before the verdict has expired
        assert all(b - a >= 0.9 for a, b in itertools.pairwise(fetches))
