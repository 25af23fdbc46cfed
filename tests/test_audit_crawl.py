"""The audit file (ROBOTS_STD_AUDIT_PATH): real crawls against local origins, and
the JSON Lines records they leave behind (docs/audit.md).

Each crawl runs against the scripted server on 127.0.0.1 under several ``*.test``
host names (each its own origin); the file is read back and every documented field
is checked against what the server sent.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
from datetime import datetime
from typing import TYPE_CHECKING, Any

import pytest
from scrapy.utils.defer import deferred_f_from_coro_f

from scrapy_robots_std.config import SettingsError
from tests.helpers.crawl import (
    assert_no_errors,
    pages_served,
    run_crawl,
    settings,
    stat,
)
from tests.helpers.names import loopback_names
from tests.helpers.server import Reply, Sequence

if TYPE_CHECKING:
    from pathlib import Path

    from tests.helpers.crawl import CrawlResult
    from tests.helpers.server import Exchange, HostileServer

pytestmark = pytest.mark.crawl

SQLITE = "scrapy_robots_std.cache.SqliteCache"
EXPIRE_AT_ONCE = {"ROBOTS_STD_CACHE_TTL": 0, "ROBOTS_STD_CACHE_MIN_TTL": 0}
ETAG = '"prefs-v1"'
LAST_MODIFIED = "Tue, 24 Nov 2026 10:00:00 GMT"
PREFS_ROBOTS = (
    b"User-agent: *\n"
    b"Disallow: /private/\n"
    b"Content-Usage: train-ai=n\n"
    b"Content-Usage: /open/ train-ai=y\n"
    b"Content-Signal: search=yes, ai-train=no\n"
)
#: every field of a version record (robots, revalidated, stale), in file order
VERSION_FIELDS = [
    "record",
    "schema",
    "recorded_at",
    "spider",
    "source",
    "origin",
    "robots_url",
    "fetched_at",
    "fetched_at_epoch",
    "checked_at",
    "checked_at_epoch",
    "status",
    "bytes",
    "sha256",
    "verdict",
    "reason",
    "detail",
    "ttl_seconds",
    "expires_at",
    "expires_at_epoch",
    "etag",
    "last_modified",
    "usage",
]
ORIGIN_FIELDS = [
    "record",
    "schema",
    "recorded_at",
    "spider",
    "origin",
    "robots_url",
    "verdict",
    "sha256",
    "dropped",
    "dropped_total",
    "dry_run",
    "finish_reason",
    "page",
    "tdmrep",
    "tdm",
]
CLOSE_FIELDS = [
    "record",
    "schema",
    "recorded_at",
    "spider",
    "finish_reason",
    "origins",
    "dropped",
    "dropped_total",
    "dry_run",
    "records",
    "page",
    "tdm",
]


def read_audit(path: Path) -> list[dict[str, Any]]:
    raw = path.read_bytes()
    raw.decode("ascii")  # every character beyond ASCII is escaped
    assert raw.endswith(b"\n")
    return [json.loads(line) for line in raw.decode("ascii").splitlines()]


def assert_time(iso: str, epoch: float) -> None:
    """``iso`` is the UTC ISO 8601 form of ``epoch`` (milliseconds, "Z")."""
    assert iso.endswith("Z")
    parsed = datetime.fromisoformat(iso)
    assert abs(parsed.timestamp() - epoch) < 0.002


def by_origin(records: list[dict[str, Any]], kind: str) -> dict[str, dict[str, Any]]:
    found = [r for r in records if r["record"] == kind]
    table = {r["origin"]: r for r in found}
    assert len(table) == len(found), f"two {kind} records for one origin"
    return table


def show(records: list[dict[str, Any]]) -> None:
    """Every record on stdout (``pytest -s``): the docs' examples."""
    for record in records:
        print(json.dumps(record))


def audit_settings(path: Path | str, **overrides: Any) -> dict[str, Any]:
    return settings(ROBOTS_STD_AUDIT_PATH=str(path), **overrides)


# -- a crawl over three origins -----------------------------------------------------


