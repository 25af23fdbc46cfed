"""AI usage preferences in the crawl: exposed on every response, enforced on request.

Before a request is sent, :meth:`UsageGate.before` puts what its origin's robots.txt
says (``Content-Usage``, ``Content-Signal``) in ``request.meta["robots_std_usage"]``.
When its response arrives, :meth:`UsageGate.after` folds in the response's own
headers, which can only make a preference stricter. With a declared purpose and
``ROBOTS_STD_USAGE_ENFORCE = "drop"``, a "no" from robots.txt drops the request
before it is sent (no header can lift it), and a "no" from the headers drops the
response. These are *use* preferences, not access rules: robots.txt access
decisions never depend on them.
"""

from __future__ import annotations

import contextlib
import dataclasses
import logging
from typing import TYPE_CHECKING, Final

from scrapy.exceptions import IgnoreRequest

from scrapy_robots_std import policy
from scrapy_robots_std import stats as _stats
from scrapy_robots_std.config import ENFORCE_DROP, ENFORCE_OFF, UNKNOWN_DENY
from scrapy_robots_std.pagerules import META
from scrapy_robots_std.safetext import safe
from scrapy_robots_std.scrapy.origin import origin_key_of, origin_of, tdm_file_of
from scrapy_robots_std.tdmrep import RESERVATION
from scrapy_robots_std.usage.preferences import (
    HEADER,
    REASON_DISALLOWED,
    REASON_NO_ROBOTS_TXT,
    REASON_NO_STATEMENT,
    REASON_TOO_COMPLEX,
    ROBOTS_TXT,
    PurposeDecision,
    UsagePreferences,
)
from scrapy_robots_std.usage.vocab import (
    DISALLOW,
    PURPOSES,
    SYNONYMS,
    UNKNOWN,
    VOCABULARIES,
    check_purpose,
)

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    from scrapy.crawler import Crawler
    from scrapy.http import Request, Response

    from scrapy_robots_std.cache.base import CacheEntry
    from scrapy_robots_std.config import Config
    from scrapy_robots_std.robotstxt.robots import RobotsTxt
    from scrapy_robots_std.scrapy.report import Report
    from scrapy_robots_std.tdmrep import TdmStatement
    from scrapy_robots_std.usage.preferences import UsageSource

__all__ = [
    "DECISION_META",
    "PURPOSE_META",
    "USAGE_META",
    "UsageDisallowed",
    "UsageGate",
]

logger = logging.getLogger("scrapy_robots_std.scrapy.middleware")

#: request/response meta: the :class:`~scrapy_robots_std.UsagePreferences`
USAGE_META: Final = "robots_std_usage"
#: request/response meta: the :class:`~scrapy_robots_std.PurposeDecision`, when a
#: purpose is declared and enforcement is ``tag`` or ``drop``
DECISION_META: Final = "robots_std_usage_decision"
#: request meta: this request's purpose, overriding ``ROBOTS_STD_USAGE_PURPOSE``
PURPOSE_META: Final = "robots_std_usage_purpose"

#: request meta: the robots.txt preferences before the tdmrep.json statement
_BASE_META: Final = "_robots_std_usage_base"

#: How many distinct bad purposes get a WARNING (each once); the stat counts all.
_WARN_AT_MOST: Final = 20
#: Sources a drop line names; the rest are counted ("and N more"): a hostile file
#: may hold thousands of usage lines.
_SHOWN_SOURCES: Final = 3

# Shared answers for the common cases: no object built per request.
_NO_ROBOTS_TXT: Final = UsagePreferences.unknown(REASON_NO_ROBOTS_TXT)
_NO_STATEMENT: Final = UsagePreferences.unknown(REASON_NO_STATEMENT)
_DISALLOWED: Final = UsagePreferences.unknown(REASON_DISALLOWED)


