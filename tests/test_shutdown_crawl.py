"""Shutdown tells the truth (issue 17, point 6): real crawls stopped while robots.txt
is still being fetched.

Each crawl is closed by ``CLOSESPIDER_TIMEOUT`` while a robots.txt download is in
flight (a black hole, a slow answer, a 503 that would be retried). The close signal
is Scrapy's ``Closing spider`` record, the end its ``Spider closed`` record; between
the two, the in-flight download is cancelled, and afterwards nothing of ours is
logged. The stats, the summary and the WARNING tell one story.
"""

from __future__ import annotations

import logging
import re
import threading
import time
from typing import TYPE_CHECKING, Any

import pytest
from scrapy.utils.defer import deferred_f_from_coro_f, maybe_deferred_to_future

from tests.helpers.crawl import (
    MW_LOGGER,
    RULES,
    DownloadAsyncSpider,
    assert_no_errors,
    drop_lines,
    pages_served,
    run_crawl,
    serve_pages,
    settings,
)
from tests.helpers.server import BlackHole, Reply

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable
    from pathlib import Path

    from tests.helpers.server import HostileServer

pytestmark = pytest.mark.crawl

PACKAGE_LOGGER = "scrapy_robots_std"
#: The bound the issue sets, from the close signal to the crawl's end.
CLOSE_BOUND = 5.0
#: How long to keep listening after the crawl, for lines logged late.
LISTEN_AFTER = 1.0


def closing_settings(**overrides: Any) -> dict[str, Any]:
    """A robots.txt timeout far longer than the crawl: only a cancel ends it."""
    return settings(
        CLOSESPIDER_TIMEOUT=1.1,  # not in step with the 0.25 s stop check
        ROBOTS_STD_FETCH_TIMEOUT=30,
        ROBOTS_STD_MAX_WAIT=60,
        DOWNLOAD_TIMEOUT=30,
        **overrides,
    )


class _Records(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.NOTSET)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)


async def _pause(seconds: float) -> None:
    from twisted.internet import reactor
    from twisted.internet.task import deferLater

    await maybe_deferred_to_future(deferLater(reactor, seconds))  # type: ignore[arg-type]


async def listening(
    crawl: Callable[[], Awaitable[Any]],
) -> tuple[Any, list[logging.LogRecord]]:
    """Run ``crawl`` and keep every log record until :data:`LISTEN_AFTER` after it."""
    handler = _Records()
    root = logging.getLogger()
    previous = root.level
    root.setLevel(logging.DEBUG)
    root.addHandler(handler)
    try:
        result = await crawl()
        await _pause(LISTEN_AFTER)
    finally:
        root.removeHandler(handler)
        root.setLevel(previous)
    return result, handler.records


def _at(records: list[logging.LogRecord], start: str) -> logging.LogRecord:
    [record] = [r for r in records if r.getMessage().startswith(start)]
    return record


def close_to_end(records: list[logging.LogRecord]) -> float:
    """Seconds from the close signal to the spider's close."""
    return (
        _at(records, "Spider closed").created - _at(records, "Closing spider").created
    )


def ours_after_close(records: list[logging.LogRecord]) -> list[str]:
    closed = _at(records, "Spider closed")
    after = records[records.index(closed) + 1 :]
    return [
        f"{r.name}: {r.getMessage()}"
        for r in after
        if r.name == PACKAGE_LOGGER or r.name.startswith(PACKAGE_LOGGER + ".")
    ]


def summary_of(records: list[logging.LogRecord]) -> str:
    [summary] = [
        r.getMessage()
        for r in records
        if r.name == MW_LOGGER
        and r.getMessage().startswith("robots.txt: ")
        and "request(s)" in r.getMessage()
    ]
    return summary


