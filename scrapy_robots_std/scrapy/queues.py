"""Which scheduler queue a crawl's settings name, and this package's queues' names.

The add-on reads it to set scrapy-redis's ``SCHEDULER_QUEUE_CLASS``; the startup
report, to name the queue in use.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

from scrapy.utils.misc import load_object

if TYPE_CHECKING:
    from scrapy.settings import BaseSettings

__all__ = ["PRIORITY_QUEUE", "REDIS_QUEUE", "queue_in_use", "uses_scrapy_redis"]

#: ``SCHEDULER_PRIORITY_QUEUE`` for Scrapy's scheduler.
PRIORITY_QUEUE: Final = "scrapy_robots_std.RobotsAwarePriorityQueue"
#: ``SCHEDULER_QUEUE_CLASS`` for scrapy-redis's scheduler.
REDIS_QUEUE: Final = "scrapy_robots_std.RobotsAwareRedisQueue"
#: scrapy-redis's ``SCHEDULER_QUEUE_CLASS`` when the setting is not set.
_REDIS_DEFAULT_QUEUE: Final = "scrapy_redis.queue.PriorityQueue"


def uses_scrapy_redis(settings: BaseSettings) -> bool:
    """Whether ``SCHEDULER`` is scrapy-redis's scheduler (or a subclass of it)."""
    scheduler = settings.get("SCHEDULER")
    if isinstance(scheduler, str):
        if scheduler.startswith("scrapy_redis."):
            return True
        try:
            scheduler = load_object(scheduler)
        except (ImportError, ValueError, NameError, AttributeError):
            return False  # Scrapy says what is wrong when it builds the scheduler
    try:
        from scrapy_redis.scheduler import Scheduler
    except ImportError:
        return False
    return isinstance(scheduler, type) and issubclass(scheduler, Scheduler)


def queue_in_use(settings: BaseSettings) -> tuple[str, str]:
    """The setting that names the scheduler's queue, and that queue's class name."""
    if uses_scrapy_redis(settings):
        setting = "SCHEDULER_QUEUE_CLASS"
        value = settings.get(setting) or _REDIS_DEFAULT_QUEUE
    else:
        setting = "SCHEDULER_PRIORITY_QUEUE"
        value = settings.get(setting)
    name = value if isinstance(value, str) else getattr(value, "__name__", repr(value))
    return setting, name.rsplit(".", 1)[-1]
