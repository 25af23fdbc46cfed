"""RobotsAwarePriorityQueue with a stand-in book: where a waiting request lives, when
it comes back, and that a disk queue's state keeps the waiting requests (JOBDIR).

The real crawls are in test_matrix_crawl.py and test_jobdir_resume.py.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from fake_book import FakeBook
from scrapy import Request, Spider
from scrapy.squeues import FifoMemoryQueue, PickleFifoDiskQueue
from scrapy.utils.test import get_crawler

from scrapy_robots_std.scrapy import waiting
from scrapy_robots_std.scrapy.waiting import WAITED_META, RobotsAwarePriorityQueue

if TYPE_CHECKING:
    from pathlib import Path

    import pytest
    from scrapy.pqueues import QueueProtocol


def make_queue(
    book: FakeBook | None,
    monkeypatch: pytest.MonkeyPatch,
    downstream: type[QueueProtocol] = FifoMemoryQueue,
    key: str = "",
    state: object = None,
) -> RobotsAwarePriorityQueue:
    monkeypatch.setattr(waiting, "book_for", lambda crawler: book)
    crawler = get_crawler(Spider)
    crawler.spider = Spider("unit")
    return RobotsAwarePriorityQueue.from_crawler(
        crawler,
        downstream,
        key,
        state,  # type: ignore[arg-type]
    )


def urls(queue: RobotsAwarePriorityQueue) -> list[str]:
    popped = []
    for _ in range(100):  # bounded
        request = queue.pop()
        if request is None:
            break
        popped.append(request.url)
    return popped


def test_without_the_book_it_is_a_plain_priority_queue(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    queue = make_queue(None, monkeypatch)
    queue.push(Request("http://a.test/1", priority=0))
    queue.push(Request("http://b.test/1", priority=5))
    assert urls(queue) == ["http://b.test/1", "http://a.test/1"]
    assert len(queue) == 0


def test_an_origin_without_a_verdict_waits_and_the_others_go_on(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    book = FakeBook()
    book.verdicts.add("http://b.test:80")
    queue = make_queue(book, monkeypatch)
    for url in ("http://a.test/1", "http://b.test/1", "http://a.test/2"):
        queue.push(Request(url))
    queue.push(Request("http://a.test/free", meta={"dont_obey_robotstxt": True}))
    assert urls(queue) == ["http://b.test/1", "http://a.test/free"]
    assert book.needed == ["http://a.test:80", "http://a.test:80"]
    assert len(queue) == queue.waiting() == 2
    book.decide("http://a.test/")
    released = [queue.pop(), queue.pop()]
    assert [r.url for r in released if r is not None] == [
        "http://a.test/1",
        "http://a.test/2",
    ]
    assert all(WAITED_META in r.meta for r in released if r is not None)
    assert queue.pop() is None
    assert len(queue) == 0


def test_waiting_requests_come_back_in_priority_order(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    book = FakeBook()
    queue = make_queue(book, monkeypatch)
    for priority in (1, 9, 5):
        queue.push(Request(f"http://a.test/{priority}", priority=priority))
    assert queue.pop() is None
    book.decide("http://a.test/")
    assert urls(queue) == ["http://a.test/9", "http://a.test/5", "http://a.test/1"]


def test_a_verdict_decided_at_once_releases_the_request_in_the_same_pop(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Twisted's default reactor with the HTTP cache: the fetch ends inside need()."""

    class AtOnce(FakeBook):
        def need(self, origin: object, trigger: Request | None) -> None:
            super().need(origin, trigger)  # type: ignore[arg-type]
            self.decide(origin.key + "/")  # type: ignore[attr-defined]

    book = AtOnce()
    queue = make_queue(book, monkeypatch)
    queue.push(Request("http://a.test/1"))
    request = queue.pop()
    assert request is not None
    assert request.url == "http://a.test/1"
    assert len(queue) == 0


def test_a_disk_queue_keeps_its_waiting_requests_across_close_and_resume(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    book = FakeBook()
    book.verdicts.add("http://b.test:80")
    key = str(tmp_path / "requests.queue")
    queue = make_queue(book, monkeypatch, PickleFifoDiskQueue, key)
    for url in ("http://a.test/1", "http://a.test/2", "http://b.test/1"):
        queue.push(Request(url))
    queue.push(Request("http://c.test/1"))
    assert queue.pop() is not None  # b.test goes; a.test waits
    assert queue.waiting() == 2
    state = queue.close()
    assert set(state) == {"ready", "waiting", "slots"}
    assert set(state["waiting"]) == {"http://a.test:80"}

    resumed_book = FakeBook()
    resumed = make_queue(resumed_book, monkeypatch, PickleFifoDiskQueue, key, state)
    assert len(resumed) == 3
    assert resumed.pop() is None  # c.test now waits too
    # The restored origin's fetch starts on the first pop, with no trigger.
    assert "http://a.test:80" in resumed_book.needed
    assert "http://c.test:80" in resumed_book.needed
    resumed_book.decide("http://a.test/")
    resumed_book.decide("http://c.test/")
    assert sorted(urls(resumed)) == [
        "http://a.test/1",
        "http://a.test/2",
        "http://c.test/1",
    ]


def test_a_state_saved_by_scrapy_priority_queue_resumes(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """A JOBDIR started without this queue (a list of priorities) still resumes."""
    from scrapy.pqueues import ScrapyPriorityQueue

    key = str(tmp_path / "requests.queue")
    crawler = get_crawler(Spider)
    plain = ScrapyPriorityQueue(crawler, PickleFifoDiskQueue, key)
    plain.push(Request("http://a.test/1"))
    state = plain.close()
    book = FakeBook()
    book.verdicts.add("http://a.test:80")
    queue = make_queue(book, monkeypatch, PickleFifoDiskQueue, key, state)
    assert urls(queue) == ["http://a.test/1"]
