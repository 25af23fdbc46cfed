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

When Redis does not answer (stopped, unreachable: a ``ConnectionError`` or
``TimeoutError``), no call of Scrapy's into this queue raises (SPEC 3, "Nothing is
lost silently"). Each failed call blocks the reactor thread (for seconds with
redis-py's retries, for the socket timeout against a host that drops packets), so
during an outage the queue leaves Redis alone: a request pushed is kept in this
process's memory and popped first, to wait for its robots.txt in the downloader if
need be (a kept request popped is not held again); pops take nothing from Redis. It
is tried again after ``SCAN_INTERVAL`` s, and after twice as long each time it still
fails, up to ``RETRY_MAX`` s: a dead Redis costs at most one blocking call per wait.
``len()`` counts its requests as still there (at least one) for ``OUTAGE_PATIENCE``
seconds, then as none, so the spider does not close on a short outage and does not
wait for ever on a long one. Requests still in memory at close are written to Redis
if it answers by then, and counted and logged as lost otherwise; scrapy-redis's
flush at close (``SCHEDULER_PERSIST`` off) drops them with Redis's, counted.

A write Redis refuses while it answers (``READONLY`` after a failover, ``OOM``, a
key of another type) is no outage: that request is kept in memory the same way, and
Redis is still used for everything else. A write whose reply is lost (a timeout
after Redis stored it) is kept too, so that request may be sent twice. A pop whose
reply is lost has taken its request out of Redis already, as scrapy-redis's own pops
do: that request is lost with the reply. Short socket timeouts in ``REDIS_PARAMS``
(docs/scrapy-redis.md) make each call to a Redis that drops packets block less.
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

from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import RedisError, ResponseError
from redis.exceptions import TimeoutError as RedisTimeoutError

from scrapy_robots_std import stats as _stats
from scrapy_robots_std.safetext import safe
from scrapy_robots_std.scrapy.holding import EXEMPT, MAX_STEPS, Holding, HoldRefused
from scrapy_robots_std.scrapy.origin import origin_of

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable

    from scrapy import Request, Spider
    from scrapy.crawler import Crawler

__all__ = [
    "MAX_STEPS",
    "NotWritten",
    "RedisWaiting",
    "RobotsAwareRedisQueue",
    "WrongKeyType",
]

logger = logging.getLogger("scrapy_robots_std.scrapy.middleware")


class WrongKeyType(HoldRefused):
    """A key this queue writes holds another program's value."""


class NotWritten(Exception):
    """Redis did not take a request: it does not answer (an outage is on, and it was
    not even asked), or it refused the write. :class:`RobotsAwareRedisQueue` keeps a
    request pushed in memory; one popped goes on to the downloader."""


