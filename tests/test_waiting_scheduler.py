"""RobotsAwarePriorityQueue inside Scrapy's real Scheduler, under JOBDIR: what the
scheduler does with what the disk queue refuses, and file names of long hosts."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

import pytest
from scrapy import Request, Spider
from scrapy.core.scheduler import Scheduler
from scrapy.squeues import PickleFifoDiskQueue
from scrapy.utils.test import get_crawler

from scrapy_robots_std.scrapy import holding
from tests.helpers.fakes import FakeBook, FakeDownloader

if TYPE_CHECKING:
    from pathlib import Path


class NoMoreFiles(PickleFifoDiskQueue):  # type: ignore[misc]
    """A disk queue at ``ulimit -n``: every new file fails (EMFILE)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        raise OSError(24, "Too many open files")


class UnitSpider(Spider):
    name = "unit"


def open_scheduler(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, book: FakeBook, **settings: Any
) -> Scheduler:
    monkeypatch.setattr(holding, "find_book", lambda crawler: book)
    crawler = get_crawler(
        UnitSpider,
        {
            "JOBDIR": str(tmp_path / "job"),
            "SCHEDULER_PRIORITY_QUEUE": "scrapy_robots_std.RobotsAwarePriorityQueue",
            **settings,
        },
    )
    spider = UnitSpider()
    crawler.spider = spider
    crawler._engine = type("E", (), {"downloader": FakeDownloader()})()  # type: ignore[assignment]
    scheduler = Scheduler.from_crawler(crawler)
    scheduler.open(spider)
    return scheduler


def test_an_unserializable_request_is_held_in_memory_without_a_false_warning(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    book = FakeBook()
    scheduler = open_scheduler(tmp_path, monkeypatch, book)
    caplog.set_level(logging.DEBUG)
    request = Request("http://a.test/1", callback=lambda r: None)  # not picklable
    assert scheduler.enqueue_request(request)
    stats = scheduler.stats.get_stats()
    assert stats["scheduler/unserializable"] == 1
    assert scheduler.mqs.waiting() == 1
    assert stats.get("robots_std/wait/hold_failed") is None
    assert not any("Cannot hold" in r.getMessage() for r in caplog.records)
    assert book.needed == ["http://a.test:80"]
    scheduler.close("finished")


def test_a_disk_queue_out_of_files_falls_back_to_memory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    scheduler = open_scheduler(
        tmp_path,
        monkeypatch,
        FakeBook(),
        SCHEDULER_DISK_QUEUE=f"{__name__}.NoMoreFiles",
    )
    assert scheduler.enqueue_request(Request("http://a.test/1"))
    assert len(scheduler) == 1
    assert scheduler.stats.get_value("scheduler/enqueued/memory") == 1
    scheduler.df.close("finished")


@pytest.mark.parametrize(
    "pqueue",
    [
        "scrapy.pqueues.DownloaderAwarePriorityQueue",
        "scrapy_robots_std.RobotsAwarePriorityQueue",
    ],
)
def test_a_long_host_name_is_queued_under_jobdir(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, pqueue: str
) -> None:
    """A valid 131-character host name (two 63-character labels): the queue's
    directory name stays under 255 bytes, as Scrapy's default queue's does."""
    host = "a" * 63 + "." + "b" * 63 + ".test"
    book = FakeBook()
    book.verdicts.add(f"http://{host}:80")
    scheduler = open_scheduler(
        tmp_path, monkeypatch, book, SCHEDULER_PRIORITY_QUEUE=pqueue
    )
    request = Request(f"http://{host}/page")
    assert scheduler.enqueue_request(request)
    assert scheduler.stats.get_value("scheduler/enqueued/disk") == 1
    popped = scheduler.next_request()
    assert popped is not None
    assert popped.url == request.url
    scheduler.close("finished")
