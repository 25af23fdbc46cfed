"""What a crawl says when the spider opens (issue 17, point 4), in real crawls: the
setup in effect, and each misconfiguration that used to pass in silence."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

import pytest
from scrapy.utils.defer import deferred_f_from_coro_f

from scrapy_robots_std.scrapy.startup import closest_setting, unknown_settings
from tests.helpers.crawl import (
    MW_LOGGER,
    RULES,
    pages_served,
    run_crawl,
    serve_pages,
    settings,
)
from tests.helpers.server import Reply

if TYPE_CHECKING:
    from tests.helpers.crawl import CrawlResult
    from tests.helpers.redis_server import RedisServer
    from tests.helpers.server import HostileServer

pytestmark = pytest.mark.crawl

BUILTIN = "scrapy.downloadermiddlewares.robotstxt.RobotsTxtMiddleware"


def warnings_of(result: CrawlResult) -> list[str]:
    return [
        m
        for m in result.messages(logging.WARNING, MW_LOGGER)
        if not m.startswith("robots.txt ")
    ]


def setup_line(result: CrawlResult) -> str:
    [line] = [
        m
        for m in result.messages(logging.INFO, MW_LOGGER)
        if m.startswith("robots.txt: standard")
    ]
    return line


@deferred_f_from_coro_f
async def test_one_info_line_gives_the_setup_and_nothing_is_wrong(
    hostile: HostileServer,
) -> None:
    hostile.add_route("/robots.txt", Reply(200, {}, RULES))
    result = await run_crawl(serve_pages(hostile, ["/public/a"]), settings())
    assert setup_line(result) == (
        "robots.txt: standard rfc9309, token from each request's User-Agent, cache "
        "MemoryCache, unreachable for 120s, wait budget 10s, crawl-delay off, dry "
        "run off, usage preferences exposed only, page directives off, waiting "
        "requests in the scheduler's queue (RobotsAwarePriorityQueue)"
    )
    assert warnings_of(result) == []


@pytest.mark.filterwarnings(
    "ignore:The CONCURRENT_REQUESTS_PER_IP setting is deprecated"
)
@deferred_f_from_coro_f
async def test_concurrent_requests_per_ip_is_named_at_startup(
    hostile: HostileServer,
) -> None:
    hostile.add_route("/robots.txt", Reply(200, {}, RULES))
    result = await run_crawl(
        serve_pages(hostile, ["/public/a"]), settings(CONCURRENT_REQUESTS_PER_IP=2)
    )
    assert [
        m
        for m in result.messages(logging.INFO, MW_LOGGER)
        if m.startswith("CONCURRENT_REQUESTS_PER_IP is set")
    ] == [
        (
            "CONCURRENT_REQUESTS_PER_IP is set, which Scrapy's "
            "DownloaderAwarePriorityQueue refuses: requests are taken by priority "
            "alone, as ScrapyPriorityQueue takes them, not from the least busy slot"
        )
    ]
    assert pages_served(hostile) == {"/public/a"}


@deferred_f_from_coro_f
async def test_the_info_line_gives_the_usage_policy(hostile: HostileServer) -> None:
    hostile.add_route("/robots.txt", Reply(200, {}, RULES))
    urls = serve_pages(hostile, ["/public/a"])
    dropping = await run_crawl(
        urls,
        settings(ROBOTS_STD_USAGE_ENFORCE="drop", ROBOTS_STD_USAGE_PURPOSE="train-ai"),
    )
    assert "usage preferences drop for train-ai (unknown: allow)," in setup_line(
        dropping
    )
    tagging = await run_crawl(urls, settings(ROBOTS_STD_USAGE_ENFORCE="tag"))
    assert (
        "usage preferences tag for the purpose in each request's meta,"
        in setup_line(tagging)
    )


@deferred_f_from_coro_f
async def test_an_unknown_setting_names_the_closest_valid_one(
    hostile: HostileServer,
) -> None:
    hostile.add_route("/robots.txt", Reply(200, {}, RULES))
    result = await run_crawl(
        serve_pages(hostile, ["/public/a"]),
        settings(ROBOTS_STD_FETCH_TIMEOUTS=5, ROBOTS_STD_QQQQ=1),
    )
    assert warnings_of(result) == [
        (
            "Unknown setting ROBOTS_STD_FETCH_TIMEOUTS: no ROBOTS_STD_* setting has "
            "that name, so it changes nothing; did you mean ROBOTS_STD_FETCH_TIMEOUT?"
        ),
        (
            "Unknown setting ROBOTS_STD_QQQQ: no ROBOTS_STD_* setting has that name, "
            "so it changes nothing"
        ),
    ]


@deferred_f_from_coro_f
async def test_a_user_agent_token_with_a_space_warns_with_the_token_used(
    hostile: HostileServer,
) -> None:
    """Chosen: a WARNING (the crawl goes on with the token RFC 9309 reads)."""
    hostile.add_route("/robots.txt", Reply(200, {}, b"User-agent: My\nDisallow: /\n"))
    urls = serve_pages(hostile, ["/public/a"])
    result = await run_crawl(urls, settings(ROBOTSTXT_USER_AGENT="My Bot/1.0"))
    assert warnings_of(result) == [
        (
            "ROBOTSTXT_USER_AGENT 'My Bot/1.0' is not a product token (letters, '_' "
            "and '-'); robots.txt groups are matched with 'My'"
        )
    ]
    assert "token 'My'" in setup_line(result)
    assert pages_served(hostile) == set()  # the group for "My" applied


@deferred_f_from_coro_f
async def test_a_product_token_with_a_version_is_fine(hostile: HostileServer) -> None:
    hostile.add_route("/robots.txt", Reply(200, {}, RULES))
    urls = serve_pages(hostile, ["/public/a"])
    result = await run_crawl(
        urls, settings(ROBOTSTXT_USER_AGENT="MyBot/1.0 (+http://example.invalid)")
    )
    assert warnings_of(result) == []


@deferred_f_from_coro_f
async def test_the_builtin_middleware_beside_ours_warns(hostile: HostileServer) -> None:
    hostile.add_route("/robots.txt", Reply(200, {}, RULES))
    manual = {
        "ADDONS": {},
        "DOWNLOADER_MIDDLEWARES": {"scrapy_robots_std.RobotsTxtStdMiddleware": 101},
    }
    result = await run_crawl(serve_pages(hostile, ["/public/a"]), settings(**manual))
    builtin, queue = warnings_of(result)
    assert builtin.startswith(
        "Scrapy's built-in RobotsTxtMiddleware is enabled beside "
        "RobotsTxtStdMiddleware: both fetch robots.txt and drop requests."
    )
    # This manual form also forgot the queue: said too, and in the INFO line.
    assert queue == (
        "The scheduler's queue DownloaderAwarePriorityQueue (SCHEDULER_PRIORITY_QUEUE) "
        "does not hold the requests that wait for a robots.txt: they wait in the "
        "downloader, each holding a concurrency slot, and JOBDIR does not keep them; "
        "use SCHEDULER_PRIORITY_QUEUE = 'scrapy_robots_std.RobotsAwarePriorityQueue'"
    )
    assert setup_line(result).endswith("waiting requests in the downloader")


@pytest.mark.parametrize(
    ("name", "closest"),
    [
        ("ROBOTS_STD_FETCH_TIMEOUTS", "ROBOTS_STD_FETCH_TIMEOUT"),
        ("ROBOTS_STD_CACHE_MAX_ORIGIN", "ROBOTS_STD_CACHE_MAX_ORIGINS"),
        ("ROBOTS_STD_DRYRUN", "ROBOTS_STD_DRY_RUN"),
        ("ROBOTS_STD_QQQQ", None),
    ],
)
def test_the_closest_valid_name(name: str, closest: str | None) -> None:
    assert closest_setting(name) == closest


def test_unknown_settings_are_only_ours() -> None:
    names = {"ROBOTS_STD_STANDARD": 1, "ROBOTS_STD_X": 1, "OTHER": 1, "ROBOTS_X": 1}
    assert unknown_settings(names) == ["ROBOTS_STD_X"]


#: scrapy-redis still passes ``spider=`` to the stats collector.
SCRAPY_REDIS_WARNINGS = pytest.mark.filterwarnings(
    "ignore:Passing a 'spider' argument:scrapy.exceptions.ScrapyDeprecationWarning"
)


def _scrapy_redis(redis_url: str, prefix: str, **extra: object) -> dict[str, object]:
    return settings(
        SCHEDULER="scrapy_redis.scheduler.Scheduler",
        DUPEFILTER_CLASS="scrapy_redis.dupefilter.RFPDupeFilter",
        REDIS_URL=redis_url,
        SCHEDULER_QUEUE_KEY=f"{prefix}:requests",
        SCHEDULER_DUPEFILTER_KEY=f"{prefix}:dupefilter",
        **extra,
    )


@SCRAPY_REDIS_WARNINGS
@deferred_f_from_coro_f
async def test_scrapy_redis_needs_no_queue_setting_with_the_addon(
    hostile: HostileServer, redis_server: RedisServer
) -> None:
    hostile.add_route("/robots.txt", Reply(200, {}, RULES))
    urls = serve_pages(hostile, ["/public/a", "/private/b"])
    result = await run_crawl(urls, _scrapy_redis(redis_server.url, "startup-addon"))
    assert setup_line(result).endswith(
        "waiting requests in the scheduler's queue (RobotsAwareRedisQueue)"
    )
    assert warnings_of(result) == []
    assert pages_served(hostile) == {"/public/a"}


@SCRAPY_REDIS_WARNINGS
@deferred_f_from_coro_f
async def test_scrapy_redis_with_a_queue_class_of_its_own_warns(
    hostile: HostileServer, redis_server: RedisServer
) -> None:
    hostile.add_route("/robots.txt", Reply(200, {}, RULES))
    urls = serve_pages(hostile, ["/public/a", "/private/b"])
    result = await run_crawl(
        urls,
        _scrapy_redis(
            redis_server.url,
            "startup-own",
            SCHEDULER_QUEUE_CLASS="scrapy_redis.queue.FifoQueue",
        ),
    )
    [queue] = warnings_of(result)
    assert queue == (
        "The scheduler's queue FifoQueue (SCHEDULER_QUEUE_CLASS) does not hold the "
        "requests that wait for a robots.txt: they wait in the downloader, each "
        "holding a concurrency slot, and JOBDIR does not keep them; use "
        "SCHEDULER_QUEUE_CLASS = 'scrapy_robots_std.RobotsAwareRedisQueue'"
    )
    assert setup_line(result).endswith("waiting requests in the downloader")
    assert pages_served(hostile) == {"/public/a"}
