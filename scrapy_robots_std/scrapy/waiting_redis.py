"""RobotsAwareRedisQueue: scrapy-redis's shared queue holds the requests that wait.

scrapy-redis replaces Scrapy's scheduler with its own, which keeps every request of
a fleet of crawler processes in one Redis sorted set and never uses
``SCHEDULER_PRIORITY_QUEUE``; :class:`~scrapy_robots_std.RobotsAwarePriorityQueue`
does not apply there. This queue class (``SCHEDULER_QUEUE_CLASS``) does the same
with Redis as the holder: a request popped from the shared queue whose origin has
no fresh verdict in this process moves to that origin's *waiting* sorted set in
Redis, and the origin's robots.txt fetch starts. When the verdict arrives, the
origin's waiting requests are popped before anything else.

A waiting request is therefore never only in this process's memory (but for the
moment between the pop from the shared queue and the write to the waiting set): a
worker that stops, or dies, leaves it in Redis. Every second or so each worker looks
at the origins that have waiting requests and asks for their verdicts; the fleet's
claim (``RedisCache``) lets one worker fetch an origin while the others wait for the
verdict it stores, so the requests a stopped worker left are taken over by another.

Settings for a fleet::

    ROBOTSTXT_OBEY = True
    ADDONS = {"scrapy_robots_std.Addon": 0}
    SCHEDULER = "scrapy_redis.scheduler.Scheduler"
    DUPEFILTER_CLASS = "scrapy_redis.dupefilter.RFPDupeFilter"
    SCHEDULER_QUEUE_CLASS = "scrapy_robots_std.RobotsAwareRedisQueue"
    # Without it a worker that closes flushes the queue the whole fleet shares,
    # waiting requests included.
    SCHEDULER_PERSIST = True
    ROBOTS_STD_CACHE_BACKEND = "scrapy_robots_std.cache.RedisCache"
    REDIS_URL = "redis://localhost:6379"

Keys, next to scrapy-redis's queue key ``<key>`` (``<spider>:requests``):

* ``<key>:robots-waiting:<origin>``: a sorted set of one origin's waiting requests,
  scored like the shared queue (``-priority``);
* ``<key>:robots-waiting-origins``: the set of origins that have waiting requests.

Like scrapy-redis's own queues, this one talks to Redis synchronously, on the
reactor thread. Without the middleware (``ROBOTSTXT_OBEY`` off) it is scrapy-redis's
``PriorityQueue`` and nothing more.
"""

from __future__ import annotations

import logging
import time
from collections import OrderedDict
from typing import TYPE_CHECKING, Any, Final

try:
    from scrapy_redis.queue import PriorityQueue
except ImportError as exc:  # pragma: no cover - depends on the environment
    raise ImportError(
        "RobotsAwareRedisQueue needs scrapy-redis: pip install scrapy-redis"
    ) from exc

from scrapy_robots_std import stats as _stats
from scrapy_robots_std.scrapy.origin import origin_of
from scrapy_robots_std.scrapy.verdicts import book_for
from scrapy_robots_std.scrapy.waiting import WAITED_META

if TYPE_CHECKING:
    from scrapy import Request, Spider

    from scrapy_robots_std.scrapy.origin import Origin
    from scrapy_robots_std.scrapy.verdicts import VerdictBook

__all__ = ["RobotsAwareRedisQueue"]

logger = logging.getLogger("scrapy_robots_std.scrapy.middleware")

#: Requests one ``pop()`` may move to waiting sets, or try to take from them,
#: before it returns ``None`` (and has the engine ask again on its next turn).
MAX_STEPS: Final = 100
#: Seconds between two looks at the fleet's waiting origins.
SCAN_INTERVAL: Final = 1.0
#: Origins one look reads (SSCAN's hint; the next look goes on from there).
SCAN_COUNT: Final = 500
#: Origins this process remembers as having waiting requests; past that the memory
#: is emptied and the looks at Redis find them again.
_KNOWN_MAX: Final = 100_000


#: Pops the first member of a waiting set (KEYS[1]); drops the origin (ARGV[1]) from
#: the set of waiting origins (KEYS[2]) once that set is empty.
_POP_WAITING: Final = """
local first = redis.call('ZRANGE', KEYS[1], 0, 0)
if #first > 0 then
    redis.call('ZREMRANGEBYRANK', KEYS[1], 0, 0)
end
if redis.call('ZCARD', KEYS[1]) == 0 then
    redis.call('SREM', KEYS[2], ARGV[1])
end
if #first == 0 then
    return false
end
return first[1]
"""
#: {shared queue length, waiting requests, waiting origins}; the waiting sets' keys
#: are ARGV[1] followed by an origin.
_COUNT: Final = """
local waiting = 0
local origins = redis.call('SMEMBERS', KEYS[2])
for _, origin in ipairs(origins) do
    waiting = waiting + redis.call('ZCARD', ARGV[1] .. origin)
end
return {redis.call('ZCARD', KEYS[1]), waiting, #origins}
"""
#: Deletes the shared queue, every waiting set and the set of waiting origins.
_CLEAR: Final = """
local origins = redis.call('SMEMBERS', KEYS[2])
for _, origin in ipairs(origins) do
    redis.call('DEL', ARGV[1] .. origin)
end
return redis.call('DEL', KEYS[1], KEYS[2])
"""


