"""The cache backend interface and the default in-memory LRU backend (SPEC 3, "Cache")."""

from __future__ import annotations

import dataclasses
import gc
import hashlib
import pickle
import tracemalloc

import pytest
from scrapy.utils.misc import build_from_crawler
from scrapy.utils.test import get_crawler

from scrapy_robots_std.cache import CacheEntry, MemoryCache, RobotsCache, SharedFetches
from scrapy_robots_std.cache.base import robots_url_of
from scrapy_robots_std.cache.memory import entry_bytes
from scrapy_robots_std.config import DEFAULTS, SettingsError
from scrapy_robots_std.policy import FetchReason, Verdict
from scrapy_robots_std.scrapy.origin import origin_of


def _entry(
    origin: str, *, expires_at: float = 2000.0, verdict: str = "allow-all"
) -> CacheEntry:
    return CacheEntry(
        origin=origin,
        robots_url=origin.rsplit(":", 1)[0] + "/robots.txt",
        verdict=verdict,
        reason="4xx",
        detail="HTTP 404 means no restrictions",
        robots=None,
        status=404,
        fetched_at=1000.0,
        expires_at=expires_at,
    )


A, B, C, D = (f"http://{name}.example:80" for name in "abcd")


def test_memory_cache_implements_the_protocol() -> None:
    assert isinstance(MemoryCache(), RobotsCache)


def test_an_object_without_the_methods_is_not_a_cache() -> None:
    assert not isinstance(object(), RobotsCache)


def test_memory_cache_get_returns_what_put_stored() -> None:
    cache = MemoryCache()
    entry = _entry(A)
    assert cache.get(A) is None
    assert cache.put(entry) == 0
    assert cache.get(A) is entry
    assert cache.get(B) is None
    assert len(cache) == 1


def test_memory_cache_keeps_the_parsed_entry_not_the_body() -> None:
    cache = MemoryCache()
    entry = _entry(A, verdict="parse")
    assert cache.put(entry, b"User-agent: *\nDisallow: /\n") == 0
    assert cache.get(A) is entry


def test_memory_cache_has_no_claims() -> None:
    assert not isinstance(MemoryCache(), SharedFetches)


def test_the_persistent_backends_are_importable_from_the_cache_module() -> None:
    from scrapy.utils.misc import load_object

    from scrapy_robots_std.cache import redis as _redis_cache
    from scrapy_robots_std.cache import sqlite as _sqlite_cache

    assert load_object("scrapy_robots_std.cache.SqliteCache") is (
        _sqlite_cache.SqliteCache
    )
    assert load_object("scrapy_robots_std.cache.RedisCache") is _redis_cache.RedisCache
    with pytest.raises(NameError, match="NoSuchCache"):
        load_object("scrapy_robots_std.cache.NoSuchCache")


def test_memory_cache_put_replaces_an_origin_entry() -> None:
    cache = MemoryCache(max_origins=2)
    cache.put(_entry(A, verdict="unreachable"))
    newer = _entry(A, verdict="parse")
    assert cache.put(newer) == 0
    assert cache.get(A) is newer
    assert len(cache) == 1


def test_memory_cache_keeps_stale_entries_for_the_middleware_to_judge() -> None:
    cache = MemoryCache()
    stale = _entry(A, expires_at=0.0)
    cache.put(stale)
    assert cache.get(A) is stale


def test_memory_cache_evicts_least_recently_put_first() -> None:
    cache = MemoryCache(max_origins=2)
    assert cache.put(_entry(A)) == 0
    assert cache.put(_entry(B)) == 0
    assert cache.put(_entry(C)) == 1
    assert cache.get(A) is None
    assert cache.get(B) is not None
    assert cache.get(C) is not None
    assert len(cache) == 2


def test_memory_cache_get_refreshes_recency() -> None:
    cache = MemoryCache(max_origins=2)
    cache.put(_entry(A))
    cache.put(_entry(B))
    assert cache.get(A) is not None  # A is now the most recently used
    assert cache.put(_entry(C)) == 1
    assert cache.get(B) is None
    assert cache.get(A) is not None
    assert cache.get(C) is not None


