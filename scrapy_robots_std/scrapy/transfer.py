"""The robots.txt downloads running through the engine, each bounded in time.

Two things are enforced here whatever the download handler does: the attempt's
deadline (``ROBOTS_STD_FETCH_TIMEOUT``), by cancelling the download, and a room of its
own in the downloader (``total_concurrency`` is one higher while it runs). A download
still running when the crawl stops is cancelled too, so the close does not wait for
it.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Final

from scrapy.exceptions import DownloadTimeoutError
from scrapy.utils.asyncio import CallLaterResult, call_later
from scrapy.utils.defer import deferred_from_coro, maybe_deferred_to_future

from scrapy_robots_std import stats as _stats

if TYPE_CHECKING:
    from collections.abc import Callable

    from scrapy.core.downloader import Downloader
    from scrapy.crawler import Crawler
    from scrapy.http import Request, Response
    from twisted.internet.defer import Deferred

__all__ = ["Transfers"]

#: How often, while a robots.txt download runs, the crawl is checked for a stop.
_STOP_CHECK: Final = 0.25
#: How long after its deadline a download the handler has not ended is cancelled: a
#: handler that honours ``download_timeout`` ends it first, closing its connection.
_DEADLINE_GRACE: Final = 0.1


class Transfers:
    """Runs robots.txt downloads through the engine, one per :meth:`download`."""

    def __init__(self, crawler: Crawler, stopping: Callable[[], bool]) -> None:
        self.crawler = crawler
        self._stats = crawler.stats
        self._stopping = stopping
        #: the downloads running now; those cancelled because the crawl stops
        self._downloads: set[Deferred[Response]] = set()
        self._cancelled: set[Deferred[Response]] = set()
        #: the deadlines of those that have one
        self._deadlines: dict[Deferred[Response], _Deadline] = {}
        self._stop_check = False
        #: how many rooms running downloads have added to the downloader's
        #: ``total_concurrency`` (see :meth:`_make_room`)
        self.rooms = 0

    async def download(self, request: Request) -> Response | None:
        """The engine's download of ``request``; ``None`` if it was cancelled
        because the crawl stops.

        A graceful stop waits for every download in progress, this one included,
        up to its timeout: so while one runs, the crawl is checked every
        :data:`_STOP_CHECK` seconds and, once it stops, the download is cancelled.
        That ends the engine's wait for it at once (Scrapy 2.19's downloader keeps
        no canceller for the transfer itself: its connection ends with its
        ``download_timeout``, or with the reactor).

        The same cancel ends a download still running at its deadline, whatever the
        download handler does with ``download_timeout`` (:class:`_Deadline`): it
        then fails with :class:`~scrapy.exceptions.DownloadTimeoutError`. While it
        runs, the downloader has one more room (:meth:`_make_room`).
        """
        seconds = request.meta.get("download_timeout")
        room = self._make_room()
        try:
            download: Deferred[Response] = deferred_from_coro(
                self.crawler.engine.download_async(request)
            )
            self._downloads.add(download)
            self._schedule_stop_check()
            deadline = None
            if (
                isinstance(seconds, (int, float))
                and seconds > 0
                and not download.called
            ):
                deadline = _Deadline(request, float(seconds))
                self._deadlines[download] = deadline
                deadline.arm(self._deadline_passed, download)
            try:
                return await maybe_deferred_to_future(download)
            except BaseException:
                if download in self._cancelled:
                    return None
                if deadline is not None and deadline.passed:
                    raise DownloadTimeoutError(
                        f"Getting {request.url} took longer than {seconds:g} s "
                        "(ROBOTS_STD_FETCH_TIMEOUT)"
                    ) from None
                raise
            finally:
                if deadline is not None:
                    deadline.disarm()
                    del self._deadlines[download]
                self._downloads.discard(download)
                self._cancelled.discard(download)
        finally:
            if room is not None:
                self.rooms -= 1
                _give_back_room(room)

    def _make_room(self) -> Downloader | None:
        """Raise the downloader's ``total_concurrency`` by one for a robots.txt
        download, so that pages keep all of ``CONCURRENT_REQUESTS`` (how many
        robots.txt downloads run at once is bounded where fetches start). The
        downloader it was raised on, or ``None`` when nothing was raised: no
        downloader, or no limit (``0``)."""
        downloader = self._downloader()
        if downloader is None:
            return None
        total = getattr(downloader, "total_concurrency", None)
        if not isinstance(total, int) or total <= 0:
            return None
        downloader.total_concurrency = total + 1
        self.rooms += 1
        return downloader

    def _downloader(self) -> Downloader | None:
        try:
            downloader: Downloader = self.crawler.engine.downloader
        except (AttributeError, RuntimeError):  # no engine (yet)
            return None
        return downloader

    def _queued(self, request: Request) -> bool:
        """``request`` waits in its downloader slot's queue (a download delay, the
        slot's concurrency): its transfer has not started."""
        downloader = self._downloader()
        key = request.meta.get("download_slot")
        slots = getattr(downloader, "slots", None)
        if not isinstance(key, str) or not isinstance(slots, dict):
            return False
        slot = slots.get(key)
        queue = getattr(slot, "queue", ())
        return any(queued is request for queued, _ in queue)

    def _deadline_passed(self, download: Deferred[Response]) -> None:
        deadline = self._deadlines.get(download)
        if deadline is None or download.called or download in self._cancelled:
            return  # ended, its result is on its way, or the crawl stops
        if self._queued(deadline.request):
            deadline.waited()
        if deadline.arm(self._deadline_passed, download):
            return  # it waited in the slot's queue: its time counts from later
        deadline.passed = True
        self._inc(_stats.FETCH_DEADLINE)
        download.cancel()

    def _schedule_stop_check(self) -> None:
        if not self._stop_check and self._downloads:
            self._stop_check = True
            call_later(_STOP_CHECK, self._check_stop)

    def _check_stop(self) -> None:
        self._stop_check = False
        if self._downloads and self._stopping():
            for download in list(self._downloads):
                deadline = self._deadlines.get(download)
                if deadline is not None and deadline.passed:
                    continue  # already cancelled, for its deadline
                self._cancelled.add(download)
                self._inc(_stats.FETCH_CANCELLED)
                download.cancel()
        else:
            for deadline in self._deadlines.values():
                if not deadline.passed and self._queued(deadline.request):
                    deadline.waited()
        self._schedule_stop_check()

    def _inc(self, key: str) -> None:
        self._stats.inc_value(key)


