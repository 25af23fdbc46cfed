"""One robots.txt download attempt: through the engine, redirects followed here, the
body bounded on the wire.

Downloads go through ``crawler.engine.download_async``, so proxies, headers and the
other downloader middlewares apply. Redirects are followed here (at most
:data:`~scrapy_robots_std.policy.MAX_REDIRECTS` hops, to any origin), so they can be
counted and bounded; every failure is an outcome, never an exception.

Two things are enforced here whatever the download handler does: the attempt's
deadline (``ROBOTS_STD_FETCH_TIMEOUT``), by cancelling the download, and a room of its
own in the downloader (``total_concurrency`` is one higher while it runs).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final
from urllib.parse import urljoin

from scrapy import signals
from scrapy.exceptions import DownloadTimeoutError, IgnoreRequest, StopDownload
from scrapy.http import Request
from scrapy.http.request import NO_CALLBACK
from scrapy.utils.asyncio import CallLaterResult, call_later
from scrapy.utils.defer import deferred_from_coro, maybe_deferred_to_future
from twisted.internet.defer import CancelledError, Deferred
from w3lib.url import safe_url_string

from scrapy_robots_std import policy
from scrapy_robots_std import stats as _stats
from scrapy_robots_std.robotstxt.parser import MAX_READ_BYTES
from scrapy_robots_std.scrapy.origin import Origin, origin_of

if TYPE_CHECKING:
    from collections.abc import Callable

    from scrapy.core.downloader import Downloader
    from scrapy.crawler import Crawler
    from scrapy.http import Headers, Response
    from scrapy.spiders import Spider

    from scrapy_robots_std.cache.base import CacheEntry
    from scrapy_robots_std.config import Config

__all__ = ["FETCH_META", "Attempt", "RobotsDownload", "header_text"]

#: Marks this package's own robots.txt requests (value: byte count so far).
FETCH_META: Final = "robots_std_fetch"
#: How often, while a robots.txt download runs, the crawl is checked for a stop.
_STOP_CHECK: Final = 0.25
#: How long after its deadline a download the handler has not ended is cancelled: a
#: handler that honours ``download_timeout`` ends it first, closing its connection.
_DEADLINE_GRACE: Final = 0.1


@dataclass(frozen=True)
class Attempt:
    """What one fetch attempt (with its redirect hops) produced."""

    outcome: policy.FetchOutcome
    detail: str
    response: Response | None = None
    robots_url: str = ""
    retry_after: float | None = None


class RobotsDownload:
    """Downloads robots.txt for the fetch cycle, one attempt per :meth:`attempt`."""

    def __init__(
        self,
        crawler: Crawler,
        config: Config,
        stopping: Callable[[], bool] = lambda: False,
    ) -> None:
        self.crawler = crawler
        self.config = config
        self._stats = crawler.stats
        self._stopping = stopping
        self._in_flight = 0
        #: the downloads running now; those cancelled because the crawl stops
        self._downloads: set[Deferred[Response]] = set()
        self._cancelled: set[Deferred[Response]] = set()
        #: the deadlines of those that have one
        self._deadlines: dict[Deferred[Response], _Deadline] = {}
        self._stop_check = False
        #: how many rooms running downloads have added to the downloader's
        #: ``total_concurrency`` (see :meth:`_make_room`)
        self.rooms = 0

    async def attempt(
        self, origin: Origin, timeout: float, cached: CacheEntry | None = None
    ) -> Attempt | None:
        """Fetch robots.txt once, following up to five redirects ourselves;
        ``None`` when the crawl stopped first (the download is cancelled).

        ``cached`` is the expired copy, if any: its validators go with the request
        for its URL, and a ``304`` then means "not modified".
        """
        deadline = time.monotonic() + max(timeout, 0.001)
        url = origin.robots_url
        seen = {url}
        hops = 0
        while True:
            if self._stopping():
                return None
            request = self._request(url, deadline - time.monotonic())
            conditional = _add_validators(request, cached)
            if conditional:
                self._inc(_stats.FETCH_CONDITIONAL)
            self._inc(_stats.ROBOTS_REQUESTS)
            self._watch(+1)
            try:
                response = await self._download(request)
            except CancelledError:
                raise
            except Exception as exc:  # noqa: BLE001 -- every failure is an outcome
                return self._failed(exc, hops, url)
            finally:
                self._watch(-1)
            if response is None:
                return None
            status = response.status
            self._inc(_stats.ROBOTS_RESPONSES)
            self._inc(_stats.robots_status(status))
            if policy.is_redirect(status, b"Location" in response.headers):
                target = _redirect_target(response)
                # Followed only to an http(s) URL with a host.
                usable = None if target is None or origin_of(target) is None else target
                problem = policy.redirect_failure(usable, seen, hops)
                if problem is not None:
                    shown = target if target is not None else repr(_location(response))
                    return Attempt(
                        policy.FetchOutcome(redirect_failure=problem, redirects=hops),
                        f"{problem} after {hops} redirect(s), last to {shown}",
                        robots_url=url,
                    )
                assert target is not None
                seen.add(target)
                hops += 1
                url = target
                continue
            return Attempt(
                policy.FetchOutcome(
                    status=status,
                    redirects=hops,
                    not_modified=conditional and status == 304,
                ),
                f"HTTP {status}" + (f" from {url}" if hops else ""),
                response=response,
                robots_url=url,
                retry_after=policy.parse_retry_after(
                    header_text(response.headers, b"Retry-After")
                ),
            )

    async def _download(self, request: Request) -> Response | None:
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

    def _failed(self, exc: Exception, hops: int, url: str) -> Attempt:
        # No closing full stop: the detail goes on (" after 3 attempts").
        text = str(exc)[:200].rstrip(". ")
        message = text or type(exc).__name__
        if isinstance(exc, IgnoreRequest):
            name = "IgnoreRequest"
            if "during decompression" not in message:
                # Another downloader middleware decided not to download it (an HTTP
                # cache replaying offline): final, not a failure.
                where = f" at {url} after {hops} redirect(s)" if hops else ""
                return Attempt(
                    policy.FetchOutcome(ignored=True, redirects=hops),
                    (f"{name}: {text}" if text else name) + where,
                    robots_url=url,
                )
            # HttpCompressionMiddleware's cap: a hostile body, the origin unreachable.
            self._inc(_stats.BODY_OVER_DECOMPRESSION_CAP)
            cap = self.config.max_decompressed_size
            message = (
                f"the body inflates past ROBOTS_STD_MAX_DECOMPRESSED_SIZE ({cap:,} "
                "bytes)"
            )
        else:
            name = type(exc).__name__
            self._inc(_stats.robots_exception(exc))
        return Attempt(
            policy.FetchOutcome(error=name, redirects=hops),
            f"{name}: {message}",
            robots_url=url,
        )

    def _request(self, url: str, timeout: float) -> Request:
        return Request(
            url,
            priority=1000,
            callback=NO_CALLBACK,
            dont_filter=True,
            meta={
                FETCH_META: 0,
                "dont_obey_robotstxt": True,
                "dont_redirect": True,  # hops are counted and capped here
                "dont_retry": True,  # retries and backoff are ours
                "dont_merge_cookies": True,  # no cookies sent or stored
                "allow_offsite": True,  # robots.txt may redirect anywhere
                "download_timeout": max(round(timeout, 2), 0.01),
                # No size cap on the wire: the body is cut at 500 KiB as it arrives
                # (_bytes_received); compressed bodies get a cap in _headers_received.
                "download_maxsize": 0,
            },
        )

    # -- size limits on the wire, watched only while a robots.txt download runs --

    def _watch(self, change: int) -> None:
        """Connect the two size receivers while any robots.txt download runs: each
        costs a dispatch per page response otherwise."""
        before = self._in_flight
        self._in_flight += change
        if (before == 0) == (self._in_flight == 0):
            return
        connect = self._in_flight > 0
        edit = (
            self.crawler.signals.connect if connect else self.crawler.signals.disconnect
        )
        edit(self._headers_received, signals.headers_received)
        edit(self._bytes_received, signals.bytes_received)

    def _headers_received(
        self, headers: Headers, body_length: int, request: Request, spider: Spider
    ) -> None:
        if FETCH_META not in request.meta:
            return
        encoding = header_text(headers, b"Content-Encoding")
        if encoding and encoding.strip().lower() not in ("identity", ""):
            # Bounds what HttpCompressionMiddleware may inflate (a gzip bomb).
            request.meta["download_maxsize"] = self.config.max_decompressed_size

    def _bytes_received(self, data: bytes, request: Request, spider: Spider) -> None:
        received = request.meta.get(FETCH_META)
        if received is None:
            return
        received += len(data)
        request.meta[FETCH_META] = received
        if received >= MAX_READ_BYTES:
            # The parser reads 512,000 bytes and completes the line that
            # crosses them (within a cap); the rest is not downloaded.
            raise StopDownload(fail=False)

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
    """Undo :meth:`RobotsDownload._make_room`; never down to 0, which means no limit
    (the project may have changed the limit meanwhile)."""
    if downloader.total_concurrency > 1:
        downloader.total_concurrency -= 1


def _add_validators(request: Request, cached: CacheEntry | None) -> bool:
    """Make ``request`` conditional on ``cached``'s validators (only a parsed copy of
    this very URL has a body to keep); ``True`` if it now is."""
    if (
        cached is None
        or cached.verdict != policy.Verdict.PARSE
        or cached.robots is None
        or cached.robots_url != request.url
    ):
        return False
    if cached.etag is not None:
        request.headers[b"If-None-Match"] = cached.etag
    if cached.last_modified is not None:
        request.headers[b"If-Modified-Since"] = cached.last_modified
    return cached.etag is not None or cached.last_modified is not None


def header_text(headers: Headers, name: bytes) -> str | None:
    value = headers.get(name)  # the last value, as bytes
    return None if value is None else value.decode("latin-1")


def _redirect_target(response: Response) -> str | None:
    location = response.headers[b"Location"] or b""
    try:
        return safe_url_string(
            urljoin(response.url, location.decode("latin-1").strip())
        )
    except ValueError:  # e.g. "http://[/x": not a URL at all
        return None


def _location(response: Response) -> str:
    return (response.headers[b"Location"] or b"").decode("latin-1").strip()
