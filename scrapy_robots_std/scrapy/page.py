"""Page-level robots directives in the crawl: read, exposed, and (opt-in) obeyed.

``ROBOTS_STD_PAGE_DIRECTIVES`` chooses: ``"off"`` (the default: nothing here runs,
not even per response), ``"tag"`` (each response's ``X-Robots-Tag`` lines and, for
HTML, its robots meta tags are read into ``meta["robots_std_page"]`` and counted),
or ``"obey"``:

- :class:`PageReader` (the downloader middleware's part) also hands ``noai`` /
  ``noimageai`` to the usage preferences, as a "no" for the AI purposes;
- :class:`PageDirectivesMiddleware` (a spider middleware the add-on enables) drops
  the requests a spider yields from a response that says ``nofollow`` or ``none``,
  and marks the items from one that says ``noindex`` or ``none``;
- :class:`PageNoindexPipeline` (an item pipeline, enabled by the user in
  ``ITEM_PIPELINES``) drops the marked items.

A request with ``dont_obey_robotstxt`` gets its page directives read and exposed,
never obeyed. The parsing itself is pure (:mod:`scrapy_robots_std.pagerules`,
:mod:`scrapy_robots_std.pagehead`).
"""

from __future__ import annotations

import logging
import weakref
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

from scrapy import Request, signals
from scrapy.exceptions import DropItem, NotConfigured
from w3lib.encoding import http_content_type_encoding

from scrapy_robots_std import stats as _stats
from scrapy_robots_std.config import PAGE_OBEY, PAGE_OFF, Config
from scrapy_robots_std.pagehead import HeadReader, is_html
from scrapy_robots_std.pagerules import (
    DIRECTIVES,
    EMPTY,
    HEADER,
    PageDirectives,
    PageStatement,
    meta_filter,
    read,
)
from scrapy_robots_std.safetext import safe
from scrapy_robots_std.scrapy.origin import origin_key_of

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Callable, Iterable, Iterator
    from typing import Self

    from scrapy.crawler import Crawler
    from scrapy.http import Response

    from scrapy_robots_std.scrapy.audit import AuditLog
    from scrapy_robots_std.scrapy.report import Report
    from scrapy_robots_std.usage.preferences import UsageSource

__all__ = [
    "PAGE_META",
    "PageDirectivesMiddleware",
    "PageNoindexDropped",
    "PageNoindexPipeline",
    "PageReader",
]

logger = logging.getLogger("scrapy_robots_std.scrapy.middleware")

#: request/response meta: the response's :class:`~scrapy_robots_std.PageDirectives`
PAGE_META: Final = "robots_std_page"
#: The spider middleware's place: near the engine, after the spider's own
#: middlewares, so the items it marks are the ones the pipelines get.
SPIDER_MIDDLEWARE_PRIORITY: Final = 40
#: Items marked and not yet seen by the pipeline (a bound: an item a pipeline
#: replaced before ours is never seen; the oldest mark goes first).
_MARKS_MAX: Final = 10_000


# -- what the three parts share, per crawler -------------------------------------------


class _Marks:
    """Items from noindex responses on their way to the pipeline, held by identity."""

    def __init__(self, stats: Any) -> None:
        self._stats = stats
        self._items: dict[int, tuple[Any, str, str]] = {}

    def mark(self, item: Any, reason: str, why: str) -> None:
        if len(self._items) >= _MARKS_MAX:
            del self._items[next(iter(self._items))]
            self._stats.inc_value(_stats.stat("page", "marks_evicted"))
        self._items[id(item)] = (item, reason, why)

    def take(self, item: Any) -> tuple[str, str] | None:
        """The (reason, why) of a marked item, unmarked; ``None`` if not marked."""
        entry = self._items.get(id(item))
        if entry is None or entry[0] is not item:
            return None
        del self._items[id(item)]
        return entry[1], entry[2]


@dataclass
class _Shared:
    #: the downloader middleware's report (the closing summary), if it runs
    report: Report | None = None
    #: set when the pipeline runs: then the spider middleware marks items
    marks: _Marks | None = None
    #: the spider middleware runs
    spider_middleware: bool = False


_SHARED: weakref.WeakKeyDictionary[Crawler, _Shared] = weakref.WeakKeyDictionary()


def _shared(crawler: Crawler) -> _Shared:
    found = _SHARED.get(crawler)
    if found is None:
        found = _SHARED[crawler] = _Shared()
    return found


def _obeying(crawler: Crawler) -> Config:
    """The config, or ``NotConfigured`` unless page directives are obeyed."""
    if not crawler.settings.getbool("ROBOTSTXT_OBEY"):
        raise NotConfigured
    config = Config.from_settings(crawler.settings)
    if config.page_directives != PAGE_OBEY:
        raise NotConfigured
    return config


def _reason(statement: PageStatement, header: str, meta: str) -> str:
    return header if statement.origin == HEADER else meta


