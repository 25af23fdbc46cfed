"""A slow store: reported once at WARNING with its duration, counted, and the reactor
keeps running (scrapy_robots_std/cache/offthread.py).

The backend here is a SqliteCache whose ``get`` sleeps :data:`SLOW` seconds on the
store's worker thread. A LoopingCall ticks every :data:`TICK` seconds on the reactor
meanwhile; had the call run on the reactor thread, one gap between ticks would be at
least :data:`SLOW`.
"""

from __future__ import annotations

import itertools
import logging
import re
import threading
import time
from typing import TYPE_CHECKING, Any, ClassVar

import pytest
from scrapy import signals
from scrapy.statscollectors import MemoryStatsCollector
from scrapy.utils.defer import (
    deferred_f_from_coro_f,
    deferred_from_coro,
    maybe_deferred_to_future,
)
from scrapy.utils.test import get_crawler
from twisted.internet.defer import gatherResults
from twisted.internet.task import LoopingCall

from scrapy_robots_std.cache import SqliteCache
from scrapy_robots_std.cache.offthread import SLOW_CALL, OffThread
from scrapy_robots_std.config import Config
from scrapy_robots_std.scrapy.store import Store
from tests.helpers.crawl import (
    RULES,
    HostileSpider,
    assert_no_errors,
    run_crawl,
    serve_pages,
    settings,
)
from tests.helpers.server import Reply

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Iterator
    from pathlib import Path

    from scrapy.crawler import Crawler
    from scrapy.http import Request, Response

    from scrapy_robots_std.cache import CacheEntry
    from tests.helpers.server import HostileServer

CACHE_LOGGER = "scrapy_robots_std.cache"
SLOW_STAT = "robots_std/cache/store_slow"
TIMEOUT_STAT = "robots_std/cache/store_timeout"
#: How long the slow backend's get takes (well above SLOW_CALL, below the deadline).
SLOW = 0.8
#: The LoopingCall's interval.
TICK = 0.05
#: The longest gap between ticks that still means "not blocked". A reactor blocked by
#: the store shows one gap of at least SLOW; a loaded CI machine (four test workers on
#: two cores) shows late ticks of up to ~0.2 s, so the line sits between the two.
NOT_BLOCKED = SLOW / 2
TOOK = re.compile(r"is slow: one call took (\d+\.\d+) s")


class SlowGetCache(SqliteCache):
    """A SqliteCache whose ``get`` takes :data:`SLOW` seconds; notes when each ran."""

    calls: ClassVar[list[tuple[float, float, str]]] = []  # (start, end, thread)

    def get(self, origin: str) -> CacheEntry | None:
        start = time.monotonic()
        time.sleep(SLOW)
        entry = super().get(origin)
        SlowGetCache.calls.append(
            (start, time.monotonic(), threading.current_thread().name)
        )
        return entry


SLOW_BACKEND = f"{__name__}.SlowGetCache"


@pytest.fixture(autouse=True)
def _fresh_calls() -> Iterator[None]:
    SlowGetCache.calls = []
    yield
    SlowGetCache.calls = []


class Ticks:
    """A LoopingCall on the reactor, every TICK seconds, recording when it ran."""

    def __init__(self) -> None:
        self.times: list[float] = []
        self._loop = LoopingCall(lambda: self.times.append(time.monotonic()))

    def start(self) -> None:
        self._loop.start(TICK, now=True)

    def stop(self) -> None:
        if self._loop.running:
            self._loop.stop()

    def gaps_during(self, start: float, end: float) -> list[float]:
        """The gaps between ticks that overlap [start, end]."""
        times = self.times
        return [
            later - earlier
            for earlier, later in itertools.pairwise(times)
            if later >= start and earlier <= end
        ]


def slow_warnings(records: list[logging.LogRecord]) -> list[str]:
    return [
        r.getMessage()
        for r in records
        if r.name == CACHE_LOGGER
        and r.levelno == logging.WARNING
        and "is slow" in r.getMessage()
    ]


def assert_reactor_ran_through(gaps: list[float], span: float) -> None:
    """The reactor kept ticking through ``span`` seconds: no gap as long as a blocking
    call, and at least a third of the ticks a free reactor would make."""
    assert max(gaps) < NOT_BLOCKED, gaps
    assert len(gaps) >= int(span / TICK) // 3, gaps


