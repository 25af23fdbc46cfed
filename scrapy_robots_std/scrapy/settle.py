"""The end of a fetch cycle: its last attempt turned into the entry the crawl keeps.

:meth:`Settler.settle` parses the body, works out the entry's time to live, renews a
copy a ``304`` confirmed, lets a stale copy stand in while the origin is down (RFC
9309 2.4), and counts and logs what changes what is crawled. The entries of a cycle
that ended without an outcome are :func:`unreachable_entry`'s.
"""

from __future__ import annotations

import dataclasses
import hashlib
import logging
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

from scrapy_robots_std import policy
from scrapy_robots_std import stats as _stats
from scrapy_robots_std.cache.base import CacheEntry
from scrapy_robots_std.robotstxt.robots import RobotsTxt
from scrapy_robots_std.safetext import safe
from scrapy_robots_std.scrapy.download import header_text

if TYPE_CHECKING:
    from scrapy.crawler import Crawler
    from scrapy.http import Response

    from scrapy_robots_std.config import Config
    from scrapy_robots_std.scrapy.download import Attempt
    from scrapy_robots_std.scrapy.origin import Origin
    from scrapy_robots_std.scrapy.report import Report
    from scrapy_robots_std.tdmrep import TdmFile

__all__ = [
    "Fetched",
    "Settler",
    "describe",
    "stale_detail",
    "stand_in",
    "unreachable_entry",
]

logger = logging.getLogger("scrapy_robots_std.scrapy.middleware")

_STALE_MARK: Final = " (stale copy; now "
#: Origins remembered as warned about an ignored robots.txt request.
_IGNORED_REMEMBERED: Final = 10_000


@dataclass(frozen=True)
class Fetched:
    """A fetch cycle's result: the entry to keep, and what it was parsed from."""

    entry: CacheEntry
    #: the rules with their diagnostics, when this process parsed a body just now
    robots: RobotsTxt | None = None
    body: bytes | None = None
    #: where the entry came from (the audit record says it)
    source: policy.FetchSource = policy.FetchSource.DOWNLOAD


