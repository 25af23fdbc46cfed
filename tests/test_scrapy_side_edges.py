"""Edge cases of the Scrapy side found in review: each failed on the first version
of the rebuilt flow (issue 15) and states what must hold.
"""

from __future__ import annotations

import json
import threading
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar

import pytest
from scrapy import Request, Spider
from scrapy.pqueues import DownloaderAwarePriorityQueue
from scrapy.squeues import PickleFifoDiskQueue
from scrapy.statscollectors import MemoryStatsCollector
from scrapy.utils.defer import (
    deferred_f_from_coro_f,
    deferred_from_coro,
    maybe_deferred_to_future,
)
from scrapy.utils.test import get_crawler
from twisted.internet.defer import gatherResults

from scrapy_robots_std import RobotsTxtDisallowed
from scrapy_robots_std.cache import SqliteCache
from scrapy_robots_std.config import Config
from scrapy_robots_std.scrapy import holding
from scrapy_robots_std.scrapy.store import Store
from scrapy_robots_std.scrapy.waiting import RobotsAwarePriorityQueue
from tests.helpers.cache import allow_all_entry
from tests.helpers.crawl import RULES, HostileSpider, run_crawl, serve_pages, settings
from tests.helpers.fakes import FakeBook
from tests.helpers.names import loopback_names
from tests.helpers.server import Reply

if TYPE_CHECKING:
    from pathlib import Path

    from scrapy.http import Response

    from scrapy_robots_std.cache import CacheEntry
    from tests.helpers.server import Exchange, HostileServer


# -- 1. A new request for an origin held while the last fetch is still finishing -----


class SlowPutCache(SqliteCache):
    """A SqliteCache whose ``put`` (on the store's worker thread) takes 0.5 s."""

    def put(self, entry: CacheEntry, body: bytes | None = None) -> int:
        time.sleep(0.5)
        return super().put(entry, body)


class FollowSpider(HostileSpider):
    """Each start page's response yields one follow-up page, ``<url>-next``."""

    def parse(self, response: Response) -> Any:
        super().parse(response)
        if not response.url.endswith("-next"):
            yield Request(
                response.url + "-next", callback=self.parse, errback=self.on_error
            )


@pytest.mark.crawl
@deferred_f_from_coro_f
async def test_a_request_held_while_the_fetch_writes_its_verdict_is_not_stranded(
    hostile: HostileServer, tmp_path: Path
) -> None:
    """ROBOTS_STD_CACHE_TTL = 0 and a store whose write takes 0.5 s. The follow-up
    page is popped while the fetch cycle is still in the book (awaiting the store
    write) and its verdict has already expired: the queue holds it and
    ``need()`` starts nothing (a fetch is "in flight"). When the cycle ends it
    tells no queue, so the follow-up waits for ever and the crawl never ends."""
    hostile.add_route("/robots.txt", Reply(200, {}, RULES))
    [start, _] = serve_pages(hostile, ("/public/a", "/public/a-next"))
    result = await run_crawl(
        [start],
        settings(
            ROBOTS_STD_CACHE_TTL=0,
            ROBOTS_STD_CACHE_BACKEND=f"{__name__}.SlowPutCache",
            ROBOTS_STD_CACHE_PATH=str(tmp_path / "robots.sqlite3"),
            CLOSESPIDER_TIMEOUT=8,
        ),
        spider_cls=FollowSpider,
    )
    assert result.stats.get("finish_reason") == "finished", (
        result.stats.get("finish_reason"),
        result.stats.get("robots_std/wait/left_at_close"),
    )
    assert sorted(result.responses) == [start, start + "-next"]


# -- 2. download_async while the engine stops: a KeyError under the default reactor ---


class StopThenDownloadSpider(HostileSpider):
    """The first page's callback stops the engine, then asks the engine to download
    a page of another origin (Scrapy's documented ``download_async`` pattern)."""

    other: str = ""
    outcome: ClassVar[list[BaseException | str]] = []

    async def parse(self, response: Response) -> None:  # type: ignore[override]
        super().parse(response)
        assert self.crawler is not None
        engine = self.crawler.engine
        deferred_from_coro(engine.stop_async())  # running is False from here on
        try:
            await engine.download_async(Request(self.other))
        except BaseException as exc:  # noqa: BLE001 - recorded for the test
            StopThenDownloadSpider.outcome.append(exc)
        else:
            StopThenDownloadSpider.outcome.append("downloaded")


