"""RobotsAwarePriorityQueue with a stand-in book and downloader: where a held request
lives, which request goes next, when a fetch is asked for, and what a disk queue's
state keeps (JOBDIR), including states saved by other priority queues.

The real crawls are in test_matrix_crawl.py, test_jobdir_resume.py and
test_scheduling_crawl.py.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import pytest
from scrapy import Request, Spider
from scrapy.pqueues import DownloaderAwarePriorityQueue, ScrapyPriorityQueue
from scrapy.squeues import FifoMemoryQueue, PickleFifoDiskQueue
from scrapy.utils.test import get_crawler

from scrapy_robots_std.scrapy import holding
from scrapy_robots_std.scrapy.verdicts import WAITED_META
from scrapy_robots_std.scrapy.waiting import STATE_FORMAT, RobotsAwarePriorityQueue
from tests.helpers.fakes import FakeBook, FakeDownloader

if TYPE_CHECKING:
    from pathlib import Path

    from scrapy.pqueues import QueueProtocol


def make_queue(
    book: FakeBook | None,
    monkeypatch: pytest.MonkeyPatch,
    downstream: type[QueueProtocol] = FifoMemoryQueue,
    key: str = "",
    state: object = None,
    downloader: FakeDownloader | None = None,
    settings: dict[str, Any] | None = None,
) -> RobotsAwarePriorityQueue:
    monkeypatch.setattr(holding, "find_book", lambda crawler: book)
    crawler = get_crawler(Spider, settings)
    crawler.spider = Spider("unit")
    engine = type("Engine", (), {"downloader": downloader or FakeDownloader()})()
    crawler._engine = engine  # type: ignore[assignment]
    return RobotsAwarePriorityQueue.from_crawler(crawler, downstream, key, state)


def urls(queue: RobotsAwarePriorityQueue) -> list[str]:
    popped = []
    for _ in range(100):  # bounded
        request = queue.pop()
        if request is None:
            break
        popped.append(request.url)
    return popped


def test_without_the_book_requests_go_by_priority_within_a_slot(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    queue = make_queue(None, monkeypatch)
    queue.push(Request("http://a.test/1", priority=0))
    queue.push(Request("http://a.test/2", priority=5))
    assert urls(queue) == ["http://a.test/2", "http://a.test/1"]
    assert len(queue) == 0


def test_the_least_busy_slot_goes_first(monkeypatch: pytest.MonkeyPatch) -> None:
    """DownloaderAwarePriorityQueue's choice, kept: fewest active downloads first,
    whatever the priorities across slots."""
    downloader = FakeDownloader()
    downloader.busy("a.test", 2)
    downloader.busy("b.test", 0)
    book = FakeBook()
    book.verdicts.update({"http://a.test:80", "http://b.test:80"})
    queue = make_queue(book, monkeypatch, downloader=downloader)
    queue.push(Request("http://a.test/1", priority=10))
    queue.push(Request("http://b.test/1", priority=0))
    first = queue.pop()
    assert first is not None
    assert first.url == "http://b.test/1"
    downloader.busy("b.test", 3)
    second = queue.pop()
    assert second is not None
    assert second.url == "http://a.test/1"


def test_equally_busy_slots_take_turns(monkeypatch: pytest.MonkeyPatch) -> None:
    book = FakeBook()
    book.verdicts.update({"http://a.test:80", "http://b.test:80"})
    queue = make_queue(book, monkeypatch)
    for n in range(3):
        queue.push(Request(f"http://a.test/{n}"))
        queue.push(Request(f"http://b.test/{n}"))
    hosts = [url.split("/")[2] for url in urls(queue)]
    assert hosts == ["a.test", "b.test"] * 3


def test_a_held_origin_is_passed_over_and_its_fetch_starts_at_push(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    book = FakeBook()
    book.verdicts.add("http://b.test:80")
    queue = make_queue(book, monkeypatch)
    for url in ("http://a.test/1", "http://b.test/1", "http://a.test/2"):
        queue.push(Request(url))
    # Fetched ahead: asked for when the request was queued, before any pop.
    assert book.needed == ["http://a.test:80", "http://a.test:80"]
    queue.push(Request("http://a.test/free", meta={"dont_obey_robotstxt": True}))
    assert sorted(urls(queue)) == ["http://a.test/free", "http://b.test/1"]
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


def test_a_held_origin_does_not_block_another_origin_of_its_slot(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """http://a.test and https://a.test share the download slot ``a.test``."""
    book = FakeBook()
    book.verdicts.add("https://a.test:443")
    queue = make_queue(book, monkeypatch)
    queue.push(Request("http://a.test/held", priority=9))
    queue.push(Request("https://a.test/ready", priority=0))
    assert urls(queue) == ["https://a.test/ready"]
    book.decide("http://a.test/")
    assert urls(queue) == ["http://a.test/held"]


