"""How a persistent cache backend writes an entry down, and how it reads one back.

A stored entry is the entry's metadata (a small JSON object) and the robots.txt body
its rules came from (zlib-compressed), never the parsed object: loading parses the
body again under the crawl's standard, so what sits in a file or in Redis does not
depend on the parser's internals and survives package upgrades. A record of another
format or standard, or one that does not decode, is a miss: the origin is fetched
again.
"""

from __future__ import annotations

import json
import math
import re
import time
import zlib
from dataclasses import dataclass
from enum import Enum
from typing import Any, Final, TypeGuard, TypeVar

from scrapy_robots_std.cache.base import CacheEntry, is_tdm_key
from scrapy_robots_std.policy import MAX_TTL, FetchReason, Verdict, usable_validator
from scrapy_robots_std.robotstxt.reader import MAX_READ_BYTES
from scrapy_robots_std.robotstxt.robots import RobotsTxt
from scrapy_robots_std.tdmrep import TdmFile, parse_file

__all__ = ["FORMAT", "Meta", "build_entry", "dump_meta", "load_meta", "pack_body"]

#: Bumped when the metadata's shape changes; older records then read as misses.
FORMAT: Final = 1
#: What the parser may read and one byte more (``MAX_READ_BYTES``): a body cut on
#: the wire stays "over the limit", so parsing it again completes or drops the
#: line that crosses 500 KiB exactly as the first parse did.
KEPT_BODY_BYTES: Final = MAX_READ_BYTES
_SHA256_RE: Final = re.compile(r"[0-9a-f]{64}")
#: A stored record's metadata is a few hundred bytes; a larger one is not ours.
MAX_META_BYTES: Final = 64 * 1024

_E = TypeVar("_E", bound=Enum)


@dataclass(frozen=True)
class Meta:
    """A stored entry's metadata: every :class:`CacheEntry` field but the rules."""

    origin: str
    standard: str
    robots_url: str
    verdict: Verdict
    #: a :class:`FetchReason`; the text as stored when this version does not know it
    reason: str
    detail: str
    status: int | None
    fetched_at: float
    expires_at: float
    etag: str | None = None
    last_modified: str | None = None
    checked_at: float | None = None
    body_sha256: str | None = None
    body_bytes: int | None = None


def dump_meta(entry: CacheEntry, standard: str) -> bytes:
    fields = {
        "format": FORMAT,
        "origin": entry.origin,
        "standard": standard,
        "robots_url": entry.robots_url,
        "verdict": entry.verdict,
        "reason": entry.reason,
        "detail": entry.detail,
        "status": entry.status,
        "fetched_at": entry.fetched_at,
        "expires_at": entry.expires_at,
    }
    # Optional fields, written only when set: a record without them reads the same
    # in earlier versions (FORMAT unchanged).
    for name in ("etag", "last_modified", "checked_at", "body_sha256", "body_bytes"):
        value = getattr(entry, name)
        if value is not None:
            fields[name] = value
    return json.dumps(fields, separators=(",", ":"), ensure_ascii=False).encode()


#: Seconds a stored time may lie ahead of this machine's clock (another machine of
#: a fleet wrote it); beyond that the record is invalid.
CLOCK_SKEW: Final = 300.0


