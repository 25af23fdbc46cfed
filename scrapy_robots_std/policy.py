"""What a robots.txt fetch result means: a pure function of the outcome (SPEC 3).

No I/O and no Scrapy here: the middleware describes what happened in a
:class:`FetchOutcome`, and :func:`fetch_verdict` says what to do with it, for
either standard. :func:`retry_delay` and :func:`cache_ttl` are the timing rules.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass
from datetime import timezone
from email.utils import parsedate_to_datetime
from typing import Final

from scrapy_robots_std.robotstxt.parser import RFC9309, STD1994

#: The verdicts a fetch can end in.
PARSE: Final = "parse"  # 2xx: the body's rules apply
ALLOW_ALL: Final = "allow-all"  # no restrictions (4xx, too many redirects)
DISALLOW_ALL: Final = "disallow-all"  # 1994 only: 401/403
UNREACHABLE: Final = "unreachable"  # 429, 5xx, network: disallow everything for now

VERDICTS: Final = (PARSE, ALLOW_ALL, DISALLOW_ALL, UNREACHABLE)

#: Redirect hops followed before a robots.txt counts as unavailable (RFC 9309 2.3.1.2).
MAX_REDIRECTS: Final = 5
#: The longest any verdict may be cached (RFC 9309 2.4: 24 hours).
MAX_TTL: Final = 86400.0

# Why a redirect chain was abandoned; each is treated like a 4xx.
REDIRECT_TOO_MANY: Final = "too-many-redirects"
REDIRECT_LOOP: Final = "redirect-loop"
REDIRECT_BAD_LOCATION: Final = "bad-redirect-location"

#: The reason of the verdict when another downloader middleware raised
#: ``IgnoreRequest`` on the robots.txt request (e.g. ``HTTPCACHE_IGNORE_MISSING``): the
#: origin counts as having no robots.txt, and no retry can change that.
IGNORED: Final = "ignored"


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
    redirect_failure: str | None = None
    redirects: int = 0
    #: a ``304`` answering the validators of the copy in the cache
    not_modified: bool = False
    #: another downloader middleware raised ``IgnoreRequest`` for the request
    ignored: bool = False


@dataclass(frozen=True)
class FetchVerdict:
    """The meaning of a :class:`FetchOutcome`.

    ``verdict`` is one of :data:`VERDICTS`; ``reason`` is a short, bounded label
    (``"2xx"``, ``"404"``-style classes are folded: ``"4xx"``, ``"401-403"``,
    ``"429"``, ``"5xx"``, ``"network"``, ``"redirects"``, ``"status"``,
    ``"ignored"``) fit for a stat key; ``retry`` tells whether another attempt may
    change the answer.
    """

    verdict: str
    reason: str
    retry: bool = False


def fetch_verdict(outcome: FetchOutcome, standard: str = RFC9309) -> FetchVerdict:
    """Map a fetch outcome to a verdict under ``standard`` (SPEC 3, RFC 9309 2.3.1).

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
        return FetchVerdict(ALLOW_ALL, IGNORED)
    if outcome.redirect_failure is not None:
        return FetchVerdict(ALLOW_ALL, "redirects")
    if outcome.not_modified:
        # The cached copy is current: its rules keep applying, renewed.
        return FetchVerdict(PARSE, "304")
    status = outcome.status
    if status is None:
        return FetchVerdict(UNREACHABLE, "network", retry=True)
    if 200 <= status < 300:
        return FetchVerdict(PARSE, "2xx")
    if 300 <= status < 400:
        # A redirect the fetcher did not follow (no Location): RFC 9309 treats an
        # unfollowable redirect like "unavailable".
        return FetchVerdict(ALLOW_ALL, "redirects")
    if status == 429:
        return FetchVerdict(UNREACHABLE, "429", retry=True)
    if 400 <= status < 500:
        if standard == STD1994 and status in (401, 403):
            return FetchVerdict(DISALLOW_ALL, "401-403")
        return FetchVerdict(ALLOW_ALL, "4xx")
    if 500 <= status < 600:
        return FetchVerdict(UNREACHABLE, "5xx", retry=True)
    return FetchVerdict(UNREACHABLE, "status", retry=True)


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
    if verdict.verdict == UNREACHABLE:
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
        when = when.replace(tzinfo=timezone.utc)
    current = time.time() if now is None else now
    return max(0.0, when.timestamp() - current)
