"""TDMRep in the crawl: each response's headers and meta tags, when a purpose is declared.

Only a request with a usage purpose (``ROBOTS_STD_USAGE_PURPOSE``, or its
``robots_std_usage_purpose`` meta) gets its response read: the ``tdm-reservation`` /
``tdm-policy`` headers and, for HTML, the meta tags of those names in the head.
:class:`TdmReader` puts the result in ``meta["robots_std_tdm"]``, counts it, and hands
the deciding statement to the usage preferences, where it combines most
restrictively with the other sources (``1``: no to the AI purposes; ``0``: yes).
A request with ``dont_obey_robotstxt`` gets it read and exposed, never folded in.

The origin's ``/.well-known/tdmrep.json`` is fetched before the request is sent
(:mod:`scrapy_robots_std.scrapy.tdmfile`); :meth:`TdmReader.file_said` puts its
statement for the request's URL on the request, and the response's headers and meta
tags take precedence over it. The parsing is pure (:mod:`scrapy_robots_std.tdmrep`,
:mod:`scrapy_robots_std.pagehead`).
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Final

from w3lib.encoding import http_content_type_encoding

from scrapy_robots_std import stats as _stats
from scrapy_robots_std.pagehead import HeadReader, is_html
from scrapy_robots_std.pagerules import META
from scrapy_robots_std.safetext import safe
from scrapy_robots_std.scrapy.origin import origin_key_of
from scrapy_robots_std.tdmrep import (
    EMPTY,
    FILE,
    MAX_LINES,
    TdmFile,
    TdmRep,
    TdmStatement,
    meta_filter,
    read,
)
from scrapy_robots_std.usage.preferences import HEADER

if TYPE_CHECKING:
    from scrapy.crawler import Crawler
    from scrapy.http import Request, Response

    from scrapy_robots_std.scrapy.audit import AuditLog
    from scrapy_robots_std.usage.preferences import UsageSource

__all__ = ["TDM_META", "TdmReader"]

logger = logging.getLogger("scrapy_robots_std.scrapy.middleware")

#: request/response meta: the response's :class:`~scrapy_robots_std.tdmrep.TdmRep`
TDM_META: Final = "robots_std_tdm"
#: request meta: the origin's tdmrep.json statement for the URL (None: unset)
_FILE_META: Final = "_robots_std_tdm_file"
#: The stat of the technique that decided a response.
_FROM: Final = {
    META: _stats.TDM_FROM_META,
    HEADER: _stats.TDM_FROM_HEADER,
    FILE: _stats.TDM_FROM_FILE,
}
#: Where a deciding statement came from, as the audit file's ``tdm`` counts name it.
_AUDIT: Final = {META: "meta", HEADER: "header", FILE: "file"}
#: meta tags of the two TDMRep names kept per page (more are a protocol error)
_METAS: Final = 2 * MAX_LINES


class TdmReader:
    """Reads each response's TDMRep headers and meta tags into ``meta["robots_std_tdm"]``."""

    def __init__(self, crawler: Crawler, audit: AuditLog | None = None) -> None:
        self.crawler = crawler
        #: counts, per origin, where each response's deciding statement came from
        self.audit = audit
        self._stats = crawler.stats
        self._heads: HeadReader | None = None  # made on the first HTML page

    def file_said(self, request: Request, file: TdmFile | None) -> TdmStatement | None:
        """What the origin's tdmrep.json (``None``: unset) says for ``request``,
        before it is sent: on its meta (``robots_std_tdm``), and returned."""
        if file is None:
            request.meta.pop(_FILE_META, None)
            request.meta[TDM_META] = EMPTY
            return None
        statement, notes = file.statement(request.url)
        request.meta[_FILE_META] = statement
        request.meta[TDM_META] = read(file=statement, notes=notes)
        return statement

    def read(self, request: Request, response: Response) -> tuple[UsageSource, ...]:
        """Put the response's TDMRep on its meta; return what the usage preferences
        fold in (the deciding statement, unless the request is exempt)."""
        said = self._said(response, request.meta.get(_FILE_META))
        request.meta[TDM_META] = said
        self._stats.inc_value(_stats.TDM_RESPONSES)
        if said is EMPTY:
            return ()
        self._count(response, said)
        if request.meta.get("dont_obey_robotstxt"):
            return ()
        return said.usage_sources()

    def _said(self, response: Response, file: TdmStatement | None) -> TdmRep:
        headers = response.headers
        reservation = headers.getlist(b"tdm-reservation")
        policy = headers.getlist(b"tdm-policy")
        content_type = headers.get(b"Content-Type") or b""
        if not is_html(content_type):
            if not (reservation or policy or file):
                return EMPTY
            return read(reservation, policy, file=file)
        heads = self._heads
        if heads is None:
            heads = self._heads = HeadReader(
                meta_filter, most=_METAS, label="TDMRep meta tag(s)"
            )
        encoding = http_content_type_encoding(content_type.decode("latin-1"))
        head = heads.read(response.body, encoding)
        return read(reservation, policy, head.metas, file=file, notes=head.notes)

    def _count(self, response: Response, said: TdmRep) -> None:
        statement = said.statement
        if statement is not None:
            reserved = statement.reserved
            self._stats.inc_value(
                _stats.TDM_RESERVED if reserved else _stats.TDM_NOT_RESERVED
            )
            self._stats.inc_value(_FROM[statement.origin])
            if self.audit is not None:
                self.audit.tdm_seen(
                    origin_key_of(response.url), _AUDIT[statement.origin]
                )
            if statement.policy is not None:
                self._stats.inc_value(_stats.TDM_POLICY)
        if said.notes:
            self._stats.inc_value(_stats.TDM_NOTES)
            logger.debug(
                "TDMRep of %(response)s not all used: %(notes)s",
                {"response": safe(response), "notes": safe("; ".join(said.notes))},
                extra={"spider": self.crawler.spider},
            )
