"""The audit file: what robots.txt said, what the crawl obeyed, and when.

With ``ROBOTS_STD_AUDIT_PATH`` set, :class:`AuditLog` appends one JSON object per
line (JSON Lines) to that file:

- ``robots``: a robots.txt version this process decided a verdict from: a body
  parsed just now, a status verdict (a 404 = no restrictions, a 503 = unreachable),
  or an entry read from the cache's store that another process (or an earlier run)
  fetched (``source`` ``"store"``);
- ``revalidated``: a ``304`` confirmed the cached version (not parsed again);
- ``stale``: the origin was unreachable and the earlier version stands in;
- ``tdmrep``: an origin's ``/.well-known/tdmrep.json`` (TDMRep), fetched because a
  usage purpose is declared: its status, rules and notes;
- ``origin`` (at close): one per origin, its drops by reason and the page-level
  robots directives its responses carried (a count per directive);
- ``close`` (at close, last): the finish reason and the totals.

docs/audit.md documents every field. Each record is flushed as it is written, so a
crawl that is killed keeps what it saw; the file is opened (its directory created)
when the middleware is built, so a path that cannot be written stops the crawl at
start with a :class:`~scrapy_robots_std.config.SettingsError` naming the setting. A
write that fails later is one WARNING and the ``robots_std/audit/error`` stat, and
ends the audit for the crawl.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import time
from collections import Counter
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO, Final

from scrapy_robots_std import policy
from scrapy_robots_std import stats as _stats
from scrapy_robots_std.config import SettingsError
from scrapy_robots_std.safetext import safe

if TYPE_CHECKING:
    from collections.abc import Iterable

    from scrapy.crawler import Crawler

    from scrapy_robots_std.cache.base import CacheEntry
    from scrapy_robots_std.config import Config
    from scrapy_robots_std.robotstxt.robots import RobotsTxt
    from scrapy_robots_std.scrapy.report import Report
    from scrapy_robots_std.scrapy.settle import Fetched

__all__ = ["AUDIT_SETTING", "SCHEMA", "AuditLog", "iso_time"]

logger = logging.getLogger("scrapy_robots_std.scrapy.middleware")

#: The setting that turns the audit file on.
AUDIT_SETTING: Final = "ROBOTS_STD_AUDIT_PATH"
#: The records' ``schema``: raised when a field changes meaning or goes away.
SCHEMA: Final = 1
#: Origins whose versions are remembered (for the body hash of a later 304, and the
#: closing records); past it, new origins get their records but no memory.
_TRACKED: Final = 10_000

#: Record types. A 304 and a stale copy standing in are named as their source.
ROBOTS: Final = "robots"
REVALIDATED: Final = policy.FetchSource.REVALIDATED.value
STALE: Final = policy.FetchSource.STALE.value
ORIGIN: Final = "origin"
#: an origin's /.well-known/tdmrep.json (TDMRep), fetched for a declared purpose
TDMREP: Final = "tdmrep"
CLOSE: Final = "close"


def _tdm_record(fetched: Fetched) -> dict[str, Any]:
    """The ``tdmrep`` record of a tdmrep.json cycle's entry (docs/audit.md)."""
    entry = fetched.entry
    file = entry.tdm
    decided = time.time() if fetched.source == STALE else entry.confirmed_at
    return {
        "record": TDMREP,
        "source": fetched.source.value,
        "origin": entry.origin.split(":", 1)[1],  # the key without "tdmrep:"
        "url": entry.robots_url,
        "fetched_at": iso_time(entry.fetched_at),
        "fetched_at_epoch": _epoch(entry.fetched_at),
        # A 304 renewed the copy: that is the status this cycle got.
        "status": 304
        if fetched.source == policy.FetchSource.REVALIDATED
        else entry.status,
        "bytes": entry.body_bytes,
        "sha256": entry.body_sha256,
        "verdict": entry.verdict,
        "detail": entry.detail,
        "ttl_seconds": round(max(entry.expires_at - decided, 0.0), 3),
        "expires_at": iso_time(entry.expires_at),
        "rules": None if file is None else len(file.rules),
        "reserved_rules": None
        if file is None
        else sum(rule.reservation == 1 for rule in file.rules),
        "notes": [] if file is None else [safe(note) for note in file.notes],
    }


#: The fields of a ``tdmrep`` record an ``origin`` record repeats (its ``tdmrep``).
_TDM_FILE_FIELDS: Final = (
    "url",
    "status",
    "verdict",
    "sha256",
    "rules",
    "reserved_rules",
)