class UsageDisallowed(IgnoreRequest):
    """The ``IgnoreRequest`` of a request or response dropped for a usage preference.

    ``decision`` is the :class:`~scrapy_robots_std.PurposeDecision` (its ``sources``
    name the lines or headers that said no); ``preferences`` is everything known.
    """

    def __init__(
        self, message: str, decision: PurposeDecision, preferences: UsagePreferences
    ) -> None:
        super().__init__(message)
        self.decision = decision
        self.preferences = preferences


class UsageGate:
    """Puts usage preferences on requests and responses; drops when told to."""

    def __init__(
        self,
        crawler: Crawler,
        config: Config,
        report: Report,
        token_of: Callable[[Request], str],
    ) -> None:
        self.crawler = crawler
        self.config = config
        self.report = report
        #: the request's product token, looked up only for a file with usage lines
        self.token_of = token_of
        self._stats = crawler.stats
        #: the bad purposes already warned about (each once)
        self._warned: set[str] = set()

    def parsed(self, origin: str, robots: RobotsTxt) -> None:
        """Count what a robots.txt parsed just now says about usage."""
        said = robots.usage_summary()
        if not (said.stated or said.invalid or said.outside_group):
            return
        for key, count in (
            (_stats.USAGE_RULES_CONTENT_USAGE, said.content_usage),
            (_stats.USAGE_RULES_CONTENT_SIGNAL, said.content_signal),
            (_stats.USAGE_PARSE_ERROR, said.invalid),
            (_stats.USAGE_OUTSIDE_GROUP, said.outside_group),
        ):
            if count:  # no key for what never happened, as elsewhere
                self._stats.inc_value(key, count)
        if said.stated:
            self._stats.inc_value(_stats.USAGE_ORIGINS)
            self.report.usage_stated(origin)

    def loaded(self, entry: CacheEntry) -> None:
        """An entry read from the store (a resume, another process's fetch): named
        in the summary if it states preferences; its lines were counted where it
        was parsed first."""
        robots = entry.robots
        if (
            robots is not None
            and robots.has_usage_rules
            and robots.usage_summary().stated
        ):
            self.report.usage_stated(entry.origin)

    def unchecked(self, request: Request) -> None:
        """A request robots.txt does not apply to (``dont_obey_robotstxt``): what a
        parent's meta carried over is not its own."""
        request.meta.pop(USAGE_META, None)
        request.meta.pop(DECISION_META, None)

    def before(
        self,
        request: Request,
        entry: CacheEntry,
        *,
        allowed: bool,
        tdm_file: TdmStatement | None = None,
    ) -> None:
        """Record what robots.txt (and ``tdm_file``: the origin's tdmrep.json rule
        for the URL) says for ``request``; drop it (``drop`` mode) when that is
        already "no" for its purpose. ``allowed``: robots.txt lets it be fetched
        (``False`` only in a dry run, which has counted it already)."""
        request.meta.pop(_BASE_META, None)
        if not allowed:
            request.meta[USAGE_META] = _DISALLOWED
            request.meta.pop(DECISION_META, None)
            return
        preferences = self._robots_says(request, entry)
        if tdm_file is not None:
            # The response's TDMRep may supersede the file: kept without it.
            request.meta[_BASE_META] = preferences
            preferences = preferences.with_sources((tdm_file.usage_source(),))
        request.meta[USAGE_META] = preferences
        request.meta.pop(DECISION_META, None)  # a redirect's earlier hop decided that
        if self.config.usage_enforce != ENFORCE_DROP:
            return  # decided (and counted) once, when the response is in
        decision = self._decision(request, preferences)
        # Only a "no" is final before the response: a header may still say no,
        # never yes to what robots.txt refused. A tdmrep.json "no" is final too
        # here, though a page's TDMRep header or meta tag could lift it: that is
        # known only once the page is downloaded (docs/usage-preferences.md).
        if decision is not None and decision.value == DISALLOW:
            request.meta[DECISION_META] = decision
            if not self.config.dry_run:  # else counted with its response
                self._count(decision)
            reason, where = _stats.DROP_USAGE, entry.robots_url
            if not any(source.origin == ROBOTS_TXT for source in decision.sources):
                reason, where = _stats.DROP_USAGE_TDM_FILE, _file_url(request)
            self._drop(request, decision, preferences, where, reason)

    def _robots_says(self, request: Request, entry: CacheEntry) -> UsagePreferences:
        """What the origin's robots.txt says about ``request``'s use."""
        robots = entry.robots
        if entry.verdict != policy.Verdict.PARSE or robots is None:
            preferences = _NO_ROBOTS_TXT
        elif not robots.has_usage_rules:
            preferences = _NO_STATEMENT
        else:
            try:
                preferences = robots.usage(request.url, self.token_of(request))
            except ValueError:  # a URL the parser cannot read: nothing known
                preferences = _NO_ROBOTS_TXT
            if preferences.reason == REASON_TOO_COMPLEX:
                self._inc(_stats.USAGE_TOO_COMPLEX)
        return preferences

    def after(
        self,
        request: Request,
        response: Response,
        page: Sequence[UsageSource] = (),
    ) -> None:
        """Fold the response's headers in (and ``page``: its page directives'
        ``noai`` statements, when they are obeyed), record the decision, and drop
        the response (``drop`` mode) when its purpose gets a "no" (or an unknown,
        with ``ROBOTS_STD_USAGE_UNKNOWN = "deny"``)."""
        meta = request.meta
        # Without the tdmrep.json statement: ``page`` has TDMRep's deciding one.
        preferences: UsagePreferences = (
            meta.pop(_BASE_META, None) or meta.get(USAGE_META) or _NO_ROBOTS_TXT
        )
        usage = response.headers.getlist(b"Content-Usage")
        signal = response.headers.getlist(b"Content-Signal")
        if usage or signal:
            self._inc(_stats.USAGE_HEADER_SEEN)
            preferences = preferences.with_headers(usage, signal)
        if page:
            preferences = preferences.with_sources(page)
        meta[USAGE_META] = preferences
        judged = meta.get(DECISION_META)  # a dry run's "no" from robots.txt
        decision = self._decision(request, preferences)
        if decision is None:
            return
        meta[DECISION_META] = decision
        self._count(decision)
        if self.config.usage_enforce != ENFORCE_DROP:
            return
        if isinstance(judged, PurposeDecision) and judged.value == DISALLOW:
            return  # reported before it was sent
        if preferences.reason == REASON_DISALLOWED:
            return  # robots.txt disallows it: a dry run counted it there, once
        if decision.value == DISALLOW:
            reason = _response_reason(decision)
        elif decision.value == UNKNOWN and self.config.usage_unknown == UNKNOWN_DENY:
            reason = _stats.DROP_USAGE_UNKNOWN
        else:
            return
        self._drop(request, decision, preferences, None, reason)

    # -- deciding ----------------------------------------------------------------------

    def declared(self, request: Request) -> bool:
        """Whether ``request`` has a usage purpose (the setting or its meta), valid
        or not: only then are the sources read that only a purpose needs (TDMRep)."""
        return request.meta.get(PURPOSE_META, self.config.usage_purpose) is not None

    def _purpose(self, request: Request) -> str | None:
        purpose = request.meta.get(PURPOSE_META, self.config.usage_purpose)
        if purpose is None:
            return None
        if isinstance(purpose, str):
            with contextlib.suppress(ValueError):
                return check_purpose(purpose.strip().lower())
        self._inc(_stats.USAGE_BAD_PURPOSE)
        shown = safe(repr(purpose)[:200])
        if shown in self._warned or len(self._warned) >= _WARN_AT_MOST:
            return None
        self._warned.add(shown)
        logger.warning(
            "Request meta %(key)s=%(value)s is not a usage purpose (expected one of "
            "%(known)s); no usage decision for %(request)s",
            {
                "key": PURPOSE_META,
                "value": shown,
                "known": ", ".join((*PURPOSES, *SYNONYMS)),
                "request": safe(request),
            },
            extra={"spider": self.crawler.spider},
        )
        return None

    def _decision(
        self, request: Request, preferences: UsagePreferences
    ) -> PurposeDecision | None:
        if self.config.usage_enforce == ENFORCE_OFF:
            return None
        purpose = self._purpose(request)
        return None if purpose is None else preferences.decide(purpose)

    def _count(self, decision: PurposeDecision) -> None:
        self._inc(_stats.usage_decision(decision.purpose, decision.value))
        if decision.conflict:
            self._inc(_stats.USAGE_CONFLICT)

    # -- dropping ----------------------------------------------------------------------

    def _drop(
        self,
        request: Request,
        decision: PurposeDecision,
        preferences: UsagePreferences,
        robots_url: str | None,
        reason: str,
    ) -> None:
        where = (
            f" in {robots_url}"
            if robots_url is not None
            else _WHERE.get(reason, " (response headers)")
        )
        if reason == _stats.DROP_USAGE_UNKNOWN:
            cause = (
                " (robots.txt's Content-Usage paths take more work than one check"
                " may: a hostile file?)"
                if preferences.reason == REASON_TOO_COMPLEX
                else ""
            )
            why = (
                f"unknown for {decision.purpose}{cause} and ROBOTS_STD_USAGE_UNKNOWN"
                " is deny"
            )
        else:
            why = f"{_describe(decision)}{where}"
        values = {"request": safe(request), "why": safe(why)}
        self.report.dropped(origin_key_of(request.url), reason, None)
        if self.config.dry_run:
            self._inc(_stats.would_drop(reason))
            logger.debug(
                "Would be forbidden by usage preference (dry run): %(request)s: %(why)s",
                values,
                extra={"spider": self.crawler.spider},
            )
            return
        self._inc(_stats.dropped(reason))
        logger.debug(
            "Forbidden by usage preference: %(request)s: %(why)s",
            values,
            extra={"spider": self.crawler.spider},
        )
        raise UsageDisallowed(
            f"Forbidden by usage preference: {values['request']}: {values['why']}",
            decision,
            preferences,
        )

    def _inc(self, key: str) -> None:
        self._stats.inc_value(key)