@deferred_f_from_coro_f
async def test_a_crawl_over_three_origins_leaves_one_record_per_version_and_origin(
    hostile: HostileServer, tmp_path: Path
) -> None:
    path = tmp_path / "audit" / "nested" / "robots-audit.jsonl"  # directories made
    with loopback_names():
        prefs, missing, down = (
            hostile.url("", host=f"{name}.test")
            for name in ("prefs", "missing", "down")
        )
        hostile.add_route(
            "/robots.txt",
            Reply(
                200,
                {
                    "ETag": ETAG,
                    "Last-Modified": LAST_MODIFIED,
                    "Cache-Control": "max-age=600",
                },
                PREFS_ROBOTS,
            ),
            host="prefs.test",
        )
        hostile.add_route(
            "/robots.txt",
            Reply(404, {}, b"User-agent: *\nDisallow: /\n"),
            host="missing.test",
        )
        hostile.add_route("/robots.txt", Reply(503, {}, b"down"), host="down.test")
        page = Reply(200, {"Content-Type": "text/html"}, b"<p>ok</p>")
        for host, paths in {
            "prefs.test": ("/open/a", "/private/b"),
            "missing.test": ("/c", "/d"),
            "down.test": ("/e",),
        }.items():
            for page_path in paths:
                hostile.add_route(page_path, page, host=host)
        urls = [
            f"{prefs}/open/a",
            f"{prefs}/private/b",
            f"{missing}/c",
            f"{missing}/d",
            f"{down}/e",
        ]
        result = await run_crawl(urls, audit_settings(path, ROBOTS_STD_FETCH_RETRIES=1))
    assert_no_errors(result)
    assert pages_served(hostile) == {"/open/a", "/c", "/d"}
    records = read_audit(path)
    show(records)

    # Version records first, then one per origin (sorted), then "close", last.
    kinds = [r["record"] for r in records]
    assert kinds[-1] == "close"
    assert kinds[-4:-1] == ["origin"] * 3
    assert sorted(kinds[:-4]) == ["robots"] * 3
    for record in records:
        assert record["schema"] == 1
        assert record["spider"] == "hostile"
        datetime.fromisoformat(record["recorded_at"])

    robots = by_origin(records, "robots")
    assert set(robots) == {prefs, missing, down}
    for record in robots.values():
        assert list(record) == VERSION_FIELDS
        assert record["source"] == "download"
        assert record["robots_url"] == f"{record['origin']}/robots.txt"
        assert_time(record["fetched_at"], record["fetched_at_epoch"])
        assert_time(record["expires_at"], record["expires_at_epoch"])
        assert record["checked_at"] is None
        assert record["checked_at_epoch"] is None
        assert record["ttl_seconds"] == pytest.approx(
            record["expires_at_epoch"] - record["fetched_at_epoch"], abs=0.002
        )
        assert (
            abs(
                record["fetched_at_epoch"]
                - result.crawler.stats.get_value("start_time").timestamp()
            )
            < 60
        )

    parsed = robots[prefs]
    assert parsed["status"] == 200
    assert parsed["bytes"] == len(PREFS_ROBOTS)
    assert parsed["sha256"] == hashlib.sha256(PREFS_ROBOTS).hexdigest()
    assert parsed["verdict"] == "parse"
    assert parsed["reason"] == "2xx"
    assert parsed["detail"] == "HTTP 200"
    assert parsed["ttl_seconds"] == pytest.approx(600, abs=0.01)
    assert parsed["etag"] == ETAG
    assert parsed["last_modified"] == LAST_MODIFIED
    assert parsed["usage"] == {
        "content_usage": 2,
        "content_signal": 1,
        "invalid": 0,
        "outside_group": 0,
        "stated": True,
        "root": {
            "url": f"{prefs}/",
            "token": "TestBot",
            "reason": "rules",
            "aipref": {
                "train-ai": "disallow",
                "ai-use": "unknown",
                "search": "unknown",
            },
            "content_signal": {
                "search": "allow",
                "ai-input": "unknown",
                "ai-train": "disallow",
            },
            "sources": [
                'line 3 "Content-Usage: train-ai=n"',
                'line 5 "Content-Signal: search=yes, ai-train=no"',
            ],
            "sources_total": 2,
        },
    }

    not_found = robots[missing]
    assert not_found["status"] == 404
    assert not_found["verdict"] == "allow-all"
    assert not_found["reason"] == "4xx"
    assert not_found["detail"] == "HTTP 404 means no restrictions"
    assert (not_found["bytes"], not_found["sha256"], not_found["usage"]) == (
        None,
        None,
        None,
    )
    assert (not_found["etag"], not_found["last_modified"]) == (None, None)

    unreachable = robots[down]
    assert unreachable["status"] == 503
    assert unreachable["verdict"] == "unreachable"
    assert unreachable["reason"] == "5xx"
    assert unreachable["detail"].startswith("unreachable (HTTP 503 after 2 attempts)")
    assert unreachable["ttl_seconds"] == pytest.approx(120, abs=0.01)
    assert (unreachable["bytes"], unreachable["sha256"], unreachable["usage"]) == (
        None,
        None,
        None,
    )

    origins = by_origin(records, "origin")
    assert list(origins) == sorted(origins)
    for record in origins.values():
        assert list(record) == ORIGIN_FIELDS
        assert record["finish_reason"] == "finished"
        assert record["dry_run"] is False
        assert record["robots_url"] == robots[record["origin"]]["robots_url"]
        assert record["verdict"] == robots[record["origin"]]["verdict"]
        assert record["sha256"] == robots[record["origin"]]["sha256"]
        # no purpose declared: no tdmrep.json fetched, no TDMRep read
        assert (record["tdmrep"], record["tdm"]) == (None, {})
    assert origins[prefs]["dropped"] == {"rule": 1}
    assert origins[prefs]["dropped_total"] == 1
    assert origins[missing]["dropped"] == {}
    assert origins[missing]["dropped_total"] == 0
    assert origins[down]["dropped"] == {"unreachable": 1}

    close = records[-1]
    assert list(close) == CLOSE_FIELDS
    assert close["finish_reason"] == "finished"
    assert close["origins"] == 3
    assert close["dropped"] == {"rule": 1, "unreachable": 1}
    assert close["dropped_total"] == 2
    assert close["records"] == len(records) - 1
    assert stat(result, "robots_std/audit/records") == len(records)
    assert stat(result, "robots_std/audit/error") is None
    assert any(f"audit records are appended to {path}" in m for m in result.messages())


