"""The add-on (STYLE 11): tested as a settings difference against a baseline crawler.

``ADDONS = {"scrapy_robots_std.Addon": 0}`` must change exactly three settings:
``DOWNLOADER_MIDDLEWARES`` (the built-in ``RobotsTxtMiddleware`` out, ours in its
slot, 100), ``SCHEDULER_PRIORITY_QUEUE`` (requests waiting for robots.txt wait in
the scheduler) and ``SPIDER_MIDDLEWARES`` (``PageDirectivesMiddleware``, which runs
only when page directives are obeyed), with ``ROBOTSTXT_OBEY`` still the only
on/off switch.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest
from scrapy.core.downloader.middleware import DownloaderMiddlewareManager
from scrapy.downloadermiddlewares.robotstxt import RobotsTxtMiddleware
from scrapy.utils.misc import load_object
from scrapy.utils.test import get_crawler
from scrapy_redis.scheduler import Scheduler as RedisScheduler

from scrapy_robots_std import Addon as PublicAddon
from scrapy_robots_std.scrapy.addon import MIDDLEWARE_PRIORITY, Addon
from scrapy_robots_std.scrapy.middleware import RobotsTxtStdMiddleware
from scrapy_robots_std.scrapy.waiting import RobotsAwarePriorityQueue

if TYPE_CHECKING:
    from scrapy.crawler import Crawler

ADDON = {"ADDONS": {"scrapy_robots_std.Addon": 0}}
BUILTIN_PATH = "scrapy.downloadermiddlewares.robotstxt.RobotsTxtMiddleware"
MANUAL = {
    "DOWNLOADER_MIDDLEWARES": {
        "scrapy_robots_std.RobotsTxtStdMiddleware": 100,
        BUILTIN_PATH: None,
    },
    "SCHEDULER_PRIORITY_QUEUE": "scrapy_robots_std.RobotsAwarePriorityQueue",
}


def _components(
    crawler: Crawler, name: str = "DOWNLOADER_MIDDLEWARES"
) -> dict[Any, int | None]:
    """The component priority dict with every key loaded as a class."""
    return {
        load_object(key) if isinstance(key, str) else key: value
        for key, value in crawler.settings.getdict(name).items()
    }


def _built(crawler: Crawler) -> list[type]:
    """The downloader middleware classes Scrapy actually builds, in order."""
    manager = DownloaderMiddlewareManager.from_crawler(crawler)
    return [type(mw) for mw in manager.middlewares]


def _changed_settings(crawler: Crawler, baseline: Crawler) -> dict[str, Any]:
    new = crawler.settings.copy_to_dict()
    old = baseline.settings.copy_to_dict()
    return {
        name: new.get(name)
        for name in set(new) | set(old)
        if new.get(name) != old.get(name)
    }


def test_addon_is_exported_at_the_top_level() -> None:
    assert PublicAddon is Addon
    assert load_object("scrapy_robots_std.Addon") is Addon


@pytest.mark.parametrize("obey", [True, False])
def test_addon_changes_only_the_middlewares_and_the_priority_queue(obey: bool) -> None:
    baseline = get_crawler(settings_dict={"ROBOTSTXT_OBEY": obey})
    crawler = get_crawler(settings_dict={"ROBOTSTXT_OBEY": obey, **ADDON})
    changed = _changed_settings(crawler, baseline)
    assert set(changed) == {
        "ADDONS",
        "DOWNLOADER_MIDDLEWARES",
        "SCHEDULER_PRIORITY_QUEUE",
        "SPIDER_MIDDLEWARES",
    }
    assert (
        load_object(crawler.settings["SCHEDULER_PRIORITY_QUEUE"])
        is RobotsAwarePriorityQueue
    )
    assert _components(crawler) == {
        RobotsTxtStdMiddleware: MIDDLEWARE_PRIORITY,
        RobotsTxtMiddleware: None,
    }


def test_addon_takes_the_builtin_slot() -> None:
    crawler = get_crawler()
    base = _components(crawler, "DOWNLOADER_MIDDLEWARES_BASE")
    assert base[RobotsTxtMiddleware] == MIDDLEWARE_PRIORITY == 100


def test_addon_with_robotstxt_obey_builds_ours_instead_of_the_builtin() -> None:
    baseline = _built(get_crawler(settings_dict={"ROBOTSTXT_OBEY": True}))
    built = _built(get_crawler(settings_dict={"ROBOTSTXT_OBEY": True, **ADDON}))
    assert RobotsTxtMiddleware in baseline
    assert RobotsTxtMiddleware not in built
    assert built.count(RobotsTxtStdMiddleware) == 1
    # same position in the chain, everything else unchanged
    index = baseline.index(RobotsTxtMiddleware)
    assert built.index(RobotsTxtStdMiddleware) == index
    assert built[:index] + built[index + 1 :] == [
        mw for mw in baseline if mw is not RobotsTxtMiddleware
    ]


@pytest.mark.parametrize("obey", [False, None])
def test_addon_without_robotstxt_obey_builds_neither(obey: bool | None) -> None:
    settings: dict[str, Any] = dict(ADDON)
    if obey is not None:
        settings["ROBOTSTXT_OBEY"] = obey
    built = _built(get_crawler(settings_dict=settings))
    assert RobotsTxtStdMiddleware not in built
    assert RobotsTxtMiddleware not in built
    assert built == _built(get_crawler(settings_dict={"ROBOTSTXT_OBEY": False}))


@pytest.mark.parametrize(
    "key",
    [
        RobotsTxtStdMiddleware,
        "scrapy_robots_std.RobotsTxtStdMiddleware",
        "scrapy_robots_std.scrapy.middleware.RobotsTxtStdMiddleware",
    ],
)
@pytest.mark.parametrize("priority", [543, None])
def test_addon_keeps_a_user_priority_for_ours(
    key: object, priority: int | None
) -> None:
    crawler = get_crawler(
        settings_dict={
            "ROBOTSTXT_OBEY": True,
            "DOWNLOADER_MIDDLEWARES": {key: priority},
            **ADDON,
        }
    )
    components = _components(crawler)
    assert components[RobotsTxtStdMiddleware] == priority
    assert components[RobotsTxtMiddleware] is None
    assert list(crawler.settings.getdict("DOWNLOADER_MIDDLEWARES")) == [
        key,
        RobotsTxtMiddleware,
    ]
    built = _built(crawler)
    assert RobotsTxtMiddleware not in built
    assert (RobotsTxtStdMiddleware in built) is (priority is not None)


@pytest.mark.parametrize("builtin_key", [RobotsTxtMiddleware, BUILTIN_PATH])
def test_addon_disables_the_builtin_even_when_the_user_lists_it(
    builtin_key: object,
) -> None:
    crawler = get_crawler(
        settings_dict={
            "ROBOTSTXT_OBEY": True,
            "DOWNLOADER_MIDDLEWARES": {builtin_key: 100},
            **ADDON,
        }
    )
    assert _components(crawler)[RobotsTxtMiddleware] is None
    built = _built(crawler)
    assert RobotsTxtMiddleware not in built
    assert RobotsTxtStdMiddleware in built


def test_addon_keeps_other_user_middlewares() -> None:
    other = "scrapy.downloadermiddlewares.stats.DownloaderStats"
    crawler = get_crawler(
        settings_dict={"DOWNLOADER_MIDDLEWARES": {other: 951}, **ADDON}
    )
    assert crawler.settings.getdict("DOWNLOADER_MIDDLEWARES")[other] == 951


def test_manual_form_builds_the_same_chain_as_the_addon() -> None:
    addon = get_crawler(settings_dict={"ROBOTSTXT_OBEY": True, **ADDON})
    manual = get_crawler(settings_dict={"ROBOTSTXT_OBEY": True, **MANUAL})
    assert _components(manual) == _components(addon)
    assert _built(manual) == _built(addon)
    assert load_object(manual.settings["SCHEDULER_PRIORITY_QUEUE"]) is load_object(
        addon.settings["SCHEDULER_PRIORITY_QUEUE"]
    )
    assert RobotsTxtStdMiddleware in _built(manual)


def test_manual_form_without_robotstxt_obey_builds_neither() -> None:
    built = _built(get_crawler(settings_dict={"ROBOTSTXT_OBEY": False, **MANUAL}))
    assert RobotsTxtStdMiddleware not in built
    assert RobotsTxtMiddleware not in built


def test_a_priority_queue_in_the_project_settings_wins() -> None:
    chosen = "scrapy.pqueues.DownloaderAwarePriorityQueue"
    crawler = get_crawler(settings_dict={"SCHEDULER_PRIORITY_QUEUE": chosen, **ADDON})
    assert crawler.settings["SCHEDULER_PRIORITY_QUEUE"] == chosen


REDIS_SCHEDULER = "scrapy_redis.scheduler.Scheduler"


class RedisSchedulerSubclass(RedisScheduler):  # type: ignore[misc]
    """A project's own scheduler built on scrapy-redis's."""


def test_addon_sets_the_redis_queue_class_for_scrapy_redis() -> None:
    baseline = get_crawler(settings_dict={"SCHEDULER": REDIS_SCHEDULER})
    crawler = get_crawler(settings_dict={"SCHEDULER": REDIS_SCHEDULER, **ADDON})
    changed = _changed_settings(crawler, baseline)
    assert changed["SCHEDULER_QUEUE_CLASS"] == "scrapy_robots_std.RobotsAwareRedisQueue"
    assert set(changed) == {
        "ADDONS",
        "DOWNLOADER_MIDDLEWARES",
        "SCHEDULER_PRIORITY_QUEUE",
        "SCHEDULER_QUEUE_CLASS",
        "SPIDER_MIDDLEWARES",
    }


def test_addon_sets_it_for_a_subclass_of_the_scrapy_redis_scheduler() -> None:
    crawler = get_crawler(
        settings_dict={"SCHEDULER": f"{__name__}.RedisSchedulerSubclass", **ADDON}
    )
    assert crawler.settings["SCHEDULER_QUEUE_CLASS"] == (
        "scrapy_robots_std.RobotsAwareRedisQueue"
    )


def test_a_queue_class_of_the_project_wins() -> None:
    crawler = get_crawler(
        settings_dict={
            "SCHEDULER": REDIS_SCHEDULER,
            "SCHEDULER_QUEUE_CLASS": "scrapy_redis.queue.FifoQueue",
            **ADDON,
        }
    )
    assert crawler.settings["SCHEDULER_QUEUE_CLASS"] == "scrapy_redis.queue.FifoQueue"


def test_without_scrapy_redis_the_queue_class_is_not_set() -> None:
    crawler = get_crawler(settings_dict=ADDON)
    assert crawler.settings.get("SCHEDULER_QUEUE_CLASS") is None
