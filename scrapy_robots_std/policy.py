"""What a robots.txt fetch result means: a pure function of the outcome (docs/how-it-works.md, "Fetch policy").

No I/O and no Scrapy here: the middleware describes what happened in a
:class:`FetchOutcome`, and :func:`fetch_verdict` says what to do with it, for
either standard. :func:`retry_delay` and :func:`cache_ttl` are the timing rules.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass
from datetime import UTC
from email.utils import parsedate_to_datetime
from enum import StrEnum
from typing import TYPE_CHECKING, Final

from scrapy_robots_std.robotstxt.reader import RFC9309, STD1994

if TYPE_CHECKING:
    from collections.abc import Collection


class Verdict(StrEnum):
    """The verdicts a fetch can end in (``CacheEntry.verdict``)."""

    PARSE = "parse"  # 2xx: the body's rules apply
    ALLOW_ALL = "allow-all"  # no restrictions (4xx, too many redirects)
    DISALLOW_ALL = "disallow-all"  # 1994 only: 401/403
    UNREACHABLE = "unreachable"  # 429, 5xx, network: disallow everything for now


class FetchReason(StrEnum):
    """Why a fetch ended in its verdict (``CacheEntry.reason``): a short, bounded
    label, fit for a stat key. Every value but ``SHUTDOWN`` is
    :func:`fetch_verdict`'s."""

    OK = "2xx"
    NOT_MODIFIED = "304"  # a 304 to a conditional request: the cached copy renewed
    CLIENT_ERROR = "4xx"  # 4xx but 429 (and, in 1994 mode, 401 and 403)
    UNAUTHORIZED = "401-403"  # 1994 mode: access to the site is restricted
    TOO_MANY_REQUESTS = "429"
    SERVER_ERROR = "5xx"
    NETWORK = "network"  # no response (an exception, a timeout)
    REDIRECTS = "redirects"  # a redirect not followed (RedirectFailure, or no Location)
    STATUS = "status"  # a status outside 2xx-5xx
    #: another downloader middleware raised ``IgnoreRequest`` on the robots.txt
    #: request (e.g. ``HTTPCACHE_IGNORE_MISSING``): the origin counts as having no
    #: robots.txt, and no retry can change that
    IGNORED = "ignored"
    #: no outcome: the crawl stopped before the fetch ended (never stored)
    SHUTDOWN = "shutdown"


class RedirectFailure(StrEnum):
    """Why a redirect chain was abandoned; each is treated like a 4xx."""

    TOO_MANY = "too-many-redirects"
    LOOP = "redirect-loop"
    BAD_LOCATION = "bad-redirect-location"


class FetchSource(StrEnum):
    """Where the entry a fetch cycle ends with comes from (the audit records it)."""

    DOWNLOAD = "download"  # this process decided it from a download
    REVALIDATED = "revalidated"  # a 304 renewed the cached copy
    STALE = "stale"  # unreachable: the earlier copy stands in (RFC 9309 2.4)
    STORE = "store"  # the cache's store: another process, or an earlier run


#: Redirect hops followed before a robots.txt counts as unavailable (RFC 9309 2.3.1.2).
MAX_REDIRECTS: Final = 5
#: The longest any verdict may be cached (RFC 9309 2.4: 24 hours).
MAX_TTL: Final = 86400.0


def is_redirect(status: int, has_location: bool) -> bool:
    """A response whose ``Location`` is followed: a 3xx that has one, but a 304
    (it answers a conditional request, whatever its headers say)."""
    return 300 <= status < 400 and status != 304 and has_location


def redirect_failure(
    target: str | None, seen: Collection[str], hops: int
) -> RedirectFailure | None:
    """Why the redirect to ``target`` is not followed; ``None``: follow it.

    ``target`` is the absolute http(s) URL the ``Location`` names (``None``: it
    names none), ``seen`` the URLs of the chain so far, ``hops`` the redirects
    followed so far: at most :data:`MAX_REDIRECTS` (RFC 9309 2.3.1.2: at least five).
    """
    if target is None:
        return RedirectFailure.BAD_LOCATION
    if target in seen:
        return RedirectFailure.LOOP
    if hops >= MAX_REDIRECTS:
        return RedirectFailure.TOO_MANY
    return None