@deferred_f_from_coro_f
async def test_the_file_is_appended_to_and_site_text_is_escaped(
    hostile: HostileServer, tmp_path: Path
) -> None:
    path = tmp_path / "audit.jsonl"
    path.write_text('{"record": "earlier"}\n')
    # Nothing already in the file is touched; non-ASCII bytes are hashed as sent.
    body = "User-agent: *\nDisallow: /ü\u202e\n".encode()
    hostile.add_route("/robots.txt", Reply(200, {}, body))
    hostile.add_route("/a", Reply(200, {}, b"ok"))
    result = await run_crawl([hostile.url("/a")], audit_settings(path))
    assert_no_errors(result)
    records = read_audit(path)
    assert records[0] == {"record": "earlier"}
    assert [r["record"] for r in records[1:]] == ["robots", "origin", "close"]
    assert records[1]["sha256"] == hashlib.sha256(body).hexdigest()
    assert records[1]["bytes"] == len(body)


# -- a persistent store: "store" and "revalidated" records ----------------------------


@deferred_f_from_coro_f
async def test_an_entry_read_from_the_store_is_recorded_with_source_store(
    hostile: HostileServer, tmp_path: Path
) -> None:
    path = tmp_path / "audit.jsonl"
    hostile.add_route("/robots.txt", Reply(200, {"ETag": ETAG}, PREFS_ROBOTS))
    hostile.add_route("/open/a", Reply(200, {}, b"ok"))
    crawl_settings = audit_settings(
        path,
        ROBOTS_STD_CACHE_BACKEND=SQLITE,
        ROBOTS_STD_CACHE_PATH=str(tmp_path / "robots.sqlite3"),
    )
    first = await run_crawl([hostile.url("/open/a")], crawl_settings)
    second = await run_crawl([hostile.url("/open/a")], crawl_settings)
    assert_no_errors(first)
    assert_no_errors(second)
    assert len(hostile.requests_for("/robots.txt")) == 1
    records = read_audit(path)
    versions = [r for r in records if r["record"] == "robots"]
    assert [r["source"] for r in versions] == ["download", "store"]
    downloaded, stored = versions
    show([stored])
    assert list(stored) == VERSION_FIELDS
    # The same version: fetched once, by the first crawl.
    for key in ("origin", "robots_url", "fetched_at", "status", "verdict", "etag"):
        assert stored[key] == downloaded[key]
    assert stored["expires_at_epoch"] == pytest.approx(
        downloaded["expires_at_epoch"], abs=0.002
    )
    # The stored record carries the body's hash and size: the same version.
    assert (stored["bytes"], stored["sha256"]) == (
        downloaded["bytes"],
        downloaded["sha256"],
    )
    assert stored["sha256"] is not None
    assert stored["usage"] == downloaded["usage"]
    assert [r["record"] for r in records].count("close") == 2


