"""The algorithm both holding queues share: hold, fetch ahead, release, bounded pops.

A scheduler queue that obeys robots.txt files each request it is given under its
origin. An origin with a fresh verdict is *ready*; one without is *held*, and its
robots.txt fetch is asked for at once (:meth:`VerdictBook.need`, within
``ROBOTS_STD_FETCH_CONCURRENCY``), so the fetch runs while other origins' pages keep
the downloader busy. When the verdict arrives, the book tells the queue, which
releases the origin: its requests may be popped.

Where requests are kept, and which ready request goes next, is the storage's part
(:class:`HoldingStore`): per download slot and origin, in memory or on disk
(:mod:`~scrapy_robots_std.scrapy.waiting`), or in Redis for a scrapy-redis fleet
(:mod:`~scrapy_robots_std.scrapy.waiting_redis`). :class:`Holding` is the rest.

The queue finds the book explicitly, through the crawl's
:class:`~scrapy_robots_std.RobotsTxtStdMiddleware`
(``crawler.get_downloader_middleware``), and attaches itself to it.
"""

from __future__ import annotations

import logging
import time
from typing import TYPE_CHECKING, Final, Protocol

from scrapy_robots_std import stats as _stats
from scrapy_robots_std.safetext import safe
from scrapy_robots_std.scrapy.middleware import RobotsTxtStdMiddleware
from scrapy_robots_std.scrapy.origin import origin_of
from scrapy_robots_std.scrapy.verdicts import WAITED_META

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable

    from scrapy import Request
    from scrapy.crawler import Crawler

    from scrapy_robots_std.scrapy.origin import Origin
    from scrapy_robots_std.scrapy.verdicts import VerdictBook

__all__ = ["EXEMPT", "MAX_STEPS", "HoldRefused", "Holding", "HoldingStore", "find_book"]

logger = logging.getLogger("scrapy_robots_std.scrapy.middleware")

#: Requests one ``pop()`` may look at (and hold) before it returns ``None`` and has
#: the engine call again on its next turn: a pop never reads a whole queue.
MAX_STEPS: Final = 100
#: The origin key of requests robots.txt does not decide (``dont_obey_robotstxt``,
#: our own fetches, URLs without an origin, or robots.txt not obeyed at all).
EXEMPT: Final = ""


class HoldRefused(Exception):
    """A store cannot hold a request but could keep it as ready (e.g. a Redis key
    of another type where the origin's waiting set goes)."""


def find_book(crawler: Crawler) -> VerdictBook | None:
    """The crawl's book, from its :class:`RobotsTxtStdMiddleware`; ``None`` when
    that middleware is not enabled (``ROBOTSTXT_OBEY`` off): nothing is held."""
    try:
        middleware = crawler.get_downloader_middleware(RobotsTxtStdMiddleware)
    except RuntimeError:  # no engine: the queue was built outside a crawl
        return None
    return None if middleware is None else middleware.book


class HoldingStore(Protocol):
    """Where a holding queue keeps its requests."""

    #: what the close line says the requests still held stay in, and its level
    left_in: str
    left_level: int

    def add(self, request: Request, origin_key: str, *, held: bool) -> None:
        """Keep ``request`` under ``origin_key``: ready, or ``held`` until the
        origin is released. Holding a request holds its whole origin."""

    def release(self, origin_key: str) -> None:
        """The origin has its verdict: its held requests become ready."""

    def take(self, ready: Callable[[str], bool]) -> Request | None:
        """The next ready request, or ``None``. Before it takes a request of a
        ready origin it asks ``ready(origin_key)``: a ``False`` (the verdict
        expired) holds that origin again at once. A request whose origin the store
        does not know may come out: the caller checks it and holds it if need
        be."""

    def held_origins(self) -> Iterable[str]:
        """The origins held now (a resumed state's among them)."""

    def held(self) -> tuple[int, int]:
        """Requests held now, and their origins."""

    def __len__(self) -> int: ...


