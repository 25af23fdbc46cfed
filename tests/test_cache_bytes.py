"""The memory cache's byte bound, ROBOTS_STD_CACHE_MAX_BYTES (SPEC 3, "Cache").

Entries hold real parsed files. What the bound counts (``entry_bytes``) is checked
against what Python really keeps (tracemalloc), so the bound means memory.
"""

from __future__ import annotations

import gc
import tracemalloc
from typing import TYPE_CHECKING

import pytest
from scrapy.utils.defer import deferred_f_from_coro_f
from scrapy.utils.test import get_crawler

from scrapy_robots_std.cache import CacheEntry, MemoryCache
from scrapy_robots_std.cache.memory import entry_bytes
from scrapy_robots_std.config import MIN_CACHE_MAX_BYTES, Config, SettingsError
from scrapy_robots_std.robotstxt.robots import RobotsTxt
from tests.helpers.crawl import assert_no_errors, run_crawl, settings, stat
from tests.helpers.server import Reply

if TYPE_CHECKING:
    from tests.helpers.server import HostileServer

MIB = 1024 * 1024


def _rules_body(n_rules: int, seed: int) -> bytes:
    """A file of ``n_rules`` distinct wildcard rules: the shape that costs most."""
    lines = [b"User-agent: *"]
    lines += [b"Disallow: /%d/*/x%d*y$" % (seed, n) for n in range(n_rules)]
    return b"\n".join(lines) + b"\n"


def _entry(origin: str, robots: RobotsTxt | None) -> CacheEntry:
    return CacheEntry(
        origin=origin,
        robots_url=f"{origin}/robots.txt",
        verdict="parse" if robots is not None else "allow-all",
        reason="2xx" if robots is not None else "4xx",
        detail="HTTP 200",
        robots=robots,
        status=200,
        fetched_at=1000.0,
        expires_at=2000.0,
    )


def _parsed(n_rules: int, seed: int) -> RobotsTxt:
    robots = RobotsTxt.parse(_rules_body(n_rules, seed))
    # Compiled for a token, as a crawl's first check leaves it.
    robots.allowed(f"http://example.com/{seed}/a/x1y", "Scrapy")
    return robots.without_diagnostics()


def test_entries_are_evicted_once_the_total_passes_the_bound() -> None:
    cache = MemoryCache(max_bytes=MIN_CACHE_MAX_BYTES)
    evicted = 0
    for n in range(24):
        entry = _entry(f"http://o{n}.example", _parsed(3000, n))
        evicted += cache.put(entry)
        assert cache.total_bytes <= MIN_CACHE_MAX_BYTES
        # The total is the sum of what is kept: nothing lost in the books.
        assert cache.total_bytes == sum(map(entry_bytes, cache._entries.values()))
    assert evicted > 0
    assert len(cache) == 24 - evicted
    assert cache.peak_bytes <= MIN_CACHE_MAX_BYTES
    # The newest is always kept.
    assert cache.get("http://o23.example") is not None


def _entry_sized(origin: str, low: int, high: int) -> CacheEntry:
    """An entry of a parsed file whose counted size is in (low, high]: the
    smallest rule count past ``low``, found by bisection (size grows with it).
    The seed is long: a body is cut at 500 KiB, and its entry must reach 40%
    of the smallest bound however compactly a rule is stored."""
    fewest, most, seed = 1, 30_000, 7_777_777
    while fewest < most:
        middle = (fewest + most) // 2
        if entry_bytes(_entry(origin, _parsed(middle, seed))) > low:
            most = middle
        else:
            fewest = middle + 1
    entry = _entry(origin, _parsed(fewest, seed))
    assert low < entry_bytes(entry) <= high, (fewest, entry_bytes(entry), low, high)
    return entry


