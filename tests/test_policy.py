"""The fetch policy (SPEC 3): what a robots.txt fetch outcome means, and the timing rules.

Everything here is a pure function, so the tests are tables: one row per line of SPEC 3's
outcome table, for both standards.
"""

from __future__ import annotations

import math
import time
from datetime import UTC, datetime
from email.utils import format_datetime

import pytest
from hypothesis import given
from hypothesis import strategies as st

from scrapy_robots_std.policy import (
    MAX_REDIRECTS,
    MAX_TTL,
    FetchOutcome,
    FetchReason,
    FetchVerdict,
    RedirectFailure,
    Verdict,
    cache_ttl,
    fetch_verdict,
    max_age,
    parse_retry_after,
    retry_delay,
)

STANDARDS = ("rfc9309", "1994")
PARSE, ALLOW_ALL = Verdict.PARSE, Verdict.ALLOW_ALL
DISALLOW_ALL, UNREACHABLE = Verdict.DISALLOW_ALL, Verdict.UNREACHABLE

# (outcome, rfc9309 (verdict, reason, retry), 1994 (verdict, reason, retry))
_PARSE = (PARSE, "2xx", False)
_REDIRECTS = (ALLOW_ALL, "redirects", False)
_4XX = (ALLOW_ALL, "4xx", False)
_429 = (UNREACHABLE, "429", True)
_5XX = (UNREACHABLE, "5xx", True)
_NETWORK = (UNREACHABLE, "network", True)
_ODD = (UNREACHABLE, "status", True)
_AUTH_1994 = (DISALLOW_ALL, "401-403", False)

OUTCOME_TABLE = [
    # 2xx: the body's rules apply.
    pytest.param(FetchOutcome(status=200), _PARSE, _PARSE, id="200"),
    pytest.param(FetchOutcome(status=204), _PARSE, _PARSE, id="204"),
    pytest.param(FetchOutcome(status=299), _PARSE, _PARSE, id="299"),
    pytest.param(
        FetchOutcome(status=200, redirects=MAX_REDIRECTS),
        _PARSE,
        _PARSE,
        id="200-after-5-hops",
    ),
    # 3xx left over (the fetcher could not follow it): like "unavailable".
    pytest.param(FetchOutcome(status=301), _REDIRECTS, _REDIRECTS, id="301"),
    pytest.param(FetchOutcome(status=302), _REDIRECTS, _REDIRECTS, id="302"),
    pytest.param(FetchOutcome(status=307), _REDIRECTS, _REDIRECTS, id="307"),
    pytest.param(FetchOutcome(status=308), _REDIRECTS, _REDIRECTS, id="308"),
    # An abandoned redirect chain: like a 4xx.
    pytest.param(
        FetchOutcome(
            redirect_failure=RedirectFailure.TOO_MANY, redirects=MAX_REDIRECTS
        ),
        _REDIRECTS,
        _REDIRECTS,
        id="too-many-redirects",
    ),
    pytest.param(
        FetchOutcome(redirect_failure=RedirectFailure.LOOP, redirects=2),
        _REDIRECTS,
        _REDIRECTS,
        id="redirect-loop",
    ),
    pytest.param(
        FetchOutcome(redirect_failure=RedirectFailure.BAD_LOCATION, redirects=1),
        _REDIRECTS,
        _REDIRECTS,
        id="bad-redirect-location",
    ),
    # 4xx except 429: no restrictions; 1994 forbids everything on 401/403.
    pytest.param(FetchOutcome(status=400), _4XX, _4XX, id="400"),
    pytest.param(FetchOutcome(status=401), _4XX, _AUTH_1994, id="401"),
    pytest.param(FetchOutcome(status=403), _4XX, _AUTH_1994, id="403"),
    pytest.param(FetchOutcome(status=404), _4XX, _4XX, id="404"),
    pytest.param(FetchOutcome(status=410), _4XX, _4XX, id="410"),
    pytest.param(FetchOutcome(status=418), _4XX, _4XX, id="418"),
    pytest.param(FetchOutcome(status=451), _4XX, _4XX, id="451"),
    pytest.param(FetchOutcome(status=499), _4XX, _4XX, id="499"),
    # 429 and 5xx: unreachable for now, retry.
    pytest.param(FetchOutcome(status=429), _429, _429, id="429"),
    pytest.param(FetchOutcome(status=500), _5XX, _5XX, id="500"),
    pytest.param(FetchOutcome(status=502), _5XX, _5XX, id="502"),
    pytest.param(FetchOutcome(status=503), _5XX, _5XX, id="503"),
    pytest.param(FetchOutcome(status=504), _5XX, _5XX, id="504"),
    pytest.param(FetchOutcome(status=599), _5XX, _5XX, id="599"),
    # No response at all: unreachable, retry.
    pytest.param(FetchOutcome(error="TimeoutError"), _NETWORK, _NETWORK, id="timeout"),
    pytest.param(
        FetchOutcome(error="DNSLookupError"), _NETWORK, _NETWORK, id="dns-error"
    ),
    pytest.param(
        FetchOutcome(error="ConnectionRefusedError"),
        _NETWORK,
        _NETWORK,
        id="connection-refused",
    ),
    pytest.param(
        FetchOutcome(error="ResponseNeverReceived", redirects=2),
        _NETWORK,
        _NETWORK,
        id="error-after-redirects",
    ),
    pytest.param(FetchOutcome(), _NETWORK, _NETWORK, id="nothing-known"),
    # Statuses outside 2xx-5xx: nothing usable came back.
    pytest.param(FetchOutcome(status=0), _ODD, _ODD, id="0"),
    pytest.param(FetchOutcome(status=100), _ODD, _ODD, id="100"),
    pytest.param(FetchOutcome(status=199), _ODD, _ODD, id="199"),
    pytest.param(FetchOutcome(status=600), _ODD, _ODD, id="600"),
    pytest.param(FetchOutcome(status=999), _ODD, _ODD, id="999"),
]


