"""``ADDONS = {"scrapy_robots_std.Addon": 0}``: one line to switch robots.txt layers."""

from __future__ import annotations

from typing import TYPE_CHECKING

from scrapy.downloadermiddlewares.robotstxt import RobotsTxtMiddleware

from scrapy_robots_std.scrapy.middleware import RobotsTxtStdMiddleware
from scrapy_robots_std.scrapy.page import (
    SPIDER_MIDDLEWARE_PRIORITY,
    PageDirectivesMiddleware,
)
from scrapy_robots_std.scrapy.queues import REDIS_QUEUE, uses_scrapy_redis
from scrapy_robots_std.scrapy.waiting import RobotsAwarePriorityQueue

if TYPE_CHECKING:
    from scrapy.settings import BaseSettings

__all__ = ["MIDDLEWARE_PRIORITY", "Addon"]

#: The built-in RobotsTxtMiddleware's slot in DOWNLOADER_MIDDLEWARES_BASE.
MIDDLEWARE_PRIORITY = 100


class Addon:
    """Puts :class:`RobotsTxtStdMiddleware` in the built-in's slot and removes the built-in.

    It also makes :class:`RobotsAwarePriorityQueue` the scheduler's priority queue,
    so requests that wait for robots.txt wait in the scheduler, and, when
    ``SCHEDULER`` is scrapy-redis's, ``RobotsAwareRedisQueue`` its
    ``SCHEDULER_QUEUE_CLASS``. Both at the add-on's priority: a queue in the
    project's settings wins.

    It also enables ``PageDirectivesMiddleware`` (a spider middleware that
    runs only with ``ROBOTS_STD_PAGE_DIRECTIVES = "obey"``).

    ``ROBOTSTXT_OBEY`` stays the one on/off switch: with it off, the middleware
    raises ``NotConfigured`` and nothing obeys robots.txt, as with the built-in.
    """

    def update_settings(self, settings: BaseSettings) -> None:
        """Swap the middlewares and set the scheduler's priority queue."""
        settings.set_in_component_priority_dict(
            "DOWNLOADER_MIDDLEWARES", RobotsTxtMiddleware, None
        )
        settings.setdefault_in_component_priority_dict(
            "DOWNLOADER_MIDDLEWARES", RobotsTxtStdMiddleware, MIDDLEWARE_PRIORITY
        )
        settings.setdefault_in_component_priority_dict(
            "SPIDER_MIDDLEWARES", PageDirectivesMiddleware, SPIDER_MIDDLEWARE_PRIORITY
        )
        settings.set("SCHEDULER_PRIORITY_QUEUE", RobotsAwarePriorityQueue, "addon")
        if uses_scrapy_redis(settings):
            settings.set("SCHEDULER_QUEUE_CLASS", REDIS_QUEUE, "addon")
