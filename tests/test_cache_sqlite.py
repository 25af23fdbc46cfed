"""SqliteCache: verdicts in a file that outlives the crawl (SPEC 3, "Cache").

Real SQLite files in tmp_path; the crash and concurrency tests run real worker
processes (tests/helpers/sqlite_worker.py) on one file.
"""

from __future__ import annotations

import dataclasses
import json
import logging
import os
import signal
import sqlite3
import subprocess
import time
from typing import TYPE_CHECKING

import pytest
from scrapy.utils.misc import build_from_crawler
from scrapy.utils.test import get_crawler

from scrapy_robots_std.cache import RobotsCache, SharedFetches, SqliteCache
from scrapy_robots_std.config import SettingsError
from scrapy_robots_std.robotstxt.reader import MAX_BODY_BYTES, MAX_READ_BYTES
from tests.helpers.cache import Stats, allow_all_entry, parse_entry
from tests.helpers.processes import importable, worker_command

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

A, B, C, D, E = (f"http://{name}.example:80" for name in "abcde")
RULES = b"User-agent: *\nDisallow: /private/\n"


@pytest.fixture
def path(tmp_path: Path) -> Path:
    return tmp_path / "cache" / "robots.sqlite3"


@pytest.fixture
def cache(path: Path) -> Iterator[SqliteCache]:
    opened = SqliteCache(path)
    opened.open()
    yield opened
    opened.close()


def reopened(path: Path, **kwargs: object) -> SqliteCache:
    """A second cache on the same file: what a resumed crawl sees."""
    other = SqliteCache(path, **kwargs)  # type: ignore[arg-type]
    other.open()
    return other


def rows(path: Path) -> int:
    with sqlite3.connect(path) as db:
        (count,) = db.execute("SELECT count(*) FROM robots_std_entries").fetchone()
    return int(count)


def test_sqlite_cache_implements_the_protocol_but_not_claims(
    cache: SqliteCache,
) -> None:
    assert isinstance(cache, RobotsCache)
    assert not isinstance(cache, SharedFetches)


def test_an_entry_survives_the_process_and_its_rules_are_parsed_again(
    cache: SqliteCache, path: Path
) -> None:
    entry = parse_entry(A, RULES)
    assert cache.put(entry, RULES) == 0
    cache.close()
    stats = Stats()
    later = reopened(path, stats=stats)
    loaded = later.get(A)
    assert loaded is not None
    assert loaded.robots is not entry.robots  # parsed again from the stored body
    assert dataclasses.replace(loaded, robots=None) == dataclasses.replace(
        entry, robots=None
    )
    assert loaded.robots is not None
    assert not loaded.robots.allowed("http://a.example/private/x", "Bot")
    assert loaded.robots.allowed("http://a.example/public", "Bot")
    assert stats.values["robots_std/cache/store_hit"] == 1
    assert later.get(B) is None
    later.close()


def test_nothing_is_kept_in_memory_every_get_reads_the_file(
    cache: SqliteCache, path: Path
) -> None:
    """The crawl's one in-memory layer is the middleware's (tests/test_cache_layer.py)."""
    cache.put(parse_entry(A, RULES), RULES)
    first, second = cache.get(A), cache.get(A)
    assert first is not None
    assert second is not None
    assert first.robots is not second.robots  # parsed again each time
    with sqlite3.connect(path) as db:  # behind the cache's back
        db.execute("DELETE FROM robots_std_entries")
    assert cache.get(A) is None


def test_verdicts_without_a_body_are_stored(cache: SqliteCache, path: Path) -> None:
    cache.put(allow_all_entry(A))
    later = reopened(path)
    loaded = later.get(A)
    assert loaded is not None
    assert (loaded.verdict, loaded.robots, loaded.status) == ("allow-all", None, 404)
    later.close()


def test_an_entry_of_the_other_standard_is_a_miss(
    cache: SqliteCache, path: Path
) -> None:
    cache.put(parse_entry(A, RULES), RULES)
    later = reopened(path, standard="1994")
    assert later.get(A) is None
    later.close()


