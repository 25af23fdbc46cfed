"""TDMRep's ``/.well-known/tdmrep.json`` through the cache's stores, in real crawls
(issue 25, point 4: revalidation and fleet claims).

The file's entry lives beside the origin's robots.txt under its own key; an expired
stored copy is fetched again with its validators, and a ``304`` renews it (SQLite,
Redis); crawlers sharing Redis fetch an origin's file once between them, and
revalidate it once. What reaches the server (its request log) is the ground truth.
The suite runs these crawls under asyncio and again under Twisted's default reactor.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import pytest
from scrapy.utils.defer import (
    deferred_f_from_coro_f,
    deferred_from_coro,
    maybe_deferred_to_future,
)
from twisted.internet.defer import DeferredList

from tests.helpers.cache import store_settings
from tests.helpers.crawl import assert_no_errors, run_crawl, settings, stat
from tests.helpers.server import Reply

if TYPE_CHECKING:
    from pathlib import Path

    from tests.helpers.crawl import CrawlResult
    from tests.helpers.server import Exchange, HostileServer, RequestRecord

pytestmark = pytest.mark.crawl

WELL_KNOWN = "/.well-known/tdmrep.json"
HTML = {"Content-Type": "text/html; charset=utf-8"}
PAGES = ("/private/a", "/private/b", "/open/c")
RULES = [
    {"location": "/private/", "tdm-reservation": 1},
    {"location": "/", "tdm-reservation": 0},
]
FILE_ETAG = '"tdm-v1"'
# Every entry expires at once: the next crawl needs the origin checked again.
EXPIRE_AT_ONCE = {"ROBOTS_STD_CACHE_TTL": 0, "ROBOTS_STD_CACHE_MIN_TTL": 0}
TRAIN_AI = {"ROBOTS_STD_USAGE_PURPOSE": "train-ai", "ROBOTS_STD_USAGE_ENFORCE": "drop"}


@dataclass(frozen=True)
class Conditional:
    """A file with an ``ETag``: ``304`` when the request's ``If-None-Match`` names
    it, else ``200`` with ``body``; after ``delay`` seconds."""

    body: bytes
    etag: str
    content_type: str
    delay: float = 0.0

    def serve(self, exchange: Exchange) -> None:
        if exchange.record.headers.get("If-None-Match") == self.etag:
            reply = Reply(304, {"ETag": self.etag}, b"", delay=self.delay)
        else:
            headers = {"ETag": self.etag, "Content-Type": self.content_type}
            reply = Reply(200, headers, self.body, delay=self.delay)
        reply.serve(exchange)


def serve(server: HostileServer, delay: float = 0.0) -> list[str]:
    """robots.txt and tdmrep.json (both with validators), and the pages."""
    robots = b"User-agent: *\nAllow: /\n"
    server.add_route("/robots.txt", Conditional(robots, '"r-v1"', "text/plain"))
    body = json.dumps(RULES).encode()
    server.add_route(
        WELL_KNOWN, Conditional(body, FILE_ETAG, "application/json", delay)
    )
    for path in PAGES:
        server.add_route(path, Reply(200, HTML, b"<p>x</p>"))
    return [server.url(path) for path in PAGES]


def file_requests(server: HostileServer) -> list[RequestRecord]:
    return server.requests_for(WELL_KNOWN)


def assert_reserved(result: CrawlResult, server: HostileServer) -> None:
    """The file's rules applied: /private/ never sent, /open/c fetched."""
    assert_no_errors(result)
    assert stat(result, "robots_std/dropped/usage-tdm-file") == 2
    assert [url.rsplit("/", 1)[1] for url in result.responses] == ["c"]
    assert not server.requests_for("/private/a")
    assert not server.requests_for("/private/b")


def tdm_records(path: Path) -> list[dict[str, Any]]:
    records = [json.loads(line) for line in path.read_text().splitlines()]
    return [r for r in records if r["record"] == "tdmrep"]


