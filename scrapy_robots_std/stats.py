"""Every stat key this package sets, and the reasons a request is dropped.

Scrapy's own ``robotstxt/*`` keys keep their built-in meaning; the package's own keys
are ``robots_std/...``. The README's stats table lists the same names, in this order.
"""

from __future__ import annotations

from typing import Final

from scrapy_robots_std.policy import FetchReason, FetchSource, Verdict
from scrapy_robots_std.robotstxt.robots import REASON_RULE
from scrapy_robots_std.usage.preferences import REASON_TOO_COMPLEX

#: Prefix of every stat key this package adds.
PREFIX: Final = "robots_std/"

# Why a request was dropped (the ``robots_std/dropped/<reason>`` keys), and the
# ``Decision.reason`` of a request disallowed without a rule. A drop named after
# what decided it takes that name from where it is defined.
DROP_RULE: Final = REASON_RULE  # a Disallow rule of the robots.txt decided
#: robots.txt could not be fetched (its verdict)
DROP_UNREACHABLE: Final = Verdict.UNREACHABLE.value
DROP_STATUS: Final = "http-status"  # 1994 mode: robots.txt answered 401 or 403
#: still waiting for robots.txt when the spider closed (the verdict's reason)
DROP_SHUTDOWN: Final = FetchReason.SHUTDOWN.value
#: the robots.txt's wildcard rules need more work than one check may take (a hostile
#: file): disallowed to be safe
DROP_TOO_COMPLEX: Final = REASON_TOO_COMPLEX
# Usage preferences (ROBOTS_STD_USAGE_ENFORCE = "drop"): not access rules.
DROP_USAGE: Final = "usage"  # robots.txt's Content-Usage/Content-Signal said no
DROP_USAGE_HEADER: Final = "usage-header"  # the response's headers said no
DROP_USAGE_UNKNOWN: Final = (
    "usage-unknown"  # unknown, and ROBOTS_STD_USAGE_UNKNOWN=deny
)
# Page-level robots directives (ROBOTS_STD_PAGE_DIRECTIVES = "obey"), named by source.
#: a response's X-Robots-Tag / robots meta tag said noai or noimageai to the purpose
DROP_USAGE_PAGE_HEADER: Final = "usage-page-header"
DROP_USAGE_PAGE_META: Final = "usage-page-meta"
# TDMRep (a usage purpose declared), named by source.
#: a response's tdm-reservation header / meta tag said 1 (reserved) to the purpose
DROP_USAGE_TDM_HEADER: Final = "usage-tdm-header"
DROP_USAGE_TDM_META: Final = "usage-tdm-meta"
#: the origin's /.well-known/tdmrep.json reserved the request's path (before sending)
DROP_USAGE_TDM_FILE: Final = "usage-tdm-file"
#: a request the spider yielded from a response whose X-Robots-Tag / robots meta
#: tag says nofollow (or none)
DROP_NOFOLLOW_HEADER: Final = "nofollow-header"
DROP_NOFOLLOW_META: Final = "nofollow-meta"
#: (items, not requests: ``robots_std/page/items_dropped/<reason>``) an item from a
#: response whose X-Robots-Tag / robots meta tag says noindex (or none)
DROP_NOINDEX_HEADER: Final = "noindex-header"
DROP_NOINDEX_META: Final = "noindex-meta"


def stat(*parts: str) -> str:
    """``robots_std/<part>/<part>...``."""
    return PREFIX + "/".join(parts)


# -- Scrapy's keys, with the built-in middleware's meaning --------------------------
ROBOTS_REQUESTS: Final = "robotstxt/request_count"
ROBOTS_RESPONSES: Final = "robotstxt/response_count"
FORBIDDEN: Final = "robotstxt/forbidden"


def robots_status(status: int) -> str:
    return f"robotstxt/response_status_count/{status}"


def robots_exception(exc: BaseException) -> str:
    return f"robotstxt/exception_count/{type(exc)}"


# -- drops and verdicts --------------------------------------------------------------
def dropped(reason: str) -> str:
    return stat("dropped", reason)


def would_drop(reason: str) -> str:
    return stat("would_drop", reason)


def dropped_by_origin(origin: str) -> str:
    """Set for the top ``ROBOTS_STD_SUMMARY_TOP`` origins only (a bounded set)."""
    return stat("dropped_by_origin", origin)


def verdict(name: str) -> str:
    """``name``: a :class:`~scrapy_robots_std.policy.Verdict`; see also the two below."""
    return stat("verdict", name)


#: fetch cycles ended by an ``IgnoreRequest`` another downloader middleware raised on
#: the robots.txt request (``HTTPCACHE_IGNORE_MISSING``): no restrictions, counted in
#: ``robots_std/verdict/allow-all`` too
VERDICT_IGNORED: Final = verdict(FetchReason.IGNORED)
#: fetch cycles that found the origin unreachable and kept the earlier copy (RFC
#: 9309 2.4), counted in ``robots_std/verdict/unreachable`` too
VERDICT_STALE: Final = verdict(FetchSource.STALE)

