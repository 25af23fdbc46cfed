"""One in-memory layer in front of SQLite and Redis (issue 24, point 5).

The crawl's store (``scrapy_robots_std.scrapy.store.Store``) keeps its
``MemoryCache`` in front of the backend; ``SqliteCache`` and ``RedisCache`` keep no
entries of their own. Filled past ``ROBOTS_STD_CACHE_MAX_ORIGINS`` or
``ROBOTS_STD_CACHE_MAX_BYTES`` the way a crawl fills it, the process holds at most
one bound's worth of entries: every ``CacheEntry`` alive is counted (``gc``), and
their sizes as the byte bound counts them (``entry_bytes``).

The crawl asks memory about the origins whose requests keep coming (the ``HOT``
ones) between two fetches, so memory keeps those while a second layer, which only
sees the fetches, would keep the newest ones instead: two layers held both.
"""

from __future__ import annotations

import gc
import time
from typing import TYPE_CHECKING

import pytest
from scrapy.utils.defer import deferred_f_from_coro_f
from scrapy.utils.test import get_crawler

from scrapy_robots_std.cache import CacheEntry
from scrapy_robots_std.cache.memory import entry_bytes
from scrapy_robots_std.config import MIN_CACHE_MAX_BYTES, Config
from scrapy_robots_std.robotstxt.robots import RobotsTxt
from scrapy_robots_std.scrapy.store import Store

if TYPE_CHECKING:
    from pathlib import Path

#: Origins whose requests the crawl keeps checking while new origins are fetched.
HOT = 8
TOKEN = "LayerBot"


def origin_key(index: int) -> str:
    return f"http://layer-{index}.test:80"


def body_for(index: int, rules: int) -> bytes:
    lines = ["User-agent: *"]
    lines += [f"Disallow: /p{index}/section-{n}/" for n in range(rules)]
    return ("\n".join(lines) + "\n").encode()


def fetched_entry(index: int, body: bytes) -> CacheEntry:
    now = time.time()
    return CacheEntry(
        origin=origin_key(index),
        robots_url=f"http://layer-{index}.test/robots.txt",
        verdict="parse",
        reason="2xx",
        detail="HTTP 200",
        robots=RobotsTxt.parse(body).without_diagnostics(),
        status=200,
        fetched_at=now,
        expires_at=now + 3600,
    )


async def crawl_fills(store: Store, origins: int, rules: int) -> None:
    """What the fetch cycles and the requests do, for ``origins`` new origins: a
    store miss, the verdict into memory, the first check, the store written; then
    the requests of the hot origins checked against memory."""
    for index in range(origins):
        assert await store.get(origin_key(index)) is None
        body = body_for(index, rules)
        entry = fetched_entry(index, body)
        store.put_in_memory(entry)  # VerdictBook._decided
        store.compiled(entry, f"http://layer-{index}.test/x", TOKEN)
        await store.put(entry, body)
        del entry
        for hot in range(min(HOT, index + 1)):
            store.memory.get(origin_key(hot))  # VerdictBook.fresh, per request


def entries_alive() -> list[CacheEntry]:
    gc.collect()
    return [
        entry
        for entry in gc.get_objects()
        if isinstance(entry, CacheEntry) and entry.origin.startswith("http://layer-")
    ]


def backend_settings(
    backend: str, tmp_path: Path, request: pytest.FixtureRequest
) -> dict[str, object]:
    if backend == "sqlite":
        return {
            "ROBOTS_STD_CACHE_BACKEND": "scrapy_robots_std.cache.SqliteCache",
            "ROBOTS_STD_CACHE_PATH": str(tmp_path / "robots.sqlite3"),
        }
    return {
        "ROBOTS_STD_CACHE_BACKEND": "scrapy_robots_std.cache.RedisCache",
        "REDIS_URL": request.getfixturevalue("redis_url"),
    }


async def opened_store(settings: dict[str, object]) -> Store:
    crawler = get_crawler(settings_dict=settings)
    store = Store(crawler, Config.from_settings(crawler.settings))
    await store.open()
    return store


@pytest.mark.parametrize("backend", ["sqlite", "redis"])
@deferred_f_from_coro_f
async def test_past_the_origin_bound_the_process_holds_one_bound_of_entries(
    backend: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    max_origins = 10
    settings = backend_settings(backend, tmp_path, request)
    settings["ROBOTS_STD_CACHE_MAX_ORIGINS"] = max_origins
    store = await opened_store(settings)
    try:
        await crawl_fills(store, 3 * max_origins, rules=20)
        alive = entries_alive()
        assert len(store.memory) == max_origins
        # Two layers held 18 here: the hot origins in one, the newest in the other.
        assert len(alive) <= max_origins, sorted(e.origin for e in alive)
        # What memory does not hold, the store still has (SQLite keeps the newest
        # max_origins rows), parsed again on a miss.
        evicted = origin_key(3 * max_origins - 3)
        assert store.memory.get(evicted) is None
        stored = await store.get(evicted)
        assert stored is not None
        assert stored.robots is not None
    finally:
        await store.close()


@pytest.mark.parametrize("backend", ["sqlite", "redis"])
@deferred_f_from_coro_f
async def test_past_the_byte_bound_the_process_holds_one_bound_of_bytes(
    backend: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    max_bytes = MIN_CACHE_MAX_BYTES
    settings = backend_settings(backend, tmp_path, request)
    settings["ROBOTS_STD_CACHE_MAX_BYTES"] = max_bytes
    store = await opened_store(settings)
    origins = 24
    try:
        await crawl_fills(store, origins, rules=3000)
        alive = entries_alive()
        sizes = [entry_bytes(entry) for entry in alive]
        held = sum(sizes)
        # The bytes did the evicting: memory holds no more of these entries than
        # max_bytes has room for, far fewer than were put in.
        assert len(store.memory) <= max_bytes // min(sizes) < origins
        assert store.memory.total_bytes <= max_bytes
        # Two layers held 1.2 MiB here, 10 entries.
        assert held <= max_bytes, (len(alive), held)
    finally:
        await store.close()