class RobotsAwareRedisQueue(PriorityQueue):  # type: ignore[misc]
    """scrapy-redis's ``PriorityQueue`` plus one waiting sorted set per origin."""

    def __init__(
        self, server: Any, spider: Spider, key: str, serializer: Any = None
    ) -> None:
        super().__init__(server, spider, key, serializer)
        self._waiting_prefix = f"{self.key}:robots-waiting:"
        self._origins_key = f"{self.key}:robots-waiting-origins"
        self._pop_waiting = server.register_script(_POP_WAITING)
        self._count = server.register_script(_COUNT)
        self._clear = server.register_script(_CLEAR)
        self._crawler = spider.crawler
        #: origins this process saw with waiting requests (held here, or found)
        self._known: set[str] = set()
        #: known origins whose verdict arrived here: their requests go first
        self._released: OrderedDict[str, None] = OrderedDict()
        self._next_scan = 0.0
        self._scan_cursor = 0
        self._book: VerdictBook | None = book_for(self._crawler)
        if self._book is not None:
            self._book.attach(self)

    # -- the WaitingQueue protocol (verdicts.py) ---------------------------------------

    def verdict_arrived(self, origin_key: str) -> None:
        if origin_key in self._known:
            self._released[origin_key] = None

    def report_left(self) -> None:
        """Log the requests still waiting in Redis (the spider is closing); they
        stay there for the other workers, or this one's next run."""
        _, waiting, origins = self._counts()
        mine = len(self._known)
        if waiting:
            self._crawler.stats.set_value(_stats.WAIT_LEFT_AT_CLOSE, waiting)
            logger.info(
                "%(n)d request(s) of %(origins)d origin(s) are waiting for robots.txt "
                "in Redis (%(key)s) as this spider closes (%(mine)d of those origins "
                "were waiting here); they stay there for the fleet",
                {
                    "n": waiting,
                    "origins": origins,
                    "key": self._origins_key,
                    "mine": mine,
                },
                extra={"spider": self.spider},
            )

    # -- the queue interface (scrapy-redis) --------------------------------------------

    def __len__(self) -> int:
        if self._book is None:
            return int(super().__len__())
        queued, waiting, _ = self._counts()
        return queued + waiting

    def pop(self, timeout: int = 0) -> Request | None:
        book = self._book
        if book is None:
            request: Request | None = super().pop(timeout)
            return request
        steps = [0]
        now = time.monotonic()
        if now >= self._next_scan:
            self._next_scan = now + SCAN_INTERVAL
            self._scan(book)
        request = self._pop_released(book, steps)
        while request is None:
            if steps[0] >= MAX_STEPS:
                book.wake_engine()
                return None
            request = super().pop(timeout)
            if request is None:
                return None
            steps[0] += 1
            origin = book.pending_origin(request)
            if origin is not None:
                self._hold(book, origin, request)
                request = self._pop_released(book, steps)
        return request

    def clear(self) -> None:
        """Empty the shared queue and every waiting set (scrapy-redis's flush)."""
        self._clear(keys=[self.key, self._origins_key], args=[self._waiting_prefix])
        self._known.clear()
        self._released.clear()

    # -- waiting sets ------------------------------------------------------------------

    def _hold(self, book: VerdictBook, origin: Origin, request: Request) -> None:
        """Move ``request`` into its origin's waiting set and start the fetch."""
        request.meta.setdefault(WAITED_META, time.time())
        data = self._encode_request(request)
        pipe = self.server.pipeline(transaction=True)
        pipe.execute_command(
            "ZADD", self._waiting_prefix + origin.key, -request.priority, data
        )
        pipe.sadd(self._origins_key, origin.key)
        pipe.execute()
        self._remember(origin.key)
        self._crawler.stats.inc_value(_stats.WAIT_HELD)
        if book.may_fetch():
            # May decide at once (the HTTP cache, the store): then verdict_arrived ran.
            book.need(origin, request)
        # Else the downloader is full: a later look (_scan) starts the fetch.

    def _pop_released(self, book: VerdictBook, steps: list[int]) -> Request | None:
        """A waiting request of an origin whose verdict this process has."""
        while self._released and steps[0] < MAX_STEPS:
            steps[0] += 1
            origin_key = next(iter(self._released))
            if book.fresh(origin_key, waited=True) is None:
                # Expired since it arrived: fetch again; that releases them again.
                del self._released[origin_key]
                origin = origin_of(origin_key + "/")
                if origin is not None and book.may_fetch():
                    book.need(origin, None)
                continue
            data = self._pop_waiting(
                keys=[self._waiting_prefix + origin_key, self._origins_key],
                args=[origin_key],
            )
            if data is None:  # empty: popped here or by another worker
                del self._released[origin_key]
                self._known.discard(origin_key)
                continue
            request: Request = self._decode_request(data)
            return request
        return None

    def _scan(self, book: VerdictBook) -> None:
        """Look at (part of) the fleet's waiting origins: release those with a
        verdict here, ask for the verdict of the others. Requests a stopped or dead
        worker left behind are found this way."""
        cursor, members = self.server.sscan(
            self._origins_key, self._scan_cursor, count=SCAN_COUNT
        )
        self._scan_cursor = int(cursor)
        for member in members:
            origin_key = member.decode() if isinstance(member, bytes) else str(member)
            self._remember(origin_key)
            if book.fresh(origin_key, waited=True) is not None:
                self._released[origin_key] = None
                continue
            origin = origin_of(origin_key + "/")
            if origin is None:  # not an origin key: nothing here could release it
                continue
            # One fetch per origin at a time here; the claim makes it one fleet-wide.
            # Only while the downloader has room: the next look tries again.
            if book.may_fetch():
                book.need(origin, None)

    def _remember(self, origin_key: str) -> None:
        if origin_key not in self._known and len(self._known) >= _KNOWN_MAX:
            self._known.clear()
        self._known.add(origin_key)

    def _counts(self) -> tuple[int, int, int]:
        queued, waiting, origins = self._count(
            keys=[self.key, self._origins_key], args=[self._waiting_prefix]
        )
        return int(queued), int(waiting), int(origins)