@deferred_f_from_coro_f
async def test_a_304_writes_a_revalidated_record(
    hostile: HostileServer, tmp_path: Path
) -> None:
    path = tmp_path / "audit.jsonl"

    class Revalidating:
        def serve(self, exchange: Exchange) -> None:
            if exchange.record.headers.get("If-None-Match") == ETAG:
                Reply(304, {"ETag": ETAG}).serve(exchange)
            else:
                Reply(
                    200, {"ETag": ETAG, "Last-Modified": LAST_MODIFIED}, PREFS_ROBOTS
                ).serve(exchange)

    hostile.add_route("/robots.txt", Revalidating())
    hostile.add_route("/open/a", Reply(200, {}, b"ok"))
    crawl_settings = audit_settings(
        path,
        ROBOTS_STD_CACHE_BACKEND=SQLITE,
        ROBOTS_STD_CACHE_PATH=str(tmp_path / "robots.sqlite3"),
        **EXPIRE_AT_ONCE,
    )
    first = await run_crawl([hostile.url("/open/a")], crawl_settings)
    second = await run_crawl([hostile.url("/open/a")], crawl_settings)
    assert_no_errors(second)
    assert stat(second, "robots_std/cache/revalidated") == 1
    records = read_audit(path)
    assert [
        r["record"] for r in records if r["record"] in ("robots", "revalidated")
    ] == [
        "robots",
        "revalidated",
    ]
    downloaded = next(r for r in records if r["record"] == "robots")
    renewed = next(r for r in records if r["record"] == "revalidated")
    show([renewed])
    assert list(renewed) == VERSION_FIELDS
    assert renewed["source"] == "download"
    assert renewed["status"] == 304
    # The version it confirms: its fetch time is the first crawl's.
    assert renewed["fetched_at"] == downloaded["fetched_at"]
    assert_time(renewed["checked_at"], renewed["checked_at_epoch"])
    assert renewed["checked_at_epoch"] > downloaded["fetched_at_epoch"]
    assert renewed["verdict"] == "parse"
    assert renewed["etag"] == ETAG
    assert renewed["last_modified"] == LAST_MODIFIED
    assert renewed["ttl_seconds"] == 0
    # Another process: the stored record says which body was confirmed.
    assert (renewed["bytes"], renewed["sha256"]) == (
        downloaded["bytes"],
        downloaded["sha256"],
    )
    assert renewed["usage"]["stated"] is True
    assert stat(first, "robots_std/audit/records") == 3


@deferred_f_from_coro_f
async def test_an_unreachable_origin_with_an_earlier_copy_writes_a_stale_record(
    hostile: HostileServer, tmp_path: Path
) -> None:
    path = tmp_path / "audit.jsonl"
    hostile.add_route(
        "/robots.txt",
        Sequence(Reply(200, {}, PREFS_ROBOTS), Reply(503, {}, b"down")),
    )
    hostile.add_route("/open/a", Reply(200, {}, b"ok"))
    hostile.add_route("/private/b", Reply(200, {}, b"no"))
    urls = [hostile.url("/open/a"), hostile.url("/private/b")]
    crawl_settings = audit_settings(
        path,
        ROBOTS_STD_CACHE_BACKEND=SQLITE,
        ROBOTS_STD_CACHE_PATH=str(tmp_path / "robots.sqlite3"),
        ROBOTS_STD_FETCH_RETRIES=0,
        **EXPIRE_AT_ONCE,
    )
    await run_crawl(urls, crawl_settings)
    second = await run_crawl(urls, crawl_settings)
    assert_no_errors(second)
    assert stat(second, "robots_std/verdict/stale") == 1
    records = read_audit(path)
    downloaded = next(r for r in records if r["record"] == "robots")
    [stale] = [r for r in records if r["record"] == "stale"]
    show([stale])
    assert list(stale) == VERSION_FIELDS
    assert stale["source"] == "download"
    # The version that stands in: the first crawl's, with its rules and status.
    for key in ("fetched_at", "status", "verdict", "reason", "usage"):
        assert stale[key] == downloaded[key]
    assert stale["detail"].startswith("HTTP 200 (stale copy; now unreachable (HTTP 503")
    # ROBOTS_STD_UNREACHABLE_TTL, from the failure (not from the copy's fetch)
    assert stale["ttl_seconds"] == pytest.approx(120, abs=1)
    # The rules still applied: /private/b dropped by the copy's rule.
    closing = [r for r in records if r["record"] == "origin"]
    assert closing[-1]["dropped"] == {"rule": 1}