@dataclass(frozen=True)
class FetchOutcome:
    """What one fetch attempt of a robots.txt ended with.

    Exactly one of ``status`` (the final HTTP status after the redirects that were
    followed), ``error`` (the exception's class name when there was no usable
    response), ``redirect_failure`` (why a redirect chain was abandoned) or
    ``ignored`` (another downloader middleware decided not to download it) says
    what happened.
    """

    status: int | None = None
    error: str | None = None
    redirect_failure: RedirectFailure | None = None
    redirects: int = 0
    #: a ``304`` answering the validators of the copy in the cache
    not_modified: bool = False
    #: another downloader middleware raised ``IgnoreRequest`` for the request
    ignored: bool = False


@dataclass(frozen=True)
class FetchVerdict:
    """The meaning of a :class:`FetchOutcome`: a :class:`Verdict`, its
    :class:`FetchReason`, and whether another attempt may change the answer."""

    verdict: Verdict
    reason: FetchReason
    retry: bool = False


def fetch_verdict(outcome: FetchOutcome, standard: str = RFC9309) -> FetchVerdict:
    """Map a fetch outcome to a verdict under ``standard`` (RFC 9309 2.3.1; docs/how-it-works.md, "Fetch policy").

    ========================  ==================  =====================
    outcome                   rfc9309             1994
    ========================  ==================  =====================
    2xx                       parse               parse
    304 to a conditional      parse (the cached   parse (the cached
    request                   copy, renewed)      copy, renewed)
    3xx left over, > 5 hops,  allow-all           allow-all
    loop, bad Location
    401, 403                  allow-all           disallow-all
    other 4xx except 429      allow-all           allow-all
    429, 5xx                  unreachable, retry  unreachable, retry
    network error, timeout    unreachable, retry  unreachable, retry
    1xx, >= 600               unreachable, retry  unreachable, retry
    IgnoreRequest from        allow-all           allow-all
    another middleware        (``ignored``)       (``ignored``)
    ========================  ==================  =====================
    """
    if standard not in (RFC9309, STD1994):
        raise ValueError(f"unknown standard {standard!r}")
    if outcome.ignored:
        # Not downloaded on purpose: final, like Scrapy's built-in middleware, which
        # treats it as a site without robots.txt.
        return FetchVerdict(Verdict.ALLOW_ALL, FetchReason.IGNORED)
    if outcome.redirect_failure is not None:
        return FetchVerdict(Verdict.ALLOW_ALL, FetchReason.REDIRECTS)
    if outcome.not_modified:
        # The cached copy is current: its rules keep applying, renewed.
        return FetchVerdict(Verdict.PARSE, FetchReason.NOT_MODIFIED)
    status = outcome.status
    if status is None:
        return FetchVerdict(Verdict.UNREACHABLE, FetchReason.NETWORK, retry=True)
    if 200 <= status < 300:
        return FetchVerdict(Verdict.PARSE, FetchReason.OK)
    if 300 <= status < 400:
        # A redirect the fetcher did not follow (no Location): RFC 9309 treats an
        # unfollowable redirect like "unavailable".
        return FetchVerdict(Verdict.ALLOW_ALL, FetchReason.REDIRECTS)
    if status == 429:
        return FetchVerdict(
            Verdict.UNREACHABLE, FetchReason.TOO_MANY_REQUESTS, retry=True
        )
    if 400 <= status < 500:
        if standard == STD1994 and status in (401, 403):
            return FetchVerdict(Verdict.DISALLOW_ALL, FetchReason.UNAUTHORIZED)
        return FetchVerdict(Verdict.ALLOW_ALL, FetchReason.CLIENT_ERROR)
    if 500 <= status < 600:
        return FetchVerdict(Verdict.UNREACHABLE, FetchReason.SERVER_ERROR, retry=True)
    return FetchVerdict(Verdict.UNREACHABLE, FetchReason.STATUS, retry=True)