FETCH_RETRIES: Final = stat("fetch", "retries")
#: robots.txt downloads cancelled because the crawl stopped
FETCH_CANCELLED: Final = stat("fetch", "cancelled")
#: robots.txt downloads the package ended itself at ROBOTS_STD_FETCH_TIMEOUT: the
#: download handler had not (it ignores ``download_timeout``, or the reactor lagged)
FETCH_DEADLINE: Final = stat("fetch", "deadline")
#: robots.txt requests sent with If-None-Match / If-Modified-Since
FETCH_CONDITIONAL: Final = stat("fetch", "conditional")
BODY_TRUNCATED: Final = stat("body", "truncated")
#: compressed robots.txt bodies refused for inflating past the cap
BODY_OVER_DECOMPRESSION_CAP: Final = stat("body", "over_decompression_cap")

# -- the cache ---------------------------------------------------------------------
CACHE_HIT: Final = stat("cache", "hit")
CACHE_MISS: Final = stat("cache", "miss")
CACHE_EVICTION: Final = stat("cache", "eviction")
#: expired copies a 304 renewed without parsing again
CACHE_REVALIDATED: Final = stat("cache", "revalidated")
#: the most bytes the in-memory cache held at once (as ROBOTS_STD_CACHE_MAX_BYTES counts)
CACHE_BYTES_PEAK: Final = stat("cache", "bytes_peak")
CACHE_SHARED: Final = stat("cache", "shared")
CACHE_STORE_HIT: Final = stat("cache", "store_hit")
CACHE_STORE_ERROR: Final = stat("cache", "store_error")
CACHE_STORE_INVALID: Final = stat("cache", "store_invalid")
CACHE_STORE_SLOW: Final = stat("cache", "store_slow")
CACHE_STORE_TIMEOUT: Final = stat("cache", "store_timeout")
#: renewals (a 304, a stale copy standing in) whose stored record was gone
CACHE_REDATE_MISSED: Final = stat("cache", "redate_missed")

# -- waiting -----------------------------------------------------------------------
WAIT_HELD: Final = stat("wait", "held")
WAIT_LEFT_AT_CLOSE: Final = stat("wait", "left_at_close")
#: a step of closing that failed (the others still ran); logged at ERROR
CLOSE_FAILED: Final = stat("close", "failed")
#: requests held in a queue whose store could not be read at close (Redis down)
WAIT_UNCOUNTED: Final = stat("wait", "uncounted_at_close")
#: a request that could not be held (the store failed): it went on to the downloader
WAIT_HOLD_FAILED: Final = stat("wait", "hold_failed")
#: a key or an entry in Redis the waiting queue cannot use (another type, unreadable)
WAIT_STORE_PROBLEM: Final = stat("wait", "store_problem")
#: outages of the Redis that RobotsAwareRedisQueue keeps its requests in
WAIT_STORE_UNREACHABLE: Final = stat("wait", "store_unreachable")
#: requests Redis could not store, kept in the worker's memory and sent on from there
WAIT_KEPT_IN_MEMORY: Final = stat("wait", "kept_in_memory")
#: requests still kept in memory at close, with Redis not answering: lost
WAIT_LOST_AT_CLOSE: Final = stat("wait", "lost_at_close")
#: requests kept in memory that scrapy-redis's flush at close dropped (PERSIST off)
WAIT_DROPPED_BY_FLUSH: Final = stat("wait", "dropped_by_flush")
WAIT_REQUESTS: Final = stat("wait", "requests")
WAIT_SECONDS: Final = stat("wait", "seconds")
WAIT_MAX_SECONDS: Final = stat("wait", "max_seconds")

# -- politeness and sitemaps -----------------------------------------------------------
DELAY_ASKED: Final = stat("delay", "asked")
DELAY_APPLIED: Final = stat("delay", "applied")
DELAY_CAPPED: Final = stat("delay", "capped")
DELAY_IGNORED: Final = stat("delay", "ignored")
DELAY_MAX_SECONDS: Final = stat("delay", "max_seconds")
DELAY_REQUESTS: Final = stat("delay", "requests")
SITEMAPS_SCHEDULED: Final = stat("sitemaps", "scheduled")
SITEMAPS_INVALID: Final = stat("sitemaps", "invalid")