def assert_one_warning_with_duration(messages: list[str]) -> float:
    assert len(messages) == 1, messages
    found = TOOK.search(messages[0])
    assert found is not None, messages[0]
    took = float(found.group(1))
    assert took >= SLOW - 0.01, messages[0]
    assert f"more than {SLOW_CALL:g} s" in messages[0]
    return took


# -- OffThread itself ------------------------------------------------------------------


@deferred_f_from_coro_f
async def test_a_slow_call_is_reported_once_with_its_duration_and_counted(
    caplog: pytest.LogCaptureFixture,
) -> None:
    stats = MemoryStatsCollector(get_crawler())
    thread = OffThread("the slow store", deadline=5.0, stats=stats)
    thread.start()
    ticks = Ticks()
    ticks.start()
    try:
        with caplog.at_level(logging.WARNING, logger=CACHE_LOGGER):
            first = await thread.call(None, time.sleep, SLOW)
            second = await thread.call(None, time.sleep, SLOW)
            fast = await thread.call("default", lambda: "fast")
    finally:
        ticks.stop()
        thread.stop()
    assert (first, second, fast) == (None, None, "fast")
    took = assert_one_warning_with_duration(slow_warnings(caplog.records))
    assert "the slow store" in caplog.text
    assert took < SLOW + 1.0
    # Both slow calls counted, the fast one not; nothing timed out.
    assert stats.get_value(SLOW_STAT) == 2
    assert stats.get_value(TIMEOUT_STAT) is None
    # The reactor ticked on through both calls: a blocked reactor shows one gap of
    # at least SLOW.
    assert_reactor_ran_through(
        ticks.gaps_during(ticks.times[0], ticks.times[-1]), 2 * SLOW
    )


