"""VerdictBook: each origin's verdict in this process, and the fetches in flight.

The book is what the middleware and the scheduler's queue ask, per request, from
memory only: does this request's origin have a fresh verdict? When it does not,
:meth:`VerdictBook.need` starts the origin's fetch cycle (one per origin at a time),
or, when ``ROBOTS_STD_FETCH_CONCURRENCY`` cycles are in flight already, lines the
origin up for the next free place. When a cycle ends, the verdict goes into memory,
the listeners (the queues holding that origin's requests) are told, and the engine
is woken to pop them.

A cycle may end before ``need`` returns: Twisted's default reactor runs a coroutine
synchronously until it waits, and the HTTP cache answers robots.txt without waiting.
Nothing here relies on the cycle still running after ``need``.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final, Protocol

from scrapy.http import Request
from scrapy.utils.asyncio import call_later
from scrapy.utils.defer import deferred_from_coro, maybe_deferred_to_future
from scrapy.utils.httpobj import urlparse_cached
from twisted.internet.defer import Deferred

from scrapy_robots_std.policy import FetchReason
from scrapy_robots_std.safetext import safe
from scrapy_robots_std.scrapy.download import FETCH_META
from scrapy_robots_std.scrapy.origin import Origin, origin_of
from scrapy_robots_std.scrapy.settle import Fetched, unreachable_entry

if TYPE_CHECKING:
    from collections.abc import Callable, Coroutine

    from scrapy.crawler import Crawler

    from scrapy_robots_std.cache.base import CacheEntry
    from scrapy_robots_std.scrapy.fetcher import Fetcher
    from scrapy_robots_std.scrapy.store import Store
    from scrapy_robots_std.scrapy.tdmfile import TdmFiles

__all__ = ["WAITED_META", "VerdictBook", "WaitingQueue"]

logger = logging.getLogger("scrapy_robots_std.scrapy.middleware")

#: URL prefixes (_memo_key) whose origin is remembered; the memo is emptied when full.
_ORIGIN_MEMO_SIZE: Final = 4096
#: Longer memo keys are not remembered (a host name alone is at most 253 characters).
_MEMO_KEY_MAX: Final = 512
#: Seconds a verdict just decided stands for the requests that waited for it, even
#: when its TTL is shorter (0 included): otherwise they would wait for ever.
_GRACE: Final = 2.0

#: Set on a request when it starts waiting in a scheduler queue: the ``time.time()``
#: it began (the middleware counts the wait).
WAITED_META: Final = "_robots_std_waiting_since"


class WaitingQueue(Protocol):
    """A scheduler queue that holds requests until their origin has a verdict
    (:mod:`scrapy_robots_std.scrapy.holding`); it attaches itself to the book."""

    def verdict_arrived(self, origin_key: str) -> None: ...

    def report_left(self) -> None: ...


@dataclass
class _Fetch:
    origin: Origin
    trigger: Request
    #: requests waiting in ``process_request`` (not the scheduler's)
    waiters: list[Deferred[CacheEntry]] = field(default_factory=list)
    #: the verdict, once decided (or the entry the cycle ended with)
    result: CacheEntry | None = None
    #: the origin's tdmrep.json is fetched beside robots.txt (a purpose declared)
    tdm: bool = False


class VerdictBook:
    """Verdicts in memory, fetches in flight, and who to tell when one ends."""

    def __init__(
        self,
        crawler: Crawler,
        store: Store,
        fetcher: Fetcher,
        on_fetched: Callable[[Fetched, Request], None],
    ) -> None:
        self.crawler = crawler
        self.store = store
        self.fetcher = fetcher
        self._on_fetched = on_fetched
        self._fetches: dict[str, _Fetch] = {}
        self._decided_at: dict[str, float] = {}
        self._queues: list[WaitingQueue] = []
        #: origins whose fetch waits for a free place (ROBOTS_STD_FETCH_CONCURRENCY)
        self._lined_up: dict[str, Origin] = {}
        self._starting = False
        self._start_scheduled = False
        #: the reactor was seen running (it runs until the crawl ends)
        self._reactor_ran = False
        self._tasks: set[Deferred[object]] = set()
        # Every request is looked up at least twice (queue, downloader); its origin
        # depends only on the URL up to its authority, worked out once per prefix.
        self._origins: dict[str, Origin | None] = {}
        #: TDMRep's files (the middleware sets it): fetched beside robots.txt for
        #: origins whose requests declare a purpose
        self.tdm: TdmFiles | None = None
        #: lined-up origins whose file is wanted (their trigger is not kept)
        self._tdm_wanted: set[str] = set()

    # -- asked per request: memory only ---------------------------------------------

    def origin_to_check(self, request: Request) -> Origin | None:
        """The origin whose robots.txt decides ``request``; ``None``: exempt."""
        meta = request.meta
        if meta.get("dont_obey_robotstxt") or FETCH_META in meta:
            return None
        key = _memo_key(request.url)
        if key is not None:
            try:
                return self._origins[key]
            except KeyError:
                pass
        origin = origin_of(urlparse_cached(request))
        if key is not None:
            if len(self._origins) >= _ORIGIN_MEMO_SIZE:
                self._origins.clear()
            self._origins[key] = origin
        return origin

    def fresh(self, origin_key: str, *, waited: bool = False) -> CacheEntry | None:
        """The origin's verdict if still fresh. For a request that ``waited`` for
        it, a verdict decided moments ago stands even past its TTL."""
        entry = self.store.memory.get(origin_key)
        if entry is None:
            return None
        if entry.fresh():
            return entry
        if not waited:
            return None
        decided = self._decided_at.get(origin_key)
        if decided is not None and time.monotonic() - decided < _GRACE:
            return entry
        return None

    def pending_origin(self, request: Request) -> Origin | None:
        """The origin ``request`` must wait for, or ``None``: it may go now."""
        origin = self.origin_to_check(request)
        if origin is None or self.fresh(origin.key) is not None:
            return None
        return origin

    def fetching(self) -> int:
        return len(self._fetches)

    # -- fetch cycles -----------------------------------------------------------------

    def need(self, origin: Origin, trigger: Request | None) -> None:
        """Have ``origin``'s fetch cycle run, unless one is in flight or its verdict
        is fresh: at once while fewer than ``ROBOTS_STD_FETCH_CONCURRENCY`` cycles
        run, otherwise when one ends (oldest first). The scheduler's queues call
        this as soon as a request is queued, so robots.txt is fetched ahead of need
        within that bound: a crawl of many new origins does not flood the
        downloader."""
        key = origin.key
        if key in self._fetches or key in self._lined_up:
            return
        if len(self._fetches) < self.fetcher.config.fetch_concurrency:
            if self._reactor_ran or _reactor_running():
                self._reactor_ran = True
                self._fetch_for(origin, trigger)
                return
            # Queued before the reactor runs (Twisted's default reactor runs the
            # start of a crawl synchronously): Scrapy installs its DNS resolver
            # when the reactor starts, so the fetch waits for that.
            if not self._start_scheduled:
                self._start_scheduled = True
                call_later(0, self._start_lined_up)
        if self.fresh(key) is None:
            self._lined_up[key] = origin
            if self.tdm is not None and self.tdm.wanted(trigger):
                self._tdm_wanted.add(key)

    def _start_lined_up(self) -> None:
        """Start the lined-up fetches that now have a place."""
        self._start_scheduled = False
        if self._starting:  # a cycle that ended at once, inside the loop below
            return
        limit = self.fetcher.config.fetch_concurrency
        self._starting = True
        try:
            while self._lined_up and len(self._fetches) < limit:
                if self.fetcher.stopping():
                    self._lined_up.clear()
                    return
                key = next(iter(self._lined_up))
                self._fetch_for(self._lined_up.pop(key), None)
        finally:
            self._starting = False

    def _fetch_for(self, origin: Origin, trigger: Request | None) -> _Fetch | None:
        """The origin's cycle in flight, started if need be; ``None`` when a fresh
        verdict makes it needless. The cycle may have ended already (see above)."""
        fetch = self._fetches.get(origin.key)
        if fetch is not None or self.fresh(origin.key) is not None:
            return fetch
        self._lined_up.pop(origin.key, None)
        tdm = self.tdm is not None and (
            origin.key in self._tdm_wanted or self.tdm.wanted(trigger)
        )
        self._tdm_wanted.discard(origin.key)
        if trigger is None:
            # A resumed crawl's waiting origin: no request of its own is at hand.
            # This one stands for them (the signal's request; USER_AGENT's token).
            trigger = Request(origin.robots_url, meta={"dont_obey_robotstxt": True})
        fetch = _Fetch(origin, trigger, tdm=tdm)
        self._fetches[origin.key] = fetch
        self.keep(self._cycle(fetch))
        return fetch

    async def wait(self, origin: Origin, trigger: Request) -> CacheEntry:
        """The origin's verdict, waiting for its fetch if need be."""
        fetch = self._fetch_for(origin, trigger)
        entry = self.fresh(origin.key, waited=True)
        if entry is not None:
            return entry
        assert fetch is not None  # None only when a verdict is fresh
        if fetch.result is not None:  # it ended, with no verdict fresh now
            return self._ended(fetch)
        waiter: Deferred[CacheEntry] = Deferred()
        fetch.waiters.append(waiter)
        return await maybe_deferred_to_future(waiter)

    async def _cycle(self, fetch: _Fetch) -> None:
        origin = fetch.origin
        # The origin's tdmrep.json, fetched at the same time: its requests are
        # released when both are known (the file's cycle has the same budget).
        tdm = None if self.tdm is None or not fetch.tdm else self.tdm.when_known(origin)

        def decided(fetched: Fetched) -> None:
            if tdm is None or tdm.called:
                self._decide(fetch, fetched)
            else:
                tdm.addCallback(lambda _: self._decide(fetch, fetched))

        try:
            stale = self.store.memory.get(origin.key)
            await self.fetcher.fetch(origin, stale, decided)
            if tdm is not None:
                await maybe_deferred_to_future(tdm)
        except Exception as exc:  # a bug here must not strand the waiting requests
            logger.exception(
                "robots.txt fetch for %(origin)s failed unexpectedly",
                {"origin": safe(origin.robots_url)},
                extra={"spider": self.crawler.spider},
            )
            if fetch.result is None:
                fetch.result = unreachable_entry(
                    origin,
                    f"internal error: {exc!r}",
                    self.fetcher.config.unreachable_ttl,
                )
                self._decided(fetch.result)
        finally:
            self._forget(fetch)
            self._release_waiters(fetch, self._ended(fetch))
            self._start_lined_up()

    def _decide(self, fetch: _Fetch, fetched: Fetched) -> None:
        fetch.result = fetched.entry
        # From here on the cycle only writes the store and releases the claim:
        # the origin is no longer "being fetched", so a verdict that expires
        # meanwhile (a TTL of 0) gets a new fetch rather than none.
        self._forget(fetch)
        self._decided(fetched.entry)
        self._on_fetched(fetched, fetch.trigger)
        self._release_waiters(fetch, fetched.entry)

    def _forget(self, fetch: _Fetch) -> None:
        if self._fetches.get(fetch.origin.key) is fetch:
            del self._fetches[fetch.origin.key]

    def _ended(self, fetch: _Fetch) -> CacheEntry:
        """What a cycle that has ended decided: its verdict, or, when the crawl
        stopped first, an entry that drops its waiters as ``shutdown``."""
        if fetch.result is None:
            fetch.result = unreachable_entry(
                fetch.origin, "the spider closed", 0.0, reason=FetchReason.SHUTDOWN
            )
        return fetch.result

    def _release_waiters(self, fetch: _Fetch, entry: CacheEntry) -> None:
        waiters, fetch.waiters = fetch.waiters, []
        for waiter in waiters:
            waiter.callback(entry)
        self.wake_engine()

    def _decided(self, entry: CacheEntry) -> None:
        self.store.put_in_memory(entry)
        if len(self._decided_at) >= self.store.memory.max_origins:
            self._decided_at.clear()
        self._decided_at[entry.origin] = time.monotonic()
        for queue in list(self._queues):
            queue.verdict_arrived(entry.origin)

    # -- listeners and the engine ------------------------------------------------------

    def attach(self, queue: WaitingQueue) -> None:
        """Tell ``queue`` of every verdict from now on."""
        self._queues.append(queue)

    def waiting_queues(self) -> int:
        """How many scheduler queues hold this crawl's waiting requests."""
        return len(self._queues)

    def detach(self, queue: WaitingQueue) -> None:
        if queue in self._queues:
            self._queues.remove(queue)

    def detach_all(self) -> None:
        """At close: the queues Scrapy does not close (memory ones) report what
        they still hold."""
        queues, self._queues = self._queues, []
        for queue in queues:
            queue.report_left()

    def wake_engine(self) -> None:
        """Have the engine pop the scheduler now rather than at its next heartbeat
        (every 5 s). Scrapy has no public call for this; without it the released
        requests still go, later."""
        try:
            engine = self.crawler.engine
        except RuntimeError:  # Scrapy 2.19: no engine before the crawl starts
            return
        nextcall = getattr(getattr(engine, "_slot", None), "nextcall", None)
        if nextcall is not None:
            nextcall.schedule()

    def keep(self, coroutine: Coroutine[Any, Any, object]) -> None:
        """Run a background coroutine, keeping a reference until it ends."""
        task: Deferred[object] = deferred_from_coro(coroutine)
        if task.called:
            return
        self._tasks.add(task)

        def forget(result: object) -> object:
            self._tasks.discard(task)
            return result

        task.addBoth(forget)

    async def settle(self) -> None:
        """At close: end the cycles still running (a backoff sleep, a store write)
        and the other background work (signals), and wait for them."""
        self.fetcher.closing = True
        # A task may start another (a verdict's signal): wait until none is left,
        # so nothing of ours runs, or logs, after the spider has closed.
        while self._tasks:
            await maybe_deferred_to_future(next(iter(self._tasks)))


def _reactor_running() -> bool:
    from twisted.internet import reactor

    return bool(getattr(reactor, "running", False))


def _memo_key(url: str) -> str | None:
    """The start of ``url`` that alone decides its origin, or ``None``.

    That is the text before the first ``/`` after the first ``://``: whatever
    follows, ``urlsplit`` finds the scheme and the netloc within it, so equal keys
    mean equal origins.
    """
    start = url.find("://")
    if start < 0:
        return None
    end = url.find("/", start + 3)
    key = url if end < 0 else url[:end]
    return key if len(key) <= _MEMO_KEY_MAX else None
