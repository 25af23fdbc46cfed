"""RobotsAwareRedisQueue against a real redis-server, with a stand-in for the book.

The crawls with two worker processes are in test_scrapy_redis_fleet.py; here each
rule of the queue is checked on its own: where a waiting request lives, when it
comes back, the bound on one pop, and the look at other workers' waiting origins.
"""

from __future__ import annotations

import contextlib
import logging
import socket
import threading
from typing import TYPE_CHECKING

import pytest
import redis
from scrapy import Request, Spider
from scrapy.utils.test import get_crawler

from scrapy_robots_std.scrapy.origin import origin_of
from scrapy_robots_std.scrapy.verdicts import WAITED_META
from tests.helpers.fakes import FakeBook

if TYPE_CHECKING:
    from collections.abc import Iterator

pytest.importorskip("scrapy_redis")

from scrapy_robots_std.scrapy import holding, waiting_redis
from scrapy_robots_std.scrapy.waiting_redis import (
    MAX_STEPS,
    RobotsAwareRedisQueue,
)

KEY = "unit:requests"
ORIGINS = f"{KEY}:robots-waiting-origins"
WAITING = f"{KEY}:robots-waiting:"


class UnitSpider(Spider):
    name = "unit"


@pytest.fixture
def server(redis_url: str) -> Iterator[redis.Redis]:
    client = redis.Redis.from_url(redis_url, socket_timeout=5)
    yield client
    client.close()


def make_queue(
    server: redis.Redis, book: FakeBook | None, monkeypatch: pytest.MonkeyPatch
) -> RobotsAwareRedisQueue:
    monkeypatch.setattr(holding, "find_book", lambda crawler: book)
    crawler = get_crawler(UnitSpider)
    spider = UnitSpider.from_crawler(crawler)
    crawler.spider = spider
    return RobotsAwareRedisQueue(server, spider, KEY)


@contextlib.contextmanager
def unreachable(client: redis.Redis) -> Iterator[None]:
    """Redis stops answering ``client``: its connections go to a port nobody
    listens on (refused), until the block ends."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        closed_port = probe.getsockname()[1]
    pool = client.connection_pool
    port = pool.connection_kwargs["port"]
    try:
        # A pool's connections keep the port they were made with: new ones, then.
        pool.connection_kwargs["port"] = closed_port
        pool.disconnect()
        pool.reset()
        yield
    finally:
        pool.connection_kwargs["port"] = port
        pool.disconnect()
        pool.reset()


@contextlib.contextmanager
def answering_nothing(client: redis.Redis) -> Iterator[list[int]]:
    """Redis stops answering ``client``: its connections go to a listener that
    closes each one at once (a ``ConnectionError`` for redis-py), and counts them.
    Yields the count, ``[n]``: how often the client tried to reach Redis."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(64)
    listener.settimeout(0.1)
    accepted = [0]
    stop = threading.Event()

    def serve() -> None:
        while not stop.is_set():
            try:
                connection, _ = listener.accept()
            except TimeoutError:
                continue
            # Counted before it is closed: the client's call cannot end sooner.
            accepted[0] += 1
            connection.close()

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    pool = client.connection_pool
    port = pool.connection_kwargs["port"]
    try:
        pool.connection_kwargs["port"] = listener.getsockname()[1]
        pool.disconnect()
        pool.reset()
        yield accepted
    finally:
        pool.connection_kwargs["port"] = port
        pool.disconnect()
        pool.reset()
        stop.set()
        thread.join()
        listener.close()


@contextlib.contextmanager
def read_only(client: redis.Redis) -> Iterator[None]:
    """The server becomes a replica of a master nobody runs, as a failover leaves
    a worker's Redis: it answers reads, and refuses writes (``READONLY``)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        nobody = probe.getsockname()[1]
    client.execute_command("REPLICAOF", "127.0.0.1", str(nobody))
    try:
        yield
    finally:
        client.execute_command("REPLICAOF", "NO", "ONE")


class Clock:
    """``waiting_redis``'s ``time.monotonic``, moved on by the test only."""

    def __init__(self) -> None:
        self.now = 1000.0

    def monotonic(self) -> float:
        return self.now