class Holding:
    """Files requests as ready or held, fetches ahead, and pops what may go."""

    def __init__(self, crawler: Crawler, store: HoldingStore) -> None:
        self.crawler = crawler
        self.store = store
        self.book = find_book(crawler)
        #: held origins of a resumed state: their fetches are asked for on the
        #: first pop, once the engine runs
        self._resumed: list[str] | None = None
        #: work done by the current pop (origins held), bounded by MAX_STEPS
        self._steps = 0
        self._hold_warned = False
        #: origins ``take`` found expired: their fetches are asked for after it
        self._expired: list[str] = []
        if self.book is not None:
            self._resumed = list(store.held_origins())
            self.book.attach(self)
        else:  # robots.txt not obeyed (a job resumed with it off): nothing waits
            for key in list(store.held_origins()):
                store.release(key)

    # -- what the book calls (verdicts.WaitingQueue) ----------------------------------

    def verdict_arrived(self, origin_key: str) -> None:
        self.store.release(origin_key)

    def report_left(self) -> None:
        """Count and log the requests still held (the spider is closing)."""
        try:
            requests, origins = self.store.held()
        except Exception as exc:  # noqa: BLE001 -- e.g. Redis is down: closing goes on
            self.crawler.stats.inc_value(_stats.WAIT_UNCOUNTED)
            logger.warning(
                "The requests waiting for robots.txt in %(where)s could not be "
                "counted at close (%(error)s); they stay there",
                {
                    "where": self.store.left_in,
                    "error": safe(f"{type(exc).__name__}: {exc}"),
                },
                extra={"spider": self.crawler.spider},
            )
            return
        if not requests:
            return
        self.crawler.stats.inc_value(_stats.WAIT_LEFT_AT_CLOSE, requests)
        logger.log(
            self.store.left_level,
            "%(n)d request(s) were still waiting for the robots.txt of %(origins)d "
            "origin(s) when the spider closed; they stay in %(where)s",
            {"n": requests, "origins": origins, "where": self.store.left_in},
            extra={"spider": self.crawler.spider},
        )

    def detach(self) -> None:
        if self.book is not None:
            self.book.detach(self)

    # -- the queue's push and pop ----------------------------------------------------

    def push(self, request: Request) -> None:
        """File ``request``: ready when robots.txt does not decide it or its
        origin's verdict is fresh; held otherwise, with the fetch asked for now.

        A store's error propagates (Scrapy's scheduler keeps a request its disk
        queue refuses with a ``ValueError`` in memory; ``RobotsAwareRedisQueue``
        keeps one Redis cannot store in its own), but for :class:`HoldRefused`:
        then the request is kept as ready, and waits for its verdict in the
        downloader once popped."""
        book = self.book
        origin = None if book is None else book.origin_to_check(request)
        if origin is None:
            self.store.add(request, EXEMPT, held=False)
        elif self._fresh(origin.key, waited=False):
            self.store.add(request, origin.key, held=False)
        else:
            try:
                self._hold(origin, request)
            except HoldRefused as exc:
                self._hold_failed(origin, request, exc)
                self.store.add(request, origin.key, held=False)
                return
            self._held(origin, request)

    def pop(self) -> Request | None:
        """The next request that may go, or ``None``."""
        book = self.book
        if book is None:
            return self.store.take(_always)
        if self._resumed:
            self._expired.extend(self._resumed)
        self._resumed = None
        self._steps = 0
        while self._steps < MAX_STEPS:
            request = self.store.take(self._ready)
            self._ask_for_expired()
            if request is None:
                break
            origin = book.origin_to_check(request)
            waited = WAITED_META in request.meta
            if origin is None or self._fresh(origin.key, waited=waited):
                return request
            # From a part of the store that did not know its origin (a shared
            # queue, an older state), or whose verdict expired just now.
            self._steps += 1
            try:
                self._hold(origin, request)
            except Exception as exc:  # noqa: BLE001 -- it was popped: never lose it
                self._hold_failed(origin, request, exc)
                return request  # it waits for its verdict in the downloader
            self._held(origin, request)
        if self._steps >= MAX_STEPS:
            book.wake_engine()  # bounded work per call; the engine comes back
        return None

    def _hold(self, origin: Origin, request: Request) -> None:
        """File ``request`` as held; the caller then calls :meth:`_held`."""
        request.meta.setdefault(WAITED_META, time.time())
        try:
            self.store.add(request, origin.key, held=True)
        except BaseException:
            request.meta.pop(WAITED_META, None)
            raise

    def _held(self, origin: Origin, request: Request) -> None:
        """Count a request just held and ask for its origin's fetch: after it is
        filed, since the fetch may decide at once (the HTTP cache under Twisted's
        default reactor) and then releases the origin."""
        assert self.book is not None
        self.crawler.stats.inc_value(_stats.WAIT_HELD)
        self.book.need(origin, request)

    def _hold_failed(self, origin: Origin, request: Request, exc: Exception) -> None:
        """A request the store could not hold (an open file too many, a Redis key
        of another type): counted and logged once; the caller keeps it as ready,
        or sends it on. Its fetch is asked for all the same."""
        assert self.book is not None
        self.crawler.stats.inc_value(_stats.WAIT_HOLD_FAILED)
        logger.log(
            logging.DEBUG if self._hold_warned else logging.WARNING,
            "Cannot hold %(request)s in %(where)s (%(error)s); it will wait for its "
            "robots.txt in the downloader",
            {
                "request": safe(request),
                "where": self.store.left_in,
                "error": safe(f"{type(exc).__name__}: {exc}"),
            },
            extra={"spider": self.crawler.spider},
        )
        self._hold_warned = True
        self.book.need(origin, request)

    def _fresh(self, origin_key: str, *, waited: bool) -> bool:
        """Whether the origin's verdict is fresh; for requests that ``waited`` for
        it, a verdict that just arrived stands a moment past its TTL."""
        assert self.book is not None
        return self.book.fresh(origin_key, waited=waited) is not None

    def _ready(self, origin_key: str) -> bool:
        """``take``'s question: may ``origin_key``'s requests go? If not, the store
        holds the origin, and its fetch is asked for once ``take`` returns
        (:meth:`_ask_for_expired`): a fetch that decides at once must find the
        origin held, or its release would come before the hold."""
        if self._fresh(origin_key, waited=True):
            return True
        self._steps += 1
        self._expired.append(origin_key)
        return False

    def _ask_for_expired(self) -> None:
        expired, self._expired = self._expired, []
        for origin_key in expired:
            origin = origin_of(origin_key + "/")
            if origin is not None and self.book is not None:
                self.book.need(origin, None)


def _always(origin_key: str) -> bool:
    return True
