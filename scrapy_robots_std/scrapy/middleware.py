"""RobotsTxtStdMiddleware: checks each request against its origin's robots.txt.

The glue between Scrapy and the parts that do the work (docs/design.md has the map):
the :class:`~scrapy_robots_std.scrapy.verdicts.VerdictBook` knows the verdicts and
runs the fetches, the scheduler's
:class:`~scrapy_robots_std.scrapy.waiting.RobotsAwarePriorityQueue` holds the
requests that wait for one, and this class checks and drops.
"""

from __future__ import annotations

import inspect
import logging
import time
from typing import TYPE_CHECKING

from scrapy import signals
from scrapy.exceptions import DontCloseSpider, IgnoreRequest, NotConfigured
from scrapy.utils.httpobj import urlparse_cached

from scrapy_robots_std import policy
from scrapy_robots_std import stats as _stats
from scrapy_robots_std.config import Config
from scrapy_robots_std.robotstxt.robots import Decision
from scrapy_robots_std.safetext import safe
from scrapy_robots_std.scrapy.audit import AuditLog
from scrapy_robots_std.scrapy.download import FETCH_META
from scrapy_robots_std.scrapy.fetcher import Fetcher
from scrapy_robots_std.scrapy.origin import TokenOf
from scrapy_robots_std.scrapy.page import PageReader, startup_warnings
from scrapy_robots_std.scrapy.politeness import SlotPoliteness
from scrapy_robots_std.scrapy.report import Report, record_wait, rule_text
from scrapy_robots_std.scrapy.robotparser import StdRobotParser
from scrapy_robots_std.scrapy.sitemaps import SitemapFeeder
from scrapy_robots_std.scrapy.startup import report_startup
from scrapy_robots_std.scrapy.store import Store
from scrapy_robots_std.scrapy.tdm import TdmReader
from scrapy_robots_std.scrapy.tdmfile import TdmFiles
from scrapy_robots_std.scrapy.usage import UsageGate
from scrapy_robots_std.scrapy.verdicts import WAITED_META, VerdictBook

if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Self

    from scrapy.crawler import Crawler
    from scrapy.http import Request, Response
    from scrapy.spiders import Spider

    from scrapy_robots_std.cache.base import CacheEntry
    from scrapy_robots_std.scrapy.settle import Fetched

__all__ = ["RobotsTxtDisallowed", "RobotsTxtStdMiddleware"]

logger = logging.getLogger(__name__)


class RobotsTxtDisallowed(IgnoreRequest):
    """The ``IgnoreRequest`` a dropped request fails with.

    ``decision`` is the :class:`~scrapy_robots_std.Decision` (its ``rule`` is the
    deciding line, or ``None`` with a ``reason`` such as ``"unreachable"``);
    ``robots_url`` is the robots.txt that decided.
    """

    def __init__(self, message: str, decision: Decision, robots_url: str) -> None:
        super().__init__(message)
        self.decision = decision
        self.robots_url = robots_url