# -- errors ---------------------------------------------------------------------------


@deferred_f_from_coro_f
async def test_an_audit_path_that_cannot_be_created_stops_the_crawl_at_start(
    hostile: HostileServer, tmp_path: Path
) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a directory")
    hostile.add_route("/a", Reply(200, {}, b"ok"))
    with pytest.raises(SettingsError, match=r"^ROBOTS_STD_AUDIT_PATH: cannot create"):
        await run_crawl(
            [hostile.url("/a")], audit_settings(blocker / "sub" / "audit.jsonl")
        )
    with pytest.raises(SettingsError, match=r"^ROBOTS_STD_AUDIT_PATH: cannot open"):
        await run_crawl([hostile.url("/a")], audit_settings(tmp_path))  # a directory
    assert hostile.requests == []


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full")
@deferred_f_from_coro_f
async def test_a_failing_write_is_one_warning_and_a_stat_and_the_crawl_goes_on(
    hostile: HostileServer,
) -> None:
    hostile.add_route("/robots.txt", Reply(200, {}, b"User-agent: *\nDisallow: /x\n"))
    hostile.add_route("/a", Reply(200, {}, b"ok"))
    result: CrawlResult = await run_crawl(
        [hostile.url("/a"), hostile.url("/x")], audit_settings("/dev/full")
    )
    assert_no_errors(result)
    assert pages_served(hostile) == {"/a"}
    warnings = [m for m in result.messages(logging.WARNING) if "audit file" in m]
    assert len(warnings) == 1
    assert "no more audit records for this crawl" in warnings[0]
    assert stat(result, "robots_std/audit/error") == 1
    assert stat(result, "robots_std/audit/records") is None
    assert stat(result, "robots_std/dropped/rule") == 1


# -- a file left with a partial line (issue 27, point 5) -----------------------------


@deferred_f_from_coro_f
async def test_a_file_ending_in_a_partial_line_gets_a_new_line_first(
    hostile: HostileServer, tmp_path: Path
) -> None:
    path = tmp_path / "audit.jsonl"
    whole = json.dumps({"record": "robots", "origin": "http://earlier.test"})
    path.write_bytes(whole.encode() + b'\n{"record": "robots", "orig')  # cut short
    hostile.add_route("/robots.txt", Reply(200, {}, b"User-agent: *\nDisallow: /x\n"))
    hostile.add_route("/a", Reply(200, {}, b"ok"))
    result = await run_crawl([hostile.url("/a")], audit_settings(path))
    assert_no_errors(result)
    [warning] = [m for m in result.messages(logging.WARNING) if "audit file" in m]
    assert "ended in a partial line" in warning
    lines = path.read_text(encoding="ascii").splitlines()
    assert lines[1] == '{"record": "robots", "orig'  # the fragment, on its own
    records = [json.loads(line) for line in lines[2:]]
    assert {r["record"] for r in records} >= {"robots"}
    assert json.loads(lines[0])["origin"] == "http://earlier.test"
    # A file that ends with its newline is appended to as it is, without a warning.
    before = path.read_bytes()
    second = await run_crawl([hostile.url("/a")], audit_settings(path))
    assert not [m for m in second.messages(logging.WARNING) if "audit file" in m]
    assert path.read_bytes().startswith(before)
    assert all(json.loads(line) for line in path.read_text().splitlines()[2:])


def test_a_write_cut_short_is_taken_back(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A full disk after half a record: the file is as it was before the record."""
    import os

    from scrapy_robots_std.scrapy import audit

    path = tmp_path / "audit.jsonl"
    path.write_bytes(b'{"record": "robots"}\n')
    real_write = os.write
    calls = []

    def half_then_full(fd: int, data: bytes) -> int:
        calls.append(len(data))
        if len(calls) == 1:
            return real_write(fd, data[: len(data) // 2])
        raise OSError(28, "No space left on device")

    with open(path, "ab", buffering=0) as handle:
        monkeypatch.setattr(audit.os, "write", half_then_full)
        with pytest.raises(OSError, match="No space"):
            audit._append_whole(handle, b'{"record": "summary", "n": 12345}\n')
    assert len(calls) == 2
    assert path.read_bytes() == b'{"record": "robots"}\n'