def test_a_body_cut_on_the_wire_parses_again_to_the_same_rules(
    cache: SqliteCache, path: Path
) -> None:
    # The 512,000-byte boundary falls inside "Disallow: /cut-here-...": the first
    # parse completes that line and ignores the rest, and so must the second.
    filler = b"User-agent: *\n" + b"# pad\n" * ((MAX_BODY_BYTES - 100) // 6)
    body = filler + b"Disallow: /cut-here-" + b"x" * 200 + b"\nDisallow: /after\n"
    body += b"# more\n" * 1000
    received = body[:MAX_READ_BYTES]  # what _bytes_received let in
    entry = parse_entry(A, received)
    assert entry.robots is not None
    assert entry.robots.truncated
    cache.put(entry, received)
    later = reopened(path)
    loaded = later.get(A)
    assert loaded is not None
    assert loaded.robots is not None
    assert loaded.robots.truncated
    for url in ("http://a.example/cut-here-xxx", "http://a.example/after"):
        assert loaded.robots.allowed(url, "Bot") == entry.robots.allowed(url, "Bot")
        assert loaded.robots.allowed(url, "Bot")  # never the partial rule, nor after
    url = "http://a.example/cut-here-" + "x" * 200
    assert not loaded.robots.allowed(url, "Bot")  # the completed rule
    later.close()


def test_rows_are_bounded_and_the_first_to_expire_go_first(path: Path) -> None:
    cache = SqliteCache(path, max_origins=3)
    cache.open()
    evicted = [
        cache.put(allow_all_entry(A, ttl=500)),
        cache.put(allow_all_entry(B, ttl=-10)),  # expired already
        cache.put(allow_all_entry(C, ttl=100)),
        cache.put(allow_all_entry(D, ttl=900)),
        cache.put(allow_all_entry(E, ttl=900)),
    ]
    assert evicted == [0, 0, 0, 1, 1]
    assert rows(path) == 3
    assert len(cache) == 3
    later = reopened(path)
    assert [later.get(o) is not None for o in (A, B, C, D, E)] == [
        True,
        False,  # expired: evicted first
        False,  # then the one expiring soonest
        True,
        True,
    ]
    later.close()
    cache.close()


def test_a_stale_copy_re_dated_keeps_its_stored_body(
    cache: SqliteCache, path: Path
) -> None:
    old = parse_entry(A, RULES, ttl=-5)  # expired
    cache.put(old, RULES)
    # The middleware's stale-copy path: same entry, new expiry and detail, no body.
    redated = dataclasses.replace(
        old,
        detail="HTTP 200 (stale copy; now unreachable)",
        expires_at=time.time() + 60,
    )
    assert cache.put(redated) == 0
    later = reopened(path)
    loaded = later.get(A)
    assert loaded is not None
    assert loaded.robots is not None
    assert loaded.expires_at == redated.expires_at
    assert loaded.detail == redated.detail
    assert not loaded.robots.allowed("http://a.example/private/", "Bot")
    later.close()


def test_a_parsed_entry_without_a_body_is_not_stored(
    path: Path,
) -> None:
    stats = Stats()
    cache = reopened(path, stats=stats)
    cache.put(parse_entry(A, RULES))  # nothing to store: no body, no record to re-date
    assert cache.get(A) is None
    assert rows(path) == 0
    assert stats.values["robots_std/cache/redate_missed"] == 1
    cache.close()


def test_a_newer_entry_in_the_file_replaces_a_stale_one_known(
    cache: SqliteCache, path: Path
) -> None:
    known = parse_entry(A, RULES, ttl=-1)
    cache.put(known, RULES)
    assert cache.newer(A, known) is None  # the same record: nothing newer
    other = reopened(path)
    newer = parse_entry(A, b"User-agent: *\nDisallow: /\n")
    other.put(newer, b"User-agent: *\nDisallow: /\n")
    loaded = cache.newer(A, known)
    assert loaded is not None
    assert loaded.fresh()
    assert loaded.robots is not None
    assert not loaded.robots.allowed("http://a.example/anything", "Bot")
    other.close()


def test_the_same_fetch_re_dated_elsewhere_is_not_parsed_again(
    cache: SqliteCache, path: Path
) -> None:
    known = parse_entry(A, RULES, ttl=-1)
    cache.put(known, RULES)
    other = reopened(path)
    other.put(dataclasses.replace(known, expires_at=time.time() + 60))  # a 304
    loaded = cache.newer(A, known)
    assert loaded is not None
    assert loaded.fresh()
    assert loaded.robots is known.robots
    other.close()


def test_close_keeps_the_file_in_wal_mode(cache: SqliteCache, path: Path) -> None:
    cache.put(allow_all_entry(A))
    cache.close()
    with sqlite3.connect(path) as db:
        assert db.execute("PRAGMA journal_mode").fetchone() == ("wal",)
    assert rows(path) == 1


def test_a_file_that_is_not_a_database_degrades_to_memory(
    path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path.parent.mkdir(parents=True)
    junk = b"this is not an SQLite database\n" * 200
    path.write_bytes(junk)
    stats = Stats()
    cache = SqliteCache(path, stats=stats)
    with caplog.at_level(logging.DEBUG, logger="scrapy_robots_std.cache"):
        cache.open()
        assert cache.put(allow_all_entry(A)) == 0
        assert cache.get(A) is None  # a miss, never an "allow"
        assert len(cache) == 0
        cache.close()
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert warnings == [
        (
            f"robots.txt cache file {path} unavailable (DatabaseError: file is not a "
            "database); using the in-process cache, next try in 30 s"
        )
    ]
    assert stats.values["robots_std/cache/store_error"] == 1  # then left alone
    assert path.read_bytes() == junk  # left for the user to look at


def test_the_file_is_tried_again_after_the_retry_interval(path: Path) -> None:
    path.parent.mkdir(parents=True)
    path.write_bytes(b"junk" * 1000)
    stats = Stats()
    cache = SqliteCache(path, stats=stats, retry_interval=0.2)
    cache.open()
    assert stats.values["robots_std/cache/store_error"] == 1
    path.unlink()  # the user removed the damaged file
    time.sleep(0.3)
    cache.put(allow_all_entry(A))
    assert rows(path) == 1
    assert stats.values["robots_std/cache/store_error"] == 1
    cache.close()


def test_from_crawler_reads_the_path_setting(path: Path) -> None:
    crawler = get_crawler(
        settings_dict={
            "ROBOTS_STD_CACHE_PATH": str(path),
            "ROBOTS_STD_CACHE_MAX_ORIGINS": 7,
            "ROBOTS_STD_STANDARD": "1994",
        }
    )
    cache = build_from_crawler(SqliteCache, crawler)
    assert (cache.path, cache.max_origins, cache.standard) == (path, 7, "1994")


def test_from_crawler_puts_the_file_under_jobdir(tmp_path: Path) -> None:
    crawler = get_crawler(settings_dict={"JOBDIR": str(tmp_path / "job")})
    cache = build_from_crawler(SqliteCache, crawler)
    assert cache.path == tmp_path / "job" / "robots_std.sqlite3"


def test_from_crawler_without_a_path_or_jobdir_is_a_settings_error() -> None:
    crawler = get_crawler(settings_dict={})
    with pytest.raises(SettingsError, match=r"^ROBOTS_STD_CACHE_PATH: .*JOBDIR"):
        build_from_crawler(SqliteCache, crawler)


# -- processes -------------------------------------------------------------------------


def worker(*args: str) -> list[str]:
    return worker_command("sqlite_worker", *args)


def test_kill_9_while_writing_leaves_a_valid_file_with_every_commit(
    path: Path,
) -> None:
    process = subprocess.Popen(
        worker("write", str(path)), stdout=subprocess.PIPE, env=importable()
    )
    assert process.stdout is not None
    committed: list[str] = []
    deadline = time.monotonic() + 30
    try:
        while len(committed) < 200 and time.monotonic() < deadline:
            line = process.stdout.readline().decode()
            if not line:
                break
            committed.append(line.split()[1])
    finally:
        os.kill(process.pid, signal.SIGKILL)
        process.wait(10)
        process.stdout.close()
    assert process.returncode == -signal.SIGKILL
    assert len(committed) == 200
    with sqlite3.connect(path) as db:
        assert db.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
    cache = reopened(path)
    for index, origin in enumerate(committed):
        entry = cache.get(origin)
        assert entry is not None, origin
        assert entry.robots is not None
        assert not entry.robots.allowed(f"{origin[:-3]}/private-{index}/0/", "Bot")
    cache.close()


def test_two_processes_on_one_file_do_not_corrupt_it(path: Path) -> None:
    count = 400  # about a second of work each, so the two overlap
    processes = [
        subprocess.Popen(
            worker("mixed", str(path), name, str(count)),
            stdout=subprocess.PIPE,
            env=importable(),
        )
        for name in ("one", "two")
    ]
    results = []
    for process in processes:
        out, _ = process.communicate(timeout=120)
        assert process.returncode == 0
        results.append(json.loads(out))
    for result in results:
        assert result["store_errors"] == 0
        assert result["warnings"] == []
        assert result["wrong"] == 0
        assert result["found"] > 0
    with sqlite3.connect(path) as db:
        assert db.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
    # each worker's own origins (even steps) plus the 40 shared ones
    assert rows(path) == 2 * (count // 2) + 40
