"""Real crawls with the persistent cache backends (SPEC 3, "Cache").

SqliteCache under JOBDIR across a paused and resumed crawl; RedisCache shared by
crawls and by a fleet of crawler processes, and a Redis that is down or goes down
mid-crawl. The robots.txt requests that reach the local server are the ground truth.
"""

from __future__ import annotations

import json
import logging
import subprocess
import threading
import time
from typing import TYPE_CHECKING, Any

import pytest
import redis
from scrapy import Request, signals
from scrapy.utils.defer import deferred_f_from_coro_f

from scrapy_robots_std.cache import RedisCache
from scrapy_robots_std.config import SettingsError
from tests.helpers.cache import parse_entry
from tests.helpers.crawl import (
    RULES,
    assert_no_errors,
    pages_served,
    robots_fetches,
    run_crawl,
    serve_pages,
    settings,
    stat,
    use_as_http_proxy,
)
from tests.helpers.processes import importable, worker_command
from tests.helpers.redis_server import RedisServer
from tests.helpers.server import Reply

if TYPE_CHECKING:
    from pathlib import Path

    from scrapy.crawler import Crawler
    from scrapy.http import Response

    from tests.helpers.crawl import CrawlResult
    from tests.helpers.server import HostileServer

CACHE_LOGGER = "scrapy_robots_std.cache"
SQLITE = "scrapy_robots_std.cache.SqliteCache"
REDIS = "scrapy_robots_std.cache.RedisCache"
PUBLIC = tuple(f"/public/{n}" for n in range(8))
PRIVATE = ("/private/a", "/private/b")


def cache_warnings(result: CrawlResult) -> list[str]:
    return [
        record.getMessage()
        for record in result.logs
        if record.name == CACHE_LOGGER and record.levelno >= logging.WARNING
    ]


# -- SqliteCache under JOBDIR ----------------------------------------------------------


@pytest.mark.crawl
@deferred_f_from_coro_f
async def test_a_resumed_jobdir_crawl_does_not_fetch_robots_txt_again(
    hostile: HostileServer, hostile_b: HostileServer, tmp_path: Path
) -> None:
    urls: list[str] = []
    for server in (hostile, hostile_b):
        server.add_route("/robots.txt", Reply(200, {}, RULES))
        urls += serve_pages(server, PUBLIC + PRIVATE)
    jobdir = tmp_path / "job"
    job = settings(
        JOBDIR=str(jobdir),
        ROBOTS_STD_CACHE_BACKEND=SQLITE,
        CONCURRENT_REQUESTS=1,
        # 4 responses (robots.txt counted), then the crawl is paused (closed,
        # queue kept).
        CLOSESPIDER_PAGECOUNT=4,
    )
    first = await run_crawl(urls, job)
    assert first.stats["finish_reason"] == "closespider_pagecount"
    assert (jobdir / "robots_std.sqlite3").exists()
    served_first = pages_served(hostile) | pages_served(hostile_b)
    assert len(served_first) < len(urls)  # paused before the end
    fetched_first = robots_fetches(hostile) + robots_fetches(hostile_b)
    assert fetched_first >= 1

    job["CLOSESPIDER_PAGECOUNT"] = 0
    second = await run_crawl(urls, job)
    assert second.stats["finish_reason"] == "finished"
    assert_no_errors(second)
    # Each origin's robots.txt was fetched once in all: the resumed crawl read
    # the verdicts of the first from the file.
    assert robots_fetches(hostile) == 1
    assert robots_fetches(hostile_b) == 1
    assert (stat(second, "robotstxt/request_count") or 0) == 2 - fetched_first
    assert stat(second, "robots_std/cache/store_hit") == fetched_first
    # It went on with the queued pages, and still kept to the rules.
    assert stat(second, "response_received_count") > 0
    for server in (hostile, hostile_b):
        assert not pages_served(server) & set(PRIVATE)
    assert pages_served(hostile) | pages_served(hostile_b) == set(PUBLIC)