def _why(statement: PageStatement, *directives: str) -> str:
    said = next(name for name in directives if statement.says(name))
    return f"{said} by {statement}"


# -- reading (the downloader middleware's part) ----------------------------------------


class PageReader:
    """Reads each response's page directives into ``meta["robots_std_page"]``."""

    def __init__(
        self,
        crawler: Crawler,
        config: Config,
        token_of: Callable[[Request], str],
        audit: AuditLog | None,
        report: Report,
    ) -> None:
        self.crawler = crawler
        self.obey = config.page_directives == PAGE_OBEY
        self.token_of = token_of
        self.audit = audit
        self._stats = crawler.stats
        #: a head reader per token (a crawl has one token or a few)
        self._heads: dict[str, HeadReader] = {}
        _shared(crawler).report = report

    @classmethod
    def build(
        cls,
        crawler: Crawler,
        config: Config,
        token_of: Callable[[Request], str],
        audit: AuditLog | None,
        report: Report,
    ) -> PageReader | None:
        """The reader, or ``None`` with ``ROBOTS_STD_PAGE_DIRECTIVES = "off"``."""
        if config.page_directives == PAGE_OFF:
            return None
        return cls(crawler, config, token_of, audit, report)

    def read(self, request: Request, response: Response) -> tuple[UsageSource, ...]:
        """Put the response's directives on its meta; return what the usage
        preferences fold in (``obey``: the statements saying ``noai``)."""
        page = self._directives(request, response)
        request.meta[PAGE_META] = page
        self._stats.inc_value(_stats.PAGE_RESPONSES)
        if page is EMPTY:
            return ()
        self._count(response, page)
        if not self.obey or request.meta.get("dont_obey_robotstxt"):
            return ()
        return page.usage_sources()

    def _directives(self, request: Request, response: Response) -> PageDirectives:
        lines = response.headers.getlist(b"X-Robots-Tag")
        content_type = response.headers.get(b"Content-Type") or b""
        html = is_html(content_type)
        if not lines and not html:
            return EMPTY
        token = self.token_of(request)
        if not html:
            return read(lines, (), token)
        heads = self._heads.get(token)
        if heads is None:
            if len(self._heads) >= 64:
                self._heads.clear()
            heads = self._heads[token] = HeadReader(meta_filter(token))
        encoding = http_content_type_encoding(content_type.decode("latin-1"))
        head = heads.read(response.body, encoding)
        return read(lines, head.metas, token, notes=head.notes)

    def _count(self, response: Response, page: PageDirectives) -> None:
        names = [name for name in page.directives if name in DIRECTIVES]
        if page.unknown:
            names.append("unknown")
        for name in names:
            self._stats.inc_value(_stats.page_directive(name))
        if page.other_crawlers:
            self._stats.inc_value(_stats.PAGE_OTHER_CRAWLER)
        if page.notes:
            self._stats.inc_value(_stats.PAGE_CUT)
            logger.debug(
                "Page directives of %(response)s not all read: %(notes)s",
                {"response": safe(response), "notes": safe("; ".join(page.notes))},
                extra={"spider": self.crawler.spider},
            )
        if self.audit is not None and names:
            self.audit.page_seen(origin_key_of(response.url), names)


# -- obeying: the spider middleware ----------------------------------------------------


class _Judge:
    """What one response's directives do to what the spider yields from it."""

    def __init__(
        self, owner: PageDirectivesMiddleware, response: Response, page: PageDirectives
    ) -> None:
        self.owner = owner
        self.response = response
        self.nofollow = page.says("nofollow", "none")
        self.marks = owner.shared.marks  # None: no pipeline drops items
        noindex = page.says("noindex", "none")
        self.noindex: tuple[str, str] | None = None
        if noindex is not None and self.marks is not None:
            reason = _reason(
                noindex, _stats.DROP_NOINDEX_HEADER, _stats.DROP_NOINDEX_META
            )
            why = f"{_why(noindex, 'noindex', 'none')} on {response}"
            self.noindex = reason, safe(why)

    def keeps(self, output: Any) -> bool:
        if isinstance(output, Request):
            if self.nofollow is None or output.meta.get("dont_obey_robotstxt"):
                return True
            return self.owner.drop(output, self.response, self.nofollow)
        if self.noindex is not None and self.marks is not None and output is not None:
            self.marks.mark(output, *self.noindex)
        return True


