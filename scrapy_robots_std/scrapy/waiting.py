"""RobotsAwarePriorityQueue: Scrapy's downloader-aware scheduling, robots-aware.

Scrapy's default ``SCHEDULER_PRIORITY_QUEUE``, ``DownloaderAwarePriorityQueue``,
keeps one priority queue per download slot and pops from the slot with the fewest
active downloads. This queue does the same, with one queue per download slot *and
origin* (almost always one origin per slot: a slot is a host name), and passes over
an origin without a fresh verdict the way a busy slot is passed over: its requests
stay where they are, held, while its robots.txt is fetched
(:mod:`~scrapy_robots_std.scrapy.holding` has the algorithm).

Everything is in the scheduler's own queues (memory, or disk under ``JOBDIR``), so a
stopped ``JOBDIR`` crawl resumes with its held requests, and no file is opened per
origin on top of what Scrapy's default queue opens per slot. A state saved by
``DownloaderAwarePriorityQueue``, ``ScrapyPriorityQueue`` or version 0.4 of this
queue resumes too: its requests are taken first and filed again as they come out.
"""

from __future__ import annotations

import logging
from contextlib import suppress
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from scrapy.pqueues import ScrapyPriorityQueue, _path_safe
from scrapy.utils.httpobj import urlparse_cached

from scrapy_robots_std.scrapy.holding import EXEMPT, MAX_STEPS, Holding

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable
    from typing import Self

    from scrapy import Request
    from scrapy.core.downloader import Downloader
    from scrapy.crawler import Crawler
    from scrapy.pqueues import QueueProtocol

__all__ = ["STATE_FORMAT", "RobotsAwarePriorityQueue", "SlotQueues"]

#: Marks a state saved by this version's queue (``active.json`` under ``JOBDIR``).
STATE_FORMAT: Final = "scrapy-robots-std/slot-origin/1"
#: The most characters of slot and origin in a queue's directory name.
_READABLE_MAX: Final = 120


class RobotsAwarePriorityQueue:
    """``SCHEDULER_PRIORITY_QUEUE``: by priority within a download slot, the least
    busy slot first, among the origins whose robots.txt verdict is known."""

    @classmethod
    def from_crawler(
        cls,
        crawler: Crawler,
        downstream_queue_cls: type[QueueProtocol],
        key: str,
        startprios: Any = None,
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
        startprios: Any = None,
        *,
        start_queue_cls: type[QueueProtocol] | None = None,
    ) -> None:
        self.crawler = crawler
        self.key = key
        self._store = SlotQueues(
            crawler, downstream_queue_cls, key, startprios, start_queue_cls
        )
        self._holding = Holding(crawler, self._store)

    def push(self, request: Request) -> None:
        try:
            self._holding.push(request)
        except OSError as exc:
            if not self.key:
                raise
            # A disk queue that cannot take the request (EMFILE at ``ulimit -n``, a
            # full disk): Scrapy's scheduler keeps a request its disk queue refuses
            # with a ValueError in memory, logged and counted
            # (``scheduler/unserializable``), rather than lose it.
            raise ValueError(f"the disk queue cannot take it: {exc}") from exc

    def pop(self) -> Request | None:
        return self._holding.pop()

    def close(self) -> dict[str, Any]:
        """Close every queue; the state is what a resumed crawl starts from."""
        self._holding.detach()
        self._holding.report_left()
        return self._store.close()

    def waiting(self) -> int:
        """Requests held for robots.txt right now."""
        return self._store.held()[0]

    def __len__(self) -> int:
        return len(self._store)