#: The longest validator (``ETag``, ``Last-Modified``) kept and sent back.
MAX_VALIDATOR_CHARS: Final = 512
_VALIDATOR_RE = re.compile(rf"[\x20-\x7e]{{1,{MAX_VALIDATOR_CHARS}}}")


def usable_validator(value: object) -> str | None:
    """``value`` if it can go back to the server as a request header, else ``None``.

    Printable ASCII only and at most :data:`MAX_VALIDATOR_CHARS`: a validator from a
    response or a stored record never carries a line break into a request.
    """
    if not isinstance(value, str):
        return None
    text = value.strip()
    return text if _VALIDATOR_RE.fullmatch(text) else None


def retry_delay(
    attempt: int,
    *,
    base: float,
    retry_after: float | None = None,
    cap: float,
) -> float:
    """Seconds to wait before attempt ``attempt + 1`` (``attempt`` counts from 1).

    Exponential backoff (``base``, ``2 * base``, ``4 * base``, ...); a server's
    ``Retry-After`` is honoured when it asks for longer; never more than ``cap``.
    """
    # The exponent is capped: retry counts are unbounded settings.
    delay = base * 2.0 ** min(max(0, attempt - 1), 64)
    if retry_after is not None and retry_after > delay:
        delay = retry_after
    return max(0.0, min(delay, cap))


_MAX_AGE_RE = re.compile(r"(?:^|[,\s])(s-maxage|max-age)\s*=\s*\"?(\d+)", re.IGNORECASE)
_NO_STORE_RE = re.compile(r"(?:^|[,\s])(no-store|no-cache)(?:$|[,\s=])", re.IGNORECASE)


def max_age(cache_control: str | None) -> float | None:
    """The freshness lifetime a ``Cache-Control`` header value gives, in seconds.

    ``max-age`` (or ``s-maxage``, the smaller wins); ``no-store`` and ``no-cache``
    mean 0. ``None`` when the header says nothing about freshness.
    """
    if not cache_control:
        return None
    if _NO_STORE_RE.search(cache_control):
        return 0.0
    ages: list[float] = [
        float(str(m.group(2))) for m in _MAX_AGE_RE.finditer(cache_control)
    ]
    return float(min(ages)) if ages else None


def cache_ttl(
    verdict: FetchVerdict,
    *,
    header_max_age: float | None,
    ttl: float,
    min_ttl: float,
    unreachable_ttl: float,
) -> float:
    """How long a verdict stays fresh, in seconds.

    Unreachable verdicts get the short ``unreachable_ttl``. Others get ``ttl``,
    shortened by the server's ``max-age`` but never below ``min_ttl`` (so a
    ``no-cache`` robots.txt is not refetched before every page) and never above
    24 hours.
    """
    if verdict.verdict == Verdict.UNREACHABLE:
        return max(0.0, min(unreachable_ttl, MAX_TTL))
    fresh = ttl if header_max_age is None else min(ttl, header_max_age)
    return max(0.0, min(max(fresh, min_ttl), MAX_TTL))


def parse_retry_after(value: str | None, now: float | None = None) -> float | None:
    """Seconds from a ``Retry-After`` header: delta-seconds or an HTTP date."""
    if value is None:
        return None
    text = value.strip()
    if text.isascii() and text.isdigit():
        return float(text)
    try:
        when = parsedate_to_datetime(text)
    except (TypeError, ValueError, IndexError, OverflowError):
        return None
    if when is None:
        return None
    if when.tzinfo is None:  # asctime dates and "-0000" are UTC (RFC 9110 5.6.7)
        when = when.replace(tzinfo=UTC)
    current = time.time() if now is None else now
    return max(0.0, when.timestamp() - current)