class PageDirectivesMiddleware:
    """Obeys ``nofollow`` and ``noindex`` (``ROBOTS_STD_PAGE_DIRECTIVES = "obey"``).

    A spider middleware: requests yielded from a response whose directives say
    ``nofollow`` (or ``none``) are dropped, with a DEBUG line and a stat, unless
    they carry ``dont_obey_robotstxt``; items yielded from one that says
    ``noindex`` (or ``none``) are marked for :class:`PageNoindexPipeline`.
    Not configured (and so not run) in any other mode.
    """

    def __init__(self, crawler: Crawler) -> None:
        self.config = _obeying(crawler)
        self.crawler = crawler
        self.shared = _shared(crawler)
        self.shared.spider_middleware = True
        self._stats = crawler.stats

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        return cls(crawler)

    def process_spider_output(
        self, response: Response, result: Iterable[Any]
    ) -> Iterator[Any]:
        judge = self._judge(response)
        if judge is None:
            yield from result
            return
        for output in result:
            if judge.keeps(output):
                yield output

    async def process_spider_output_async(
        self, response: Response, result: AsyncIterator[Any]
    ) -> AsyncIterator[Any]:
        judge = self._judge(response)
        async for output in result:
            if judge is None or judge.keeps(output):
                yield output

    def _judge(self, response: Response) -> _Judge | None:
        request = getattr(response, "request", None)
        if request is None or request.meta.get("dont_obey_robotstxt"):
            return None
        page = request.meta.get(PAGE_META)
        if not isinstance(page, PageDirectives) or not (page.nofollow or page.noindex):
            return None
        return _Judge(self, response, page)

    def drop(self, request: Request, response: Response, said: PageStatement) -> bool:
        """Drop ``request`` (``False``), or only say so in a dry run (``True``)."""
        reason = _reason(said, _stats.DROP_NOFOLLOW_HEADER, _stats.DROP_NOFOLLOW_META)
        values = {
            "request": safe(request),
            "response": safe(response),
            "why": safe(_why(said, "nofollow", "none")),
        }
        report = self.shared.report
        if report is not None:
            report.dropped(origin_key_of(request.url), reason, None)
        if self.config.dry_run:
            self._stats.inc_value(_stats.would_drop(reason))
            logger.debug(
                "Would be forbidden by page directive (dry run): %(request)s from "
                "%(response)s: %(why)s",
                values,
                extra={"spider": self.crawler.spider},
            )
            return True
        self._stats.inc_value(_stats.dropped(reason))
        logger.debug(
            "Forbidden by page directive: %(request)s from %(response)s: %(why)s",
            values,
            extra={"spider": self.crawler.spider},
        )
        return False


# -- obeying: the item pipeline --------------------------------------------------------


class PageNoindexDropped(DropItem):
    """The ``DropItem`` of an item from a response whose directives say noindex.

    ``reason`` is ``noindex-header`` or ``noindex-meta``.
    """

    def __init__(self, message: str, reason: str) -> None:
        super().__init__(message, log_level="DEBUG")
        self.reason = reason


class PageNoindexPipeline:
    """Drops the items of responses whose page directives say ``noindex``.

    Enable it (``ROBOTS_STD_PAGE_DIRECTIVES = "obey"`` too) with a number below
    your other pipelines', so it sees each item as the spider yielded it::

        ITEM_PIPELINES = {"scrapy_robots_std.PageNoindexPipeline": 0}

    Not configured (and so not run) unless page directives are obeyed.
    """

    def __init__(self, crawler: Crawler) -> None:
        self.config = _obeying(crawler)
        self.crawler = crawler
        self._stats = crawler.stats
        self.marks = _shared(crawler).marks = _Marks(crawler.stats)
        for signal in (signals.item_scraped, signals.item_dropped, signals.item_error):
            crawler.signals.connect(self._forget, signal=signal)

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        return cls(crawler)

    def process_item(self, item: Any) -> Any:
        marked = self.marks.take(item)
        if marked is None:
            return item
        reason, why = marked
        if self.config.dry_run:
            self._stats.inc_value(_stats.page_items_would_drop(reason))
            logger.debug(
                "Would be dropped by page directive (dry run): %(why)s",
                {"why": why},
                extra={"spider": self.crawler.spider},
            )
            return item
        self._stats.inc_value(_stats.page_items_dropped(reason))
        raise PageNoindexDropped(f"page directive {why}", reason)

    def _forget(self, item: Any, **_: Any) -> None:
        """An item done with the pipelines (scraped, dropped, failed) is unmarked."""
        self.marks.take(item)


def startup_warnings(crawler: Crawler, config: Config) -> None:
    """Under ``obey``, say which part of obeying is not set up."""
    if config.page_directives != PAGE_OBEY:
        return
    shared = _shared(crawler)
    missing = []
    if not shared.spider_middleware:
        missing.append(
            "nofollow and noindex are not obeyed: PageDirectivesMiddleware is not "
            "in SPIDER_MIDDLEWARES"
        )
    elif shared.marks is None:
        missing.append(
            "items from noindex pages are kept: PageNoindexPipeline is not in "
            "ITEM_PIPELINES"
        )
    for text in missing:
        logger.info(
            "ROBOTS_STD_PAGE_DIRECTIVES is 'obey', but %(text)s",
            {"text": text},
            extra={"spider": crawler.spider},
        )
