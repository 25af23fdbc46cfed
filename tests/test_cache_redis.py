"""RedisCache against a real redis-server (started by the ``redis_server`` fixture).

Two RedisCache objects on one server stand for two crawler processes; the fleet
test with real processes is in tests/test_cache_backends_crawl.py.
"""

from __future__ import annotations

import dataclasses
import logging
import time
from typing import TYPE_CHECKING

import pytest
import redis
from scrapy.utils.misc import build_from_crawler
from scrapy.utils.test import get_crawler

from scrapy_robots_std.cache import RedisCache, RobotsCache, SharedFetches
from scrapy_robots_std.cache.redis import _without_password
from scrapy_robots_std.config import SettingsError
from tests.helpers.cache import Stats, allow_all_entry, parse_entry

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

A, B = "http://a.example:80", "http://b.example:80"
RULES = b"User-agent: *\nDisallow: /private/\n"


@pytest.fixture
def client(redis_url: str) -> Iterator[redis.Redis]:
    connection = redis.Redis.from_url(redis_url)
    yield connection
    connection.close()


@pytest.fixture
def make_cache(redis_url: str) -> Iterator[Callable[..., RedisCache]]:
    """Builds opened RedisCaches on the test's server (each one "a process")."""
    made: list[RedisCache] = []

    def make(**kwargs: object) -> RedisCache:
        kwargs.setdefault("url", redis_url)
        cache = RedisCache(**kwargs)  # type: ignore[arg-type]
        cache.open()
        made.append(cache)
        return cache

    yield make
    for cache in made:
        cache.close()


def test_redis_cache_implements_the_protocol_and_claims(
    make_cache: Callable[..., RedisCache],
) -> None:
    cache = make_cache()
    assert isinstance(cache, RobotsCache)
    assert isinstance(cache, SharedFetches)


def test_one_process_stores_another_reads_and_parses_again(
    make_cache: Callable[..., RedisCache],
) -> None:
    stats = Stats()
    first, second = make_cache(), make_cache(stats=stats)
    entry = parse_entry(A, RULES)
    assert first.put(entry, RULES) == 0
    loaded = second.get(A)
    assert loaded is not None
    assert loaded.robots is not None
    assert loaded.robots is not entry.robots
    assert dataclasses.replace(loaded, robots=None) == dataclasses.replace(
        entry, robots=None
    )
    assert not loaded.robots.allowed("http://a.example/private/x", "Bot")
    assert stats.values["robots_std/cache/store_hit"] == 1
    assert second.get(B) is None
    assert len(second) == 1  # the records under its prefix


def test_len_counts_the_records_under_the_prefix_only(
    make_cache: Callable[..., RedisCache], client: redis.Redis
) -> None:
    client.set("robots_std:robots", b"not a record")  # no ":" after the kind
    client.set("other:robots:x", b"another prefix")
    cache = make_cache(prefix="a*b")
    cache.put(allow_all_entry(A))
    cache.put(allow_all_entry(B))
    assert len(cache) == 2
    assert len(make_cache()) == 0


def test_nothing_is_kept_in_memory_every_get_reads_redis(
    make_cache: Callable[..., RedisCache], client: redis.Redis
) -> None:
    """The crawl's one in-memory layer is the middleware's (tests/test_cache_layer.py)."""
    cache = make_cache()
    cache.put(allow_all_entry(A))
    assert cache.get(A) is not None
    client.flushall()  # behind the cache's back
    assert cache.get(A) is None


def test_keys_live_under_the_prefix(
    make_cache: Callable[..., RedisCache], client: redis.Redis
) -> None:
    make_cache(prefix="fleet7").put(parse_entry(A, RULES), RULES)
    assert client.keys("*") == [f"fleet7:robots:{A}".encode()]
    assert make_cache(prefix="other").get(A) is None
    assert make_cache(prefix="fleet7").get(A) is not None


def test_an_entry_of_the_other_standard_is_a_miss(
    make_cache: Callable[..., RedisCache],
) -> None:
    make_cache(standard="1994").put(parse_entry(A, RULES, standard="1994"), RULES)
    assert make_cache().get(A) is None
    assert make_cache(standard="1994").get(A) is not None


def test_a_damaged_record_is_a_miss(
    make_cache: Callable[..., RedisCache], client: redis.Redis
) -> None:
    client.hset(f"robots_std:robots:{A}", mapping={"m": b"\xff{not json", "f": "1"})
    client.hset(f"robots_std:robots:{B}", mapping={"m": b'{"format": 99}', "f": "1"})
    cache = make_cache()
    assert cache.get(A) is None
    assert cache.get(B) is None