class RobotsTxtStdMiddleware:
    """Obey robots.txt (RFC 9309 or 1994) per origin; see the README for settings."""

    def __init__(self, crawler: Crawler) -> None:
        if not crawler.settings.getbool("ROBOTSTXT_OBEY"):
            raise NotConfigured("ROBOTSTXT_OBEY is off")
        self.crawler = crawler
        self.config = Config.from_settings(crawler.settings)
        self._stats = crawler.stats
        self.report = Report(self.config.summary_top)
        self.report.dry_run = self.config.dry_run
        self.store = Store(crawler, self.config)
        fetcher = Fetcher(crawler, self.config, self.store, self.report)
        self.book = VerdictBook(crawler, self.store, fetcher, self._fetched)
        #: TDMRep's /.well-known/tdmrep.json: fetched only for a declared purpose
        self.tdm_files = self.book.tdm = TdmFiles(
            crawler, self.config, self.store, fetcher, self._tdm_fetched, self.book.keep
        )
        self.sitemap_feeder = SitemapFeeder(crawler, self.config)
        self.politeness = SlotPoliteness(crawler, self.config, self._lookup)
        self.token_of = TokenOf(self.config)
        self.usage = UsageGate(crawler, self.config, self.report, self.token_of)
        self.audit = AuditLog.from_crawler(crawler, self.config)
        #: None with ROBOTS_STD_PAGE_DIRECTIVES = "off": no work per response
        self.page = PageReader.build(
            crawler, self.config, self.token_of, self.audit, self.report
        )
        #: TDMRep: read only for a request with a usage purpose
        self.tdm = TdmReader(crawler, self.audit)
        crawler.signals.connect(self._spider_opened, signals.spider_opened)
        crawler.signals.connect(self._spider_idle, signals.spider_idle)
        crawler.signals.connect(self._spider_closed, signals.spider_closed)

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        return cls(crawler)

    async def process_request(self, request: Request) -> None:
        """Let ``request`` through, or drop it with :class:`RobotsTxtDisallowed`."""
        origin = self.book.origin_to_check(request)
        if origin is None:
            self.usage.unchecked(request)
            return
        waited_since = request.meta.pop(WAITED_META, None)
        entry = self.book.fresh(origin.key, waited=waited_since is not None)
        if entry is None:
            # Not through the scheduler's queue (engine.download_async callers), or
            # the verdict expired since: wait here, holding this download's slot.
            waited_since = waited_since or time.time()
            entry = await self.book.wait(origin, request)
        if waited_since is None:
            self._inc(_stats.CACHE_HIT)
        else:
            self._inc(_stats.CACHE_MISS)
            record_wait(self._stats, time.time() - waited_since)
        allowed = self._check(request, entry)
        file = None
        if allowed and self.usage.declared(request):
            file = self.tdm.file_said(request, await self.tdm_files.file_of(origin))
        self.usage.before(request, entry, allowed=allowed, tdm_file=file)

    def process_response(self, request: Request, response: Response) -> Response:
        """Put the usage preferences (and the page directives, unless they are
        off, and TDMRep, when a purpose is declared) on the response; drop it when
        they say no to the declared purpose (``ROBOTS_STD_USAGE_ENFORCE = "drop"``)."""
        if FETCH_META not in request.meta:  # not our own robots.txt fetches
            said = () if self.page is None else self.page.read(request, response)
            if self.usage.declared(request):
                said = (*said, *self.tdm.read(request, response))
            self.usage.after(request, response, said)
        return response

    def sitemaps(self, url: str) -> tuple[str, ...] | None:
        """The ``Sitemap:`` URLs of the robots.txt for ``url``'s origin: ``None``
        when no verdict for it is known here, ``()`` when none are listed."""
        return self.sitemap_feeder.listed(url, self.store.memory)

    # -- deciding and dropping ------------------------------------------------------

    def _decide(self, request: Request, entry: CacheEntry) -> Decision | None:
        """What disallows ``request``; ``None`` when it is allowed (why is not
        worked out: the check every allowed request pays stays the fast one)."""
        if entry.verdict == policy.Verdict.PARSE and entry.robots is not None:
            token = self.token_of(request)
            try:
                if entry.robots.allowed(request.url, token):
                    return None
                return entry.robots.decide(request.url, token)
            except ValueError as exc:
                logger.debug(
                    "Cannot check %(url)s against %(robots)s (%(error)s); allowing it",
                    {
                        "url": safe(request.url),
                        "robots": safe(entry.robots_url),
                        "error": safe(exc),
                    },
                    extra={"spider": self.crawler.spider},
                )
                return None
        if entry.verdict in (policy.Verdict.ALLOW_ALL, policy.Verdict.PARSE):
            return None
        parts = urlparse_cached(request)
        if parts.path == "/robots.txt" and not parts.query and not parts.params:
            return None  # the exact URI only (RFC 9309 2.2.2)
        if entry.verdict == policy.Verdict.DISALLOW_ALL:
            return Decision(False, None, _stats.DROP_STATUS)
        if entry.reason == policy.FetchReason.SHUTDOWN:
            return Decision(False, None, _stats.DROP_SHUTDOWN)
        return Decision(False, None, _stats.DROP_UNREACHABLE)

    def _check(self, request: Request, entry: CacheEntry) -> bool:
        """``True``: ``request`` may be sent; ``False``: a dry run lets through what
        robots.txt disallows; otherwise :class:`RobotsTxtDisallowed` is raised."""
        decision = self._decide(request, entry)
        if decision is None or decision.allowed:
            return True
        if decision.rule is not None:
            reason = _stats.DROP_RULE
            why = rule_text(entry.robots_url, decision.rule)
        else:
            reason = decision.reason
            # A parsed file's verdict without a rule (too-complex) explains
            # itself; the others come from the fetch.
            detail = (
                decision.explain()
                if entry.verdict == policy.Verdict.PARSE
                else entry.detail
            )
            why = f"{entry.robots_url}: {detail}"
        why = safe(why)
        self.report.dropped(
            entry.origin, reason, why if decision.rule is not None else None
        )
        values = {"request": safe(request), "why": why}
        if self.config.dry_run:
            self._inc(_stats.would_drop(reason))
            logger.debug(
                "Would be forbidden by robots.txt (dry run): %(request)s by %(why)s",
                values,
                extra={"spider": self.crawler.spider},
            )
            return False
        self._inc(_stats.FORBIDDEN)
        self._inc(_stats.dropped(reason))
        logger.debug(
            "Forbidden by robots.txt: %(request)s by %(why)s",
            values,
            extra={"spider": self.crawler.spider},
        )
        raise RobotsTxtDisallowed(
            f"Forbidden by robots.txt: {values['request']} by {why}",
            decision,
            entry.robots_url,
        )

    # -- what follows a fetch --------------------------------------------------------

    def _fetched(self, fetched: Fetched, trigger: Request) -> None:
        robots, entry = fetched.robots, fetched.entry
        self.store.compiled(entry, trigger.url, self.token_of(trigger))
        if self.audit is not None:
            self.audit.fetched(fetched, self.token_of(trigger))
        if robots is None:
            self.usage.loaded(entry)
            return
        self.usage.parsed(entry.origin, robots)
        self.book.keep(
            self.crawler.signals.send_catch_log_async(
                signal=signals.robots_parsed,
                robotparser=StdRobotParser.from_robots(robots),
                request=trigger,
            )
        )
        slot = self.crawler.engine.downloader.get_slot_key(trigger)
        self.politeness.note(
            entry.origin, robots, entry.robots_url, self.token_of(trigger), slot
        )
        self.sitemap_feeder.feed(entry.origin, robots, entry.robots_url)

    def _tdm_fetched(self, fetched: Fetched) -> None:
        if self.audit is not None:
            self.audit.tdm_fetched(fetched)

    def _lookup(self, request: Request) -> tuple[str, CacheEntry, str] | None:
        origin = self.book.origin_to_check(request)
        entry = None if origin is None else self.store.memory.get(origin.key)
        if origin is None or entry is None:
            return None
        return origin.key, entry, self.token_of(request)

    # -- lifecycle ---------------------------------------------------------------------

    async def _spider_opened(self, spider: Spider) -> None:
        queues = self.book.waiting_queues()
        report_startup(self.crawler, self.config, cache=self.store.name, queues=queues)
        startup_warnings(self.crawler, self.config)
        await self.store.open()

    def _spider_idle(self) -> None:
        if self.book.fetching():
            raise DontCloseSpider

    async def _spider_closed(self, spider: Spider, reason: str) -> None:
        """Close down; every step runs, whatever an earlier one raised."""
        steps: list[tuple[str, Callable[[], object]]] = [
            ("counting the waiting requests", self.book.detach_all),
            ("ending the fetches still running", self.book.settle),
            ("the summary", self._summarize),
            ("the audit file", lambda: self._close_audit(reason)),
            ("closing the cache store", self.store.close),
        ]
        for what, step in steps:
            await self._closing_step(what, step)

    async def _closing_step(self, what: str, step: Callable[[], object]) -> None:
        try:
            result = step()
            if inspect.isawaitable(result):
                await result
        except Exception as exc:  # noqa: BLE001 -- the next steps must run
            self._inc(_stats.CLOSE_FAILED)
            logger.error(
                "robots.txt: %(what)s failed at close (%(error)s); the other "
                "closing steps still run",
                {"what": what, "error": safe(f"{type(exc).__name__}: {exc}")},
                extra={"spider": self.crawler.spider},
            )

    def _close_audit(self, reason: str) -> None:
        if self.audit is not None:
            self.audit.close(self.report, reason)

    def _summarize(self) -> None:
        summary = self.report.close(self._stats)
        logger.info(
            "%(summary)s", {"summary": summary}, extra={"spider": self.crawler.spider}
        )

    def _inc(self, key: str) -> None:
        self._stats.inc_value(key)