class Settler:
    """Turns a fetch cycle's last attempt into a :class:`Fetched`, one per
    :meth:`settle`."""

    def __init__(self, crawler: Crawler, config: Config, report: Report) -> None:
        self.crawler = crawler
        self.config = config
        self.report = report
        self._stats = crawler.stats
        #: origins whose robots.txt request another middleware ignored (warned once)
        self._ignored: set[str] = set()

    def settle(
        self,
        origin: Origin,
        attempt: Attempt,
        verdict: policy.FetchVerdict,
        attempts: int,
        stale: CacheEntry | None,
    ) -> Fetched:
        """The entry for ``attempt``, the last of ``attempts``, with its stats and log
        lines; ``stale`` is the expired copy, if any."""
        now = time.time()
        detail = attempt.detail
        if verdict.verdict == policy.Verdict.UNREACHABLE and attempts > 1:
            detail = f"{detail} after {attempts} attempts"
        response = attempt.response
        ttl = self._ttl(verdict, response)
        if attempt.outcome.not_modified and stale is not None:
            self.report.origin_recovered(origin.robots_url)
            return Fetched(
                self._renewed(stale, response, now, ttl),
                source=policy.FetchSource.REVALIDATED,
            )
        fetched = self._fetched(origin, attempt, verdict, detail, now, ttl)
        entry = fetched.entry
        self._inc(_stats.verdict(verdict.verdict))
        if verdict.reason == policy.FetchReason.IGNORED:
            self._inc(_stats.VERDICT_IGNORED)
            self._warn_ignored(origin, detail)
        if verdict.verdict != policy.Verdict.UNREACHABLE:
            self.report.origin_recovered(origin.robots_url)
        elif stale is not None and stale.verdict != policy.Verdict.UNREACHABLE:
            # RFC 9309 2.4: a cached copy may stand in while the origin is down.
            self._inc(_stats.VERDICT_STALE)
            return stand_in(stale, entry)
        else:
            self.report.origin_unreachable(origin.robots_url, entry.detail)
            logger.warning(
                "robots.txt %(url)s is unreachable (%(detail)s): its requests "
                "are dropped for the next %(ttl)d s",
                {"url": safe(origin.robots_url), "detail": safe(detail), "ttl": ttl},
                extra={"spider": self.crawler.spider},
            )
        self._notices(origin, attempt, fetched, detail)
        return fetched

    def _fetched(
        self,
        origin: Origin,
        attempt: Attempt,
        verdict: policy.FetchVerdict,
        detail: str,
        now: float,
        ttl: float,
    ) -> Fetched:
        """A new entry from ``attempt``, its body parsed if the verdict is to."""
        robots: RobotsTxt | None = None
        tdm: TdmFile | None = None
        body: bytes | None = None
        response = attempt.response
        if (
            verdict.verdict == policy.Verdict.PARSE
            and response is not None
            and not attempt.outcome.not_modified
        ):
            body = response.body
            robots, tdm = self.parse(body)
        entry = CacheEntry(
            origin=origin.key,
            # After redirects: the file whose lines decide, so log lines point at it.
            robots_url=attempt.robots_url or origin.robots_url,
            verdict=verdict.verdict,
            reason=verdict.reason,
            detail=self.describe(verdict, detail),
            # The cache keeps no diagnostics; the robots_parsed signal gets them.
            robots=None if robots is None else robots.without_diagnostics(),
            status=attempt.outcome.status,
            fetched_at=now,
            expires_at=now + ttl,
            etag=_validator(response, b"ETag"),
            last_modified=_validator(response, b"Last-Modified"),
            body_sha256=None if body is None else hashlib.sha256(body).hexdigest(),
            body_bytes=None if body is None else len(body),
            tdm=tdm,
        )
        return Fetched(entry, robots, body)

    def describe(self, verdict: policy.FetchVerdict, detail: str) -> str:
        """An entry's detail: what ``detail`` (the attempt's) means for the crawl."""
        return describe(verdict, detail)

    def parse(self, body: bytes) -> tuple[RobotsTxt | None, TdmFile | None]:
        """The file ``body`` holds: robots.txt here (a subclass reads another)."""
        return RobotsTxt.parse(body, self.config.standard), None

    def _notices(
        self, origin: Origin, attempt: Attempt, fetched: Fetched, detail: str
    ) -> None:
        """The INFO lines for a new entry that changes what is crawled."""
        if fetched.robots is not None and fetched.robots.truncated:
            self._inc(_stats.BODY_TRUNCATED)
            self._notice(
                fetched.entry.robots_url,
                "is longer than 500 KiB: the lines after its first 512,000 bytes "
                "are ignored",
            )
        if attempt.outcome.redirect_failure is not None:
            self._notice(
                origin.robots_url, f"gave {detail}: no restrictions for this origin"
            )

    def _ttl(self, verdict: policy.FetchVerdict, response: Response | None) -> float:
        cfg = self.config
        header_max_age = None
        if response is not None:
            header_max_age = policy.max_age(
                header_text(response.headers, b"Cache-Control")
            )
        return policy.cache_ttl(
            verdict,
            header_max_age=header_max_age,
            ttl=cfg.cache_ttl,
            min_ttl=cfg.cache_min_ttl,
            unreachable_ttl=cfg.unreachable_ttl,
        )

    def _renewed(
        self, copy: CacheEntry, response: Response | None, now: float, ttl: float
    ) -> CacheEntry:
        """``copy``, which a 304 just confirmed: fresh again, its rules not parsed
        again, its body's identity (``fetched_at``) kept so stores only re-date it."""
        self._inc(_stats.CACHE_REVALIDATED)
        return dataclasses.replace(
            copy,
            detail=copy.detail.split(_STALE_MARK, 1)[0],
            expires_at=now + ttl,
            checked_at=now,
            # A 304 may carry new validators (RFC 9110 15.4.5); otherwise keep ours.
            etag=_validator(response, b"ETag") or copy.etag,
            last_modified=_validator(response, b"Last-Modified") or copy.last_modified,
        )

    def _warn_ignored(self, origin: Origin, detail: str) -> None:
        """The WARNING for a robots.txt request another downloader middleware
        ignored: once per origin and crawl, however often its verdict expires."""
        if origin.key in self._ignored:
            return
        if len(self._ignored) >= _IGNORED_REMEMBERED:
            self._ignored.clear()  # bounded; an origin may then be named again
        self._ignored.add(origin.key)
        logger.warning(
            "robots.txt %(url)s was not downloaded: a downloader middleware ignored "
            "the request (%(detail)s); no restrictions for this origin, as without a "
            "robots.txt",
            {"url": safe(origin.robots_url), "detail": safe(detail)},
            extra={"spider": self.crawler.spider},
        )

    def _notice(self, robots_url: str, consequence: str) -> None:
        """An INFO line for a decision that changes what is crawled (once per fetch,
        and so once per origin and verdict lifetime)."""
        logger.info(
            "robots.txt %(url)s %(consequence)s",
            {"url": safe(robots_url), "consequence": safe(consequence)},
            extra={"spider": self.crawler.spider},
        )

    def _inc(self, key: str) -> None:
        self._stats.inc_value(key)


