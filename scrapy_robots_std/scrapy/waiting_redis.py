"""RobotsAwareRedisQueue: scrapy-redis's shared queue holds the requests that wait.

scrapy-redis replaces Scrapy's scheduler with its own, which keeps every request of
a fleet of crawler processes in one Redis sorted set and never uses
``SCHEDULER_PRIORITY_QUEUE``; :class:`~scrapy_robots_std.RobotsAwarePriorityQueue`
does not apply there. This queue class (``SCHEDULER_QUEUE_CLASS``; the add-on sets
it when ``SCHEDULER`` is scrapy-redis's) holds requests the same way
(:mod:`~scrapy_robots_std.scrapy.holding` has the algorithm), with Redis as the
store: a request pushed, or popped from the shared queue, whose origin has no fresh
verdict in this process goes into that origin's *waiting* sorted set in Redis, and
the origin's robots.txt fetch is asked for. When the verdict arrives, the origin's
waiting requests are popped before anything else.

A waiting request is therefore never only in this process's memory (but for the
moment between a pop from the shared queue and the write to the waiting set): a
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

When Redis does not answer (stopped, unreachable), no call of Scrapy's into this
queue raises (SPEC 3, "Nothing is lost silently"): a request it cannot write is kept
in this process's memory and popped first, to wait for its robots.txt in the
downloader if need be; pops take nothing from Redis until it answers again (tried
about once a second), and ``len()`` counts its requests as still there (at least
one) for ``OUTAGE_PATIENCE`` seconds, then as none, so the spider does not close on a
short outage and does not wait for ever on a long one. Requests still in memory at
close are written to Redis if it answers by then, and counted and logged as lost
otherwise.
"""

from __future__ import annotations

import logging
import time
from collections import OrderedDict, deque
from typing import TYPE_CHECKING, Any, Final

try:
    from scrapy_redis.queue import PriorityQueue
except ImportError as exc:  # pragma: no cover - depends on the environment
    raise ImportError(
        "RobotsAwareRedisQueue needs scrapy-redis: pip install scrapy-redis"
    ) from exc

from redis.exceptions import RedisError, ResponseError

from scrapy_robots_std import stats as _stats
from scrapy_robots_std.safetext import safe
from scrapy_robots_std.scrapy.holding import EXEMPT, MAX_STEPS, Holding, HoldRefused
from scrapy_robots_std.scrapy.origin import origin_of

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable

    from scrapy import Request, Spider
    from scrapy.crawler import Crawler

__all__ = ["MAX_STEPS", "RedisWaiting", "RobotsAwareRedisQueue", "WrongKeyType"]

logger = logging.getLogger("scrapy_robots_std.scrapy.middleware")


class WrongKeyType(HoldRefused):
    """A key this queue writes holds another program's value."""


#: Seconds between two looks at the fleet's waiting origins; also how long pops and
#: counts do without Redis after it failed to answer, before they try it again.
SCAN_INTERVAL: Final = 1.0
#: Seconds Redis may go without answering while the spider stays open for the
#: requests in it; past that they count as none here, so that a worker whose Redis is
#: gone for good finishes (its requests stay in Redis, for when it is back).
OUTAGE_PATIENCE: Final = 60.0
#: Origins one look reads (SSCAN's hint; the next look goes on from there).
SCAN_COUNT: Final = 500
#: Origins this process remembers as having waiting requests; past that the memory
#: is emptied and the looks at Redis find them again.
_KNOWN_MAX: Final = 100_000