def assert_accounts_agree(
    stats: dict[str, Any], records: list[logging.LogRecord]
) -> None:
    """The summary, the stats and the WARNING say the same about what was not sent."""
    summary = summary_of(records).splitlines()[0]
    head = re.match(r"robots\.txt: (\d+) request\(s\) dropped", summary)
    assert head is not None, summary
    by_reason = {
        key.rsplit("/", 1)[1]: value
        for key, value in stats.items()
        if key.startswith("robots_std/dropped/")
    }
    total = int(head.group(1))
    assert total == sum(by_reason.values()) == stats.get("robotstxt/forbidden", 0)
    for reason, count in by_reason.items():
        assert f"{reason}: {count}" in summary
    by_origin = [
        v for k, v in stats.items() if k.startswith("robots_std/dropped_by_origin/")
    ]
    assert sum(by_origin) == total
    left = stats.get("robots_std/wait/left_at_close", 0)
    warnings = [
        r.getMessage()
        for r in records
        if r.levelno == logging.WARNING
        and "were still waiting for the robots.txt" in r.getMessage()
    ]
    if left:
        assert f"{left} request(s) not sent: still waiting for a robots.txt" in summary
        assert len(warnings) == 1
        assert warnings[0].startswith(f"{left} request(s) were still waiting")
    else:
        assert "not sent" not in summary
        assert warnings == []


def _check_close(
    result_stats: dict[str, Any], records: list[logging.LogRecord]
) -> float:
    elapsed = close_to_end(records)
    print(f"close signal to 'Spider closed': {elapsed:.3f} s")  # shown with -s
    assert elapsed < CLOSE_BOUND
    assert ours_after_close(records) == []
    assert_accounts_agree(result_stats, records)
    errors = [r.getMessage() for r in records if r.levelno >= logging.ERROR]
    assert errors == []
    return elapsed


@deferred_f_from_coro_f
async def test_a_black_holed_robots_txt_is_cancelled_at_close(
    hostile: HostileServer,
) -> None:
    hostile.add_route("/robots.txt", BlackHole(max_hold=30))
    urls = serve_pages(hostile, [f"/page/{i}" for i in range(5)])
    started = time.monotonic()
    result, records = await listening(lambda: run_crawl(urls, closing_settings()))
    assert time.monotonic() - started < 1 + CLOSE_BOUND + LISTEN_AFTER + 1
    assert result.stats["finish_reason"] == "closespider_timeout"
    _check_close(result.stats, records)
    assert pages_served(hostile) == set()
    assert result.stats["robots_std/fetch/cancelled"] == 1
    # Held in the scheduler's queue: kept under JOBDIR, discarded like any queued
    # request otherwise; counted, not dropped.
    assert result.stats["robots_std/wait/left_at_close"] == 5
    assert "robotstxt/forbidden" not in result.stats
    assert "robots_std/verdict/unreachable" not in result.stats


@deferred_f_from_coro_f
async def test_a_slow_robots_txt_does_not_hold_the_close(
    hostile: HostileServer,
) -> None:
    """The 10 s answer of the issue: all 5 start requests are accounted for."""
    hostile.add_route("/robots.txt", Reply(200, {}, RULES, delay=10))
    urls = serve_pages(hostile, [f"/page/{i}" for i in range(5)])
    result, records = await listening(lambda: run_crawl(urls, closing_settings()))
    _check_close(result.stats, records)
    assert result.stats["robots_std/wait/left_at_close"] == 5
    assert result.stats["robots_std/wait/held"] == 5


@deferred_f_from_coro_f
async def test_requests_waiting_in_the_downloader_are_dropped_as_shutdown_before_close(
    hostile: HostileServer,
) -> None:
    from scrapy.utils.test import get_crawler

    hostile.add_route("/robots.txt", BlackHole(max_hold=30))
    urls = serve_pages(hostile, [f"/page/{i}" for i in range(4)])
    crawler = get_crawler(
        DownloadAsyncSpider, {**closing_settings(), "TELNETCONSOLE_ENABLED": False}
    )
    _, records = await listening(lambda: crawler.crawl_async(urls=urls))
    assert crawler.stats is not None
    stats = dict(crawler.stats.get_stats())
    _check_close(stats, records)
    spider = crawler.spider
    assert isinstance(spider, DownloadAsyncSpider)
    assert sorted(spider.outcomes.values()) == ["dropped"] * 4
    assert stats["robots_std/dropped/shutdown"] == 4
    assert stats["robotstxt/forbidden"] == 4
    assert "4 request(s) dropped (shutdown: 4) from 1 origin(s)" in summary_of(records)
    closed = records.index(_at(records, "Spider closed"))
    drops = [
        i
        for i, r in enumerate(records)
        if "Forbidden by robots.txt" in r.getMessage()
        and "the spider closed" in r.getMessage()
    ]
    assert len(drops) == 4
    assert max(drops) < closed
    assert pages_served(hostile) == set()