@pytest.mark.parametrize("backend", ["sqlite", "redis"])
@deferred_f_from_coro_f
async def test_an_expired_stored_file_is_revalidated_with_304_and_still_applies(
    hostile: HostileServer, tmp_path: Path, backend: str, request: pytest.FixtureRequest
) -> None:
    urls = serve(hostile)
    redis_url = request.getfixturevalue("redis_url") if backend == "redis" else None
    store = store_settings(backend, str(tmp_path), redis_url)
    audit = tmp_path / "audit.jsonl"
    crawl_settings = settings(
        **store, **EXPIRE_AT_ONCE, **TRAIN_AI, ROBOTS_STD_AUDIT_PATH=str(audit)
    )

    first = await run_crawl(urls, crawl_settings)
    assert_reserved(first, hostile)
    plain, *again = file_requests(hostile)
    assert "If-None-Match" not in plain.headers
    assert stat(first, "robots_std/tdm/file/fetched") == 1
    # (An entry that expires at once is fetched again, conditionally, by the
    # requests that come after the one that waited for it.)
    assert all(r.headers.get("If-None-Match") == FILE_ETAG for r in again)

    second = await run_crawl(urls, crawl_settings)
    # Renewed by a 304, never downloaded again: its rules still apply.
    assert_reserved(second, hostile)
    renewals = file_requests(hostile)[1 + len(again) :]
    assert renewals
    assert all(r.headers.get("If-None-Match") == FILE_ETAG for r in renewals)
    assert stat(second, "robots_std/tdm/file/fetched") is None
    fetched, *renewed = tdm_records(audit)
    assert (fetched["source"], fetched["status"]) == ("download", 200)
    assert len(renewed) == len(again) + len(renewals)
    for record in renewed:
        assert (record["source"], record["status"]) == ("revalidated", 304)
        assert record["sha256"] == fetched["sha256"]
        assert (record["rules"], record["reserved_rules"]) == (2, 1)
    # The closing record names the version: a 200 renewed, not a 304.
    origin = [json.loads(line) for line in audit.read_text().splitlines()][-2]
    assert origin["record"] == "origin"
    assert origin["tdmrep"]["status"] == 200
    assert origin["tdmrep"]["sha256"] == fetched["sha256"]


async def side_by_side(urls: list[str], crawl_settings: dict[str, Any]) -> list[Any]:
    """Two crawls at once, sharing the settings' store (through Twisted, so under
    either reactor)."""
    outcomes = await maybe_deferred_to_future(
        DeferredList(
            [deferred_from_coro(run_crawl(urls, crawl_settings)) for _ in range(2)],
            fireOnOneErrback=True,
            consumeErrors=True,
        )
    )
    return [result for _, result in outcomes]


def fleet_settings(redis_url: str) -> dict[str, Any]:
    return settings(
        ROBOTS_STD_CACHE_BACKEND="scrapy_robots_std.cache.RedisCache",
        REDIS_URL=redis_url,
        **TRAIN_AI,
    )


@deferred_f_from_coro_f
async def test_a_fleet_sharing_redis_fetches_an_origins_file_once(
    hostile: HostileServer, redis_url: str
) -> None:
    # The file answers late, so both crawlers want it at the same time: one claims
    # it and fetches it, the other waits for the stored entry.
    urls = serve(hostile, delay=1.0)
    both = await side_by_side(urls, fleet_settings(redis_url))
    for result in both:
        assert_reserved(result, hostile)
    [plain] = file_requests(hostile)
    assert "If-None-Match" not in plain.headers
    assert sum(stat(r, "robots_std/tdm/file/fetched") or 0 for r in both) == 1


@deferred_f_from_coro_f
async def test_a_fleet_sharing_redis_revalidates_an_origins_file_once(
    hostile: HostileServer, redis_url: str
) -> None:
    urls = serve(hostile)
    # Stores the file, which expires at once.
    assert_reserved(
        await run_crawl(urls, {**fleet_settings(redis_url), **EXPIRE_AT_ONCE}), hostile
    )
    before = len(file_requests(hostile))
    # The 304 takes a while, so both crawlers want the file at the same time; the
    # renewed copy (the default TTL now) is fresh for the one that waited.
    serve(hostile, delay=1.0)
    both = await side_by_side(urls, fleet_settings(redis_url))
    for result in both:
        assert_reserved(result, hostile)
    [conditional] = file_requests(hostile)[before:]
    assert conditional.headers["If-None-Match"] == FILE_ETAG
    assert sum(stat(r, "robots_std/tdm/file/fetched") or 0 for r in both) == 0