@pytest.mark.crawl
@deferred_f_from_coro_f
async def test_a_download_asked_for_while_stopping_is_dropped_as_shutdown(
    hostile: HostileServer, hostile_b: HostileServer
) -> None:
    """VerdictBook.wait: under Twisted's default reactor the fetch cycle runs
    synchronously inside ``need()``, sees the engine stopping, and ends without a
    verdict; ``wait()`` then indexes ``self._fetches[origin.key]`` (gone): KeyError.
    Under asyncio the same request is dropped with reason ``shutdown``."""
    hostile.add_route("/robots.txt", Reply(200, {}, RULES))
    hostile_b.add_route("/robots.txt", Reply(200, {}, RULES))
    [start] = serve_pages(hostile, ("/public/a",))
    [other] = serve_pages(hostile_b, ("/public/b",))
    StopThenDownloadSpider.outcome = []
    await run_crawl(
        [start],
        settings(),
        spider_cls=StopThenDownloadSpider,
        spider_kwargs={"other": other},
    )
    [outcome] = StopThenDownloadSpider.outcome
    assert isinstance(outcome, RobotsTxtDisallowed), repr(outcome)
    assert outcome.decision.reason == "shutdown"


# -- 3. One pop() starts a robots.txt fetch for every origin in the ready queue -------


@dataclass
class CountingReply:
    """Answers after ``delay`` seconds; records the most answers in progress at once."""

    body: bytes
    delay: float
    lock: threading.Lock = field(default_factory=threading.Lock)
    now: int = 0
    most: int = 0

    def serve(self, exchange: Exchange) -> None:
        with self.lock:
            self.now += 1
            self.most = max(self.most, self.now)
        try:
            Reply(200, {}, self.body, delay=self.delay).serve(exchange)
        finally:
            with self.lock:
                self.now -= 1


@pytest.mark.crawl
@deferred_f_from_coro_f
async def test_robots_fetches_do_not_burst_past_concurrent_requests(
    hostile: HostileServer,
) -> None:
    """24 origins (host names on one server), CONCURRENT_REQUESTS = 2. The first
    pop() that finds the ready queue full moves every request there to a waiting
    queue and starts every origin's fetch: 20+ robots.txt downloads at once, none
    of them counted against CONCURRENT_REQUESTS before they start. Scrapy's
    built-in middleware fetches robots.txt from process_request, so at most
    CONCURRENT_REQUESTS at a time."""
    robots = CountingReply(RULES, delay=0.4)
    hostile.add_route("/robots.txt", robots)
    hosts = [f"o{i}.test" for i in range(24)]
    starts = [serve_pages(hostile, ("/public/a",), host=h)[0] for h in hosts]
    with loopback_names():
        result = await run_crawl(starts, settings(CONCURRENT_REQUESTS=2))
    assert sorted(result.responses) == sorted(starts)
    assert robots.most <= 2 * 2, f"{robots.most} robots.txt downloads at once"


# -- 4. A fleet claim that times out on a busy store thread counts as won ------------


class _Shared(SqliteCache):
    """Not a MemoryCache (which the Store treats as its memory), so it goes behind
    the worker thread."""


class BusyShared(_Shared):
    def claim(self, origin: str, seconds: float) -> bool:
        time.sleep(0.3)
        return False  # another process holds every claim

    def renew(self, origin: str, seconds: float) -> bool:
        return False

    def release(self, origin: str) -> None:
        pass


@deferred_f_from_coro_f
async def test_a_claim_that_times_out_in_the_queue_is_not_taken_as_won(
    tmp_path: Path,
) -> None:
    """Store.claim's default on a missed deadline is True: with 10 origins asking
    at once and 0.3 s per call (one worker thread, 2 s deadline), the later claims
    'win' although another process holds every one of them, so this process
    fetches them too (the fleet's one-fetch-per-origin breaks under latency)."""
    crawler = get_crawler(
        settings_dict={
            "ROBOTS_STD_CACHE_BACKEND": f"{__name__}.BusyShared",
            "ROBOTS_STD_CACHE_PATH": str(tmp_path / "robots.sqlite3"),
        }
    )
    store = Store(crawler, Config.from_settings(crawler.settings))
    assert store.shared
    await store.open()
    try:
        calls = [
            deferred_from_coro(store.claim(f"http://o{i}.test:80")) for i in range(10)
        ]
        won = await maybe_deferred_to_future(gatherResults(calls))
    finally:
        await store.close()
    assert won == [False] * 10


# -- 5. Stats incremented on the store's worker thread --------------------------------


class ThreadNotingStats(MemoryStatsCollector):
    threads: ClassVar[dict[str, set[str]]] = {}

    def inc_value(self, key: str, count: int = 1, start: int = 0) -> None:
        ThreadNotingStats.threads.setdefault(key, set()).add(
            threading.current_thread().name
        )
        super().inc_value(key, count, start)