def test_the_largest_of_the_oldest_goes_first() -> None:
    bound = MIN_CACHE_MAX_BYTES
    cache = MemoryCache(max_bytes=bound)
    small = [_entry(f"http://s{n}.example", None) for n in range(2)]
    big = _entry_sized("http://big.example", int(bound * 0.4), bound // 2)
    medium = [
        _entry_sized(f"http://m{n}.example", int(bound * 0.3), int(bound * 0.38))
        for n in range(2)
    ]
    for entry in (small[0], big, small[1], medium[0]):
        assert cache.put(entry) == 0
    # Past the bound now; dropping the big one is enough.
    assert cache.put(medium[1]) == 1
    # The big one went although s0 is older: among the old, size counts.
    assert cache.get("http://big.example") is None
    assert all(cache.get(entry.origin) is entry for entry in (*small, *medium))
    assert cache.total_bytes <= bound


def test_an_entry_larger_than_the_bound_is_kept_while_newest() -> None:
    cache = MemoryCache(max_bytes=MIN_CACHE_MAX_BYTES)
    cache.put(_entry("http://a.example", None))
    huge = _entry("http://huge.example", _parsed(15_000, 1))
    cache.put(huge)
    # Never evicted by its own put: the book reads it right after.
    assert cache.get("http://huge.example") is huge


def test_the_bound_counts_what_python_keeps() -> None:
    """300 parsed hostile files under a 2 MiB bound: what stays allocated after
    the puts is within the bound (plus the cache's own dicts)."""
    bound = 2 * MIB
    gc.collect()
    tracemalloc.start()
    try:
        cache = MemoryCache(max_bytes=bound)
        before = tracemalloc.get_traced_memory()[0]
        for n in range(300):
            cache.put(_entry(f"http://h{n}.example", _parsed(400, n)))
        gc.collect()
        kept = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    assert cache.total_bytes <= bound
    assert len(cache) < 300  # the bound, not the origin count, did the evicting
    # entry_bytes is an upper-bound estimate: what Python keeps is no more (a
    # small allowance for the OrderedDict and the size table).
    assert kept <= bound + 64 * 1024, (kept, cache.total_bytes, len(cache))
    assert kept >= cache.total_bytes // 4, (kept, cache.total_bytes)


def test_the_setting_is_read_and_checked() -> None:
    crawler = get_crawler(settings_dict={"ROBOTS_STD_CACHE_MAX_BYTES": 8 * MIB})
    assert Config.from_settings(crawler.settings).cache_max_bytes == 8 * MIB
    assert MemoryCache.from_crawler(crawler).max_bytes == 8 * MIB
    for bad in (MIN_CACHE_MAX_BYTES - 1, "lots", 1.5):
        crawler = get_crawler(settings_dict={"ROBOTS_STD_CACHE_MAX_BYTES": bad})
        with pytest.raises(SettingsError, match="ROBOTS_STD_CACHE_MAX_BYTES"):
            Config.from_settings(crawler.settings)
    with pytest.raises(ValueError, match="max_bytes"):
        MemoryCache(max_bytes=10)


def test_an_entry_is_measured_again_once_compiled() -> None:
    """A crawl stores an entry before its first check compiles it: resize()
    counts what compiling added, and evicts past the bound."""
    cache = MemoryCache(max_bytes=MIN_CACHE_MAX_BYTES)
    robots = RobotsTxt.parse(_rules_body(12_000, 3)).without_diagnostics()
    entry = _entry("http://c.example", robots)
    other = _entry("http://d.example", _parsed(3000, 4))
    cache.put(other)
    cache.put(entry)
    stored = cache.total_bytes
    robots.allowed("http://c.example/3/a/x1y", "Scrapy")  # the first check
    assert entry_bytes(entry) > stored - entry_bytes(other)
    cache.resize("http://c.example")
    assert cache.total_bytes <= MIN_CACHE_MAX_BYTES
    assert cache.total_bytes == sum(map(entry_bytes, cache._entries.values()))
    assert cache.resize("http://gone.example") == 0


@pytest.mark.crawl
@deferred_f_from_coro_f
async def test_a_crawl_keeps_the_cache_within_its_byte_bound(
    hostile: HostileServer, loopback_dns: object
) -> None:
    # Three origins (names of one server) whose files keep ~0.5 MiB each.
    hostile.add_route("/robots.txt", Reply(200, {}, _rules_body(20_000, 0)))
    hostile.add_route("/page", Reply(200, {}, b"<p>ok</p>"))
    port = hostile.url("/").rsplit(":", 1)[1].split("/")[0]
    urls = [f"http://{name}.test:{port}/page" for name in ("a", "b", "c")]
    result = await run_crawl(
        urls, settings(ROBOTS_STD_CACHE_MAX_BYTES=MIN_CACHE_MAX_BYTES)
    )
    assert_no_errors(result)
    assert len(result.responses) == 3
    assert stat(result, "robots_std/cache/eviction") >= 1
    assert 0 < stat(result, "robots_std/cache/bytes_peak") <= MIN_CACHE_MAX_BYTES