def test_memory_cache_put_of_a_known_origin_refreshes_recency() -> None:
    cache = MemoryCache(max_origins=2)
    cache.put(_entry(A))
    cache.put(_entry(B))
    cache.put(_entry(A))
    cache.put(_entry(C))
    assert cache.get(B) is None
    assert cache.get(A) is not None


def test_memory_cache_get_of_a_missing_origin_changes_nothing() -> None:
    cache = MemoryCache(max_origins=2)
    cache.put(_entry(A))
    cache.put(_entry(B))
    assert cache.get(D) is None
    cache.put(_entry(C))
    assert cache.get(A) is None
    assert len(cache) == 2


def test_memory_cache_put_reports_each_eviction() -> None:
    cache = MemoryCache(max_origins=1)
    evicted = [cache.put(_entry(origin)) for origin in (A, B, C, D)]
    assert evicted == [0, 1, 1, 1]
    assert len(cache) == 1
    assert cache.get(D) is not None


def test_memory_cache_shrunk_bound_evicts_several_on_next_put() -> None:
    cache = MemoryCache(max_origins=3)
    for origin in (A, B, C):
        cache.put(_entry(origin))
    cache.max_origins = 1
    assert cache.put(_entry(D)) == 3
    assert len(cache) == 1
    assert cache.get(D) is not None


@pytest.mark.parametrize("max_origins", [0, -1])
def test_memory_cache_rejects_a_bound_below_one(max_origins: int) -> None:
    with pytest.raises(ValueError, match="max_origins"):
        MemoryCache(max_origins=max_origins)


def test_memory_cache_default_bound_matches_the_setting_default() -> None:
    assert MemoryCache().max_origins == DEFAULTS["ROBOTS_STD_CACHE_MAX_ORIGINS"]


def test_memory_cache_close_empties_it() -> None:
    cache = MemoryCache()
    cache.open()
    cache.put(_entry(A))
    cache.put(_entry(B))
    cache.close()
    assert len(cache) == 0
    assert cache.get(A) is None


@pytest.mark.parametrize(
    ("now", "fresh"),
    [(1000.0, True), (1999.999, True), (2000.0, False), (3000.0, False)],
)
def test_cache_entry_fresh_until_expires_at(now: float, fresh: bool) -> None:
    assert _entry(A, expires_at=2000.0).fresh(now) is fresh


def test_cache_entry_fresh_defaults_to_the_current_time() -> None:
    assert _entry(A, expires_at=0.0).fresh() is False
    assert _entry(A, expires_at=float("inf")).fresh() is True


@pytest.mark.parametrize(
    ("value", "expected"), [(3, 3), ("7", 7), (1, 1), (None, 10_000)]
)
def test_memory_cache_from_crawler_reads_max_origins(
    value: object, expected: int
) -> None:
    crawler = get_crawler(settings_dict={"ROBOTS_STD_CACHE_MAX_ORIGINS": value})
    cache = MemoryCache.from_crawler(crawler)
    assert cache.max_origins == expected


def test_memory_cache_built_from_crawler_honours_its_bound() -> None:
    crawler = get_crawler(settings_dict={"ROBOTS_STD_CACHE_MAX_ORIGINS": 2})
    cache = build_from_crawler(MemoryCache, crawler)
    assert [cache.put(_entry(origin)) for origin in (A, B, C)] == [0, 0, 1]


@pytest.mark.parametrize("value", [0, "-3", "many"])
def test_memory_cache_from_crawler_rejects_a_bad_bound(value: object) -> None:
    crawler = get_crawler(settings_dict={"ROBOTS_STD_CACHE_MAX_ORIGINS": value})
    with pytest.raises(SettingsError, match=r"^ROBOTS_STD_CACHE_MAX_ORIGINS"):
        MemoryCache.from_crawler(crawler)


# -- what an entry keeps (issue 24: the cost of a cached origin) --------------------------

SHA = hashlib.sha256(b"User-agent: *\n").hexdigest()


