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

__all__ = ["WAITED_META", "RobotsAwarePriorityQueue"]

#: Set on a request when it starts waiting: the ``time.time()`` it began.
WAITED_META: Final = "_robots_std_waiting_since"

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
        # A state saved by ScrapyPriorityQueue (a list) resumes as the ready queue.
        state: dict[str, Any] = (
            startprios if isinstance(startprios, dict) else {"ready": startprios or ()}
        )
        self._ready = self._queue(key, state.get("ready") or ())
        #: origin key -> its waiting requests, oldest origin first
        self._waiting: OrderedDict[str, ScrapyPriorityQueue] = OrderedDict()
        for origin_key, prios in (state.get("waiting") or {}).items():
            queue = self._queue(self._waiting_key(origin_key), prios)
            if queue:
                self._waiting[origin_key] = queue
        #: origins with waiting requests whose verdict arrived (or must be fetched)
        self._released: OrderedDict[str, None] = OrderedDict.fromkeys(self._waiting)
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
        if origin_key in self._waiting:
            self._released[origin_key] = None

    # -- the queue interface -------------------------------------------------------------

    def push(self, request: Request) -> None:
        self._ready.push(request)

    def pop(self) -> Request | None:
        book = self._book
        if book is None:
            return self._ready.pop()
        request = self._pop_released(book)
        while request is None:
            request = self._ready.pop()
            if request is None:
                return None
            origin = book.pending_origin(request)
            if origin is not None:
                self._hold(book, origin, request)
                request = self._pop_released(book)
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
        # May decide at once (the HTTP cache, a store): then verdict_arrived ran.
        book.need(origin, request)

    def _pop_released(self, book: VerdictBook) -> Request | None:
        """A request of an origin whose verdict arrived; starts the fetch of
        waiting origins that have none (after a resume, or an expiry)."""
        for origin_key in list(self._released):
            queue = self._waiting.get(origin_key)
            if queue is None:
                del self._released[origin_key]
                continue
            if book.fresh(origin_key, waited=True) is None:
                del self._released[origin_key]
                origin = origin_of(origin_key + "/")
                if origin is not None:
                    book.need(origin, None)
                if book.fresh(origin_key, waited=True) is None:
                    continue  # wait for the fetch; it releases them again
                self._released[origin_key] = None
            request = queue.pop()
            if not queue:
                queue.close()
                del self._waiting[origin_key]
                del self._released[origin_key]
            if request is not None:
                return request
        return None

    def close(self) -> dict[str, Any]:
        if self._book is not None:
            self._book.detach(self)
        self.report_left()
        waiting = {key: queue.close() for key, queue in self._waiting.items()}
        return {"ready": self._ready.close(), "waiting": waiting}

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
        return len(self._ready) + self.waiting()
