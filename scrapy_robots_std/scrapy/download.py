"""One robots.txt download attempt: through the engine, redirects followed here, the
body bounded on the wire.

Downloads go through ``crawler.engine.download_async``, so proxies, headers and the
other downloader middlewares apply. Redirects are followed here (at most
:data:`~scrapy_robots_std.policy.MAX_REDIRECTS` hops, to any origin), so they can be
counted and bounded; every failure is an outcome, never an exception. Each download
runs under :mod:`scrapy_robots_std.scrapy.transfer`'s deadline, stop check and room
in the downloader.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final
from urllib.parse import urljoin

from scrapy import signals
from scrapy.exceptions import IgnoreRequest, StopDownload
from scrapy.http import Request
from scrapy.http.request import NO_CALLBACK
from twisted.internet.defer import CancelledError
from w3lib.url import safe_url_string

from scrapy_robots_std import policy
from scrapy_robots_std import stats as _stats
from scrapy_robots_std.cache.base import ROBOTS_TXT
from scrapy_robots_std.robotstxt.reader import MAX_READ_BYTES
from scrapy_robots_std.scrapy.origin import Origin, origin_of
from scrapy_robots_std.scrapy.transfer import Transfers

if TYPE_CHECKING:
    from collections.abc import Callable

    from scrapy.crawler import Crawler
    from scrapy.http import Headers, Response
    from scrapy.spiders import Spider

    from scrapy_robots_std.cache.base import CacheEntry
    from scrapy_robots_std.config import Config

__all__ = ["FETCH_META", "Attempt", "RobotsDownload", "header_text"]

#: Marks this package's own robots.txt requests (value: byte count so far).
FETCH_META: Final = "robots_std_fetch"


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
        self._transfers = Transfers(crawler, stopping)

    @property
    def rooms(self) -> int:
        """How many rooms running downloads have added to the downloader's
        ``total_concurrency``."""
        return self._transfers.rooms

    async def attempt(
        self, origin: Origin, timeout: float, cached: CacheEntry | None = None
    ) -> Attempt | None:
        """Fetch robots.txt (or the file ``origin.kind`` names) once, following up
        to five redirects ourselves; ``None`` when the crawl stopped first (the
        download is cancelled).

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
            robots = origin.kind == ROBOTS_TXT  # Scrapy's robotstxt/* stats
            self._inc(_stats.ROBOTS_REQUESTS if robots else _stats.TDM_FILE_REQUESTS)
            self._watch(+1)
            try:
                response = await self._transfers.download(request)
            except CancelledError:
                raise
            except Exception as exc:  # noqa: BLE001 -- every failure is an outcome
                return self._failed(exc, hops, url, counted=robots)
            finally:
                self._watch(-1)
            if response is None:
                return None
            if robots:
                self._inc(_stats.ROBOTS_RESPONSES)
                self._inc(_stats.robots_status(response.status))
            if not policy.is_redirect(response.status, b"Location" in response.headers):
                return _answered(response, url, hops, conditional=conditional)
            target = _redirect(response, url, seen, hops)
            if isinstance(target, Attempt):
                return target
            seen.add(target)
            hops += 1
            url = target

    def _failed(
        self, exc: Exception, hops: int, url: str, *, counted: bool = True
    ) -> Attempt:
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
            if counted:  # Scrapy's robotstxt/exception_count: robots.txt's own
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
            # crosses them (within a cap); the rest is not downloaded. A
            # tdmrep.json cut here is over its 512,000-byte limit: unset.
            raise StopDownload(fail=False)

    def _inc(self, key: str) -> None:
        self._stats.inc_value(key)


def _add_validators(request: Request, cached: CacheEntry | None) -> bool:
    """Make ``request`` conditional on ``cached``'s validators (only a parsed copy of
    this very URL has a body to keep); ``True`` if it now is."""
    if (
        cached is None
        or cached.verdict != policy.Verdict.PARSE
        or (cached.robots is None and cached.tdm is None)
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


def _answered(response: Response, url: str, hops: int, *, conditional: bool) -> Attempt:
    """The attempt that ends with ``response`` (not a redirect), from ``url``."""
    status = response.status
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


def _redirect(response: Response, url: str, seen: set[str], hops: int) -> str | Attempt:
    """Where the redirect ``response`` leads, or the attempt that ends with it when
    it is not followed."""
    target = _redirect_target(response)
    # Followed only to an http(s) URL with a host.
    usable = None if target is None or origin_of(target) is None else target
    problem = policy.redirect_failure(usable, seen, hops)
    if problem is None:
        assert target is not None
        return target
    shown = target if target is not None else repr(_location(response))
    return Attempt(
        policy.FetchOutcome(redirect_failure=problem, redirects=hops),
        f"{problem} after {hops} redirect(s), last to {shown}",
        robots_url=url,
    )


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
