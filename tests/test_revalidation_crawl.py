"""Cheap revalidation (issue 18, point 5), in real crawls against a local server.

An expired parsed copy is fetched again with ``If-None-Match`` and
``If-Modified-Since``; a ``304`` renews it without parsing, in every cache backend,
and a fleet sharing Redis sends one conditional request per origin. What reaches the
server (its request log) is the ground truth.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import pytest
from scrapy import signals
from scrapy.utils.defer import (
    deferred_f_from_coro_f,
    deferred_from_coro,
    maybe_deferred_to_future,
)
from twisted.internet.defer import DeferredList

from scrapy_robots_std.cache import SqliteCache
from scrapy_robots_std.policy import MAX_VALIDATOR_CHARS, usable_validator
from scrapy_robots_std.scrapy.origin import origin_of
from tests.helpers.cache import store_settings
from tests.helpers.crawl import (
    RULES,
    LaterSpider,
    assert_no_errors,
    pages_served,
    run_crawl,
    serve_pages,
    settings,
    stat,
)
from tests.helpers.server import Reply

if TYPE_CHECKING:
    from pathlib import Path

    from scrapy.crawler import Crawler

    from tests.helpers.crawl import CrawlResult
    from tests.helpers.server import Exchange, HostileServer, RequestRecord

ETAG = '"rules-v1"'
LAST_MODIFIED = "Tue, 24 Nov 2026 10:00:00 GMT"
VALIDATORS = {"ETag": ETAG, "Last-Modified": LAST_MODIFIED}
PUBLIC = ("/public/a", "/public/b")
PRIVATE = ("/private/c",)
# Every verdict expires at once: the next crawl (or a request after the 2 s grace)
# needs the origin checked again.
EXPIRE_AT_ONCE = {"ROBOTS_STD_CACHE_TTL": 0, "ROBOTS_STD_CACHE_MIN_TTL": 0}


@dataclass(frozen=True)
class Revalidating:
    """robots.txt with validators: ``304`` when the request's ``If-None-Match``
    names ``etag``, else ``200`` with ``body``, after ``delay`` seconds."""

    body: bytes
    etag: str = ETAG
    delay: float = 0.0

    def serve(self, exchange: Exchange) -> None:
        headers = exchange.record.headers
        if headers.get("If-None-Match") == self.etag:
            reply = Reply(304, {"ETag": self.etag}, b"", delay=self.delay)
        else:
            reply = Reply(
                200, {**VALIDATORS, "ETag": self.etag}, self.body, delay=self.delay
            )
        reply.serve(exchange)


def robots_requests(server: HostileServer) -> list[RequestRecord]:
    return server.requests_for("/robots.txt")


def parsed_signals(crawler: Crawler, seen: list[object]) -> None:
    def parsed(robotparser: object, **_: Any) -> None:
        seen.append(robotparser)

    crawler.signals.connect(parsed, signal=signals.robots_parsed, weak=False)


def assert_rules_applied(result: CrawlResult, server: HostileServer) -> None:
    assert_no_errors(result)
    assert stat(result, "robots_std/dropped/rule") == len(PRIVATE)
    assert not pages_served(server) & set(PRIVATE)


# -- a persistent or shared store: the second crawl revalidates ----------------------


@pytest.mark.crawl
@pytest.mark.parametrize("backend", ["sqlite", "redis"])
@deferred_f_from_coro_f
async def test_an_expired_stored_copy_is_revalidated_with_304_and_not_parsed(
    hostile: HostileServer, tmp_path: Path, backend: str, request: pytest.FixtureRequest
) -> None:
    hostile.add_route("/robots.txt", Revalidating(RULES))
    urls = serve_pages(hostile, PUBLIC + PRIVATE)
    redis_url = request.getfixturevalue("redis_url") if backend == "redis" else None
    store = store_settings(backend, str(tmp_path), redis_url)
    crawl_settings = settings(**store, **EXPIRE_AT_ONCE)

    first = await run_crawl(urls, crawl_settings)
    assert_rules_applied(first, hostile)
    [plain] = robots_requests(hostile)
    assert "If-None-Match" not in plain.headers
    assert stat(first, "robots_std/fetch/conditional") is None

    parsed: list[object] = []
    second = await run_crawl(
        urls, crawl_settings, on_crawler=lambda c: parsed_signals(c, parsed)
    )
    assert_rules_applied(second, hostile)
    [_, conditional] = robots_requests(hostile)
    assert conditional.headers["If-None-Match"] == ETAG
    assert conditional.headers["If-Modified-Since"] == LAST_MODIFIED
    assert stat(second, "robots_std/fetch/conditional") == 1
    assert stat(second, "robots_std/cache/revalidated") == 1
    assert stat(second, "robotstxt/response_status_count/304") == 1
    # Renewed, not parsed again: no robots_parsed signal, no parse verdict counted.
    assert parsed == []
    assert stat(second, "robots_std/verdict/parse") is None
    assert pages_served(hostile) == set(PUBLIC)


@pytest.mark.crawl
@deferred_f_from_coro_f
async def test_the_renewed_record_keeps_its_body_and_says_when_it_was_checked(
    hostile: HostileServer, tmp_path: Path
) -> None:
    hostile.add_route("/robots.txt", Revalidating(RULES))
    urls = serve_pages(hostile, PUBLIC + PRIVATE)
    path = tmp_path / "robots.sqlite3"
    crawl_settings = settings(
        ROBOTS_STD_CACHE_BACKEND="scrapy_robots_std.cache.SqliteCache",
        ROBOTS_STD_CACHE_PATH=str(path),
        **EXPIRE_AT_ONCE,
    )
    await run_crawl(urls, crawl_settings)
    await run_crawl(urls, crawl_settings)
    origin = origin_of(urls[0])
    assert origin is not None
    cache = SqliteCache(path)
    cache.open()
    try:
        entry = cache.get(origin.key)
    finally:
        cache.close()
    assert entry is not None
    assert entry.robots is not None  # the stored body, parsed on load
    assert not entry.robots.allowed(hostile.url(PRIVATE[0]), "TestBot")
    assert (entry.etag, entry.last_modified) == (ETAG, LAST_MODIFIED)
    assert entry.checked_at is not None
    assert entry.checked_at > entry.fetched_at
    assert entry.confirmed_at == entry.checked_at


@pytest.mark.crawl
@deferred_f_from_coro_f
async def test_a_changed_file_answers_200_and_its_new_rules_apply(
    hostile: HostileServer, tmp_path: Path
) -> None:
    hostile.add_route("/robots.txt", Revalidating(RULES))
    urls = serve_pages(hostile, PUBLIC + PRIVATE)
    crawl_settings = settings(
        ROBOTS_STD_CACHE_BACKEND="scrapy_robots_std.cache.SqliteCache",
        ROBOTS_STD_CACHE_PATH=str(tmp_path / "robots.sqlite3"),
        **EXPIRE_AT_ONCE,
    )
    await run_crawl(urls, crawl_settings)
    served_before = len(hostile.requests)
    # The site changed its file: the old validator no longer matches.
    hostile.add_route(
        "/robots.txt",
        Revalidating(b"User-agent: *\nDisallow: /public/b\n", etag='"rules-v2"'),
    )
    second = await run_crawl(urls, crawl_settings)
    assert_no_errors(second)
    assert robots_requests(hostile)[1].headers["If-None-Match"] == ETAG
    assert stat(second, "robots_std/fetch/conditional") == 1
    assert stat(second, "robots_std/cache/revalidated") is None
    assert stat(second, "robots_std/verdict/parse") == 1
    served = {r.path for r in hostile.requests[served_before:]}
    assert served - {"/robots.txt"} == {"/public/a", "/private/c"}


# -- the memory backend: expiry during one crawl ---------------------------------------


@pytest.mark.crawl
@deferred_f_from_coro_f
async def test_the_memory_cache_revalidates_an_expired_copy_mid_crawl(
    hostile: HostileServer, hostile_b: HostileServer
) -> None:
    hostile.add_route("/robots.txt", Revalidating(RULES))
    first = serve_pages(hostile, PUBLIC[:1])
    later = serve_pages(hostile, PUBLIC[1:] + PRIVATE)
    # Another origin, past the 2 s a just-decided verdict stands.
    hostile_b.add_route("/slow", Reply(200, {}, b"<p>slow</p>", delay=2.5))
    result = await run_crawl(
        [],
        settings(**EXPIRE_AT_ONCE),
        spider_cls=LaterSpider,
        spider_kwargs={
            "first": tuple(first),
            "later": tuple(later),
            "slow": hostile_b.url("/slow"),
        },
    )
    assert_rules_applied(result, hostile)
    [plain, conditional] = robots_requests(hostile)
    assert "If-None-Match" not in plain.headers
    assert conditional.headers["If-None-Match"] == ETAG
    assert stat(result, "robots_std/cache/revalidated") == 1
    assert pages_served(hostile) == set(PUBLIC)


# -- a fleet on one Redis: one conditional request -------------------------------------


@pytest.mark.crawl
@deferred_f_from_coro_f
async def test_a_fleet_sharing_redis_revalidates_an_origin_once(
    hostile: HostileServer, redis_url: str
) -> None:
    hostile.add_route("/robots.txt", Revalidating(RULES))
    urls = serve_pages(hostile, PUBLIC + PRIVATE)
    fleet_settings = settings(
        ROBOTS_STD_CACHE_BACKEND="scrapy_robots_std.cache.RedisCache",
        REDIS_URL=redis_url,
    )
    # Stores the copy, which expires at once.
    await run_crawl(urls, {**fleet_settings, **EXPIRE_AT_ONCE})
    # The 304 takes a while, so both crawlers want the origin at the same time; the
    # renewed copy (the default TTL now) is fresh for the one that waited.
    hostile.add_route("/robots.txt", Revalidating(RULES, delay=1.0))
    before = len(robots_requests(hostile))
    # Both reactors: run the two crawls side by side through Twisted.
    outcomes = await maybe_deferred_to_future(
        DeferredList(
            [deferred_from_coro(run_crawl(urls, fleet_settings)) for _ in range(2)],
            fireOnOneErrback=True,
            consumeErrors=True,
        )
    )
    both = [result for _, result in outcomes]
    for result in both:
        assert_rules_applied(result, hostile)
    [conditional] = robots_requests(hostile)[before:]
    assert conditional.headers["If-None-Match"] == ETAG
    assert sum(stat(r, "robots_std/cache/revalidated") or 0 for r in both) == 1
    assert sum(stat(r, "robots_std/cache/shared") or 0 for r in both) == 1


# -- validators that must not go back to a server --------------------------------------


@pytest.mark.parametrize(
    ("value", "kept"),
    [
        (ETAG, ETAG),
        ('W/"weak"', 'W/"weak"'),
        (f"  {LAST_MODIFIED} ", LAST_MODIFIED),
        ('"a"\r\nX-Injected: 1', None),
        ('"tab\tinside"', None),
        ('"\x1b[31mred"', None),
        ('"caf\u00e9"', None),
        ("x" * (MAX_VALIDATOR_CHARS + 1), None),
        ("", None),
        (None, None),
        (42, None),
    ],
)
def test_only_printable_short_validators_are_kept(
    value: object, kept: str | None
) -> None:
    assert usable_validator(value) == kept


@pytest.mark.crawl
@deferred_f_from_coro_f
async def test_a_hostile_etag_is_not_sent_back(
    hostile: HostileServer, tmp_path: Path
) -> None:
    hostile.add_route(
        "/robots.txt",
        Reply(
            200, {"ETag": '"\x1b]0;owned\x07"', "Last-Modified": LAST_MODIFIED}, RULES
        ),
    )
    urls = serve_pages(hostile, PUBLIC + PRIVATE)
    crawl_settings = settings(
        ROBOTS_STD_CACHE_BACKEND="scrapy_robots_std.cache.SqliteCache",
        ROBOTS_STD_CACHE_PATH=str(tmp_path / "robots.sqlite3"),
        **EXPIRE_AT_ONCE,
    )
    await run_crawl(urls, crawl_settings)
    second = await run_crawl(urls, crawl_settings)
    assert_rules_applied(second, hostile)
    conditional = robots_requests(hostile)[1]
    assert "If-None-Match" not in conditional.headers
    assert conditional.headers["If-Modified-Since"] == LAST_MODIFIED


@pytest.mark.crawl
@deferred_f_from_coro_f
async def test_a_304_is_never_followed_as_a_redirect(hostile: HostileServer) -> None:
    """A 304 to a request that sent no validators (nothing cached): an unfollowed
    3xx, no restrictions, whatever its Location says."""
    hostile.add_route("/robots.txt", Reply(304, {"Location": "/elsewhere.txt"}))
    hostile.add_route("/elsewhere.txt", Reply(200, {}, b"User-agent: *\nDisallow: /\n"))
    urls = serve_pages(hostile, PUBLIC)
    result = await run_crawl(urls, settings())
    assert_no_errors(result)
    assert hostile.requests_for("/elsewhere.txt") == []
    assert stat(result, "robots_std/verdict/allow-all") == 1
    assert stat(result, "robots_std/cache/revalidated") is None
    assert pages_served(hostile) == set(PUBLIC)


@pytest.mark.parametrize("backend", ["sqlite", "redis"])
def test_a_renewal_whose_record_is_gone_is_counted(
    backend: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    from scrapy.statscollectors import MemoryStatsCollector
    from scrapy.utils.test import get_crawler

    from scrapy_robots_std.cache import RedisCache
    from tests.helpers.cache import parse_entry

    stats = MemoryStatsCollector(get_crawler())
    if backend == "sqlite":
        store: Any = SqliteCache(tmp_path / "robots.sqlite3", stats=stats)
    else:
        store = RedisCache(
            request.getfixturevalue("redis_url"), prefix="redate-test", stats=stats
        )
    origin = "http://gone.example:80"
    store.open()
    try:
        stored = parse_entry(origin, RULES)
        store.put(stored, RULES)
        renewed = dataclasses.replace(stored, expires_at=stored.expires_at + 60)
        store.put(renewed)  # the record is there: re-dated
        assert stats.get_value("robots_std/cache/redate_missed") is None
        other = dataclasses.replace(stored, fetched_at=stored.fetched_at - 1)
        store.put(other)  # a renewal of a version the store no longer has
        assert stats.get_value("robots_std/cache/redate_missed") == 1
    finally:
        store.close()