def queue_holding_one(
    server: redis.Redis, monkeypatch: pytest.MonkeyPatch
) -> tuple[RobotsAwareRedisQueue, FakeBook]:
    """A queue whose book knows known.test's verdict, with one request of
    new.test held in Redis."""
    book = FakeBook()
    queue = make_queue(server, book, monkeypatch)
    book.decide("http://known.test/")
    queue.push(Request("http://new.test/held"))
    assert len(queue) == 1
    return queue, book


def key(url: str) -> str:
    origin = origin_of(url)
    assert origin is not None
    return origin.key


def waiting_in_redis(server: redis.Redis) -> dict[str, int]:
    return {
        origin.decode(): int(server.zcard(WAITING + origin.decode()))
        for origin in server.smembers(ORIGINS)
    }


def test_without_the_book_it_is_scrapy_redis_priority_queue(
    server: redis.Redis, monkeypatch: pytest.MonkeyPatch
) -> None:
    queue = make_queue(server, None, monkeypatch)
    for n, priority in enumerate((0, 5, -5)):
        queue.push(Request(f"http://a{n}.test/", priority=priority))
    assert len(queue) == 3
    popped = [queue.pop(), queue.pop(), queue.pop(), queue.pop()]
    assert [r.url if r else None for r in popped] == [
        "http://a1.test/",
        "http://a0.test/",
        "http://a2.test/",
        None,
    ]
    assert server.keys("*robots-waiting*") == []


def test_a_request_without_a_verdict_waits_in_redis_until_it_comes(
    server: redis.Redis, monkeypatch: pytest.MonkeyPatch
) -> None:
    book = FakeBook()
    queue = make_queue(server, book, monkeypatch)
    book.decide("http://known.test/")
    queue.push(Request("http://new.test/a", priority=10))
    queue.push(Request("http://known.test/b"))
    queue.push(Request("http://new.test/c", priority=20))
    queue.push(Request("http://new.test/x", meta={"dont_obey_robotstxt": True}))

    # new.test has no verdict: its requests move to Redis, the others go.
    first, second = queue.pop(), queue.pop()
    assert first is not None
    assert second is not None
    assert {first.url, second.url} == {"http://known.test/b", "http://new.test/x"}
    assert queue.pop() is None
    assert waiting_in_redis(server) == {key("http://new.test/"): 2}
    assert int(server.zcard(KEY)) == 0
    assert book.needed[0] == key("http://new.test/")
    assert len(queue) == 2  # the waiting ones count: the spider is not idle
    assert queue.spider.crawler.stats.get_value("robots_std/wait/held") == 2

    book.decide("http://new.test/")
    released = [queue.pop(), queue.pop()]
    assert [r.url if r else None for r in released] == [
        "http://new.test/c",  # by priority, as in the shared queue
        "http://new.test/a",
    ]
    assert all(WAITED_META in r.meta for r in released if r is not None)
    assert queue.pop() is None
    assert len(queue) == 0
    assert server.smembers(ORIGINS) == set()
    assert server.keys("*robots-waiting*") == []