@pytest.mark.crawl
@deferred_f_from_coro_f
async def test_a_hostile_stored_record_is_a_miss_fetched_again(
    hostile: HostileServer, tmp_path: Path
) -> None:
    """A record of deeply nested JSON, claiming to last ten years, is neither an
    error nor a verdict: counted, and the origin's robots.txt is fetched."""
    import sqlite3

    from scrapy_robots_std.cache.sqlite import _SCHEMA

    hostile.add_route("/robots.txt", Reply(200, {}, RULES))
    urls = serve_pages(hostile, PUBLIC[:2] + PRIVATE[:1])
    path = tmp_path / "robots.sqlite3"
    origin = f"http://127.0.0.1:{hostile.port}"
    with sqlite3.connect(path) as db:
        db.executescript(_SCHEMA)
        now = time.time()
        db.execute(
            "INSERT INTO robots_std_entries VALUES (?, ?, ?, ?, NULL)",
            (origin, now, now + 10 * 365 * 86400, b"[" * 20_000 + b"]" * 20_000),
        )
    db.close()
    result = await run_crawl(
        urls, settings(ROBOTS_STD_CACHE_BACKEND=SQLITE, ROBOTS_STD_CACHE_PATH=str(path))
    )
    assert_no_errors(result)
    assert stat(result, "robots_std/cache/store_invalid") == 1
    assert robots_fetches(hostile) == 1
    assert pages_served(hostile) == set(PUBLIC[:2])
    assert stat(result, "robots_std/dropped/rule") == 1


@pytest.mark.crawl
@deferred_f_from_coro_f
async def test_a_cache_path_that_cannot_be_created_stops_the_crawl_at_start(
    hostile: HostileServer, tmp_path: Path
) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a directory")
    urls = serve_pages(hostile, PUBLIC[:1])
    path = blocker / "sub" / "robots.sqlite3"
    with pytest.raises(SettingsError, match="ROBOTS_STD_CACHE_PATH: cannot create"):
        await run_crawl(
            urls,
            settings(ROBOTS_STD_CACHE_BACKEND=SQLITE, ROBOTS_STD_CACHE_PATH=str(path)),
        )
    assert hostile.requests == []


# -- RedisCache ------------------------------------------------------------------------


@pytest.mark.crawl
@deferred_f_from_coro_f
async def test_a_second_crawl_on_one_redis_fetches_no_robots_txt(
    hostile: HostileServer, redis_url: str
) -> None:
    hostile.add_route("/robots.txt", Reply(200, {}, RULES))
    urls = serve_pages(hostile, PUBLIC[:2] + PRIVATE[:1])
    shared = settings(ROBOTS_STD_CACHE_BACKEND=REDIS, REDIS_URL=redis_url)
    await run_crawl(urls, shared)
    second = await run_crawl(urls, shared)
    assert_no_errors(second)
    assert robots_fetches(hostile) == 1
    assert stat(second, "robots_std/cache/store_hit") == 1
    assert stat(second, "robots_std/dropped/rule") == 1
    assert not pages_served(hostile) & set(PRIVATE)
    client = redis.Redis.from_url(redis_url)
    try:  # the first crawl released its claim
        assert client.keys("robots_std:claim:*") == []
    finally:
        client.close()


@pytest.mark.crawl
@deferred_f_from_coro_f
async def test_a_crawl_waits_for_the_verdict_of_the_process_holding_the_claim(
    hostile: HostileServer, redis_url: str
) -> None:
    hostile.add_route("/robots.txt", Reply(200, {}, RULES))
    urls = serve_pages(hostile, PUBLIC[:2] + PRIVATE[:1])
    origin = f"http://127.0.0.1:{hostile.port}"
    other = RedisCache(redis_url)  # another process, fetching this origin now
    assert other.claim(origin, 30)

    def other_delivers() -> None:
        other.put(parse_entry(origin, RULES), RULES)
        other.release(origin)

    timer = threading.Timer(0.5, other_delivers)

    def deliver_once_the_spider_opens(crawler: Crawler) -> None:
        # Timed from the spider's opening, not the test's: on a loaded machine the
        # crawl may take longer than 0.5 s to get there, and would find the verdict
        # already stored instead of waiting for it.
        crawler.signals.connect(
            lambda **_: timer.start(), signal=signals.spider_opened, weak=False
        )

    try:
        result = await run_crawl(
            urls,
            settings(ROBOTS_STD_CACHE_BACKEND=REDIS, REDIS_URL=redis_url),
            on_crawler=deliver_once_the_spider_opens,
        )
    finally:
        timer.cancel()
        other.close()
    assert_no_errors(result)
    assert robots_fetches(hostile) == 0  # the other process's verdict was used
    assert stat(result, "robots_std/cache/shared") == 1
    assert stat(result, "robots_std/wait/max_seconds") >= 0.4
    assert pages_served(hostile) == set(PUBLIC[:2])
    assert stat(result, "robots_std/dropped/rule") == 1