def test_a_newer_entry_replaces_a_stale_one_known(
    make_cache: Callable[..., RedisCache],
) -> None:
    mine, theirs = make_cache(), make_cache()
    known = parse_entry(A, RULES, ttl=-1)
    mine.put(known, RULES)
    assert mine.newer(A, known) is None  # the same record: nothing newer
    theirs.put(allow_all_entry(A))
    loaded = mine.newer(A, known)
    assert loaded is not None
    assert loaded.fresh()
    assert loaded.verdict == "allow-all"


def test_a_stale_copy_re_dated_keeps_its_body_and_expiry_follows(
    make_cache: Callable[..., RedisCache], client: redis.Redis
) -> None:
    cache = make_cache(keep_stale=60)
    old = parse_entry(A, RULES, ttl=-5)
    cache.put(old, RULES)
    redated = dataclasses.replace(old, detail="stale", expires_at=time.time() + 30)
    cache.put(redated)
    loaded = make_cache().get(A)
    assert loaded is not None
    assert loaded.robots is not None
    assert (loaded.detail, loaded.expires_at) == ("stale", redated.expires_at)
    assert not loaded.robots.allowed("http://a.example/private/", "Bot")
    ttl_ms = client.pttl(f"robots_std:robots:{A}")
    assert 85_000 < ttl_ms <= 90_000  # its new expiry plus keep_stale


def test_entries_expire_by_redis_ttl(
    make_cache: Callable[..., RedisCache], client: redis.Redis
) -> None:
    cache = make_cache(keep_stale=0.3)
    cache.put(parse_entry(A, RULES, ttl=0.3), RULES)
    key = f"robots_std:robots:{A}"
    assert 0 < client.pttl(key) <= 600
    deadline = time.monotonic() + 5
    while client.exists(key) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not client.exists(key)
    assert make_cache().get(A) is None


# -- claims ----------------------------------------------------------------------------


def test_one_claim_at_a_time(make_cache: Callable[..., RedisCache]) -> None:
    first, second = make_cache(), make_cache()
    assert first.claim(A, 10)
    assert not second.claim(A, 10)
    assert second.claim(B, 10)  # claims are per origin
    first.release(A)
    assert second.claim(A, 10)


def test_a_claim_lapses_by_itself(make_cache: Callable[..., RedisCache]) -> None:
    first, second = make_cache(), make_cache()
    assert first.claim(A, 0.5)
    assert not second.claim(A, 10)
    time.sleep(0.6)  # the holder died, say
    assert second.claim(A, 10)


def test_release_leaves_a_claim_taken_over_by_another_alone(
    make_cache: Callable[..., RedisCache],
) -> None:
    first, second, third = make_cache(), make_cache(), make_cache()
    assert first.claim(A, 0.1)
    time.sleep(0.2)
    assert second.claim(A, 10)
    first.release(A)  # late: its claim lapsed and is second's now
    assert not third.claim(A, 10)


def test_renew_keeps_our_claim_and_forgets_one_another_process_holds(
    make_cache: Callable[..., RedisCache], client: redis.Redis
) -> None:
    first, second = make_cache(), make_cache()
    assert not first.renew(A, 10)  # never claimed
    assert first.claim(A, 0.3)
    assert first.renew(A, 10)  # ours: the key now lives on well past the 0.3 s
    assert 5000 < client.pttl("robots_std:claim:" + A) <= 10_000
    time.sleep(0.4)
    assert not second.claim(A, 10)  # still held, thanks to the renewal
    # The claim lapses (the holder stalled) and another process takes it.
    client.pexpire("robots_std:claim:" + A, 1)
    time.sleep(0.05)
    assert second.claim(A, 10)
    taken = client.get("robots_std:claim:" + A)
    assert not first.renew(A, 10)  # no longer ours: left alone, and forgotten
    assert client.get("robots_std:claim:" + A) == taken
    assert 5000 < client.pttl("robots_std:claim:" + A) <= 10_000
    assert not first.renew(A, 10)
    first.release(A)  # forgotten: does not delete second's claim
    assert client.get("robots_std:claim:" + A) == taken


def test_close_releases_the_claims_held(make_cache: Callable[..., RedisCache]) -> None:
    first, second = make_cache(), make_cache()
    assert first.claim(A, 10)
    first.close()
    assert second.claim(A, 10)


# -- outages ---------------------------------------------------------------------------


