"""RobotsAwarePriorityQueue: the scheduler holds the requests that wait for robots.txt.

Scrapy's scheduler keeps its requests in a priority queue class
(``SCHEDULER_PRIORITY_QUEUE``), in memory and, with ``JOBDIR``, on disk. This one
passes over an origin without a verdict the way ``DownloaderAwarePriorityQueue``
passes over busy slots: a popped request whose origin has no fresh verdict moves to
that origin's *waiting* queue, and the origin's robots.txt fetch starts. When the
verdict arrives, the origin's waiting requests are popped before anything else.

Waiting requests are therefore wherever the scheduler keeps requests: ``close()``
returns the state of the waiting queues too, so a stopped ``JOBDIR`` crawl resumes
with them, and their origins are fetched again on the first pop.
"""

from __future__ import annotations

import logging
import time
from collections import OrderedDict
from typing import TYPE_CHECKING, Any, Final

from scrapy.pqueues import ScrapyPriorityQueue, _path_safe

from scrapy_robots_std import stats as _stats
from scrapy_robots_std.scrapy.origin import origin_of
from scrapy_robots_std.scrapy.verdicts import book_for

if TYPE_CHECKING:
    from collections.abc import Iterable

    from scrapy import Request
    from scrapy.crawler import Crawler
    from scrapy.pqueues import QueueProtocol
    from typing_extensions import Self

    from scrapy_robots_std.scrapy.origin import Origin
    from scrapy_robots_std.scrapy.verdicts import VerdictBook

__all__ = ["MAX_STEPS", "WAITED_META", "RobotsAwarePriorityQueue"]

#: Set on a request when it starts waiting: the ``time.time()`` it began.
WAITED_META: Final = "_robots_std_waiting_since"
#: Requests one ``pop()`` may move to waiting queues before it returns (and has the
#: engine call again): a resumed queue of many waiting origins is not read at once.
MAX_STEPS: Final = 100

logger = logging.getLogger("scrapy_robots_std.scrapy.middleware")


