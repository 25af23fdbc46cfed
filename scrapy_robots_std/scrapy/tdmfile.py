"""TDMRep's ``/.well-known/tdmrep.json`` in the crawl: fetched once per origin, only
for requests with a usage purpose, by the robots.txt fetch machinery.

:class:`TdmFiles` knows each origin's file (an entry of the crawl's cache under its
own key, :func:`~scrapy_robots_std.cache.base.tdm_key`) and runs its fetch cycles:
:class:`~scrapy_robots_std.scrapy.fetcher.Fetcher` with an
:class:`~scrapy_robots_std.scrapy.origin.Origin` of kind ``tdmrep.json``, so the
file goes through the engine, under the fetch deadline and the size cap, through the
cache's store and the fleet's claims, revalidated with its validators, and into the
audit file. :class:`TdmSettler` turns the cycle's one attempt into the entry: a 2xx
body parsed (:func:`~scrapy_robots_std.tdmrep.parse_file`); a 404, any other
status, a failure: no rules (unset). The verdict book starts the file's cycle beside
the origin's robots.txt and releases the origin's requests once both are known; a
request that finds its origin's file unknown (expired, or first wanted) waits for it
in ``process_request``, within the same budget.
"""

from __future__ import annotations

import logging
import time
from typing import TYPE_CHECKING, Final

from scrapy.utils.defer import maybe_deferred_to_future
from twisted.internet.defer import Deferred

from scrapy_robots_std import policy
from scrapy_robots_std import stats as _stats
from scrapy_robots_std.safetext import safe
from scrapy_robots_std.scrapy.origin import tdm_file_of
from scrapy_robots_std.scrapy.settle import Fetched, Settler, stand_in
from scrapy_robots_std.scrapy.usage import PURPOSE_META
from scrapy_robots_std.tdmrep import MAX_FILE_BYTES, TdmFile, parse_file

if TYPE_CHECKING:
    from collections.abc import Callable, Coroutine
    from typing import Any

    from scrapy.crawler import Crawler
    from scrapy.http import Request

    from scrapy_robots_std.cache.base import CacheEntry
    from scrapy_robots_std.config import Config
    from scrapy_robots_std.robotstxt.robots import RobotsTxt
    from scrapy_robots_std.scrapy.download import Attempt
    from scrapy_robots_std.scrapy.fetcher import Fetcher
    from scrapy_robots_std.scrapy.origin import Origin
    from scrapy_robots_std.scrapy.report import Report
    from scrapy_robots_std.scrapy.store import Store

__all__ = ["TdmFiles", "TdmSettler"]

logger = logging.getLogger("scrapy_robots_std.scrapy.middleware")

#: Origins remembered as told about (a bad file, a failed fetch): once each.
_TOLD_REMEMBERED: Final = 10_000


class TdmSettler(Settler):
    """A ``tdmrep.json`` cycle's last attempt -> its entry, stats and log lines."""

    def __init__(self, crawler: Crawler, config: Config, report: Report) -> None:
        super().__init__(crawler, config, report)
        self._told: set[str] = set()

    def parse(self, body: bytes) -> tuple[RobotsTxt | None, TdmFile | None]:
        return None, parse_file(body)

    def describe(self, verdict: policy.FetchVerdict, detail: str) -> str:
        if verdict.verdict == policy.Verdict.PARSE:
            return detail
        return f"{detail}: no rules (TDMRep unset)"

    def settle(
        self,
        origin: Origin,
        attempt: Attempt,
        verdict: policy.FetchVerdict,
        attempts: int,
        stale: CacheEntry | None,
    ) -> Fetched:
        now = time.time()
        response = attempt.response
        ttl = self._ttl(verdict, response)
        if attempt.outcome.not_modified and stale is not None:
            renewed = self._renewed(stale, response, now, ttl)
            return Fetched(renewed, source=policy.FetchSource.REVALIDATED)
        fetched = self._fetched(origin, attempt, verdict, attempt.detail, now, ttl)
        entry = fetched.entry
        if verdict.verdict == policy.Verdict.UNREACHABLE and (
            stale is not None and stale.tdm is not None
        ):
            # As robots.txt (RFC 9309 2.4): the copy fetched earlier stands in.
            self._inc(_stats.TDM_FILE_STALE)
            return stand_in(stale, entry)
        self._count(origin, entry)
        return fetched

    def _count(self, origin: Origin, entry: CacheEntry) -> None:
        """The outcome's stat, and a line once per origin for a bad file or a
        failed fetch (a missing file is the common case: not logged)."""
        file = entry.tdm
        if entry.verdict == policy.Verdict.UNREACHABLE:
            self._inc(_stats.TDM_FILE_FAILED)
            ttl = self.config.unreachable_ttl
            self._tell(origin, f"is unavailable ({entry.detail}); again in {ttl:g} s")
            return
        if file is None:
            self._inc(_stats.TDM_FILE_MISSING)
            return
        if file.malformed:
            self._inc(_stats.TDM_FILE_MALFORMED)
            if (entry.body_bytes or 0) > MAX_FILE_BYTES:
                self._inc(_stats.TDM_FILE_TOO_LARGE)
        else:
            self._inc(_stats.TDM_FILE_FETCHED)
            if file.notes:
                self._inc(_stats.TDM_FILE_NOTES)
        if file.notes:
            self._tell(origin, "is not all used: " + "; ".join(file.notes))

    def _tell(self, origin: Origin, what: str) -> None:
        key = origin.key
        if key in self._told:
            return
        if len(self._told) >= _TOLD_REMEMBERED:
            self._told.clear()  # bounded; an origin may then be named again
        self._told.add(key)
        logger.info(
            "TDMRep file %(url)s %(what)s",
            {"url": safe(origin.robots_url), "what": safe(what)},
            extra={"spider": self.crawler.spider},
        )