#: A key that is not of the type this queue writes (another program wrote it) is
#: never read or written: the scripts check each key's TYPE first.
_TYPE_OK: Final = """
local function is(key, wanted)
    local found = redis.call('TYPE', key).ok
    return found == wanted or found == 'none'
end
"""
#: Holds a request: adds it (ARGV[2], scored ARGV[1]) to its origin's waiting set
#: (KEYS[1]) and the origin (ARGV[3]) to the waiting origins (KEYS[2]). 0, and
#: nothing written, if either key is of another type.
_HOLD: Final = (
    _TYPE_OK
    + """
if not (is(KEYS[1], 'zset') and is(KEYS[2], 'set')) then
    return 0
end
redis.call('ZADD', KEYS[1], ARGV[1], ARGV[2])
redis.call('SADD', KEYS[2], ARGV[3])
return 1
"""
)
#: Pops the first member of a waiting set (KEYS[1]); drops the origin (ARGV[1]) from
#: the set of waiting origins (KEYS[2]) once that set is empty. -1: the waiting set's
#: key is of another type (the origin is dropped from the waiting origins).
_POP_WAITING: Final = (
    _TYPE_OK
    + """
if not is(KEYS[1], 'zset') then
    if is(KEYS[2], 'set') then
        redis.call('SREM', KEYS[2], ARGV[1])
    end
    return -1
end
local first = redis.call('ZRANGE', KEYS[1], 0, 0)
if #first > 0 then
    redis.call('ZREMRANGEBYRANK', KEYS[1], 0, 0)
end
if redis.call('ZCARD', KEYS[1]) == 0 and is(KEYS[2], 'set') then
    redis.call('SREM', KEYS[2], ARGV[1])
end
if #first == 0 then
    return false
end
return first[1]
"""
)
#: {shared queue length, waiting requests, waiting origins}; the waiting sets' keys
#: are ARGV[1] followed by an origin. Keys of another type count as empty.
_COUNT: Final = (
    _TYPE_OK
    + """
local queued = 0
if is(KEYS[1], 'zset') then
    queued = redis.call('ZCARD', KEYS[1])
end
if not is(KEYS[2], 'set') then
    return {queued, 0, 0}
end
local waiting = 0
local origins = redis.call('SMEMBERS', KEYS[2])
for _, origin in ipairs(origins) do
    if is(ARGV[1] .. origin, 'zset') then
        waiting = waiting + redis.call('ZCARD', ARGV[1] .. origin)
    end
end
return {queued, waiting, #origins}
"""
)
#: Deletes the shared queue, every waiting set and the set of waiting origins.
_CLEAR: Final = (
    _TYPE_OK
    + """
if is(KEYS[2], 'set') then
    local origins = redis.call('SMEMBERS', KEYS[2])
    for _, origin in ipairs(origins) do
        redis.call('DEL', ARGV[1] .. origin)
    end
end
return redis.call('DEL', KEYS[1], KEYS[2])
"""
)


class RobotsAwareRedisQueue(PriorityQueue):  # type: ignore[misc]
    """scrapy-redis's ``PriorityQueue`` plus one waiting sorted set per origin."""

    def __init__(
        self, server: Any, spider: Spider, key: str, serializer: Any = None
    ) -> None:
        super().__init__(server, spider, key, serializer)
        self._store = RedisWaiting(self)
        self._holding = _RedisHolding(spider.crawler, self._store)

    def __len__(self) -> int:
        if self._holding.book is None:
            return int(super().__len__())
        return self._store.pending()

    def push(self, request: Request) -> None:
        try:
            self._holding.push(request)
        except RedisError as exc:
            if self._holding.book is None:
                raise  # scrapy-redis's queue and nothing more
            # Raised into Scrapy, it would stop the start requests (and lose the
            # rest of them) or fail the callback that made this request.
            self._store.keep(request, exc)

    def pop(self, timeout: int = 0) -> Request | None:
        return self._holding.pop()

    def clear(self) -> None:
        """Empty the shared queue and every waiting set (scrapy-redis's flush)."""
        self._store.clear()

    # the shared queue itself, for the store
    def _push_shared(self, request: Request) -> None:
        super().push(request)

    def _pop_shared(self) -> Request | None:
        request: Request | None = super().pop()
        return request


class _RedisHolding(Holding):
    """:class:`Holding`, which at close also accounts for the requests that Redis
    could not store."""

    def __init__(self, crawler: Crawler, store: RedisWaiting) -> None:
        super().__init__(crawler, store)
        self._redis_store = store

    def report_left(self) -> None:
        super().report_left()
        self._redis_store.report_kept()