@pytest.mark.parametrize(("outcome", "rfc9309", "std1994"), OUTCOME_TABLE)
@pytest.mark.parametrize("standard", STANDARDS)
def test_fetch_verdict_table(
    outcome: FetchOutcome,
    rfc9309: tuple[str, str, bool],
    std1994: tuple[str, str, bool],
    standard: str,
) -> None:
    expected = rfc9309 if standard == "rfc9309" else std1994
    result = fetch_verdict(outcome, standard)
    assert (result.verdict, result.reason, result.retry) == expected
    assert result.verdict in list(Verdict)


def test_fetch_verdict_defaults_to_rfc9309() -> None:
    assert fetch_verdict(FetchOutcome(status=403)) == FetchVerdict(
        ALLOW_ALL, FetchReason.CLIENT_ERROR
    )


@pytest.mark.parametrize("standard", ["RFC9309", "rfc 9309", "1996", "", "google"])
def test_fetch_verdict_unknown_standard_raises(standard: str) -> None:
    with pytest.raises(ValueError, match="unknown standard"):
        fetch_verdict(FetchOutcome(status=200), standard)


def test_redirect_failure_wins_over_a_status() -> None:
    outcome = FetchOutcome(status=200, redirect_failure=RedirectFailure.LOOP)
    assert fetch_verdict(outcome).verdict == ALLOW_ALL


@pytest.mark.parametrize("standard", STANDARDS)
def test_an_ignored_request_means_no_restrictions_and_no_retry(standard: str) -> None:
    """Another downloader middleware raised IgnoreRequest: final, allowed."""
    verdict = fetch_verdict(FetchOutcome(ignored=True), standard)
    assert verdict == FetchVerdict(ALLOW_ALL, FetchReason.IGNORED, retry=False)


# -- retry_delay --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("attempt", "base", "retry_after", "cap", "expected"),
    [
        # exponential: base, 2 * base, 4 * base, ...
        (1, 2.0, None, 100.0, 2.0),
        (2, 2.0, None, 100.0, 4.0),
        (3, 2.0, None, 100.0, 8.0),
        (4, 2.0, None, 100.0, 16.0),
        (1, 0.5, None, 100.0, 0.5),
        # attempt 0 (or below) is treated as the first
        (0, 2.0, None, 100.0, 2.0),
        # Retry-After honoured when it asks for longer ...
        (1, 2.0, 10.0, 100.0, 10.0),
        # ... ignored when it asks for less than the backoff
        (3, 2.0, 1.0, 100.0, 8.0),
        (1, 2.0, 0.0, 100.0, 2.0),
        # never more than the cap, whoever asks
        (10, 2.0, None, 30.0, 30.0),
        (1, 2.0, 3600.0, 30.0, 30.0),
        (1, 2.0, math.inf, 30.0, 30.0),
        (1, 2.0, None, 0.0, 0.0),
        # no backoff at all
        (5, 0.0, None, 30.0, 0.0),
        (5, 0.0, 7.0, 30.0, 7.0),
    ],
)
def test_retry_delay(
    attempt: int, base: float, retry_after: float | None, cap: float, expected: float
) -> None:
    delay = retry_delay(attempt, base=base, retry_after=retry_after, cap=cap)
    assert delay == pytest.approx(expected)