@pytest.mark.crawl
@deferred_f_from_coro_f
async def test_a_claim_never_delivered_costs_the_budget_but_one_attempt(
    hostile: HostileServer, redis_url: str
) -> None:
    hostile.add_route("/robots.txt", Reply(200, {}, RULES))
    urls = serve_pages(hostile, PUBLIC[:1] + PRIVATE[:1])
    origin = f"http://127.0.0.1:{hostile.port}"
    dead = RedisCache(redis_url)  # claimed, then the process died
    assert dead.claim(origin, 60)
    result = await run_crawl(
        urls,
        settings(
            ROBOTS_STD_CACHE_BACKEND=REDIS,
            REDIS_URL=redis_url,
            ROBOTS_STD_MAX_WAIT=2,
            ROBOTS_STD_FETCH_TIMEOUT=1,
        ),
    )
    assert_no_errors(result)
    # It waited max_wait - fetch_timeout (1 s), then fetched robots.txt itself.
    assert robots_fetches(hostile) == 1
    assert 0.9 <= stat(result, "robots_std/wait/max_seconds") < 2.5
    assert stat(result, "robots_std/cache/shared") is None
    assert pages_served(hostile) == set(PUBLIC[:1])


@pytest.mark.crawl
@deferred_f_from_coro_f
async def test_with_redis_down_the_crawl_fetches_robots_txt_itself(
    hostile: HostileServer, refused_port: int
) -> None:
    hostile.add_route("/robots.txt", Reply(200, {}, RULES))
    urls = serve_pages(hostile, PUBLIC[:2] + PRIVATE)
    url = f"redis://127.0.0.1:{refused_port}/0"
    result = await run_crawl(
        urls,
        settings(
            ROBOTS_STD_CACHE_BACKEND=REDIS,
            REDIS_URL=url,
            ROBOTS_STD_REDIS_TIMEOUT=0.5,
        ),
    )
    [warning] = cache_warnings(result)
    assert warning.startswith(f"Redis at {url} unavailable (ConnectionError: ")
    assert warning.endswith("; using the in-process cache, next try in 30 s")
    assert stat(result, "robots_std/cache/store_error") == 1
    # Never allow-all: robots.txt was fetched here and its rules kept.
    assert robots_fetches(hostile) == 1
    assert pages_served(hostile) == set(PUBLIC[:2])
    assert stat(result, "robots_std/dropped/rule") == len(PRIVATE)