class RobotsAwarePriorityQueue:
    """A ready queue plus one waiting queue per origin without a verdict."""

    @classmethod
    def from_crawler(
        cls,
        crawler: Crawler,
        downstream_queue_cls: type[QueueProtocol],
        key: str,
        startprios: dict[str, Any] | Iterable[int] | None = None,
        *,
        start_queue_cls: type[QueueProtocol] | None = None,
    ) -> Self:
        return cls(
            crawler,
            downstream_queue_cls,
            key,
            startprios,
            start_queue_cls=start_queue_cls,
        )

    def __init__(
        self,
        crawler: Crawler,
        downstream_queue_cls: type[QueueProtocol],
        key: str,
        startprios: dict[str, Any] | Iterable[int] | None = None,
        *,
        start_queue_cls: type[QueueProtocol] | None = None,
    ) -> None:
        self.crawler = crawler
        self.key = key
        self._downstream = downstream_queue_cls
        self._start_queue_cls = start_queue_cls
        state = _state(startprios)
        self._ready = self._queue(key, state["ready"])
        #: a state saved by DownloaderAwarePriorityQueue (Scrapy's default): its
        #: per-slot queues, read after the ready queue until they are empty
        self._slots: dict[str, ScrapyPriorityQueue] = {}
        for slot, prios in state["slots"].items():
            self._slots[slot] = self._queue(f"{key}/{_path_safe(slot)}", prios)
        #: origin key -> its waiting requests, oldest origin first
        self._waiting: OrderedDict[str, ScrapyPriorityQueue] = OrderedDict()
        for origin_key, prios in state["waiting"].items():
            queue = self._queue(self._waiting_key(origin_key), prios)
            if queue:
                self._waiting[origin_key] = queue
        #: waiting origins whose verdict arrived
        self._released: OrderedDict[str, None] = OrderedDict()
        #: waiting origins whose fetch is still to start (the downloader was full)
        self._unfetched: OrderedDict[str, None] = OrderedDict.fromkeys(self._waiting)
        self._book: VerdictBook | None = book_for(crawler)
        if self._book is not None:
            self._book.attach(self)

    def _queue(self, key: str, prios: Iterable[int]) -> ScrapyPriorityQueue:
        return ScrapyPriorityQueue(
            self.crawler,
            self._downstream,
            key,
            list(prios),
            start_queue_cls=self._start_queue_cls,
        )

    def _waiting_key(self, origin_key: str) -> str:
        return f"{self.key}/robots-waiting/{_path_safe(origin_key)}"

    def verdict_arrived(self, origin_key: str) -> None:
        """The book's call: ``origin_key``'s waiting requests may go."""
        if origin_key in self._waiting:
            self._released[origin_key] = None

    # -- the queue interface -------------------------------------------------------------

    def push(self, request: Request) -> None:
        """Queue ``request`` as ready; :meth:`pop` decides whether it must wait."""
        self._ready.push(request)

    def pop(self) -> Request | None:
        """The next request that may go: a released one first, then the ready
        queue's, holding those whose origin has no verdict; ``None`` if none."""
        book = self._book
        if book is None:  # robots.txt is not obeyed (a job resumed with it off)
            return self._pop_ready() or _pop_first(self._waiting)
        request = self._next_released(book)
        steps = 0
        while request is None:
            if steps >= MAX_STEPS:
                # Bounded work per call; the engine comes back on its next turn.
                book.wake_engine()
                return None
            steps += 1
            request = self._pop_ready()
            if request is None:
                return None
            origin = book.pending_origin(request)
            if origin is not None:
                self._hold(book, origin, request)
                request = self._next_released(book)
        return request

    def _pop_ready(self) -> Request | None:
        request = self._ready.pop()
        if request is None and self._slots:
            request = _pop_first(self._slots)
        return request

    def _hold(self, book: VerdictBook, origin: Origin, request: Request) -> None:
        request.meta.setdefault(WAITED_META, time.time())
        queue = self._waiting.get(origin.key)
        if queue is None:
            queue = self._waiting[origin.key] = self._queue(
                self._waiting_key(origin.key), ()
            )
        queue.push(request)
        self.crawler.stats.inc_value(_stats.WAIT_HELD)
        if book.may_fetch():
            # May decide at once (the HTTP cache, a store): then verdict_arrived ran.
            book.need(origin, request)
        else:
            self._unfetched[origin.key] = None

    def _next_released(self, book: VerdictBook) -> Request | None:
        request = self._pop_released(book)
        if request is None and self._unfetched and self._start_fetches(book):
            request = self._pop_released(book)  # a fetch may decide at once
        return request

    def _start_fetches(self, book: VerdictBook) -> bool:
        """Start the fetches that waited for room in the downloader, as far as it
        has room: robots.txt downloads never burst past ``CONCURRENT_REQUESTS``."""
        started = False
        while self._unfetched and book.may_fetch():
            origin_key, _ = self._unfetched.popitem(last=False)
            origin = origin_of(origin_key + "/")
            if origin_key in self._waiting and origin is not None:
                book.need(origin, None)
                started = True
        return started

    def _pop_released(self, book: VerdictBook) -> Request | None:
        """A request of an origin whose verdict arrived."""
        while self._released:
            origin_key = next(iter(self._released))
            queue = self._waiting.get(origin_key)
            if queue is None:
                del self._released[origin_key]
                continue
            if book.fresh(origin_key, waited=True) is None:
                # Expired or evicted before its requests came out: fetch again.
                del self._released[origin_key]
                self._unfetched[origin_key] = None
                continue
            request = queue.pop()
            if not queue:
                queue.close()
                del self._waiting[origin_key]
                del self._released[origin_key]
            if request is not None:
                return request
        return None

    def close(self) -> dict[str, Any]:
        """Close every queue; the state (``ready``, ``waiting``, ``slots``) is what a
        resumed crawl starts from."""
        if self._book is not None:
            self._book.detach(self)
        self.report_left()
        waiting = {key: queue.close() for key, queue in self._waiting.items()}
        slots = {slot: queue.close() for slot, queue in self._slots.items() if queue}
        return {"ready": self._ready.close(), "waiting": waiting, "slots": slots}

    def report_left(self) -> None:
        """Count and log the requests still waiting (the spider is closing)."""
        left = self.waiting()
        if left:
            self.crawler.stats.inc_value(_stats.WAIT_LEFT_AT_CLOSE, left)
            logger.warning(
                "%(n)d request(s) were still waiting for the robots.txt of "
                "%(origins)d origin(s) when the spider closed; they stay in the "
                "scheduler's %(kind)s queue",
                {
                    "n": left,
                    "origins": len(self._waiting),
                    "kind": "disk (JOBDIR)" if self.key else "memory",
                },
                extra={"spider": self.crawler.spider},
            )

    def waiting(self) -> int:
        """Requests held for robots.txt right now."""
        return sum(len(queue) for queue in self._waiting.values())

    def __len__(self) -> int:
        slots = sum(len(queue) for queue in self._slots.values())
        return len(self._ready) + slots + self.waiting()


def _state(saved: dict[str, Any] | Iterable[int] | None) -> dict[str, Any]:
    """A saved state, whichever priority queue saved it: this one (``ready``,
    ``waiting``, ``slots``), ScrapyPriorityQueue (a list of priorities: the ready
    queue) or DownloaderAwarePriorityQueue (``{slot: priorities}``)."""
    if saved is None:
        return {"ready": (), "waiting": {}, "slots": {}}
    if not isinstance(saved, dict):
        return {"ready": saved, "waiting": {}, "slots": {}}
    if set(saved) <= {"ready", "waiting", "slots"} and "ready" in saved:
        return {
            "ready": saved.get("ready") or (),
            "waiting": saved.get("waiting") or {},
            "slots": saved.get("slots") or {},
        }
    return {"ready": (), "waiting": {}, "slots": saved}


def _pop_first(queues: dict[str, ScrapyPriorityQueue]) -> Request | None:
    """A request of the first non-empty queue; empty queues are closed and removed."""
    for name in list(queues):
        queue = queues[name]
        request = queue.pop()
        if not queue:
            queue.close()
            del queues[name]
        if request is not None:
            return request
    return None
