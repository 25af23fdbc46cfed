"""The stored record's codec: hostile or damaged metadata is a miss, never an error,
and no record outlives the 24 h RFC 9309 allows (issue 16, point 5)."""

from __future__ import annotations

import json
import time

import pytest

from scrapy_robots_std.cache.record import dump_meta, load_meta
from scrapy_robots_std.policy import MAX_TTL
from tests.helpers.cache import parse_entry

A = "http://a.example:80"
RULES = b"User-agent: *\nDisallow: /private/\n"


def _fields(**changes: object) -> bytes:
    fields = json.loads(dump_meta(parse_entry(A, RULES), "rfc9309"))
    fields.update(changes)
    return json.dumps(fields).encode()


def test_a_stored_record_reads_back() -> None:
    entry = parse_entry(A, RULES)
    meta = load_meta(dump_meta(entry, "rfc9309"))
    assert meta is not None
    assert (meta.origin, meta.verdict, meta.expires_at) == (
        A,
        "parse",
        entry.expires_at,
    )


@pytest.mark.parametrize(
    "raw",
    [
        pytest.param(b"[" * 20_000 + b"]" * 20_000, id="deep-nesting"),
        pytest.param(b'{"a": ' * 5_000 + b"1" + b"}" * 5_000, id="deep-objects"),
        pytest.param(b"\xff{not json", id="not-utf8"),
        pytest.param(b"x" * 200_000, id="huge"),
        pytest.param(_fields(status="200"), id="status-as-text"),
        pytest.param(_fields(fetched_at=True), id="time-as-bool"),
        pytest.param(_fields(expires_at=float("inf")), id="infinite-expiry"),
        pytest.param(_fields(detail=["x"]), id="detail-as-list"),
        pytest.param(_fields(verdict="allow-everything"), id="unknown-verdict"),
        pytest.param(_fields(format=99), id="other-format"),
    ],
)
def test_damaged_or_hostile_metadata_is_a_miss(raw: bytes) -> None:
    assert load_meta(raw) is None


def test_an_expiry_years_ahead_is_invalid() -> None:
    """Past the 24 h cap: no process of ours wrote it (issue 27, point 4)."""
    now = time.time()
    assert load_meta(_fields(fetched_at=now, expires_at=now + 10 * 365 * 86400)) is None
    meta = load_meta(_fields(fetched_at=now, expires_at=now + MAX_TTL))
    assert meta is not None
    assert meta.expires_at == pytest.approx(now + MAX_TTL)


@pytest.mark.parametrize(
    "fetched_at",
    [1e300, -1.0, "future"],
)
def test_an_impossible_fetch_time_is_invalid(fetched_at: object) -> None:
    """``fetched_at = 1e300`` used to be served as fresh, and then broke the audit's
    time formatting."""
    now = time.time()
    value = now + 365 * 86400 if fetched_at == "future" else fetched_at
    assert load_meta(_fields(fetched_at=value, expires_at=now + 3600)) is None


def test_a_time_a_little_ahead_is_a_clock_skew_and_valid() -> None:
    """Another machine of the fleet, its clock a minute ahead."""
    ahead = time.time() + 60
    meta = load_meta(_fields(fetched_at=ahead, expires_at=ahead + 3600))
    assert meta is not None
    assert meta.fetched_at == ahead