def _count(table: dict[str, Counter[str]], origin: str, names: Iterable[str]) -> None:
    """Add ``names`` to ``origin``'s counts (past the bound: to ``"(other)"``)."""
    counts = table.get(origin)
    if counts is None:
        key = origin if len(table) < _TRACKED else "(other)"
        counts = table.setdefault(key, Counter())
    counts.update(names)


def iso_time(epoch: float) -> str:
    """``2025-01-31T12:00:00.123Z``: UTC, milliseconds."""
    # Rounded as the ``*_epoch`` fields are, so both forms name the same instant.
    moment = datetime.fromtimestamp(round(epoch, 3), tz=UTC)
    return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _epoch(value: float | None) -> float | None:
    return None if value is None else round(value, 3)


def _iso(value: float | None) -> str | None:
    return None if value is None else iso_time(value)


class _Version:
    """What the audit remembers of the version last recorded for an origin."""

    __slots__ = ("bytes", "fetched_at", "robots_url", "sha256", "verdict")

    def __init__(self, entry: CacheEntry, sha256: str | None, size: int | None):
        self.fetched_at = entry.fetched_at
        self.robots_url = entry.robots_url
        self.verdict = entry.verdict
        self.sha256 = sha256
        self.bytes = size


class AuditLog:
    """Appends the audit records of one crawl to a JSON Lines file."""

    def __init__(self, crawler: Crawler, path: Path, handle: BinaryIO) -> None:
        self.crawler = crawler
        self.path = path
        self._handle: BinaryIO | None = handle
        self._stats = crawler.stats
        self._versions: dict[str, _Version] = {}
        #: (fetched_at, checked_at, expires_at) last recorded per origin: a store
        #: entry already recorded is not recorded again
        self._last: dict[str, tuple[float, float | None, float]] = {}
        self.records = 0
        #: responses per origin and page directive (ROBOTS_STD_PAGE_DIRECTIVES), for
        #: the closing records; keys are a bounded set of names
        self._page: dict[str, Counter[str]] = {}
        #: responses per origin whose TDMRep statement decided, by where it came
        #: from (file, header, meta), for the closing records
        self._tdm: dict[str, Counter[str]] = {}
        #: the tdmrep.json version last recorded per origin (the closing records)
        self._tdm_files: dict[str, dict[str, Any]] = {}

    @classmethod
    def from_crawler(cls, crawler: Crawler, config: Config) -> AuditLog | None:
        """The audit of this crawl, its file open; ``None`` when the setting is off.

        Raises :class:`SettingsError` (naming the setting) when the file's directory
        cannot be created or the file cannot be opened for appending.
        """
        if config.audit_path is None:
            return None
        path = Path(config.audit_path).expanduser()
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise SettingsError(
                f"{AUDIT_SETTING}: cannot create the directory of "
                f"{str(path)!r}: {exc.strerror or exc}"
            ) from None
        try:
            # Unbuffered bytes: each record is one write of whole lines (see _write).
            handle = open(path, "ab", buffering=0)  # noqa: SIM115
            mended = _end_partial_line(handle)
        except OSError as exc:
            raise SettingsError(
                f"{AUDIT_SETTING}: cannot open {str(path)!r} for appending: "
                f"{exc.strerror or exc}"
            ) from None
        if mended:
            logger.warning(
                "robots.txt audit file %(path)s ended in a partial line (a crash or a "
                "full disk during an earlier crawl): this crawl's records start on a "
                "new line",
                {"path": safe(str(path))},
                extra={"spider": crawler.spider},
            )
        logger.info(
            "robots.txt audit records are appended to %(path)s",
            {"path": safe(str(path))},
            extra={"spider": crawler.spider},
        )
        return cls(crawler, path, handle)

    @property
    def active(self) -> bool:
        """Still writing (not closed, no write failed)."""
        return self._handle is not None

    # -- versions ----------------------------------------------------------------------

    def fetched(self, fetched: Fetched, token: str | None) -> None:
        """Record a fetch cycle's decision. ``token``: the product token of the
        request that started the cycle (for the usage preferences at ``/``)."""
        if self._handle is None:
            return
        entry = fetched.entry
        source = fetched.source
        identity = (entry.fetched_at, entry.checked_at, entry.expires_at)
        from_store = source == policy.FetchSource.STORE
        if from_store and self._last.get(entry.origin) == identity:
            return  # this very entry, recorded already
        known = self._versions.get(entry.origin)
        if known is not None and known.fetched_at != entry.fetched_at:
            known = None  # another version
        sha256: str | None = None
        size: int | None = None
        if entry.body_sha256 is not None:  # the fetch hashed it; stores keep it
            sha256, size = entry.body_sha256, entry.body_bytes
        elif known is not None:
            sha256, size = known.sha256, known.bytes
        kind, status = ROBOTS, entry.status
        if source == policy.FetchSource.REVALIDATED:
            kind, status = REVALIDATED, 304
        elif source == policy.FetchSource.STALE:
            kind = STALE
        robots = fetched.robots or entry.robots
        # From when this verdict was decided: the fetch, the 304, or (a stale copy
        # standing in) now, when the origin was found unreachable.
        decided = time.time() if kind == STALE else entry.confirmed_at
        record: dict[str, Any] = {
            "record": kind,
            "source": policy.FetchSource.STORE
            if from_store
            else policy.FetchSource.DOWNLOAD,
            "origin": entry.origin,
            "robots_url": entry.robots_url,
            "fetched_at": iso_time(entry.fetched_at),
            "fetched_at_epoch": _epoch(entry.fetched_at),
            "checked_at": _iso(entry.checked_at),
            "checked_at_epoch": _epoch(entry.checked_at),
            "status": status,
            "bytes": size,
            "sha256": sha256,
            "verdict": entry.verdict,
            "reason": entry.reason,
            "detail": entry.detail,
            "ttl_seconds": round(max(entry.expires_at - decided, 0.0), 3),
            "expires_at": iso_time(entry.expires_at),
            "expires_at_epoch": _epoch(entry.expires_at),
            "etag": entry.etag,
            "last_modified": entry.last_modified,
            "usage": (
                _usage(robots, entry.origin, token)
                if entry.verdict == policy.Verdict.PARSE
                else None
            ),
        }
        if self._write(record):
            self._remember(entry, identity, sha256, size)

    def tdm_fetched(self, fetched: Fetched) -> None:
        """Record an origin's ``/.well-known/tdmrep.json`` as a fetch cycle left it
        (a ``tdmrep`` record; its entries from the store once per version)."""
        entry = fetched.entry
        identity = (entry.fetched_at, entry.checked_at, entry.expires_at)
        if self._handle is None or self._last.get(entry.origin) == identity:
            return
        record = _tdm_record(fetched)
        if self._write(record) and len(self._last) < _TRACKED:
            self._last[entry.origin] = identity
            version = {key: record[key] for key in _TDM_FILE_FIELDS}
            version["status"] = entry.status  # the version's, not a 304's
            self._tdm_files[record["origin"]] = version

    def _remember(
        self,
        entry: CacheEntry,
        identity: tuple[float, float | None, float],
        sha256: str | None,
        size: int | None,
    ) -> None:
        origin = entry.origin
        if origin not in self._versions and len(self._versions) >= _TRACKED:
            return
        self._versions[origin] = _Version(entry, sha256, size)
        self._last[origin] = identity

    def page_seen(self, origin: str, names: Iterable[str]) -> None:
        """Count one response's page directives (known names, and ``unknown``)."""
        _count(self._page, origin, names)

    def tdm_seen(self, origin: str, where: str) -> None:
        """Count one response whose TDMRep statement came from ``where`` (``file``,
        ``header`` or ``meta``)."""
        _count(self._tdm, origin, (where,))

    # -- closing -----------------------------------------------------------------------

    def close(self, report: Report, finish_reason: str | None) -> None:
        """Write the closing records (one per origin, then ``close``) and close."""
        if self._handle is None:
            return
        dry_run = report.dry_run
        by_origin = report.by_origin_reason
        origins = (
            set(self._versions)
            | set(by_origin)
            | set(self._page)
            | set(self._tdm)
            | set(self._tdm_files)
        )
        for origin in sorted(origins):
            drops = by_origin.get(origin, Counter())
            record = {
                "record": ORIGIN,
                "origin": origin,
                **self._version_fields(origin),
                "dropped": dict(sorted(drops.items())),
                "dropped_total": sum(drops.values()),
                "dry_run": dry_run,
                "finish_reason": finish_reason,
                "page": dict(sorted(self._page.get(origin, Counter()).items())),
                "tdmrep": self._tdm_files.get(origin),
                "tdm": dict(sorted(self._tdm.get(origin, Counter()).items())),
            }
            if not self._write(record):
                return
        totals = report.by_reason
        self._write(
            {
                "record": CLOSE,
                "finish_reason": finish_reason,
                "origins": len(origins),
                "dropped": dict(sorted(totals.items())),
                "dropped_total": sum(totals.values()),
                "dry_run": dry_run,
                # the records before this one, by this crawl
                "records": self.records,
                "page": dict(sorted(sum(self._page.values(), Counter()).items())),
                "tdm": dict(sorted(sum(self._tdm.values(), Counter()).items())),
            }
        )
        self._close()

    def _version_fields(self, origin: str) -> dict[str, Any]:
        """An origin record's fields of the robots.txt version last recorded."""
        version = self._versions.get(origin)
        return {
            "robots_url": None if version is None else version.robots_url,
            "verdict": None if version is None else version.verdict,
            "sha256": None if version is None else version.sha256,
        }

    # -- the file ----------------------------------------------------------------------

    def _write(self, fields: dict[str, Any]) -> bool:
        handle = self._handle
        if handle is None:
            return False
        spider = self.crawler.spider
        now = time.time()
        record = {
            "record": fields.pop("record"),
            "schema": SCHEMA,
            "recorded_at": iso_time(now),
            "spider": getattr(spider, "name", None),
            **fields,
        }
        try:
            # ASCII: json.dumps escapes every other character (ensure_ascii), lone
            # surrogates included, so any text a site sends can be written.
            line = json.dumps(record, ensure_ascii=True, allow_nan=False)
            _append_whole(handle, (line + "\n").encode("ascii"))
        except (OSError, ValueError) as exc:
            self._failed(exc)
            return False
        self.records += 1
        if self._stats is not None:
            self._stats.inc_value(_stats.AUDIT_RECORDS)
        return True

    def _failed(self, exc: Exception) -> None:
        if self._stats is not None:
            self._stats.inc_value(_stats.AUDIT_ERROR)
        logger.warning(
            "Cannot write the robots.txt audit file %(path)s (%(error)s): no more "
            "audit records for this crawl",
            {"path": safe(str(self.path)), "error": safe(exc)},
            extra={"spider": self.crawler.spider},
        )
        self._close()

    def _close(self) -> None:
        handle, self._handle = self._handle, None
        if handle is None:
            return
        # Unbuffered: a failing close loses nothing.
        with contextlib.suppress(OSError):
            handle.close()