@deferred_f_from_coro_f
async def test_queueing_behind_a_slow_call_is_part_of_the_reported_figure(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """One worker: a fast call asked for while a slow one runs waits for it, and the
    warning says how much of the figure was queueing."""
    stats = MemoryStatsCollector(get_crawler())
    thread = OffThread("the slow store", deadline=5.0, stats=stats)
    thread.start()
    try:
        with caplog.at_level(logging.WARNING, logger=CACHE_LOGGER):
            # The fast call goes first in time order on the reactor but is queued
            # second on the worker.
            slow = deferred_from_coro(thread.call(None, time.sleep, SLOW))
            queued = deferred_from_coro(thread.call("x", lambda: "queued"))
            results = await maybe_deferred_to_future(gatherResults([slow, queued]))
    finally:
        thread.stop()
    assert results == [None, "queued"]
    # Both waited SLOW: the first ran that long, the second queued that long.
    assert stats.get_value(SLOW_STAT) == 2
    [message] = slow_warnings(caplog.records)
    assert re.search(r"\d+\.\d+ s of it queued behind other calls", message)


@deferred_f_from_coro_f
async def test_several_workers_run_slow_calls_side_by_side() -> None:
    thread = OffThread("the slow store", deadline=5.0, workers=3)
    thread.start()
    try:
        started = time.monotonic()
        calls = [deferred_from_coro(thread.call(None, time.sleep, SLOW)) for _ in "abc"]
        await maybe_deferred_to_future(gatherResults(calls))
        elapsed = time.monotonic() - started
    finally:
        thread.stop()
    # One after another would take 3 * SLOW.
    assert elapsed < 2 * SLOW, elapsed


def test_workers_must_be_at_least_one() -> None:
    with pytest.raises(ValueError, match="workers"):
        OffThread("x", deadline=1.0, workers=0)


def test_worker_threads_never_keep_the_process_alive() -> None:
    """A store left open (a close that failed, a hung call) must not keep the
    process running after the crawl: its worker threads are daemons."""
    thread = OffThread("x", deadline=1.0, workers=2)
    thread.start()
    try:
        done = threading.Event()
        thread.submit(done.set)
        assert done.wait(5)
        workers = [t for t in threading.enumerate() if "robots-std-store" in t.name]
        assert workers
        assert all(t.daemon for t in workers)
    finally:
        thread.stop()


# -- through the Store ----------------------------------------------------------------


@deferred_f_from_coro_f
async def test_store_get_on_a_slow_backend_runs_off_the_reactor(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    crawler = get_crawler(
        settings_dict={
            "ROBOTS_STD_CACHE_BACKEND": SLOW_BACKEND,
            "ROBOTS_STD_CACHE_PATH": str(tmp_path / "robots.sqlite3"),
        }
    )
    assert crawler.stats is not None
    store = Store(crawler, Config.from_settings(crawler.settings))
    await store.open()
    ticks = Ticks()
    ticks.start()
    try:
        with caplog.at_level(logging.WARNING, logger=CACHE_LOGGER):
            entry = await store.get("http://127.0.0.1:9")
    finally:
        ticks.stop()
        await store.close()
    assert entry is None
    [(start, end, thread_name)] = SlowGetCache.calls
    assert thread_name != threading.main_thread().name
    assert_one_warning_with_duration(slow_warnings(caplog.records))
    assert crawler.stats.get_value(SLOW_STAT) == 1
    assert_reactor_ran_through(ticks.gaps_during(start, end), SLOW)


# -- through a real crawl ------------------------------------------------------------


class MixedSpider(HostileSpider):
    """Start URLs in ``exempt`` carry ``dont_obey_robotstxt``: they need no verdict."""

    exempt: tuple[str, ...] = ()

    async def start(self) -> AsyncIterator[Request]:
        async for request in super().start():
            if request.url in self.exempt:
                request.meta["dont_obey_robotstxt"] = True
            yield request


@pytest.mark.crawl
@deferred_f_from_coro_f
async def test_a_crawl_with_a_slow_store_warns_once_and_keeps_pages_flowing(
    hostile: HostileServer, hostile_b: HostileServer, tmp_path: Path
) -> None:
    """Origin A's robots.txt read takes SLOW on the store's thread. Meanwhile origin
    B's pages, exempt from robots.txt, come in and the reactor keeps ticking; then
    A's verdict applies."""
    hostile.add_route("/robots.txt", Reply(200, {}, RULES))
    checked = serve_pages(hostile, ("/public/a", "/public/b", "/private/c"))
    exempt = serve_pages(hostile_b, tuple(f"/free/{n}" for n in range(6)))
    ticks = Ticks()
    arrived: dict[str, float] = {}

    def received(response: Response, request: Request, spider: Any) -> None:
        arrived.setdefault(response.url, time.monotonic())

    def opened(spider: Any) -> None:
        ticks.start()

    def closed(spider: Any, reason: str) -> None:
        ticks.stop()

    def connect(crawler: Crawler) -> None:
        # Receivers are held weakly: these live as long as the test.
        crawler.signals.connect(opened, signals.spider_opened)
        crawler.signals.connect(closed, signals.spider_closed)
        crawler.signals.connect(received, signals.response_received)

    result = await run_crawl(
        [*checked, *exempt],
        settings(
            ROBOTS_STD_CACHE_BACKEND=SLOW_BACKEND,
            ROBOTS_STD_CACHE_PATH=str(tmp_path / "robots.sqlite3"),
        ),
        spider_cls=MixedSpider,
        spider_kwargs={"exempt": tuple(exempt)},
        on_crawler=connect,
    )
    assert_no_errors(result)
    # One store read (origin A's, SqliteCache has no claims), off the reactor thread.
    [(start, end, thread_name)] = SlowGetCache.calls
    assert thread_name != threading.main_thread().name
    assert_one_warning_with_duration(slow_warnings(result.logs))
    assert result.stats.get(SLOW_STAT, 0) >= 1
    assert result.stats.get(TIMEOUT_STAT) is None
    # Everything allowed came in; /private/c was dropped by A's rules.
    assert sorted(result.responses) == sorted([*checked[:2], *exempt])
    assert result.stats.get("robotstxt/request_count") == 1
    # Pages kept flowing while the store was slow: B's came before A's read ended.
    during = [url for url in exempt if arrived[url] < end]
    assert during, (start, end, arrived)
    # ... and the reactor was not blocked: it ticked on through the read.
    assert_reactor_ran_through(ticks.gaps_during(start, end), SLOW)