@pytest.mark.parametrize("base", [0.0, 2.0])
def test_retry_delay_huge_attempt_is_capped(base: float) -> None:
    assert retry_delay(1025, base=base, cap=30.0) == (30.0 if base else 0.0)


# -- max_age ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("header", "expected"),
    [
        ("max-age=60", 60.0),
        ("public, max-age=3600", 3600.0),
        ("max-age=0", 0.0),
        ("s-maxage=120", 120.0),
        # both: the smaller wins, whichever order
        ("max-age=600, s-maxage=30", 30.0),
        ("s-maxage=600, max-age=30", 30.0),
        # no-store / no-cache: not to be reused
        ("no-store", 0.0),
        ("no-cache", 0.0),
        ("max-age=600, no-cache", 0.0),
        ("no-store, max-age=600", 0.0),
        ('no-cache="Set-Cookie", max-age=60', 0.0),
        # quoted value (not valid HTTP, but seen in the wild)
        ('max-age="60"', 60.0),
        # directive names are case-insensitive
        ("MAX-AGE=60", 60.0),
        ("Max-Age=60", 60.0),
        ("S-MAXAGE=60", 60.0),
        ("NO-STORE", 0.0),
        # spaces around "="
        ("max-age = 60", 60.0),
        # nothing about freshness, or junk
        (None, None),
        ("", None),
        ("public", None),
        ("private, must-revalidate", None),
        ("max-age", None),
        ("max-age=", None),
        ("max-age=abc", None),
        ("max-age=-5", None),
        ("xmax-age=5", None),
        ("no-cacheable", None),
    ],
)
def test_max_age(header: str | None, expected: float | None) -> None:
    assert max_age(header) == expected


# -- cache_ttl ----------------------------------------------------------------------

_DEFAULT_TIMES = {"ttl": MAX_TTL, "min_ttl": 60.0, "unreachable_ttl": 120.0}


@pytest.mark.parametrize(
    ("verdict", "header_max_age", "times", "expected"),
    [
        # the configured TTL when the server says nothing
        (PARSE, None, _DEFAULT_TIMES, MAX_TTL),
        (ALLOW_ALL, None, {**_DEFAULT_TIMES, "ttl": 3600.0}, 3600.0),
        (DISALLOW_ALL, None, {**_DEFAULT_TIMES, "ttl": 3600.0}, 3600.0),
        # the server's max-age shortens it ...
        (PARSE, 600.0, _DEFAULT_TIMES, 600.0),
        (ALLOW_ALL, 600.0, _DEFAULT_TIMES, 600.0),
        # ... but never lengthens it
        (PARSE, 7200.0, {**_DEFAULT_TIMES, "ttl": 3600.0}, 3600.0),
        (PARSE, 10 * MAX_TTL, _DEFAULT_TIMES, MAX_TTL),
        # never below the floor (no-cache does not mean "refetch per page")
        (PARSE, 0.0, _DEFAULT_TIMES, 60.0),
        (PARSE, 10.0, _DEFAULT_TIMES, 60.0),
        (PARSE, 0.0, {**_DEFAULT_TIMES, "min_ttl": 0.0}, 0.0),
        # never above 24 hours, whatever is configured
        (PARSE, None, {**_DEFAULT_TIMES, "ttl": 2 * MAX_TTL}, MAX_TTL),
        (PARSE, None, {**_DEFAULT_TIMES, "min_ttl": 2 * MAX_TTL}, MAX_TTL),
        # unreachable: the short TTL, whatever the header or the floor say
        (UNREACHABLE, None, _DEFAULT_TIMES, 120.0),
        (UNREACHABLE, 3600.0, _DEFAULT_TIMES, 120.0),
        (UNREACHABLE, None, {**_DEFAULT_TIMES, "unreachable_ttl": 5.0}, 5.0),
        (UNREACHABLE, None, {**_DEFAULT_TIMES, "unreachable_ttl": 0.0}, 0.0),
        (UNREACHABLE, None, {**_DEFAULT_TIMES, "unreachable_ttl": 1e9}, MAX_TTL),
    ],
)
def test_cache_ttl(
    verdict: str,
    header_max_age: float | None,
    times: dict[str, float],
    expected: float,
) -> None:
    result = cache_ttl(
        FetchVerdict(Verdict(verdict), FetchReason.OK),
        header_max_age=header_max_age,
        **times,
    )
    assert result == expected