class SlotQueues:
    """A :class:`~scrapy_robots_std.scrapy.holding.HoldingStore`: one
    ``ScrapyPriorityQueue`` per download slot and origin."""

    def __init__(
        self,
        crawler: Crawler,
        downstream_queue_cls: type[QueueProtocol],
        key: str,
        state: Any,
        start_queue_cls: type[QueueProtocol] | None,
    ) -> None:
        self._crawler = crawler
        self._downstream = downstream_queue_cls
        self._start_queue_cls = start_queue_cls
        self._key = key
        self._queues: dict[tuple[str, str], ScrapyPriorityQueue] = {}
        #: ready queues: slot -> origin -> queue
        self._ready: dict[str, dict[str, ScrapyPriorityQueue]] = {}
        #: held queues: origin -> slot -> queue
        self._held: dict[str, dict[str, ScrapyPriorityQueue]] = {}
        #: origin -> the slots it has a queue in
        self._slots_of: dict[str, set[str]] = {}
        #: queues of an older state (their slots and origins unknown), by key suffix
        self._legacy: dict[str, ScrapyPriorityQueue] = {}
        self._count = 0
        self._last_slot: str | None = None
        self._downloader: Downloader | None = None
        # Scrapy's DownloaderAwarePriorityQueue refuses CONCURRENT_REQUESTS_PER_IP;
        # then requests go by priority alone, as with ScrapyPriorityQueue.
        self.by_priority_only = (
            crawler.settings.getint("CONCURRENT_REQUESTS_PER_IP") != 0
        )
        kind = "disk (JOBDIR)" if key else "memory"
        self.left_in = f"the scheduler's {kind} queue"
        self.left_level = logging.WARNING
        self._restore(state)

    # -- HoldingStore --------------------------------------------------------------

    def add(self, request: Request, origin_key: str, *, held: bool) -> None:
        slot = self._slot_of(request)
        queue = self._queues.get((slot, origin_key))
        if queue is None:
            queue = self._new_queue(slot, origin_key, ())
            try:
                queue.push(request)  # may fail (an unserializable request)
            except BaseException:
                queue.close()
                raise
            self._file(slot, origin_key, queue, held=origin_key in self._held)
        else:
            queue.push(request)
        self._count += 1
        if held:
            self._hold_origin(origin_key)
        elif origin_key in self._held:
            self.release(origin_key)  # the caller has seen its fresh verdict

    def release(self, origin_key: str) -> None:
        for slot, queue in self._held.pop(origin_key, {}).items():
            self._ready.setdefault(slot, {})[origin_key] = queue

    def take(self, ready: Callable[[str], bool]) -> Request | None:
        for _ in range(MAX_STEPS):
            if self._legacy:
                return self._take_legacy()
            if not self._ready:
                return None
            slot = self._next_slot()
            origins = self._ready[slot]
            origin_key = (
                next(iter(origins))
                if len(origins) == 1
                else min(origins, key=lambda key: _curprio(origins[key]))
            )
            if origin_key != EXEMPT and not ready(origin_key):
                self._hold_origin(origin_key)
                continue
            queue = origins[origin_key]
            request = queue.pop()
            if not queue:
                self._drop(slot, origin_key)
            if request is not None:
                self._count -= 1
                self._last_slot = slot
                return request
        return None

    def held_origins(self) -> Iterable[str]:
        return list(self._held)

    def held(self) -> tuple[int, int]:
        requests = sum(
            len(queue) for queues in self._held.values() for queue in queues.values()
        )
        return requests, len(self._held)

    def __len__(self) -> int:
        return self._count

    def close(self) -> dict[str, Any]:
        queues = [
            [slot, origin_key, queue.close()]
            for (slot, origin_key), queue in self._queues.items()
        ]
        legacy = {name: queue.close() for name, queue in self._legacy.items()}
        self._queues.clear()
        self._ready.clear()
        self._held.clear()
        self._legacy.clear()
        return {"format": STATE_FORMAT, "queues": queues, "legacy": legacy}

    # -- choosing ------------------------------------------------------------------

    def _next_slot(self) -> str:
        """DownloaderAwarePriorityQueue's choice among the ready slots: the fewest
        active downloads, ties going round robin by slot name."""
        if len(self._ready) == 1:
            return next(iter(self._ready))
        if self.by_priority_only:
            return min(
                self._ready,
                key=lambda slot: min(map(_curprio, self._ready[slot].values())),
            )
        last = self._last_slot
        best: tuple[int, bool, str] | None = None
        for slot in self._ready:
            # Slots after the last one chosen sort first (False < True).
            rank = (self._active(slot), last is None or slot <= last, slot)
            if best is None or rank < best:
                best = rank
        assert best is not None
        return best[2]

    def _active(self, slot: str) -> int:
        downloader = self._get_downloader()
        if downloader is None:
            return 0
        download_slot = downloader.slots.get(slot)
        return 0 if download_slot is None else len(download_slot.active)

    def _slot_of(self, request: Request) -> str:
        downloader = self._get_downloader()
        if downloader is None:
            return urlparse_cached(request).hostname or ""
        return downloader.get_slot_key(request)

    def _get_downloader(self) -> Downloader | None:
        if self._downloader is None:
            try:
                self._downloader = self._crawler.engine.downloader
            except (AttributeError, RuntimeError):  # built outside a crawl
                return None
        return self._downloader

    # -- filing --------------------------------------------------------------------

    def _new_queue(
        self, slot: str, origin_key: str, prios: Iterable[int]
    ) -> ScrapyPriorityQueue:
        # The readable part is cut so that a long host name (up to 253 characters)
        # still makes a file name under 255 bytes; the digest keeps it unique.
        readable, _, digest = _path_safe(f"{slot} {origin_key}").rpartition("-")
        return self._priority_queue(f"{readable[:_READABLE_MAX]}-{digest}", prios)

    def _priority_queue(self, suffix: str, prios: Iterable[int]) -> ScrapyPriorityQueue:
        """A priority queue at ``<key>/<suffix>`` (``suffix`` is path-safe)."""
        key = f"{self._key}/{suffix}" if suffix else self._key
        return ScrapyPriorityQueue(
            self._crawler,
            self._downstream,
            key,
            list(prios),
            start_queue_cls=self._start_queue_cls,
        )

    def _file(
        self, slot: str, origin_key: str, queue: ScrapyPriorityQueue, *, held: bool
    ) -> None:
        self._queues[(slot, origin_key)] = queue
        self._slots_of.setdefault(origin_key, set()).add(slot)
        if held:
            self._held.setdefault(origin_key, {})[slot] = queue
        else:
            self._ready.setdefault(slot, {})[origin_key] = queue

    def _hold_origin(self, origin_key: str) -> None:
        held = self._held.setdefault(origin_key, {})
        for slot in self._slots_of.get(origin_key, ()):
            origins = self._ready.get(slot)
            if origins is not None and origin_key in origins:
                held[slot] = origins.pop(origin_key)
                if not origins:
                    del self._ready[slot]

    def _drop(self, slot: str, origin_key: str) -> None:
        """Forget an empty ready queue, and its directory under ``JOBDIR``."""
        queue = self._queues.pop((slot, origin_key))
        origins = self._ready[slot]
        del origins[origin_key]
        if not origins:
            del self._ready[slot]
        slots = self._slots_of[origin_key]
        slots.discard(slot)
        if not slots:
            del self._slots_of[origin_key]
        queue.close()
        if self._key:
            with suppress(OSError):  # left alone if files remain
                Path(queue.key).rmdir()

    # -- states --------------------------------------------------------------------

    def _restore(self, state: Any) -> None:
        """Reopen the queues of a saved state. This version's own are filed again
        (held, but for exempt ones: no verdict is known yet); any older state's
        are *legacy* queues, taken first, whose requests are filed as they come."""
        if not state:
            return
        if isinstance(state, dict) and state.get("format") == STATE_FORMAT:
            for slot, origin_key, prios in state.get("queues") or ():
                queue = self._new_queue(slot, origin_key, prios)
                if queue:
                    self._count += len(queue)
                    self._file(slot, origin_key, queue, held=origin_key != EXEMPT)
                else:
                    queue.close()
            legacy = state.get("legacy") or {}
        else:
            legacy = _legacy_queues(state)
        for name, prios in legacy.items():
            queue = self._priority_queue(name, prios)
            if queue:
                self._count += len(queue)
                self._legacy[name] = queue
            else:
                queue.close()

    def _take_legacy(self) -> Request | None:
        while self._legacy:
            name = next(iter(self._legacy))
            queue = self._legacy[name]
            request = queue.pop()
            if not queue:
                queue.close()
                del self._legacy[name]
            if request is not None:
                self._count -= 1
                return request
        return None


def _curprio(queue: ScrapyPriorityQueue) -> int:
    return 0 if queue.curprio is None else queue.curprio


def _legacy_queues(state: Any) -> dict[str, Any]:
    """The queues of a state saved by another priority queue, by their key's
    suffix: ``ScrapyPriorityQueue`` (a list of priorities, at the key itself),
    ``DownloaderAwarePriorityQueue`` (``{slot: priorities}``) or version 0.4 of this
    queue (``ready``, ``waiting`` per origin, ``slots``)."""
    if not isinstance(state, dict):
        return {"": state}
    slots = state
    queues: dict[str, Any] = {}
    if "ready" in state and set(state) <= {"ready", "waiting", "slots"}:
        queues[""] = state.get("ready") or ()
        for origin_key, prios in (state.get("waiting") or {}).items():
            queues[f"robots-waiting/{_path_safe(origin_key)}"] = prios
        slots = state.get("slots") or {}
    for slot, prios in slots.items():
        queues[_path_safe(slot)] = prios
    return queues