def test_a_dead_server_degrades_to_memory_with_one_warning(
    refused_port: int, caplog: pytest.LogCaptureFixture
) -> None:
    stats = Stats()
    url = f"redis://127.0.0.1:{refused_port}/0"
    cache = RedisCache(url, stats=stats, timeout=0.5)
    with caplog.at_level(logging.DEBUG, logger="scrapy_robots_std.cache"):
        cache.open()
        assert cache.get(A) is None  # a miss, never an "allow"
        assert cache.claim(A, 10)  # nobody to take turns with: fetch here
        entry = parse_entry(A, RULES)
        assert cache.put(entry, RULES) == 0
        assert cache.get(A) is None  # the crawl's memory layer keeps it, not this
        cache.release(A)
        cache.close()
    warnings = [r for r in caplog.records if r.levelno >= logging.WARNING]
    assert len(warnings) == 1
    message = warnings[0].getMessage()
    assert message.startswith(f"Redis at {url} unavailable (ConnectionError: ")
    assert message.endswith("; using the in-process cache, next try in 30 s")
    assert stats.values["robots_std/cache/store_error"] == 1  # then left alone


def test_a_stalled_server_times_out_then_is_used_again(
    make_cache: Callable[..., RedisCache],
    client: redis.Redis,
    caplog: pytest.LogCaptureFixture,
) -> None:
    stats = Stats()
    # Margins for a loaded machine: the retry interval outlasts a failed call
    # (two tries of 0.2 s) by far, and the pause outlasts both tries.
    cache = make_cache(stats=stats, timeout=0.2, retry_interval=1.5)
    other = make_cache()
    paused_at = time.monotonic()
    client.execute_command("CLIENT", "PAUSE", "1000", "ALL")
    with caplog.at_level(logging.INFO, logger="scrapy_robots_std.cache"):
        assert cache.get(A) is None
        failed_at = time.monotonic()
        assert failed_at - paused_at < 1.0  # a timeout, not a hang
        assert stats.values["robots_std/cache/store_error"] == 1
        assert cache.get(B) is None  # within the retry interval: not tried
        assert stats.values["robots_std/cache/store_error"] == 1
        # Past the pause and the retry interval, Redis is used again.
        time.sleep(max(paused_at + 1.0, failed_at + 1.5) + 0.1 - time.monotonic())
        other.put(allow_all_entry(A))
        assert cache.get(A) is not None
        assert stats.values["robots_std/cache/store_error"] == 1
    levels = [(r.levelname, r.getMessage().split(" (")[0]) for r in caplog.records]
    assert levels[0][0] == "WARNING"
    assert levels[-1] == ("INFO", f"Redis at {client_url(client)} is available again")


def client_url(client: redis.Redis) -> str:
    kwargs = client.connection_pool.connection_kwargs
    return f"redis://{kwargs['host']}:{kwargs['port']}/0"


# -- settings --------------------------------------------------------------------------


def test_from_crawler_reads_the_settings(redis_url: str) -> None:
    crawler = get_crawler(
        settings_dict={
            "REDIS_URL": redis_url,
            "ROBOTS_STD_REDIS_PREFIX": "crawl9",
            "ROBOTS_STD_REDIS_TIMEOUT": "0.25",
            "ROBOTS_STD_CACHE_TTL": 600,
            "ROBOTS_STD_CACHE_MIN_TTL": 60,
            "ROBOTS_STD_STANDARD": "1994",
        }
    )
    cache = build_from_crawler(RedisCache, crawler)
    assert (cache.url, cache.prefix, cache.keep_stale, cache.standard) == (
        redis_url,
        "crawl9",
        86400.0,  # 24 h past expiry whatever the TTL: to be revalidated
        "1994",
    )
    kwargs = cache._redis.connection_pool.connection_kwargs
    assert kwargs["socket_timeout"] == 0.25


@pytest.mark.parametrize("url", ["redis://cache:port/0", "redis://cache:70000"])
def test_a_url_redis_py_cannot_read_is_a_settings_error(url: str) -> None:
    crawler = get_crawler(settings_dict={"REDIS_URL": url})
    with pytest.raises(SettingsError, match=r"^REDIS_URL: .*Port"):
        build_from_crawler(RedisCache, crawler)


def test_the_default_server_is_scrapy_redis_default() -> None:
    cache = build_from_crawler(RedisCache, get_crawler(settings_dict={}))
    assert cache.url == "redis://localhost:6379"


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        ("redis://127.0.0.1:6379/0", "redis://127.0.0.1:6379/0"),
        ("redis://:hunter2@10.0.0.5:6380/1", "redis://:***@10.0.0.5:6380/1"),
        ("rediss://bot:hunter2@cache.internal/0", "rediss://bot:***@cache.internal/0"),
    ],
)
def test_log_lines_never_show_the_password(url: str, shown: str) -> None:
    assert _without_password(url) == shown