def test_within_a_slot_the_higher_priority_origin_goes_first(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    book = FakeBook()
    book.verdicts.update({"http://a.test:80", "https://a.test:443"})
    queue = make_queue(book, monkeypatch)
    queue.push(Request("http://a.test/low", priority=0))
    queue.push(Request("https://a.test/high", priority=5))
    assert urls(queue) == ["https://a.test/high", "http://a.test/low"]


def test_held_requests_come_back_in_priority_order(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    book = FakeBook()
    queue = make_queue(book, monkeypatch)
    for priority in (1, 9, 5):
        queue.push(Request(f"http://a.test/{priority}", priority=priority))
    assert queue.pop() is None
    book.decide("http://a.test/")
    assert urls(queue) == ["http://a.test/9", "http://a.test/5", "http://a.test/1"]


def test_a_verdict_decided_inside_need_releases_the_request_at_once(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Twisted's default reactor with the HTTP cache: the fetch ends inside need(),
    which push() calls after filing the request."""

    class AtOnce(FakeBook):
        def need(self, origin: Any, trigger: Request | None) -> None:
            super().need(origin, trigger)
            self.decide(origin.key + "/")

    book = AtOnce()
    queue = make_queue(book, monkeypatch)
    queue.push(Request("http://a.test/1"))
    request = queue.pop()
    assert request is not None
    assert request.url == "http://a.test/1"
    assert len(queue) == 0


def test_an_expired_verdict_holds_its_origin_again(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    book = FakeBook()
    book.verdicts.add("http://a.test:80")
    queue = make_queue(book, monkeypatch)
    queue.push(Request("http://a.test/1"))
    queue.push(Request("http://a.test/2"))
    assert book.needed == []
    book.verdicts.clear()  # expired
    assert queue.pop() is None
    assert book.needed == ["http://a.test:80"]
    assert queue.waiting() == 2
    book.decide("http://a.test/")
    assert urls(queue) == ["http://a.test/1", "http://a.test/2"]


@pytest.mark.filterwarnings(
    "ignore:The CONCURRENT_REQUESTS_PER_IP setting is deprecated"
)
def test_per_ip_concurrency_takes_requests_by_priority_alone(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Scrapy's DownloaderAwarePriorityQueue refuses CONCURRENT_REQUESTS_PER_IP."""
    downloader = FakeDownloader()
    downloader.busy("b.test", 5)
    book = FakeBook()
    book.verdicts.update({"http://a.test:80", "http://b.test:80"})
    queue = make_queue(
        book,
        monkeypatch,
        downloader=downloader,
        settings={"CONCURRENT_REQUESTS_PER_IP": 2},
    )
    queue.push(Request("http://a.test/1", priority=0))
    queue.push(Request("http://b.test/1", priority=3))
    assert urls(queue) == ["http://b.test/1", "http://a.test/1"]


def test_a_disk_queue_keeps_its_held_requests_across_close_and_resume(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    book = FakeBook()
    book.verdicts.add("http://b.test:80")
    key = str(tmp_path / "requests.queue")
    queue = make_queue(book, monkeypatch, PickleFifoDiskQueue, key)
    for url in ("http://a.test/1", "http://a.test/2", "http://b.test/1"):
        queue.push(Request(url))
    queue.push(Request("http://c.test/1"))
    assert queue.pop() is not None  # b.test goes; a.test and c.test wait
    assert queue.waiting() == 3
    state = json.loads(json.dumps(queue.close()))  # as active.json holds it
    assert state["format"] == STATE_FORMAT
    assert sorted(origin for _, origin, _ in state["queues"]) == [
        "http://a.test:80",
        "http://c.test:80",
    ]

    resumed_book = FakeBook()
    resumed = make_queue(resumed_book, monkeypatch, PickleFifoDiskQueue, key, state)
    assert len(resumed) == 3
    assert resumed.pop() is None
    # The restored origins' fetches are asked for on the first pop.
    assert sorted(resumed_book.needed) == ["http://a.test:80", "http://c.test:80"]
    resumed_book.decide("http://a.test/")
    resumed_book.decide("http://c.test/")
    assert sorted(urls(resumed)) == [
        "http://a.test/1",
        "http://a.test/2",
        "http://c.test/1",
    ]
    resumed.close()
    # Emptied queues leave no directory behind.
    assert [p.name for p in (tmp_path / "requests.queue").iterdir()] == []


def test_one_directory_per_slot_and_origin_under_jobdir(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Held requests stay in their slot's queue: no queue per waiting origin on top
    of the slot's (the file descriptors a JOBDIR crawl holds)."""
    book = FakeBook()
    key = str(tmp_path / "requests.queue")
    queue = make_queue(book, monkeypatch, PickleFifoDiskQueue, key)
    for n in range(3):
        queue.push(Request(f"http://a.test/{n}"))
        queue.push(Request(f"http://b.test/{n}"))
    assert len(list((tmp_path / "requests.queue").iterdir())) == 2
    queue.close()


def test_an_unserializable_request_leaves_nothing_behind(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """The scheduler catches the ValueError and keeps the request in memory."""
    book = FakeBook()
    key = str(tmp_path / "requests.queue")
    queue = make_queue(book, monkeypatch, PickleFifoDiskQueue, key)
    unserializable = Request("http://a.test/1", callback=lambda r: None)
    with pytest.raises(ValueError, match="not an instance method"):
        queue.push(unserializable)
    assert len(queue) == 0
    assert queue.pop() is None
    assert queue.close()["queues"] == []


def _legacy_states(key: str) -> dict[str, Any]:
    """States that other priority queues saved for three requests."""
    crawler = get_crawler(Spider)
    crawler._engine = type("E", (), {"downloader": FakeDownloader()})()  # type: ignore[assignment]
    plain = ScrapyPriorityQueue(crawler, PickleFifoDiskQueue, key + "-plain")
    dapq = DownloaderAwarePriorityQueue(crawler, PickleFifoDiskQueue, key + "-dapq")
    old_ready = ScrapyPriorityQueue(crawler, PickleFifoDiskQueue, key + "-v04")
    old_waiting = ScrapyPriorityQueue(
        crawler,
        PickleFifoDiskQueue,
        key + "-v04/robots-waiting/" + _path_safe("http://a.test:80"),
    )
    for url in ("http://a.test/1", "http://b.test/1", "http://a.test/2"):
        plain.push(Request(url))
        dapq.push(Request(url))
    old_ready.push(Request("http://b.test/1"))
    old_waiting.push(Request("http://a.test/1"))
    old_waiting.push(Request("http://a.test/2"))
    v04 = {"ready": old_ready.close(), "waiting": {"http://a.test:80": None}}
    v04["waiting"]["http://a.test:80"] = old_waiting.close()
    return {
        "-plain": plain.close(),
        "-dapq": dapq.close(),
        "-v04": {**v04, "slots": {}},
    }


def _path_safe(text: str) -> str:
    from scrapy.pqueues import _path_safe as scrapy_path_safe

    return scrapy_path_safe(text)


@pytest.mark.parametrize("saved_by", ["-plain", "-dapq", "-v04"])
def test_a_state_saved_by_another_queue_resumes_with_every_request(
    saved_by: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """ScrapyPriorityQueue (a list), DownloaderAwarePriorityQueue (Scrapy's default:
    ``{slot: priorities}``) and this package's 0.4 queue (``ready``/``waiting``)."""
    key = str(tmp_path / "requests.queue")
    state = json.loads(json.dumps(_legacy_states(key)[saved_by]))
    book = FakeBook()
    book.verdicts.add("http://b.test:80")
    queue = make_queue(book, monkeypatch, PickleFifoDiskQueue, key + saved_by, state)
    assert len(queue) == 3
    assert urls(queue) == ["http://b.test/1"]
    assert queue.waiting() == 2
    assert set(book.needed) == {"http://a.test:80"}
    # Closed and resumed again before the verdict: nothing is lost on the way.
    state = json.loads(json.dumps(queue.close()))
    book = FakeBook()
    queue = make_queue(book, monkeypatch, PickleFifoDiskQueue, key + saved_by, state)
    assert len(queue) == 2
    assert queue.pop() is None
    book.decide("http://a.test/")
    assert sorted(urls(queue)) == ["http://a.test/1", "http://a.test/2"]


def test_a_state_resumed_without_the_middleware_gives_every_request(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """ROBOTSTXT_OBEY turned off between the stop and the resume: nothing is held."""
    key = str(tmp_path / "requests.queue")
    first = make_queue(FakeBook(), monkeypatch, PickleFifoDiskQueue, key)
    first.push(Request("http://a.test/1"))
    assert first.pop() is None  # held: a.test has no verdict yet
    state = json.loads(json.dumps(first.close()))
    resumed = make_queue(None, monkeypatch, PickleFifoDiskQueue, key, state)
    assert len(resumed) == 1
    assert urls(resumed) == ["http://a.test/1"]
    assert len(resumed) == 0
    resumed.close()


def test_a_pop_does_bounded_work(monkeypatch: pytest.MonkeyPatch) -> None:
    """Many origins whose verdicts expired: one pop holds at most MAX_STEPS of them
    and has the engine come back."""
    book = FakeBook()
    total = holding.MAX_STEPS + 20
    book.verdicts.update(f"http://h{n}.test:80" for n in range(total))
    queue = make_queue(book, monkeypatch)
    for n in range(total):
        queue.push(Request(f"http://h{n}.test/"))
    book.verdicts.clear()
    assert queue.pop() is None
    assert queue.waiting() == holding.MAX_STEPS
    assert book.wakes == 1
    assert queue.pop() is None
    assert queue.waiting() == total
    assert book.wakes == 1


def test_a_request_that_cannot_be_filed_again_is_not_lost(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Resumed from an older state, a request is popped and filed again; when that
    push fails (EMFILE at ``ulimit -n``), the request goes on rather than vanish."""
    key = str(tmp_path / "requests.queue")
    state = json.loads(json.dumps(_legacy_states(key)["-plain"]))

    class NoMoreFiles(PickleFifoDiskQueue):  # type: ignore[misc]
        def push(self, obj: Any) -> None:
            raise OSError(24, "Too many open files")

    book = FakeBook()
    queue = make_queue(book, monkeypatch, NoMoreFiles, key + "-plain", state)
    popped = urls(queue)
    assert sorted(popped) == ["http://a.test/1", "http://a.test/2", "http://b.test/1"]
    stats = queue.crawler.stats
    assert stats.get_value("robots_std/wait/hold_failed") == 3
    assert set(book.needed) == {"http://a.test:80", "http://b.test:80"}
    assert len(queue) == 0
    queue.close()


def test_a_disk_queue_out_of_files_refuses_with_a_value_error(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Scrapy's scheduler keeps in memory what its disk queue refuses with a
    ValueError; an OSError would lose the request (issue 27, point 2)."""

    class NoMoreFiles(PickleFifoDiskQueue):  # type: ignore[misc]
        def push(self, obj: Any) -> None:
            raise OSError(24, "Too many open files")

    queue = make_queue(FakeBook(), monkeypatch, NoMoreFiles, str(tmp_path / "q"))
    with pytest.raises(ValueError, match="Too many open files"):
        queue.push(Request("http://a.test/1"))
    assert len(queue) == 0
    memory = make_queue(FakeBook(), monkeypatch, NoMoreFiles)  # key "": memory
    with pytest.raises(OSError, match="Too many open files"):
        memory.push(Request("http://a.test/1"))