#: Seconds between two looks at the fleet's waiting origins; also the first wait,
#: once Redis failed to answer, before the queue calls it again.
SCAN_INTERVAL: Final = 1.0
#: The longest wait between two calls to a Redis that does not answer: each call
#: that fails doubles the wait, from ``SCAN_INTERVAL`` up to this.
RETRY_MAX: Final = 30.0
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
        if self._holding.book is None:
            super().push(request)  # scrapy-redis's queue and nothing more
            return
        try:
            self._holding.push(request)
        except NotWritten as exc:
            # Raised into Scrapy, it would stop the start requests (and lose the
            # rest of them) or fail the callback that made this request. Only the
            # store's write is caught, so nothing of it is in Redis (unless the
            # write's reply was lost: then it may be sent twice, at least once).
            self._store.keep(request, str(exc))

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
        #: requests Redis did not take: popped before anything in Redis
        self._kept = _Kept(queue.spider)
        self._health = _Health(queue.spider)
        self._shared_key_reported = False
        #: requests in Redis at the last count that succeeded
        self._last_count = 0

    def add(self, request: Request, origin_key: str, *, held: bool) -> None:
        """Write ``request`` to the shared queue, or to its origin's waiting set.
        :class:`NotWritten` if Redis does not take it; during an outage Redis is
        not asked at all."""
        if self._health.down():
            raise NotWritten(
                "Redis does not answer; tried again in "
                f"{self._health.retry_at - time.monotonic():.0f} s"
            )
        try:
            stored = self._write(request, origin_key, held=held)
        except RedisError as exc:
            self._write_failed(exc, held=held)
            raise NotWritten(_described(exc)) from exc
        self._health.answered()
        if not stored:
            raise WrongKeyType(
                f"{self._waiting_prefix}{origin_key} or {self._origins_key} is not "
                "of the type this queue writes (a sorted set, a set)"
            )
        if held:
            self._remember(origin_key)

    def _write(self, request: Request, origin_key: str, *, held: bool) -> bool:
        """The one Redis call of :meth:`add`; ``False``: a key of another type."""
        if not held:
            self._queue._push_shared(request)
            return True
        data = self._queue._encode_request(request)
        return bool(
            self._hold(
                keys=[self._waiting_prefix + origin_key, self._origins_key],
                args=[-request.priority, data, origin_key],
            )
        )

    def release(self, origin_key: str) -> None:
        if origin_key in self._known:
            self._released[origin_key] = None

    def take(self, ready: Callable[[str], bool]) -> Request | None:
        if self._kept:
            return self._kept.take()
        if self._health.down():
            return None  # Redis failed a moment ago
        try:
            request = self._take_from_redis(ready, time.monotonic())
        except RedisError as exc:
            self._read_failed(exc, "take a request")
            return None
        self._health.answered()
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
                    f"({_described(exc)}); it is left out"
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
        if not self._health.down():
            try:
                queued, waiting, _ = self.counts()
            except RedisError as exc:
                self._read_failed(exc, "count the requests")
            else:
                self._health.answered()
                self._last_count = queued + waiting
        return self._health.in_redis(self._last_count) + len(self._kept)

    def __len__(self) -> int:
        _, waiting, _ = self.counts()
        return waiting

    def clear(self) -> None:
        """scrapy-redis's flush (``SCHEDULER_PERSIST`` off, at close): the shared
        queue and every waiting set are deleted, and the requests kept in memory
        dropped with them, counted and logged. Never raises: with Redis gone the
        keys stay, and that is logged."""
        self._known.clear()
        self._released.clear()
        self._kept.drop_for_flush()
        try:
            self._clear(
                keys=[self._queue.key, self._origins_key], args=[self._waiting_prefix]
            )
        except RedisError as exc:
            logger.warning(
                "Cannot empty the queue of waiting requests in Redis at close "
                "(%(error)s); the requests in it stay there",
                {"error": safe(_described(exc))},
                extra={"spider": self._queue.spider},
            )

    def keep(self, request: Request, error: str) -> None:
        """Keep in memory a request Redis did not take (``error`` says why)."""
        self._kept.keep(request, error)

    def report_kept(self) -> None:
        """At close: the requests still kept in memory go to the shared queue if
        Redis takes them now; those it does not are counted and logged as lost."""
        self._kept.report_at_close(self._queue._push_shared)

    def _write_failed(self, exc: RedisError, *, held: bool) -> None:
        """A write Redis did not take: an outage starts, or a refused write (no
        outage: Redis answers) whose request is kept; a shared queue of another
        type is reported as the keys this queue cannot use are."""
        if _outage(exc):
            self._health.failed(exc)
            return
        self._health.answered()  # a refusal is an answer: an outage, if any, is over
        if not held and _wrong_type(exc):
            self._shared_key_problem(exc)

    def _read_failed(self, exc: RedisError, doing: str) -> None:
        """A pop or a count Redis did not do. A refused one (a script Redis will
        not run, a write of a pop on a read-only replica) is no outage; the first
        is logged at WARNING (DEBUG after), and the pop or count does without."""
        if _outage(exc):
            self._health.failed(exc)
            return
        self._health.answered()  # a refusal is an answer: an outage, if any, is over
        if _wrong_type(exc):
            self._shared_key_problem(exc)
        else:
            self._health.refused(exc, doing)

    def _shared_key_problem(self, exc: RedisError) -> None:
        """scrapy-redis's queue key holds another type: reported once (every push
        and pop would find it again)."""
        if self._shared_key_reported:
            return
        self._shared_key_reported = True
        self._problem(
            f"{self._queue.key} is not a sorted set ({exc}); requests that go "
            "there are kept in this process's memory"
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


class _Health:
    """Whether the queue's Redis answers: an outage is from the first call that
    does not get an answer (``ConnectionError``, ``TimeoutError``) to the next that
    does, and is counted and logged once, its end once. During one, Redis is called
    again only once the wait is over; each call that fails doubles the wait."""

    def __init__(self, spider: Spider) -> None:
        self._spider = spider
        #: when Redis stopped answering (``None``: it answers)
        self.down_since: float | None = None
        #: no call to Redis before then; and the wait that led there
        self.retry_at = 0.0
        self._wait = 0.0
        self._refused_warned = False

    def down(self) -> bool:
        """Whether Redis failed to answer a moment ago: it is left alone until the
        wait is over."""
        return time.monotonic() < self.retry_at

    def in_redis(self, last_count: int) -> int:
        """The requests in Redis, for ``len()``: the last count read; during an
        outage at least one, or none once it has lasted ``OUTAGE_PATIENCE`` s."""
        if self.down_since is None:
            return last_count
        patient = time.monotonic() - self.down_since < OUTAGE_PATIENCE
        return max(last_count, 1) if patient else 0

    def failed(self, exc: RedisError) -> None:
        """Redis did not answer: nothing calls it for ``SCAN_INTERVAL`` s, then
        for twice as long after each call that fails, up to ``RETRY_MAX`` s."""
        now = time.monotonic()
        if self.down_since is not None:
            self._wait = min(self._wait * 2, RETRY_MAX)
            self.retry_at = now + self._wait
            # A try at the end of the patience at the latest: an outage shorter
            # than it must not let an idle spider close (len() counts on the try).
            deadline = self.down_since + OUTAGE_PATIENCE
            if now < deadline:
                self.retry_at = min(self.retry_at, deadline)
            return
        self._wait = SCAN_INTERVAL
        self.retry_at = now + self._wait
        self.down_since = now
        self._spider.crawler.stats.inc_value(_stats.WAIT_STORE_UNREACHABLE)
        logger.warning(
            "Redis does not answer the queue of waiting requests (%(error)s); their "
            "requests stay there, and this worker takes none until it answers",
            {"error": safe(_described(exc))},
            extra={"spider": self._spider},
        )

    def answered(self) -> None:
        """A call to Redis succeeded: an outage, if any, is over."""
        if self.down_since is None:
            return
        seconds = time.monotonic() - self.down_since
        self.down_since = None
        self.retry_at = 0.0
        logger.info(
            "Redis answers the queue of waiting requests again, after %(seconds).1f s",
            {"seconds": seconds},
            extra={"spider": self._spider},
        )

    def refused(self, exc: RedisError, doing: str) -> None:
        """Redis answered with an error (a write of a pop on a read-only replica,
        a script it will not run): no outage. The first is logged at WARNING
        (DEBUG after); the pop or count does without."""
        logger.log(
            logging.DEBUG if self._refused_warned else logging.WARNING,
            "Redis answers but refuses to %(doing)s for the queue of waiting "
            "requests (%(error)s); its requests stay there",
            {"doing": doing, "error": safe(_described(exc))},
            extra={"spider": self._spider},
        )
        self._refused_warned = True


class _Kept:
    """Requests Redis did not take, in this process's memory: popped before
    anything in Redis, and sent on from there. Not durable (SPEC 3: nothing is lost
    silently): counted when kept, and when lost or dropped at close."""

    def __init__(self, spider: Spider) -> None:
        self._spider = spider
        self._requests: deque[Request] = deque()
        self._warned = False

    def __len__(self) -> int:
        return len(self._requests)

    def take(self) -> Request:
        return self._requests.popleft()

    def keep(self, request: Request, error: str) -> None:
        """Keep a request Redis did not take (``error`` says why): it waits for its
        robots.txt in the downloader if its origin has no verdict. Counted; the
        first is logged at WARNING (DEBUG after)."""
        self._requests.append(request)
        self._spider.crawler.stats.inc_value(_stats.WAIT_KEPT_IN_MEMORY)
        logger.log(
            logging.DEBUG if self._warned else logging.WARNING,
            "Cannot write %(request)s to Redis (%(error)s); it is kept in this "
            "process's memory and sent on from there",
            {"request": safe(request), "error": safe(error)},
            extra={"spider": self._spider},
        )
        self._warned = True

    def report_at_close(self, push: Callable[[Request], None]) -> None:
        """Write the requests still here to the shared queue (``push``) if Redis
        takes them now; count and log those that are lost with this process. One
        try: at close there is no later."""
        error = ""
        while self._requests:
            try:
                push(self._requests[0])
            except RedisError as exc:
                error = _described(exc)
                break
            self._requests.popleft()
        if not self._requests:
            return
        lost = len(self._requests)
        self._requests.clear()
        self._spider.crawler.stats.inc_value(_stats.WAIT_LOST_AT_CLOSE, lost)
        logger.error(
            "%(n)d request(s) that Redis could not store were still in this "
            "process's memory when the spider closed; Redis does not take them "
            "(%(error)s), so they are lost",
            {"n": lost, "error": safe(error)},
            extra={"spider": self._spider},
        )

    def drop_for_flush(self) -> None:
        """scrapy-redis's flush at close deletes the queue's requests in Redis, as
        its settings ask; those here go with them. They were never sent, so they
        are counted and logged (``robots_std/wait/dropped_by_flush``)."""
        dropped = len(self._requests)
        self._requests.clear()
        if not dropped:
            return
        self._spider.crawler.stats.inc_value(_stats.WAIT_DROPPED_BY_FLUSH, dropped)
        logger.warning(
            "%(n)d request(s) that Redis could not store were dropped from this "
            "process's memory with the rest of the queue (scrapy-redis flushes it "
            "at close: SCHEDULER_PERSIST is off)",
            {"n": dropped},
            extra={"spider": self._spider},
        )


def _described(exc: Exception) -> str:
    """An error for a log line or a message: its type and its text."""
    return f"{type(exc).__name__}: {exc}"


def _outage(exc: RedisError) -> bool:
    """Whether ``exc`` says Redis does not answer (rather than refusing a
    command): only those errors start an outage."""
    return isinstance(exc, (RedisConnectionError, RedisTimeoutError))


def _wrong_type(exc: RedisError) -> bool:
    return isinstance(exc, ResponseError) and "WRONGTYPE" in str(exc)