class TdmFiles:
    """Each origin's ``tdmrep.json``: in the crawl's memory, and fetched when asked."""

    def __init__(
        self,
        crawler: Crawler,
        config: Config,
        store: Store,
        fetcher: Fetcher,
        on_fetched: Callable[[Fetched], None],
        keep: Callable[[Coroutine[Any, Any, object]], None],
    ) -> None:
        self.crawler = crawler
        self.config = config
        self.store = store
        self.fetcher = fetcher
        self._on_fetched = on_fetched
        self._keep = keep
        #: cycles in flight: the file's key -> who waits for it
        self._fetches: dict[str, list[Deferred[None]]] = {}

    def wanted(self, request: Request | None) -> bool:
        """Whether a request's origin needs its file: a purpose is declared (the
        setting, or the request's meta; ``None``: the setting alone)."""
        if request is None:
            return self.config.usage_purpose is not None
        return request.meta.get(PURPOSE_META, self.config.usage_purpose) is not None

    def fresh(self, origin: Origin) -> CacheEntry | None:
        entry = self.store.memory.get(tdm_file_of(origin).key)
        return entry if entry is not None and entry.fresh() else None

    def when_known(self, origin: Origin) -> Deferred[None] | None:
        """A Deferred that fires once the origin's file is known (its cycle
        started if none runs); ``None`` when it is known and fresh now."""
        if self.fresh(origin) is not None:
            return None
        target = tdm_file_of(origin)
        waiters = self._fetches.get(target.key)
        if waiters is None:
            waiters = self._fetches[target.key] = []
            self._keep(self._cycle(target))
            waiters = self._fetches.get(target.key)
            if waiters is None:  # the cycle ended at once (default reactor)
                return None
        done: Deferred[None] = Deferred()
        waiters.append(done)
        return done

    async def _cycle(self, target: Origin) -> None:
        def decided(fetched: Fetched) -> None:
            self.store.put_in_memory(fetched.entry)
            self._on_fetched(fetched)

        try:
            stale = self.store.memory.get(target.key)
            await self.fetcher.fetch(target, stale, decided)
        except Exception:  # a bug here must not strand the waiting requests
            logger.exception(
                "TDMRep file %(url)s: the fetch failed unexpectedly (unset)",
                {"url": safe(target.robots_url)},
                extra={"spider": self.crawler.spider},
            )
        finally:
            for waiter in self._fetches.pop(target.key, ()):
                waiter.callback(None)

    async def file_of(self, origin: Origin) -> TdmFile | None:
        """The origin's parsed file, waiting for its fetch if need be; ``None``:
        unset (no file, a failure, or the crawl stopped first)."""
        waiter = self.when_known(origin)
        if waiter is not None:
            await maybe_deferred_to_future(waiter)
        entry = self.store.memory.get(tdm_file_of(origin).key)
        return None if entry is None else entry.tdm