def _end_partial_line(handle: BinaryIO) -> bool:
    """Start a new line if the file ends in a partial one; ``True`` if it did."""
    size = os.fstat(handle.fileno()).st_size
    if size == 0:
        return False
    with open(handle.name, "rb") as reader:
        reader.seek(size - 1)
        if reader.read(1) == b"\n":
            return False
    handle.write(b"\n")
    return True


def _append_whole(handle: BinaryIO, data: bytes) -> None:
    """Append ``data`` whole, or leave the file as it was: a write cut short (a
    full disk) is taken back, so no record is ever half there."""
    fd = handle.fileno()
    size = os.fstat(fd).st_size
    written = 0
    try:
        while written < len(data):
            written += os.write(fd, data[written:])
    except OSError:
        if written:
            with contextlib.suppress(OSError):
                os.ftruncate(fd, size)
        raise


#: Sources of the root's preferences written into a record (the rest are counted).
_MAX_SOURCES = 10


def _usage(robots: RobotsTxt | None, origin: str, token: str | None) -> dict[str, Any]:
    """The usage lines a robots.txt holds, and for ``token`` what it states at the
    origin's root URL (``/``)."""
    if robots is None:
        return {"stated": None}
    summary = robots.usage_summary()
    usage: dict[str, Any] = {
        "content_usage": summary.content_usage,
        "content_signal": summary.content_signal,
        "invalid": summary.invalid,
        "outside_group": summary.outside_group,
        "stated": summary.stated,
        "root": None,
    }
    if token is not None:
        url = f"{origin}/"
        try:
            preferences = robots.usage(url, token)
        except ValueError:  # a token the parser refuses: counts only
            return usage
        usage["root"] = {
            "url": url,
            "token": token,
            "reason": preferences.reason,
            "aipref": {c: p.value for c, p in preferences.aipref.items()},
            "content_signal": {
                c: p.value for c, p in preferences.content_signal.items()
            },
            # A hostile file may hold thousands of usage lines: a bounded record.
            "sources": [str(s) for s in preferences.sources[:_MAX_SOURCES]],
            "sources_total": len(preferences.sources),
        }
    return usage
