"""Pure parts of the fetch cycle (scrapy_robots_std.scrapy.fetcher)."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any, cast

from scrapy import Spider
from scrapy.utils.test import get_crawler
from twisted.internet.defer import Deferred

from scrapy_robots_std.scrapy.fetcher import Fetcher
from scrapy_robots_std.scrapy.settle import stale_detail


class _Spider(Spider):
    name = "s"


def _fetcher(*, crawling: bool) -> tuple[Fetcher, Any]:
    """A Fetcher whose crawler has a stand-in engine: ``running`` and the slot's
    ``closing`` are all ``stopping()`` reads of it."""
    crawler = get_crawler(_Spider)
    crawler.crawling = crawling
    fetcher = Fetcher(crawler, cast("Any", None), cast("Any", None), cast("Any", None))
    engine = SimpleNamespace(running=False, _slot=None)
    crawler.engine = cast("Any", engine)
    return fetcher, (crawler, engine)


def test_a_stale_copy_detail_keeps_only_the_latest_failure() -> None:
    detail = "HTTP 200"
    for n in range(50):
        detail = stale_detail(detail, f"unreachable (HTTP 503, try {n})")
    assert detail == "HTTP 200 (stale copy; now unreachable (HTTP 503, try 49))"


def test_a_stale_copy_detail_of_a_first_failure() -> None:
    assert stale_detail("HTTP 200", "unreachable (timeout)") == (
        "HTTP 200 (stale copy; now unreachable (timeout))"
    )


# -- Fetcher.stopping(): only a stop counts (SPEC 3, "Every Scrapy tool works") -------


def test_an_engine_opened_but_not_crawling_is_not_stopping() -> None:
    """scrapy shell: the engine runs, the spider is open, the crawler never crawls."""
    fetcher, (_, engine) = _fetcher(crawling=False)
    assert not fetcher.stopping()  # not started yet
    engine._slot = SimpleNamespace(closing=None)
    engine.running = True
    for _ in range(3):
        assert not fetcher.stopping()


def test_a_crawl_not_started_yet_is_not_stopping() -> None:
    """Between open_spider and start: crawling, the engine not running yet."""
    fetcher, (_, engine) = _fetcher(crawling=True)
    engine._slot = SimpleNamespace(closing=None)
    assert not fetcher.stopping()


def test_no_engine_yet_is_not_stopping() -> None:
    crawler = get_crawler(_Spider)
    fetcher = Fetcher(crawler, cast("Any", None), cast("Any", None), cast("Any", None))
    assert not fetcher.stopping()


def test_the_spider_closing_is_stopping() -> None:
    """close_spider_async (CLOSESPIDER_*, the idle finish, every stop) sets the
    slot's Deferred while the engine still runs; spider_closed sets our flag."""
    fetcher, (_, engine) = _fetcher(crawling=True)
    engine.running = True
    engine._slot = SimpleNamespace(closing=None)
    assert not fetcher.stopping()
    engine._slot.closing = Deferred()
    assert fetcher.stopping()
    engine._slot = None  # the spider has closed
    fetcher.closing = True
    assert fetcher.stopping()


def test_a_crawler_that_crawled_and_stopped_is_stopping() -> None:
    """Crawler.stop_async (SIGINT) clears crawling first, the engine still running."""
    fetcher, (crawler, engine) = _fetcher(crawling=True)
    engine.running = True
    engine._slot = SimpleNamespace(closing=None)
    assert not fetcher.stopping()
    crawler.crawling = False
    assert fetcher.stopping()


def test_an_engine_that_ran_and_stopped_is_stopping() -> None:
    """ExecutionEngine.stop_async called directly: running goes False."""
    fetcher, (_, engine) = _fetcher(crawling=False)
    engine.running = True
    engine._slot = SimpleNamespace(closing=None)
    assert not fetcher.stopping()
    engine.running = False
    assert fetcher.stopping()