class RedisWaiting:
    """A :class:`~scrapy_robots_std.scrapy.holding.HoldingStore` in Redis: ready
    requests in scrapy-redis's shared queue, held ones in a sorted set per origin;
    while Redis does not answer, requests it could not store in this process's
    memory."""

    left_level = logging.INFO

    def __init__(self, queue: RobotsAwareRedisQueue) -> None:
        self._queue = queue
        self._server = queue.server
        self._waiting_prefix = f"{queue.key}:robots-waiting:"
        self._origins_key = f"{queue.key}:robots-waiting-origins"
        self.left_in = f"Redis ({self._origins_key}), for the fleet"
        self._hold = self._server.register_script(_HOLD)
        self._pop_waiting = self._server.register_script(_POP_WAITING)
        self._count = self._server.register_script(_COUNT)
        self._clear = self._server.register_script(_CLEAR)
        #: origins this process saw with waiting requests (held here, or found)
        self._known: set[str] = set()
        #: known origins whose verdict arrived here: their requests go first
        self._released: OrderedDict[str, None] = OrderedDict()
        self._next_scan = 0.0
        self._scan_cursor = 0
        self._warned = False
        #: requests Redis could not store: popped before anything in Redis
        self._kept: deque[Request] = deque()
        self._kept_warned = False
        #: when Redis stopped answering (``None``: it answers), and the next try
        self._down_since: float | None = None
        self._retry_at = 0.0
        #: requests in Redis at the last count that succeeded
        self._last_count = 0

    def add(self, request: Request, origin_key: str, *, held: bool) -> None:
        if not held:
            self._queue._push_shared(request)
            return
        data = self._queue._encode_request(request)
        waiting_key = self._waiting_prefix + origin_key
        held = self._hold(
            keys=[waiting_key, self._origins_key],
            args=[-request.priority, data, origin_key],
        )
        if not held:
            raise WrongKeyType(
                f"{waiting_key} or {self._origins_key} is not of the type this "
                "queue writes (a sorted set, a set)"
            )
        self._remember(origin_key)
        self._answered()

    def release(self, origin_key: str) -> None:
        if origin_key in self._known:
            self._released[origin_key] = None

    def take(self, ready: Callable[[str], bool]) -> Request | None:
        if self._kept:
            return self._kept.popleft()
        now = time.monotonic()
        if now < self._retry_at:
            return None  # Redis failed a moment ago
        try:
            request = self._take_from_redis(ready, now)
        except RedisError as exc:
            self._failed(exc)
            return None
        self._answered()
        return request

    def _take_from_redis(
        self, ready: Callable[[str], bool], now: float
    ) -> Request | None:
        if now >= self._next_scan:
            self._next_scan = now + SCAN_INTERVAL
            self._scan(ready)
        for _ in range(MAX_STEPS):
            if not self._released:
                break
            origin_key = next(iter(self._released))
            if not ready(origin_key):
                # Expired since it arrived: the fetch is asked for again, and its
                # verdict releases the origin again.
                del self._released[origin_key]
                continue
            data = self._pop_waiting(
                keys=[self._waiting_prefix + origin_key, self._origins_key],
                args=[origin_key],
            )
            if data is None or data == -1:  # empty (popped here or by another
                # worker), or not a sorted set: nothing of this queue's is there
                if data == -1:
                    self._problem(
                        f"{self._waiting_prefix}{origin_key} is not a sorted set; "
                        "its origin is no longer looked at"
                    )
                del self._released[origin_key]
                self._known.discard(origin_key)
                continue
            try:
                request: Request = self._queue._decode_request(data)
            except Exception as exc:  # noqa: BLE001 -- an unreadable entry is a miss
                self._problem(
                    f"an entry of {self._waiting_prefix}{origin_key} cannot be read "
                    f"({type(exc).__name__}: {exc}); it is left out"
                )
                continue
            return request
        # The shared queue's request may be of any origin: Holding checks it.
        return self._queue._pop_shared()

    def held_origins(self) -> Iterable[str]:
        return ()  # the looks at Redis (_scan) find them

    def held(self) -> tuple[int, int]:
        _, waiting, origins = self.counts()
        return waiting, origins

    def counts(self) -> tuple[int, int, int]:
        """The shared queue's length, the waiting requests, the waiting origins."""
        queued, waiting, origins = self._count(
            keys=[self._queue.key, self._origins_key], args=[self._waiting_prefix]
        )
        return int(queued), int(waiting), int(origins)

    def pending(self) -> int:
        """The requests this queue has, for Scrapy's ``has_pending_requests``: the
        shared queue's and the waiting ones in Redis, and those kept in memory.
        While Redis does not answer, the count is unknown: the last one read, and
        at least one, so the spider stays open for them; none once the outage has
        lasted ``OUTAGE_PATIENCE`` s."""
        now = time.monotonic()
        if now >= self._retry_at:
            try:
                queued, waiting, _ = self.counts()
            except RedisError as exc:
                self._failed(exc)
            else:
                self._answered()
                self._last_count = queued + waiting
        in_redis = self._last_count
        if self._down_since is not None:
            patient = now - self._down_since < OUTAGE_PATIENCE
            in_redis = max(in_redis, 1) if patient else 0
        return in_redis + len(self._kept)

    def __len__(self) -> int:
        _, waiting, _ = self.counts()
        return waiting

    def clear(self) -> None:
        self._clear(
            keys=[self._queue.key, self._origins_key], args=[self._waiting_prefix]
        )
        self._known.clear()
        self._released.clear()
        self._kept.clear()

    def keep(self, request: Request, exc: RedisError) -> None:
        """Keep in memory a request Redis could not store: it is popped first, and
        waits for its robots.txt in the downloader if its origin has no verdict.
        Counted; the first is logged at WARNING (DEBUG after)."""
        self._failed(exc)
        self._kept.append(request)
        crawler = self._queue.spider.crawler
        crawler.stats.inc_value(_stats.WAIT_KEPT_IN_MEMORY)
        logger.log(
            logging.DEBUG if self._kept_warned else logging.WARNING,
            "Cannot write %(request)s to Redis (%(error)s); it is kept in this "
            "process's memory and sent on from there",
            {"request": safe(request), "error": safe(f"{type(exc).__name__}: {exc}")},
            extra={"spider": self._queue.spider},
        )
        self._kept_warned = True

    def report_kept(self) -> None:
        """At close: write the requests still kept in memory to the shared queue,
        if Redis answers now; count and log those that are lost with this process."""
        while self._kept:
            try:
                self._queue._push_shared(self._kept[0])
            except RedisError:
                break
            self._kept.popleft()
        if not self._kept:
            return
        lost = len(self._kept)
        self._kept.clear()
        self._queue.spider.crawler.stats.inc_value(_stats.WAIT_LOST_AT_CLOSE, lost)
        logger.error(
            "%(n)d request(s) that Redis could not store were still in this "
            "process's memory when the spider closed; Redis does not answer, so "
            "they are lost",
            {"n": lost},
            extra={"spider": self._queue.spider},
        )

    def _failed(self, exc: RedisError) -> None:
        """Redis did not answer (or refused a write): pops and counts do without it
        for ``SCAN_INTERVAL`` s. The start of an outage is counted and logged at
        WARNING."""
        now = time.monotonic()
        self._retry_at = now + SCAN_INTERVAL
        if self._down_since is not None:
            return
        self._down_since = now
        self._queue.spider.crawler.stats.inc_value(_stats.WAIT_STORE_UNREACHABLE)
        logger.warning(
            "Redis does not answer the queue of waiting requests (%(error)s); their "
            "requests stay there, and this worker takes none until it answers",
            {"error": safe(f"{type(exc).__name__}: {exc}")},
            extra={"spider": self._queue.spider},
        )

    def _answered(self) -> None:
        """A call to Redis succeeded: an outage, if any, is over."""
        if self._down_since is None:
            return
        seconds = time.monotonic() - self._down_since
        self._down_since = None
        logger.info(
            "Redis answers the queue of waiting requests again, after %(seconds).1f s",
            {"seconds": seconds},
            extra={"spider": self._queue.spider},
        )

    def _scan(self, ready: Callable[[str], bool]) -> None:
        """Look at (part of) the fleet's waiting origins: release those with a
        verdict here, ask for the verdict of the others (``ready`` does). Requests
        a stopped or dead worker left behind are found this way."""
        try:
            cursor, members = self._server.sscan(
                self._origins_key, self._scan_cursor, count=SCAN_COUNT
            )
        except ResponseError as exc:  # e.g. WRONGTYPE: another program's key
            self._problem(f"{self._origins_key} cannot be read ({exc})")
            return
        self._scan_cursor = int(cursor)
        for member in members:
            origin_key = member.decode() if isinstance(member, bytes) else str(member)
            if origin_key == EXEMPT or origin_of(origin_key + "/") is None:
                continue  # not an origin key: nothing here could release it
            self._remember(origin_key)
            # One fetch per origin at a time here; the claim makes it one fleet-wide.
            if ready(origin_key):
                self._released[origin_key] = None

    def _problem(self, what: str) -> None:
        """A key or an entry in Redis this queue cannot use: counted, and logged at
        WARNING the first time (DEBUG after)."""
        self._queue.spider.crawler.stats.inc_value(_stats.WAIT_STORE_PROBLEM)
        level = logging.DEBUG if self._warned else logging.WARNING
        self._warned = True
        logger.log(
            level,
            "Waiting requests in Redis: %(what)s",
            {"what": safe(what)},
            extra={"spider": self._queue.spider},
        )

    def _remember(self, origin_key: str) -> None:
        if origin_key not in self._known and len(self._known) >= _KNOWN_MAX:
            self._known.clear()
        self._known.add(origin_key)