def load_meta(raw: bytes | str) -> Meta | None:
    """The metadata in ``raw``, or ``None`` if it is not a record this version reads
    (malformed, or with times no process of ours wrote: not finite, in the future
    beyond :data:`CLOCK_SKEW`, or expiring past the 24 h cap)."""
    if len(raw) > MAX_META_BYTES:
        return None
    try:
        fields: Any = json.loads(raw)
    except (ValueError, TypeError, RecursionError):  # deep nesting: not ours
        return None
    if not isinstance(fields, dict) or fields.get("format") != FORMAT:
        return None
    strings = ("origin", "standard", "robots_url", "verdict", "reason", "detail")
    if not all(isinstance(fields.get(name), str) for name in strings):
        return None
    status = fields.get("status")
    times = (fields.get("fetched_at"), fields.get("expires_at"))
    if status is not None and (type(status) is not int):
        return None
    if not all(_is_time(t) for t in times):
        return None
    verdict = _member(Verdict, fields["verdict"])
    if verdict is None:
        return None
    fetched_at, expires_at = float(times[0]), float(times[1])  # type: ignore[arg-type]
    raw_checked = fields.get("checked_at")
    checked_at: float | None = None
    if _is_time(raw_checked) and raw_checked >= fetched_at:
        checked_at = float(raw_checked)
    # Times no process of ours wrote: not yet (beyond a clock skew between the
    # fleet's machines), before the epoch, or a lifetime past the 24 h cap.
    latest = time.time() + CLOCK_SKEW
    confirmed = fetched_at if checked_at is None else checked_at
    if not (0 <= fetched_at <= latest and confirmed <= latest):
        return None
    if expires_at > confirmed + MAX_TTL + CLOCK_SKEW:
        return None
    return Meta(
        origin=fields["origin"],
        standard=fields["standard"],
        robots_url=fields["robots_url"],
        verdict=verdict,
        # The vocabulary's own objects: one shared string per value, in memory.
        reason=_member(FetchReason, fields["reason"]) or fields["reason"],
        detail=fields["detail"],
        status=status,
        fetched_at=fetched_at,
        expires_at=expires_at,
        # A hostile record cannot smuggle a header line into the next request.
        etag=usable_validator(fields.get("etag")),
        last_modified=usable_validator(fields.get("last_modified")),
        checked_at=checked_at,
        body_sha256=_sha256(fields.get("body_sha256")),
        body_bytes=_size(fields.get("body_bytes")),
    )


def _member(vocabulary: type[_E], value: str) -> _E | None:
    try:
        return vocabulary(value)
    except ValueError:
        return None


def _sha256(value: object) -> str | None:
    if isinstance(value, str) and _SHA256_RE.fullmatch(value):
        return value
    return None


def _size(value: object) -> int | None:
    if type(value) is int and 0 <= value <= KEPT_BODY_BYTES:
        return value
    return None


def _is_time(value: object) -> TypeGuard[float]:
    return (
        isinstance(value, (int, float))
        and not isinstance(value, bool)
        and math.isfinite(value)
    )


def pack_body(body: bytes) -> bytes:
    """``body`` as stored: at most :data:`KEPT_BODY_BYTES`, compressed."""
    return zlib.compress(body[:KEPT_BODY_BYTES], 6)


def unpack_body(blob: bytes) -> bytes | None:
    """The body in ``blob`` (never more than :data:`KEPT_BODY_BYTES`), or ``None``."""
    inflater = zlib.decompressobj()
    try:
        # Bounded: a damaged or hostile record cannot inflate without limit.
        return inflater.decompress(blob, KEPT_BODY_BYTES)
    except zlib.error:
        return None


def build_entry(meta: Meta, blob: bytes | None) -> CacheEntry | None:
    """The cache entry ``meta`` and the stored body describe, parsed again.

    ``None`` when a ``parse`` verdict comes without a usable body.
    """
    robots = None
    tdm: TdmFile | None = None
    if meta.verdict == Verdict.PARSE:
        body = None if blob is None else unpack_body(blob)
        if body is None:
            return None
        if is_tdm_key(meta.origin):  # a tdmrep.json: its rules, not robots.txt's
            tdm = parse_file(body)
        else:
            # Like the middleware's own entries: no diagnostics kept in a cache.
            robots = RobotsTxt.parse(body, meta.standard).without_diagnostics()
    return CacheEntry(
        origin=meta.origin,
        robots_url=meta.robots_url,
        verdict=meta.verdict,
        reason=meta.reason,
        detail=meta.detail,
        robots=robots,
        status=meta.status,
        fetched_at=meta.fetched_at,
        expires_at=meta.expires_at,
        etag=meta.etag,
        last_modified=meta.last_modified,
        checked_at=meta.checked_at,
        body_sha256=meta.body_sha256,
        body_bytes=meta.body_bytes,
        tdm=tdm,
    )