def _fetched(origin: str = "https://a.example:443", **changes: object) -> CacheEntry:
    fields: dict[str, object] = {
        "origin": origin,
        "robots_url": robots_url_of(origin),
        "verdict": Verdict.PARSE,
        "reason": FetchReason.OK,
        "detail": "HTTP " + str(200),  # built per fetch, as the fetcher does
        "robots": None,
        "status": 200,
        "fetched_at": 1000.0,
        "expires_at": 2000.0,
        "body_sha256": SHA,
        "body_bytes": 300,
    }
    fields.update(changes)
    return CacheEntry(**fields)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("origin", "robots_url"),
    [
        ("https://a.example:443", "https://a.example/robots.txt"),
        ("http://a.example:80", "http://a.example/robots.txt"),
        ("http://a.example:8080", "http://a.example:8080/robots.txt"),
        ("https://a.example:80", "https://a.example:80/robots.txt"),
        ("http://[::1]:80", "http://[::1]/robots.txt"),
        ("http://[::1]:81", "http://[::1]:81/robots.txt"),
    ],
)
def test_the_robots_url_of_an_origin_is_the_one_its_requests_use(
    origin: str, robots_url: str
) -> None:
    assert robots_url_of(origin) == robots_url
    found = origin_of(robots_url)
    assert found is not None
    assert (found.key, found.robots_url, found.kind) == (
        origin,
        robots_url,
        "robots.txt",
    )


def test_fields_kept_in_a_smaller_form_read_back_as_given() -> None:
    entry = _fetched()
    assert entry.robots_url == "https://a.example/robots.txt"
    assert entry.body_sha256 == SHA
    assert entry.detail == "HTTP 200"
    redirected = _fetched(robots_url="https://www.a.example/robots.txt")
    assert redirected.robots_url == "https://www.a.example/robots.txt"
    odd = _fetched(body_sha256="not a digest")
    assert odd.body_sha256 == "not a digest"
    assert _fetched(body_sha256=None).body_sha256 is None
    assert "robots_url='https://a.example/robots.txt'" in repr(entry)
    assert f"body_sha256='{SHA}'" in repr(entry)


def test_an_entry_stays_a_frozen_dataclass() -> None:
    entry = _fetched()
    assert entry == _fetched()
    assert hash(entry) == hash(_fetched())
    assert entry != _fetched(robots_url="https://www.a.example/robots.txt")
    later = dataclasses.replace(entry, expires_at=3000.0, detail="HTTP 200 (stale)")
    assert (later.robots_url, later.body_sha256) == (entry.robots_url, SHA)
    assert dataclasses.asdict(later)["robots_url"] == entry.robots_url
    assert pickle.loads(pickle.dumps(entry)) == entry
    with pytest.raises(dataclasses.FrozenInstanceError):
        entry.robots_url = "http://b.example/robots.txt"  # type: ignore[misc]


def test_common_details_are_one_string_shared_by_the_entries() -> None:
    first, second = _fetched("https://a.example:443"), _fetched("https://b.example:443")
    assert first.detail is second.detail
    url_detail = "HTTP 200 from https://www.b.example/robots.txt"
    assert _fetched(detail=url_detail).detail == url_detail


def test_a_cached_entry_keeps_little_of_its_own() -> None:
    """The entry part of a cached origin, its origin string aside: the object, its
    times, body size and digest. With a robots URL, a detail and a hex digest of its
    own it was about 470 bytes (CPython 3.11, tracemalloc); about 285 since."""
    origins = [f"https://host-{n}.example.com:443" for n in range(2000)]
    details = ["HTTP " + str(200) for _ in origins]  # each its own string
    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        kept = [
            _fetched(
                origin,
                detail=detail,
                robots_url=robots_url_of(origin),
                fetched_at=1000.0 + n,  # times and sizes of its own, as in a crawl
                expires_at=2000.0 + n,
                body_bytes=300 + n,
            )
            for n, (origin, detail) in enumerate(zip(origins, details, strict=True))
        ]
        del details
        gc.collect()
        grown = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    # The origin strings existed before; each entry made its list slot (8 bytes).
    per_entry = grown / len(kept) - 8
    assert per_entry <= 320, per_entry
    assert sum(entry_bytes(entry) for entry in kept) >= grown  # the bound counts it