@deferred_f_from_coro_f
async def test_stats_are_only_touched_on_the_reactor_thread(tmp_path: Path) -> None:
    """LayeredCache._inc runs inside backend.get on the worker thread: the stats
    collector (not thread-safe; others iterate it on the reactor thread, e.g. the
    PeriodicLog extension) is written from two threads."""
    path = str(tmp_path / "robots.sqlite3")
    writer = SqliteCache(path, standard="rfc9309")
    writer.open()
    writer.put(allow_all_entry("http://a.test:80"))
    writer.close()
    ThreadNotingStats.threads = {}
    crawler = get_crawler(
        settings_dict={
            "STATS_CLASS": f"{__name__}.ThreadNotingStats",
            "ROBOTS_STD_CACHE_BACKEND": "scrapy_robots_std.cache.SqliteCache",
            "ROBOTS_STD_CACHE_PATH": path,
        }
    )
    store = Store(crawler, Config.from_settings(crawler.settings))
    await store.open()
    try:
        entry = await store.get("http://a.test:80")
    finally:
        await store.close()
    assert entry is not None
    main = threading.current_thread().name
    off = {k: t - {main} for k, t in ThreadNotingStats.threads.items() if t - {main}}
    assert off == {}


# -- 6. A JOBDIR saved by Scrapy's default priority queue, resumed with the add-on ---


class _Downloader:
    slots: ClassVar[dict[str, Any]] = {}

    def get_slot_key(self, request: Request) -> str:
        return request.url.split("/")[2]


def test_a_jobdir_saved_by_the_default_queue_resumes_with_its_requests(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Scrapy's default SCHEDULER_PRIORITY_QUEUE is DownloaderAwarePriorityQueue,
    whose state is ``{slot: priorities}``. RobotsAwarePriorityQueue reads any dict
    as its own ``{"ready": ..., "waiting": ...}`` and finds neither: a job started
    before the add-on (e.g. with 0.3.x) resumes with an empty queue, silently."""
    key = str(tmp_path / "requests.queue")
    crawler = get_crawler(Spider)
    crawler.spider = Spider("unit")
    crawler._engine = type("E", (), {"downloader": _Downloader()})()  # type: ignore[assignment]
    old = DownloaderAwarePriorityQueue.from_crawler(crawler, PickleFifoDiskQueue, key)
    for url in ("http://a.test/1", "http://b.test/1", "http://a.test/2"):
        old.push(Request(url))
    state = json.loads(json.dumps(old.close()))  # as active.json holds it

    book = FakeBook()
    book.verdicts.update({"http://a.test:80", "http://b.test:80"})
    monkeypatch.setattr(holding, "find_book", lambda crawler: book)
    resumed = RobotsAwarePriorityQueue.from_crawler(
        crawler, PickleFifoDiskQueue, key, state
    )
    assert len(resumed) == 3
    popped = [resumed.pop() for _ in range(3)]
    assert sorted(r.url for r in popped if r is not None) == [
        "http://a.test/1",
        "http://a.test/2",
        "http://b.test/1",
    ]
    assert resumed.pop() is None
    assert resumed.close()["queues"] == []


# -- 7. A JOBDIR with waiting requests resumed with ROBOTSTXT_OBEY off ----------------


def test_waiting_requests_come_out_when_resumed_without_the_middleware(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The add-on sets the queue whatever ROBOTSTXT_OBEY says. Resumed with
    ROBOTSTXT_OBEY = False (no book), pop() reads only the ready queue while len()
    still counts the waiting ones: the scheduler is never empty, never idle, and the
    crawl never finishes."""
    key = str(tmp_path / "requests.queue")
    crawler = get_crawler(Spider)
    crawler.spider = Spider("unit")
    book = FakeBook()
    monkeypatch.setattr(holding, "find_book", lambda crawler: book)
    first = RobotsAwarePriorityQueue.from_crawler(crawler, PickleFifoDiskQueue, key)
    first.push(Request("http://a.test/1"))
    assert first.pop() is None  # held: a.test has no verdict yet
    state = json.loads(json.dumps(first.close()))

    monkeypatch.setattr(holding, "find_book", lambda crawler: None)
    resumed = RobotsAwarePriorityQueue.from_crawler(
        crawler, PickleFifoDiskQueue, key, state
    )
    assert len(resumed) == 1
    request = resumed.pop()
    assert request is not None
    assert request.url == "http://a.test/1"
    assert len(resumed) == 0
    resumed.close()