@pytest.mark.crawl
@deferred_f_from_coro_f
async def test_redis_stopping_mid_crawl_degrades_to_memory(
    hostile: HostileServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A server of its own: this test stops it.
    use_as_http_proxy(hostile, monkeypatch)
    for host in ("first.test", "second.test"):
        hostile.add_route("/robots.txt", Reply(200, {}, RULES), host=host)
        serve_pages(hostile, PUBLIC[:1] + PRIVATE[:1], host=host)
    with RedisServer() as redis_server:

        def on_crawler(crawler: Crawler) -> None:
            def stop_redis_then_go_on(response: Response, request: Request) -> None:
                if response.url != "http://first.test/public/0":
                    return
                redis_server.stop()
                assert crawler.engine is not None
                for path in PUBLIC[:1] + PRIVATE[:1]:
                    crawler.engine.crawl(Request(f"http://second.test{path}"))

            # weak=False: the handler is a closure nobody else keeps.
            crawler.signals.connect(
                stop_redis_then_go_on, signal=signals.response_received, weak=False
            )

        result = await run_crawl(
            ["http://first.test/public/0", "http://first.test/private/a"],
            settings(
                ROBOTS_STD_CACHE_BACKEND=REDIS,
                REDIS_URL=redis_server.url,
                ROBOTS_STD_REDIS_TIMEOUT=0.5,
            ),
            on_crawler=on_crawler,
        )
    assert len(cache_warnings(result)) == 1
    assert stat(result, "robots_std/cache/store_error") >= 1
    for host in ("first.test", "second.test"):
        assert len(hostile.requests_for("/robots.txt", host=host)) == 1
        served = {r.path for r in hostile.requests if r.host == host}
        assert served == {"/robots.txt", "/public/0"}, host
    assert stat(result, "robots_std/dropped/rule") == 2


# -- a fleet of crawler processes ------------------------------------------------------


def test_three_crawler_processes_fetch_each_robots_txt_once(
    hostile: HostileServer, redis_url: str, tmp_path: Path
) -> None:
    origins = 50
    for n in range(origins):
        host = f"o{n}.test"
        # Slow enough that the three processes really overlap.
        hostile.add_route("/robots.txt", Reply(200, {}, RULES, delay=1.0), host=host)
        serve_pages(hostile, ("/public/page", "/private/page"), host=host)
    env = {**_clean_env(), "http_proxy": hostile.base_url}
    outs = [tmp_path / f"crawler{n}.json" for n in range(3)]
    processes = [
        subprocess.Popen(
            worker_command("fleet_crawler", redis_url, "fleet", str(origins), str(out)),
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        for out in outs
    ]
    # Start the three crawls together, once each has Scrapy loaded.
    for process in processes:
        assert process.stdout is not None
        assert process.stdout.readline() == b"ready\n"
    started = time.monotonic()
    for process in processes:
        assert process.stdin is not None
        process.stdin.write(b"go\n")
        process.stdin.flush()
    for process in processes:
        _, err = process.communicate(timeout=120)
        assert process.returncode == 0, err.decode()[-3000:]
    elapsed = time.monotonic() - started
    reports = [json.loads(out.read_text()) for out in outs]

    # Exactly one robots.txt fetch per origin, fleet-wide.
    robots = hostile.requests_for("/robots.txt")
    assert len(robots) == origins
    assert len({r.host for r in robots}) == origins
    fetched_here = [r["stats"].get("robotstxt/request_count", 0) for r in reports]
    assert sum(fetched_here) == origins
    # Every process crawled every origin, by the rules.
    for report in reports:
        assert sorted(report["responses"]) == sorted(
            f"http://o{n}.test/public/page" for n in range(origins)
        )
        assert report["stats"]["robots_std/dropped/rule"] == origins
    assert not [r for r in hostile.requests if r.path == "/private/page"]
    # Each process fetched an origin's robots.txt or loaded the verdict another
    # one stored (found there, or waited for while that one fetched).
    waited = [r["stats"].get("robots_std/cache/shared", 0) for r in reports]
    loaded = [r["stats"].get("robots_std/cache/store_hit", 0) for r in reports]
    assert [f + n for f, n in zip(fetched_here, loaded, strict=True)] == [origins] * 3
    assert sum(waited) > 0  # they overlapped
    print(
        f"fleet: robots.txt fetches {fetched_here}, waited {waited}, "
        f"loaded {loaded} per process; {elapsed:.1f} s"
    )


def _clean_env() -> dict[str, Any]:
    import os

    return importable(
        {k: v for k, v in os.environ.items() if k.lower() not in ("no_proxy",)}
    )


@pytest.mark.crawl
@deferred_f_from_coro_f
async def test_a_stored_record_with_an_impossible_time_is_a_miss(
    hostile: HostileServer, tmp_path: Path
) -> None:
    """``fetched_at = 1e300`` in a real record (issue 27, point 4): it was served as
    fresh, and the audit then failed on the time with a traceback. Now it is an
    invalid record, fetched again, and the audit records the new fetch."""
    import json
    import sqlite3

    hostile.add_route("/robots.txt", Reply(200, {}, RULES))
    urls = serve_pages(hostile, PUBLIC[:2] + PRIVATE[:1])
    path = tmp_path / "robots.sqlite3"
    audit = tmp_path / "audit.jsonl"
    crawl_settings = settings(
        ROBOTS_STD_CACHE_BACKEND=SQLITE,
        ROBOTS_STD_CACHE_PATH=str(path),
        ROBOTS_STD_AUDIT_PATH=str(audit),
    )
    first = await run_crawl(urls, crawl_settings)
    assert_no_errors(first)
    with sqlite3.connect(path) as db:
        [(origin, raw)] = db.execute("SELECT origin, meta FROM robots_std_entries")
        meta = json.loads(raw)
        meta["fetched_at"] = 1e300
        db.execute(
            "UPDATE robots_std_entries SET meta = ?, fetched_at = ? WHERE origin = ?",
            (json.dumps(meta).encode(), 1e300, origin),
        )
    db.close()
    records_before = len(audit.read_text(encoding="utf-8").splitlines())
    second = await run_crawl(urls, crawl_settings, dont_filter=True)
    assert_no_errors(second)
    assert stat(second, "robots_std/cache/store_invalid") == 1
    assert stat(second, "robots_std/cache/store_hit") is None
    assert robots_fetches(hostile) == 2
    lines = audit.read_text(encoding="utf-8").splitlines()
    assert len(lines) > records_before
    assert all(isinstance(json.loads(line), dict) for line in lines)
