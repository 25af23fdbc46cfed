"""Compare the robots.txt cache backends: MemoryCache, SqliteCache, RedisCache.

    .venv/bin/python benchmarks/cache_backends.py [--origins 1000] [--rounds 20]
        [--corpus ../shared/corpus] [--markdown benchmarks/RESULTS.md]

For N real robots.txt bodies of the corpus (one origin each, parsed beforehand):

* put/s: ``cache.put(entry, body)`` for every origin (SQLite: one transaction
  each; Redis: one MULTI each);
* get/s, memory hit: ``cache.get(origin)`` of fresh entries, ``--rounds`` times over
  all origins (what the middleware does before every request). MemoryCache only:
  SqliteCache and RedisCache keep nothing in memory (in a crawl the middleware's one
  in-memory layer is in front of them);
* get/s, store hit: a second cache on the same store (as a resumed crawl or another
  crawler process has) gets every origin once: a store read, the body inflated and
  parsed again;
* bytes/origin: what keeping one origin costs where it is kept. MemoryCache: Python
  heap growth under tracemalloc while the cache holds the parsed entries.
  SqliteCache: the file size after a WAL checkpoint, divided by N. RedisCache: the
  server's ``used_memory`` growth, divided by N (and the mean ``MEMORY USAGE`` of
  one key, for comparison).

The Redis row needs ``redis-server`` on PATH and redis-py; the script starts its own
server on 127.0.0.1 (tests/helpers/redis_server.py) and stops it at the end. Loops are
bounded by N (at most the corpus's 4,231 files) and ``--rounds``.
"""

from __future__ import annotations

import argparse
import gc
import os
import platform
import sqlite3
import subprocess
import sys
import tempfile
import time
import tracemalloc
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

REPO_ROOT = Path(__file__).resolve().parent.parent
DEFAULT_CORPUS = REPO_ROOT.parent / "shared" / "corpus"
sys.path[:0] = [str(REPO_ROOT)]

from scrapy_robots_std.cache import (
    CacheEntry,
    MemoryCache,
    RedisCache,
    SqliteCache,
)
from scrapy_robots_std.robotstxt.robots import RobotsTxt
from tests.helpers.redis_server import RedisServer, redis_server_missing

if TYPE_CHECKING:
    from collections.abc import Callable

BEGIN = "<!-- cache_backends.py: begin -->"
END = "<!-- cache_backends.py: end -->"
TTL = 3600.0


@dataclass
class Row:
    backend: str
    put_s: float
    get_memory_s: float | None
    get_store_s: float | None
    bytes_per_origin: float
    note: str = ""


def load_bodies(corpus: Path, count: int) -> list[tuple[str, bytes]]:
    files = sorted((corpus / "robots").iterdir())[:count]
    return [(f"https://{path.name}:443", path.read_bytes()) for path in files]


def entries_for(bodies: list[tuple[str, bytes]]) -> list[CacheEntry]:
    now = time.time()
    return [
        CacheEntry(
            origin=origin,
            robots_url=f"https://{origin[8:-4]}/robots.txt",
            verdict="parse",
            reason="2xx",
            detail="HTTP 200",
            robots=RobotsTxt.parse(body),
            status=200,
            fetched_at=now,
            expires_at=now + TTL,
        )
        for origin, body in bodies
    ]


def rate(count: int, seconds: float) -> float:
    return count / seconds if seconds > 0 else float("inf")


def timed(fn: Callable[[], Any]) -> float:
    started = time.perf_counter()
    fn()
    return time.perf_counter() - started


def put_all(cache: Any, entries: list[CacheEntry], bodies: list[bytes]) -> float:
    def run() -> None:
        for entry, body in zip(entries, bodies, strict=True):
            cache.put(entry, body)

    return rate(len(entries), timed(run))


def get_rounds(cache: Any, origins: list[str], rounds: int) -> float:
    def run() -> None:
        get = cache.get
        for _ in range(rounds):
            for origin in origins:
                get(origin)

    return rate(len(origins) * rounds, timed(run))


def get_once(cache: Any, origins: list[str]) -> float:
    def run() -> None:
        for origin in origins:
            if cache.get(origin) is None:
                raise RuntimeError(f"store miss for {origin}")

    return rate(len(origins), timed(run))


def bench_memory(entries: list[CacheEntry], bodies: list[bytes], rounds: int) -> Row:
    origins = [e.origin for e in entries]
    cache = MemoryCache(max_origins=len(entries))
    put_s = put_all(cache, entries, bodies)
    get_s = get_rounds(cache, origins, rounds)
    # The parsed objects are what a memory layer keeps: measure them being built.
    gc.collect()
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    kept = entries_for([(e.origin, b) for e, b in zip(entries, bodies, strict=True)])
    fresh = MemoryCache(max_origins=len(kept))
    for entry in kept:
        fresh.put(entry)
    gc.collect()
    grown = tracemalloc.get_traced_memory()[0] - before
    tracemalloc.stop()
    note = "Python heap (tracemalloc) of the parsed entries"
    return Row("MemoryCache", put_s, get_s, None, grown / len(kept), note)


def bench_sqlite(
    entries: list[CacheEntry], bodies: list[bytes], directory: Path
) -> Row:
    origins = [e.origin for e in entries]
    path = directory / "bench.sqlite3"
    cache = SqliteCache(path, max_origins=len(entries))
    cache.open()
    put_s = put_all(cache, entries, bodies)
    reader = SqliteCache(path, max_origins=len(entries))
    reader.open()
    store_s = get_once(reader, origins)
    reader.close()
    cache.close()
    with sqlite3.connect(path) as db:
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    size = path.stat().st_size
    note = "file size after a WAL checkpoint"
    return Row("SqliteCache", put_s, None, store_s, size / len(entries), note)


