"""The stored record's codec: hostile or damaged metadata is a miss, never an error,
and no record outlives the 24 h RFC 9309 allows (issue 16, point 5)."""

from __future__ import annotations

import hashlib
import json
import time

import pytest

from scrapy_robots_std.cache.record import build_entry, dump_meta, load_meta, pack_body
from scrapy_robots_std.policy import MAX_TTL, FetchReason, Verdict
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


# -- records written before the vocabularies had one home (issue 24) ------------------

#: A record as versions before issue 24 wrote it (FORMAT 1): plain strings for the
#: verdict and the reason, the digest in hex.
OLD_RECORD = (
    '{"format":1,"origin":"https://a.example:443","standard":"rfc9309",'
    '"robots_url":"https://a.example/robots.txt","verdict":"parse","reason":"2xx",'
    '"detail":"HTTP 200","status":200,"fetched_at":%(now)r,"expires_at":%(later)r,'
    '"etag":"\\"v1\\"","body_sha256":"%(sha)s","body_bytes":%(size)d}'
)


def test_a_record_written_before_still_loads_and_writes_back_the_same() -> None:
    now = time.time()
    fields = {
        "now": now,
        "later": now + 3600,
        "sha": hashlib.sha256(RULES).hexdigest(),
        "size": len(RULES),
    }
    raw = (OLD_RECORD % fields).encode()
    meta = load_meta(raw)
    assert meta is not None
    entry = build_entry(meta, pack_body(RULES))
    assert entry is not None
    assert entry.verdict is Verdict.PARSE
    assert entry.reason is FetchReason.OK
    assert (entry.robots_url, entry.detail, entry.etag) == (
        "https://a.example/robots.txt",
        "HTTP 200",
        '"v1"',
    )
    assert (entry.body_sha256, entry.body_bytes) == (fields["sha"], len(RULES))
    assert entry.robots is not None
    assert not entry.robots.allowed("https://a.example/private/x", "Bot")
    assert json.loads(dump_meta(entry, "rfc9309")) == json.loads(raw)


@pytest.mark.parametrize("reason", [r.value for r in FetchReason])
def test_every_reason_reads_back_as_its_member(reason: str) -> None:
    meta = load_meta(_fields(reason=reason))
    assert meta is not None
    assert meta.reason is FetchReason(reason)


def test_a_reason_this_version_does_not_know_is_kept_as_text() -> None:
    """A newer version's label: the record is still usable."""
    meta = load_meta(_fields(reason="5xx-after-backoff"))
    assert meta is not None
    assert meta.reason == "5xx-after-backoff"