#: Where a response's "no" came from, as a drop line says it.
_WHERE: Final = {
    _stats.DROP_USAGE_PAGE_META: " (the page's meta tags)",
    _stats.DROP_USAGE_TDM_META: " (the page's meta tags)",
}
#: A TDMRep statement's reason, by where it came with the response.
_TDM_REASONS: Final = {
    HEADER: _stats.DROP_USAGE_TDM_HEADER,
    META: _stats.DROP_USAGE_TDM_META,
}
_USAGE_FIELDS: Final = frozenset(vocabulary.field for vocabulary in VOCABULARIES)


def _file_url(request: Request) -> str:
    """The tdmrep.json of ``request``'s origin."""
    origin = origin_of(request.url)
    return "tdmrep.json" if origin is None else tdm_file_of(origin).robots_url


def _response_reason(decision: PurposeDecision) -> str:
    """A response's "no": named by the first source that came with the response
    (a ``Content-Usage`` / ``Content-Signal`` header, an ``X-Robots-Tag`` line, a
    robots meta tag, a TDMRep header or meta tag), else robots.txt's."""
    for source in decision.sources:
        if source.field == RESERVATION:
            reason = _TDM_REASONS.get(source.origin)
            if reason is not None:
                return reason
            continue  # tdmrep.json: known before the response, like robots.txt
        if source.origin == ROBOTS_TXT:
            continue
        if source.field in _USAGE_FIELDS:
            return _stats.DROP_USAGE_HEADER
        if source.origin == HEADER:
            return _stats.DROP_USAGE_PAGE_HEADER
        return _stats.DROP_USAGE_PAGE_META
    return _stats.DROP_USAGE


def _describe(decision: PurposeDecision) -> str:
    """The decision as a drop line says it, naming at most a few of its sources."""
    sources = decision.sources
    if len(sources) <= _SHOWN_SOURCES:
        return str(decision)
    shown = dataclasses.replace(decision, sources=sources[:_SHOWN_SOURCES])
    return f"{shown} (and {len(sources) - _SHOWN_SOURCES} more)"