def bench_redis(entries: list[CacheEntry], bodies: list[bytes]) -> Row:
    import redis

    origins = [e.origin for e in entries]
    with RedisServer() as server:
        client = redis.Redis.from_url(server.url)
        before = int(client.info("memory")["used_memory"])
        cache = RedisCache(server.url)
        cache.open()
        put_s = put_all(cache, entries, bodies)
        reader = RedisCache(server.url)
        reader.open()
        store_s = get_once(reader, origins)
        reader.close()
        cache.close()
        used = int(client.info("memory")["used_memory"]) - before
        sample = origins[:: max(1, len(origins) // 200)]
        per_key = sum(
            int(client.memory_usage(f"robots_std:robots:{o}") or 0) for o in sample
        ) / len(sample)
        client.close()
    note = f"used_memory growth; MEMORY USAGE of one key {per_key:,.0f} B on average"
    return Row("RedisCache", put_s, None, store_s, used / len(entries), note)


def parse_rate(bodies: list[bytes]) -> float:
    """Bodies parsed per second (best of 3): the part of a store hit that is parsing."""
    best = min(timed(lambda: [RobotsTxt.parse(b) for b in bodies]) for _ in range(3))
    return rate(len(bodies), best)


def _redis_server_version() -> str:
    try:
        out = subprocess.run(
            ["redis-server", "--version"],
            capture_output=True,
            text=True,
            timeout=10,
            check=True,
        ).stdout
    except (OSError, subprocess.SubprocessError):
        return "redis-server not found"
    # "Redis server v=7.0.15 sha=... malloc=jemalloc-5.3.0 bits=64 build=..."
    return " ".join(out.split()[:3])


def fmt_rate(value: float | None) -> str:
    return "-" if value is None else f"{value:,.0f}"


def table(rows: list[Row]) -> list[str]:
    head = [
        (
            "| backend | put/s | get/s (memory hit) | get/s (store hit, parse included) "
            "| bytes/origin | bytes measured as |"
        ),
        "| :--- | ---: | ---: | ---: | ---: | :--- |",
    ]
    return head + [
        f"| {r.backend} | {fmt_rate(r.put_s)} | {fmt_rate(r.get_memory_s)} | "
        f"{fmt_rate(r.get_store_s)} | {r.bytes_per_origin:,.0f} | {r.note} |"
        for r in rows
    ]


def report(args: argparse.Namespace, rows: list[Row], facts: list[str]) -> str:
    command = "    .venv/bin/python benchmarks/cache_backends.py " + " ".join(
        sys.argv[1:]
    )
    lines = [
        BEGIN,
        "## Cache backends (`benchmarks/cache_backends.py`)",
        "",
        f"Date: {datetime.now(UTC):%Y-%m-%d %H:%M} UTC",
        "",
        "Command (run from the repository root):",
        "",
        command.rstrip(),
        "",
        *[f"* {fact}" for fact in facts],
        "",
        *table(rows),
        "",
        END,
    ]
    return "\n".join(lines) + "\n"


def write_markdown(path: Path, section: str) -> None:
    """Replace this script's section of ``path`` (or append it)."""
    from benchmarks.machine import write_section

    write_section(path, section, BEGIN, END)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    parser.add_argument("--origins", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--markdown", type=Path, default=None)
    args = parser.parse_args()
    origins = max(1, min(args.origins, 4231))
    rounds = max(1, min(args.rounds, 1000))
    load_start = os.getloadavg()
    bodies_by_origin = load_bodies(args.corpus, origins)
    bodies = [body for _, body in bodies_by_origin]
    entries = entries_for(bodies_by_origin)
    print(
        f"{len(entries)} origins, {sum(map(len, bodies)):,} body bytes", file=sys.stderr
    )
    rows = [bench_memory(entries, bodies, rounds)]
    with tempfile.TemporaryDirectory() as directory:
        rows.append(bench_sqlite(entries, bodies, Path(directory)))
    missing = redis_server_missing()
    if missing is None:
        rows.append(bench_redis(entries, bodies))
    parsed_per_s = parse_rate(bodies)
    try:
        import redis

        redis_version = redis.__version__
    except ImportError:
        redis_version = "not installed"
    load_end = os.getloadavg()
    facts = [
        (
            f"{len(entries):,} origins: the first {len(entries):,} files of the corpus "
            f"(sorted by name), {sum(map(len, bodies)) / len(bodies):,.0f} body bytes on "
            "average; memory hits: "
            f"{rounds} rounds over all origins"
        ),
        (
            f"machine: {platform.platform()}; cpu_count {os.cpu_count()}; python "
            f"{platform.python_version()}; SQLite {sqlite3.sqlite_version}; redis-py "
            f"{redis_version}; {_redis_server_version()}"
        ),
        "load average (1/5/15 min): start "
        + "/".join(f"{x:.2f}" for x in load_start)
        + ", end "
        + "/".join(f"{x:.2f}" for x in load_end)
        + " (a shared machine: timings are noisy; bytes are not)",
        (
            f"for scale: parsing alone runs at {parsed_per_s:,.0f} bodies/s on these files,"
            " the bulk of a store hit"
        ),
    ]
    if missing is not None:
        facts.append(f"RedisCache skipped: {missing}")
    text = report(args, rows, facts)
    print(text, end="")
    if args.markdown is not None:
        write_markdown(args.markdown, text)
        print(f"wrote {args.markdown}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