class _Deadline:
    """When a robots.txt download is cancelled for taking too long.

    ``seconds`` (the request's ``download_timeout``: what is left of the attempt's
    time) count from the start of the transfer, as a download handler counts them,
    so time spent waiting in the downloader slot's queue (a download delay, the
    slot's concurrency) does not count. The queue is looked at every
    :data:`_STOP_CHECK` seconds and when the timer fires: a transfer seen waiting
    gets that much more time, so the download handler's own timeout, which closes
    the connection, comes first; the package's cancel is the backstop for a handler
    that ignores ``download_timeout``.
    """

    def __init__(self, request: Request, seconds: float) -> None:
        self.request = request
        self.seconds = seconds
        #: the earliest the transfer may have started: the last time the request
        #: was seen waiting in its slot's queue, or the start of the download
        self.start = time.monotonic()
        self.queued = False
        self.passed = False
        self._timer: CallLaterResult | None = None

    def waited(self) -> None:
        """The request was just seen in its slot's queue."""
        self.start = time.monotonic()
        self.queued = True

    def due(self) -> float:
        # Seen queued: it may have started up to one look later.
        return (
            self.start
            + self.seconds
            + _DEADLINE_GRACE
            + (_STOP_CHECK if self.queued else 0.0)
        )

    def arm(
        self,
        fire: Callable[[Deferred[Response]], None],
        download: Deferred[Response],
    ) -> bool:
        """Set the timer for :meth:`due`; ``False`` if that has passed."""
        left = self.due() - time.monotonic()
        if left <= 0:
            return False
        self._timer = call_later(left, fire, download)
        return True

    def disarm(self) -> None:
        if self._timer is not None:
            self._timer.cancel()  # a no-op once it ran
            self._timer = None


def _give_back_room(downloader: Downloader) -> None:
    """Undo :meth:`Transfers._make_room`; never down to 0, which means no limit
    (the project may have changed the limit meanwhile)."""
    if downloader.total_concurrency > 1:
        downloader.total_concurrency -= 1