# -- parse_retry_after --------------------------------------------------------------

_NOW = datetime(2025, 1, 1, 12, 0, 0, tzinfo=UTC).timestamp()


def _http_date(offset: float) -> str:
    return format_datetime(datetime.fromtimestamp(_NOW + offset, tz=UTC), usegmt=True)


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("120", 120.0),
        ("0", 0.0),
        (" 7 ", 7.0),
        # HTTP-date in the future: the seconds until then
        (_http_date(90), 90.0),
        ("Wed, 01 Jan 2025 12:01:30 GMT", 90.0),
        # HTTP-date in the past: no wait
        (_http_date(-3600), 0.0),
        (_http_date(0), 0.0),
        # junk
        (None, None),
        ("", None),
        ("soon", None),
        ("-5", None),
        ("1.5", None),
        ("Wed, 99 Foo 2025 12:00:00 GMT", None),
    ],
)
def test_parse_retry_after(value: str | None, expected: float | None) -> None:
    assert parse_retry_after(value, now=_NOW) == expected


@pytest.mark.parametrize(
    "value",
    [
        # the three HTTP-date forms RFC 9110 5.6.7 says a recipient must accept
        "Wed, 01 Jan 2025 12:01:30 GMT",
        "Wednesday, 01-Jan-25 12:01:30 GMT",
        "Wed Jan  1 12:01:30 2025",
        # "-0000" (no zone information) also comes back naive
        "Wed, 01 Jan 2025 12:01:30 -0000",
    ],
)
def test_parse_retry_after_dates_are_gmt_whatever_the_local_zone(
    value: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TZ", "EST5")  # POSIX zone: needs no tz database
    time.tzset()
    try:
        assert parse_retry_after(value, now=_NOW) == 90.0
    finally:
        monkeypatch.undo()
        time.tzset()


@pytest.mark.parametrize("value", ["\xb2", "\xb9\xb3"])
def test_parse_retry_after_non_ascii_digits_are_junk(value: str) -> None:
    assert parse_retry_after(value, now=_NOW) is None


# -- properties ---------------------------------------------------------------------

_times = st.floats(min_value=0, max_value=10 * MAX_TTL, allow_nan=False)


@given(
    verdict=st.sampled_from(list(Verdict)),
    header_max_age=st.none() | st.floats(min_value=0, allow_nan=False),
    ttl=_times,
    min_ttl=_times,
    unreachable_ttl=_times,
)
def test_cache_ttl_is_within_a_day(
    verdict: str,
    header_max_age: float | None,
    ttl: float,
    min_ttl: float,
    unreachable_ttl: float,
) -> None:
    result = cache_ttl(
        FetchVerdict(Verdict(verdict), FetchReason.OK),
        header_max_age=header_max_age,
        ttl=ttl,
        min_ttl=min_ttl,
        unreachable_ttl=unreachable_ttl,
    )
    assert 0.0 <= result <= MAX_TTL


@given(
    attempt=st.integers(min_value=1, max_value=1000),
    base=st.floats(min_value=0, max_value=3600, allow_nan=False),
    retry_after=st.none() | st.floats(min_value=0, allow_nan=False),
    cap=st.floats(min_value=0, max_value=3600, allow_nan=False),
)
def test_retry_delay_is_within_the_cap(
    attempt: int, base: float, retry_after: float | None, cap: float
) -> None:
    delay = retry_delay(attempt, base=base, retry_after=retry_after, cap=cap)
    assert 0.0 <= delay <= cap