def unreachable_entry(
    origin: Origin,
    detail: str,
    ttl: float,
    reason: policy.FetchReason = policy.FetchReason.NETWORK,
) -> CacheEntry:
    """An entry for a cycle that ended without an outcome (an internal error, or
    the crawl stopping: ``reason`` ``FetchReason.SHUTDOWN``)."""
    now = time.time()
    verdict = policy.FetchVerdict(policy.Verdict.UNREACHABLE, reason)
    return CacheEntry(
        origin=origin.key,
        robots_url=origin.robots_url,
        verdict=verdict.verdict,
        reason=verdict.reason,
        detail=describe(verdict, detail),
        robots=None,
        status=None,
        fetched_at=now,
        expires_at=now + ttl,
    )


def _validator(response: Response | None, name: bytes) -> str | None:
    if response is None:
        return None
    return policy.usable_validator(header_text(response.headers, name))


def stand_in(stale: CacheEntry, failed: CacheEntry) -> Fetched:
    """The expired copy ``stale``, kept until ``failed`` (an unreachable verdict)
    would have expired (RFC 9309 2.4: a cached copy may stand in)."""
    kept = dataclasses.replace(
        stale,
        detail=stale_detail(stale.detail, failed.detail),
        expires_at=failed.expires_at,
    )
    return Fetched(kept, source=policy.FetchSource.STALE)


def stale_detail(copy_detail: str, failure: str) -> str:
    """A stale copy's detail: its own reason and only the latest failure, so it does
    not grow each time the copy stands in again."""
    first = copy_detail.split(_STALE_MARK, 1)[0]
    return f"{first}{_STALE_MARK}{failure})"


def describe(verdict: policy.FetchVerdict, detail: str) -> str:
    if verdict.reason == policy.FetchReason.IGNORED:
        return (
            f"not downloaded: a downloader middleware ignored the request ({detail}); "
            "no restrictions, as without a robots.txt"
        )
    if verdict.verdict == policy.Verdict.UNREACHABLE:
        return f"unreachable ({detail}); everything is disallowed for now"
    if verdict.verdict == policy.Verdict.DISALLOW_ALL:
        return f"{detail} means everything is disallowed in 1994 mode"
    if verdict.verdict == policy.Verdict.ALLOW_ALL:
        return f"{detail} means no restrictions"
    return detail