# -- usage preferences (Content-Usage, Content-Signal) --------------------------------
#: lines in the robots.txt files parsed, by field
USAGE_RULES_CONTENT_USAGE: Final = stat("usage", "rules", "content_usage")
USAGE_RULES_CONTENT_SIGNAL: Final = stat("usage", "rules", "content_signal")
#: usage lines whose value did not parse (every category unknown under them)
USAGE_PARSE_ERROR: Final = stat("usage", "parse_error")
#: usage lines before any user-agent line (ignored)
USAGE_OUTSIDE_GROUP: Final = stat("usage", "outside_group")
#: robots.txt files parsed that state usage preferences
USAGE_ORIGINS: Final = stat("usage", "origins")
#: responses that carried a Content-Usage or Content-Signal header
USAGE_HEADER_SEEN: Final = stat("usage", "header_seen")
#: decisions where one vocabulary allowed and the other disallowed (resolved: no)
USAGE_CONFLICT: Final = stat("usage", "conflict")
#: requests whose meta named an unknown purpose (no decision made)
USAGE_BAD_PURPOSE: Final = stat("usage", "bad_purpose")
#: requests whose robots.txt usage lines took more work than one check may (a hostile
#: file): every category unknown for them (usage.preferences.REASON_TOO_COMPLEX)
USAGE_TOO_COMPLEX: Final = stat("usage", "too_complex")


def usage_decision(purpose: str, value: str) -> str:
    """``robots_std/usage/decision/<purpose>/<allow|disallow|unknown>``."""
    return stat("usage", "decision", purpose, value)


# -- page-level robots directives (ROBOTS_STD_PAGE_DIRECTIVES "tag" or "obey") -------
#: responses whose page directives were read
PAGE_RESPONSES: Final = stat("page", "responses")
#: responses with at least one directive the package does not know (kept, no effect)
PAGE_UNKNOWN: Final = stat("page", "unknown")
#: responses with X-Robots-Tag lines scoped to another crawler (not applied)
PAGE_OTHER_CRAWLER: Final = stat("page", "other_crawler")
#: responses whose directives were not all read (a bound reached, an HTML head the
#: parser could not read to its end)
PAGE_CUT: Final = stat("page", "cut")


def page_directive(name: str) -> str:
    """``robots_std/page/<directive>``: responses whose directives include it
    (``name`` is one of ``pagerules.DIRECTIVES``: a bounded set)."""
    return stat("page", name)


def page_items_dropped(reason: str) -> str:
    """``robots_std/page/items_dropped/<noindex-header|noindex-meta>``."""
    return stat("page", "items_dropped", reason)


def page_items_would_drop(reason: str) -> str:
    """The same in a dry run: kept, but would have been dropped."""
    return stat("page", "items_would_drop", reason)


# -- TDMRep (a usage purpose declared) ------------------------------------------------
#: responses whose TDMRep headers and meta tags were read
TDM_RESPONSES: Final = stat("tdm", "responses")
#: responses TDMRep decided: reserved (1) or not (0)
TDM_RESERVED: Final = stat("tdm", "reserved")
TDM_NOT_RESERVED: Final = stat("tdm", "not_reserved")
#: ... by the technique that decided: a header, a meta tag
TDM_FROM_HEADER: Final = stat("tdm", "from", "header")
TDM_FROM_META: Final = stat("tdm", "from", "meta")
TDM_FROM_FILE: Final = stat("tdm", "from", "file")
#: responses whose deciding statement names a tdm-policy (exposed, never fetched)
TDM_POLICY: Final = stat("tdm", "policy")
#: responses whose TDMRep reading left a note (a protocol error: unset; a bound)
TDM_NOTES: Final = stat("tdm", "notes")
# The origin's /.well-known/tdmrep.json, fetched once per origin (and TTL):
#: its requests sent (each redirect hop is one)
TDM_FILE_REQUESTS: Final = stat("tdm", "file", "requests")
#: fetches that ended in a file with usable rules
TDM_FILE_FETCHED: Final = stat("tdm", "file", "fetched")
#: fetches answered 404 (or another 4xx, or an unfollowable redirect): unset
TDM_FILE_MISSING: Final = stat("tdm", "file", "missing")
#: fetches that failed (5xx, 429, a network error, the deadline): unset for now
TDM_FILE_FAILED: Final = stat("tdm", "file", "failed")
#: files not usable as a whole (not JSON, not an array, over 500 KiB): unset
TDM_FILE_MALFORMED: Final = stat("tdm", "file", "malformed")
#: files over 500 KiB (also counted as malformed): the download stops there
TDM_FILE_TOO_LARGE: Final = stat("tdm", "file", "too_large")
#: files with notes on some of their rules (skipped rules, invalid values)
TDM_FILE_NOTES: Final = stat("tdm", "file", "notes")
#: a copy fetched earlier stood in for a file that failed (as for robots.txt)
TDM_FILE_STALE: Final = stat("tdm", "file", "stale")


# -- the audit file (ROBOTS_STD_AUDIT_PATH) --------------------------------------------
#: records appended to the audit file
AUDIT_RECORDS: Final = stat("audit", "records")
#: a write to the audit file failed (the audit stopped there)
AUDIT_ERROR: Final = stat("audit", "error")