@deferred_f_from_coro_f
async def test_no_retry_is_announced_once_the_spider_is_closing(
    hostile: HostileServer,
) -> None:
    """A 503 that arrives after the close signal would be retried: the download is
    cancelled first, and no "retry in" line follows the close."""
    hostile.add_route("/robots.txt", Reply(503, delay=2.5))
    urls = serve_pages(hostile, ["/page/1", "/page/2"])
    result, records = await listening(
        lambda: run_crawl(urls, closing_settings(ROBOTS_STD_FETCH_RETRIES=5))
    )
    _check_close(result.stats, records)
    closing = records.index(_at(records, "Closing spider"))
    assert not [r for r in records[closing:] if "retry" in r.getMessage()]
    assert "robots_std/fetch/retries" not in result.stats
    assert result.stats["robots_std/wait/left_at_close"] == 2


@deferred_f_from_coro_f
async def test_a_dry_run_never_counts_as_dropped(hostile: HostileServer) -> None:
    hostile.add_route("/robots.txt", Reply(200, {}, RULES))
    result, records = await listening(
        lambda: run_crawl(serve_pages(hostile), settings(ROBOTS_STD_DRY_RUN=True))
    )
    assert pages_served(hostile) == {"/public/a", "/private/b"}
    assert result.stats["robots_std/would_drop/rule"] == 1
    dropped = [
        k
        for k in result.stats
        if k == "robotstxt/forbidden"
        or k.startswith(("robots_std/dropped", "downloader/exception"))
    ]
    assert dropped == []
    summary = summary_of(records)
    assert summary.startswith(
        "robots.txt: 1 request(s) would have been dropped (rule: 1) from 1 origin(s); "
        "dry run: nothing was dropped"
    )
    assert "top origins by would-be drops:" in summary
    assert drop_lines(result) == []
    assert ours_after_close(records) == []
    assert_no_errors(result)


# -- every closing step runs (issue 27, point 1) -----------------------------------


@deferred_f_from_coro_f
async def test_every_closing_step_runs_when_earlier_ones_fail(
    hostile: HostileServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The audit file and the queue's count fail at close (a full disk, Redis gone):
    each failure is logged once, counted, and the store is still closed, so its
    worker thread does not outlive the crawl."""
    from scrapy_robots_std.scrapy.audit import AuditLog
    from scrapy_robots_std.scrapy.waiting import SlotQueues

    def audit_fails(self: AuditLog, *args: object) -> None:
        # The file is closed first: left open, it would be garbage collected
        # during a later test, whose ResourceWarning is then an error.
        self._close()
        raise OSError(28, "No space left on device")

    def count_fails(self: object) -> tuple[int, int]:
        raise ConnectionError("Error 111 connecting to 127.0.0.1:1. Refused.")

    monkeypatch.setattr(AuditLog, "close", audit_fails)
    monkeypatch.setattr(SlotQueues, "held", count_fails)
    hostile.add_route("/robots.txt", Reply(200, {}, RULES, delay=10))
    urls = serve_pages(hostile, [f"/page/{i}" for i in range(3)])
    result = await run_crawl(
        urls,
        closing_settings(
            ROBOTS_STD_AUDIT_PATH=str(tmp_path / "audit.jsonl"),
            ROBOTS_STD_CACHE_BACKEND="scrapy_robots_std.cache.SqliteCache",
            ROBOTS_STD_CACHE_PATH=str(tmp_path / "cache.sqlite3"),
        ),
    )
    [error] = result.messages(logging.ERROR, MW_LOGGER)
    assert error == (
        "robots.txt: the audit file failed at close (OSError: [Errno 28] No space "
        "left on device); the other closing steps still run"
    )
    assert result.stats["robots_std/close/failed"] == 1
    assert result.stats["robots_std/wait/uncounted_at_close"] == 1
    assert any(
        m.startswith("The requests waiting for robots.txt in the scheduler's memory")
        and "ConnectionError: Error 111" in m
        for m in result.messages(logging.WARNING, MW_LOGGER)
    )
    # The summary and the store's close came after the failures.
    assert any(
        m.startswith("robots.txt: 0 request(s) dropped")
        for m in result.messages(logging.INFO, MW_LOGGER)
    )
    assert not [t for t in threading.enumerate() if "robots-std-store" in t.name]