def test_another_worker_takes_over_the_waiting_requests(
    server: redis.Redis, monkeypatch: pytest.MonkeyPatch
) -> None:
    gone = make_queue(server, FakeBook(), monkeypatch)
    gone.push(Request("http://left.test/1"))
    gone.push(Request("http://left.test/2"))
    assert gone.pop() is None  # both wait in Redis; then this worker stops

    book = FakeBook()
    other = make_queue(server, book, monkeypatch)
    assert len(other) == 2
    # Its first pop looks at the fleet's waiting origins and asks for the verdict.
    assert other.pop() is None
    assert book.needed == [key("http://left.test/")]
    book.decide("http://left.test/")
    urls = {r.url for r in (other.pop(), other.pop()) if r is not None}
    assert urls == {"http://left.test/1", "http://left.test/2"}
    assert len(other) == 0

    # A worker that has the verdict already releases them on its first look.
    gone.push(Request("http://left2.test/1"))
    assert gone.pop() is None
    knows = FakeBook()
    knows.verdicts.add(key("http://left2.test/"))
    third = make_queue(server, knows, monkeypatch)
    popped = third.pop()
    assert popped is not None
    assert popped.url == "http://left2.test/1"
    assert knows.needed == []


def test_one_pop_moves_a_bounded_number_of_requests(
    server: redis.Redis, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Requests in the shared queue whose origins have no verdict here (another
    worker pushed them, or the verdicts expired): one pop holds at most MAX_STEPS."""
    # One look at the waiting origins (the first pop's): a second one, if a loaded
    # machine let SCAN_INTERVAL pass, spends the next pop's steps on them.
    monkeypatch.setattr(waiting_redis, "SCAN_INTERVAL", 3600.0)
    book = FakeBook()
    queue = make_queue(server, book, monkeypatch)
    total = MAX_STEPS + 30
    book.verdicts.update(key(f"http://o{n}.test/") for n in range(total))
    for n in range(total):
        queue.push(Request(f"http://o{n}.test/"))
    assert int(server.zcard(KEY)) == total
    book.verdicts.clear()
    assert queue.pop() is None
    assert int(server.zcard(KEY)) == total - MAX_STEPS
    assert sum(waiting_in_redis(server).values()) == MAX_STEPS
    assert book.wakes == 1  # the engine pops again soon, not at its heartbeat
    assert queue.pop() is None
    assert int(server.zcard(KEY)) == 0
    assert len(queue) == total


def test_clear_empties_the_waiting_sets_too(
    server: redis.Redis, monkeypatch: pytest.MonkeyPatch
) -> None:
    queue = make_queue(server, FakeBook(), monkeypatch)
    for n in range(3):
        queue.push(Request(f"http://o{n}.test/"))
    assert queue.pop() is None
    queue.push(Request("http://later.test/"))
    assert len(queue) == 4
    queue.clear()
    assert len(queue) == 0
    assert server.keys("unit:*") == []


# -- keys and entries this queue cannot use (issue 27, point 2) ---------------------


def test_a_waiting_key_of_another_type_loses_no_request(
    server: redis.Redis,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """A string planted where an origin's waiting set goes: holding fails whole
    (nothing half-written), the request stays in the shared queue, and once popped
    it goes on to wait for its verdict in the downloader. pop() and len() never
    raise."""
    book = FakeBook()
    queue = make_queue(server, book, monkeypatch)
    server.set(WAITING + key("http://planted.test/"), "not a sorted set")
    queue.push(Request("http://planted.test/1"))
    assert server.smembers(ORIGINS) == set()  # no half-done hold
    assert int(server.zcard(KEY)) == 1
    assert len(queue) == 1
    request = queue.pop()
    assert request is not None
    assert request.url == "http://planted.test/1"
    assert WAITED_META not in request.meta
    assert book.needed == [key("http://planted.test/")] * 2
    stats = queue.spider.crawler.stats
    assert stats.get_value("robots_std/wait/hold_failed") == 2
    warnings = [r for r in caplog.records if r.levelname == "WARNING"]
    assert len(warnings) == 1  # once; later ones are DEBUG
    assert "WrongKeyType" in warnings[0].getMessage()
    assert queue.pop() is None
    assert len(queue) == 0


def test_a_waiting_set_turned_into_another_type_is_passed_over(
    server: redis.Redis, monkeypatch: pytest.MonkeyPatch
) -> None:
    book = FakeBook()
    queue = make_queue(server, book, monkeypatch)
    queue.push(Request("http://gone.test/1"))
    queue.push(Request("http://fine.test/1"))
    waiting_key = WAITING + key("http://gone.test/")
    server.delete(waiting_key)
    server.set(waiting_key, "clobbered")  # another program replaced the set
    book.decide("http://gone.test/")
    book.decide("http://fine.test/")
    request = queue.pop()
    assert request is not None
    assert request.url == "http://fine.test/1"
    assert queue.pop() is None
    assert len(queue) == 0  # the string is not counted, and len() does not raise
    assert server.smembers(ORIGINS) == set()
    assert queue.spider.crawler.stats.get_value("robots_std/wait/store_problem") == 1


def test_an_unreadable_waiting_entry_is_left_out(
    server: redis.Redis, monkeypatch: pytest.MonkeyPatch
) -> None:
    book = FakeBook()
    queue = make_queue(server, book, monkeypatch)
    queue.push(Request("http://a.test/1"))
    server.zadd(WAITING + key("http://a.test/"), {b"\x80garbage": -100})
    book.decide("http://a.test/")
    request = queue.pop()
    assert request is not None
    assert request.url == "http://a.test/1"
    assert queue.pop() is None
    assert queue.spider.crawler.stats.get_value("robots_std/wait/store_problem") == 1


def test_a_waiting_origins_key_of_another_type_never_raises(
    server: redis.Redis, monkeypatch: pytest.MonkeyPatch
) -> None:
    book = FakeBook()
    queue = make_queue(server, book, monkeypatch)
    server.set(ORIGINS, "not a set")
    queue.push(Request("http://b.test/1"))  # cannot be held: stays in the queue
    assert len(queue) == 1
    request = queue.pop()
    assert request is not None
    assert request.url == "http://b.test/1"
    assert len(queue) == 0
    queue.clear()


def test_with_redis_gone_nothing_raises_and_nothing_is_lost(
    server: redis.Redis, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(waiting_redis, "SCAN_INTERVAL", 0.0)  # retry Redis at once
    queue, book = queue_holding_one(server, monkeypatch)
    stats = queue.spider.crawler.stats
    with unreachable(server):
        queue.push(Request("http://new.test/a"))  # kept in memory, not raised
        queue.push(Request("http://known.test/b"))
        # Redis's request is still counted: the spider does not close on an outage.
        assert len(queue) == 3
        popped = [queue.pop(), queue.pop(), queue.pop()]
        assert [r.url if r else None for r in popped] == [
            "http://new.test/a",  # no verdict: it waits for it in the downloader
            "http://known.test/b",
            None,
        ]
        assert book.needed == [key("http://new.test/")] * 2
        assert len(queue) == 1
        # A long outage: Redis's requests no longer keep the spider open.
        monkeypatch.setattr(waiting_redis, "OUTAGE_PATIENCE", 0.0)
        assert len(queue) == 0
    assert stats.get_value("robots_std/wait/kept_in_memory") == 2
    assert stats.get_value("robots_std/wait/hold_failed") == 1
    assert stats.get_value("robots_std/wait/store_unreachable") == 1
    # Redis is back: the request held before the outage is still there.
    assert len(queue) == 1
    assert waiting_in_redis(server) == {key("http://new.test/"): 1}


@pytest.mark.parametrize("back", [True, False])
def test_requests_kept_in_memory_at_close_go_to_redis_or_are_counted_lost(
    server: redis.Redis,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
    back: bool,
) -> None:
    book = FakeBook()
    queue = make_queue(server, book, monkeypatch)
    with unreachable(server):
        queue.push(Request("http://a.test/1"))
        queue.push(Request("http://a.test/2"))
        if not back:
            queue._holding.report_left()
    if back:
        queue._holding.report_left()
    stats = queue.spider.crawler.stats
    assert stats.get_value("robots_std/wait/kept_in_memory") == 2
    if back:  # written to the shared queue, for the fleet
        assert int(server.zcard(KEY)) == 2
        assert stats.get_value("robots_std/wait/lost_at_close") is None
    else:
        assert int(server.zcard(KEY)) == 0
        assert stats.get_value("robots_std/wait/lost_at_close") == 2
        assert "2 request(s) that Redis could not store" in caplog.text


# -- outages and refused writes (review of the outage handling) ----------------------


def test_during_an_outage_redis_is_left_alone_until_the_wait_is_over(
    server: redis.Redis, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each call to a Redis that does not answer blocks the reactor thread: inside
    the wait after a failed call, pushes keep their requests in memory and a kept
    request popped goes on to the downloader, all without a call. Each call that
    fails doubles the wait, up to RETRY_MAX."""
    clock = Clock()
    monkeypatch.setattr(waiting_redis, "time", clock)
    queue, _ = queue_holding_one(server, monkeypatch)
    stats = queue.spider.crawler.stats
    with answering_nothing(server) as tries:
        queue.push(Request("http://new.test/a"))  # the outage starts: a call fails
        first = tries[0]
        assert first > 0
        queue.push(Request("http://known.test/b"))
        queue.push(Request("http://new.test/c"))
        popped = [queue.pop() for _ in range(4)]
        assert [r.url if r else None for r in popped] == [
            "http://new.test/a",  # not held again: it goes on at once
            "http://known.test/b",
            "http://new.test/c",
            None,
        ]
        assert len(queue) == 1  # the held request, still counted
        assert tries[0] == first  # not one more call inside the wait
        assert stats.get_value("robots_std/wait/kept_in_memory") == 3
        assert stats.get_value("robots_std/wait/hold_failed") == 2

        health = queue._store._health
        waits = []
        for _ in range(7):
            clock.now = health.retry_at  # the wait is over: one call, which fails
            before = tries[0]
            assert queue.pop() is None
            assert tries[0] > before
            waits.append(health.retry_at - clock.now)
        # Cut once at the end of the patience (60 s after the outage began).
        assert waits == [2.0, 4.0, 8.0, 16.0, 29.0, 30.0, 30.0]
        last = tries[0]
        queue.push(Request("http://known.test/d"))  # inside the wait again
        assert tries[0] == last
    assert stats.get_value("robots_std/wait/store_unreachable") == 1
    clock.now = health.retry_at
    assert len(queue) == 2  # Redis answers: the outage is over
    assert health.down_since is None
    assert waiting_in_redis(server) == {key("http://new.test/"): 1}


def test_an_outage_shorter_than_the_patience_never_lets_an_idle_spider_close(
    server: redis.Redis, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The doubling wait is cut at the end of OUTAGE_PATIENCE: a Redis back after
    50 s is seen by a try at 60 s at the latest, so len() never says 0 while its
    requests are there (with waits of 16 then 30 s the next try came at 75 s)."""
    clock = Clock()
    monkeypatch.setattr(waiting_redis, "time", clock)
    queue, _ = queue_holding_one(server, monkeypatch)
    with unreachable(server):
        for seconds in range(0, 50, 5):  # the engine's idle checks, every 5 s
            clock.now = 1000.0 + seconds
            assert len(queue) == 1, seconds
    for seconds in range(50, 70, 5):  # Redis is back
        clock.now = 1000.0 + seconds
        assert len(queue) == 1, seconds
    assert queue._store._health.down_since is None


def test_a_refused_write_keeps_the_request_and_is_no_outage(
    server: redis.Redis,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """A read-only Redis (a failover) answers reads and refuses writes: the request
    is kept in memory, but that is no outage. It used to be one, which each read
    that succeeded ended: the WARNING and INFO pair once a cycle, and
    store_unreachable counting each."""
    caplog.set_level(logging.DEBUG, logger="scrapy_robots_std")
    monkeypatch.setattr(waiting_redis, "SCAN_INTERVAL", 0.0)  # no wait at all
    queue, _ = queue_holding_one(server, monkeypatch)
    with read_only(server):
        for n in range(3):
            queue.push(Request(f"http://known.test/{n}"))  # refused: kept
            assert len(queue) == 2  # the count still reads Redis
            request = queue.pop()
            assert request is not None
            assert request.url == f"http://known.test/{n}"
        queue.push(Request("http://new.test/x"))  # its hold is refused: kept
        request = queue.pop()  # held again: refused again, so it goes on
        assert request is not None
        assert request.url == "http://new.test/x"
        assert queue.pop() is None  # a pop's write refused: nothing raises
        assert len(queue) == 1
    stats = queue.spider.crawler.stats
    assert stats.get_value("robots_std/wait/kept_in_memory") == 4
    assert stats.get_value("robots_std/wait/hold_failed") == 1
    assert stats.get_value("robots_std/wait/store_unreachable") is None
    assert "does not answer" not in caplog.text
    assert "answers the queue of waiting requests again" not in caplog.text
    warnings = [r.getMessage() for r in caplog.records if r.levelname == "WARNING"]
    assert sum("Cannot write" in m for m in warnings) == 1
    assert sum("ReadOnlyError" in m for m in warnings) == len(warnings)
    # Writable again: requests go to Redis.
    queue.push(Request("http://known.test/after"))
    assert int(server.zcard(KEY)) == 1
    assert waiting_in_redis(server) == {key("http://new.test/"): 1}


def test_a_shared_queue_of_another_type_is_a_key_problem_not_an_outage(
    server: redis.Redis, monkeypatch: pytest.MonkeyPatch
) -> None:
    book = FakeBook()
    queue = make_queue(server, book, monkeypatch)
    book.decide("http://known.test/")
    server.set(KEY, "not a sorted set")
    queue.push(Request("http://known.test/1"))
    queue.push(Request("http://known.test/2"))
    popped = [queue.pop(), queue.pop(), queue.pop()]
    assert [r.url if r else None for r in popped] == [
        "http://known.test/1",
        "http://known.test/2",
        None,  # the shared queue cannot be read: nothing raises
    ]
    assert len(queue) == 0
    stats = queue.spider.crawler.stats
    assert stats.get_value("robots_std/wait/kept_in_memory") == 2
    assert stats.get_value("robots_std/wait/store_problem") == 1  # once, not per call
    assert stats.get_value("robots_std/wait/store_unreachable") is None


@pytest.mark.parametrize("gone", [True, False])
def test_clear_never_raises_and_counts_the_requests_it_drops(
    server: redis.Redis,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
    gone: bool,
) -> None:
    """scrapy-redis's flush at close (SCHEDULER_PERSIST off) runs before the spider
    closes: with Redis gone it used to raise into Scrapy, and with Redis back it
    dropped the requests kept in memory without a word."""
    book = FakeBook()
    queue = make_queue(server, book, monkeypatch)
    book.decide("http://known.test/")
    queue.push(Request("http://known.test/in-redis"))
    with unreachable(server):
        queue.push(Request("http://a.test/1"))
        queue.push(Request("http://a.test/2"))
        if gone:
            queue.clear()
    if not gone:
        queue.clear()
    stats = queue.spider.crawler.stats
    assert stats.get_value("robots_std/wait/dropped_by_flush") == 2
    assert "2 request(s) that Redis could not store were dropped" in caplog.text
    assert all(r.exc_info is None for r in caplog.records)
    assert ("Cannot empty the queue of waiting requests" in caplog.text) is gone
    assert server.keys("unit:*") == ([KEY.encode()] if gone else [])
    queue._holding.report_left()  # dropped by the flush: not lost as well
    assert stats.get_value("robots_std/wait/lost_at_close") is None
