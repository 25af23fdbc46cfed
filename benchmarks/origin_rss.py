"""RSS per cached origin, the way a crawl keeps its origins (issue 24, point 3).

Each origin's robots.txt (corpus files in turn, each origin a new host name) is
parsed, stored in the crawl's ``MemoryCache`` as ``settle.py`` stores a 200 (the
copy without diagnostics, the body's SHA-256 and size), and checked once with
the crawl's token, as the first request of the origin is. The process's
resident set size is read before and after, in a fresh process per run, and the
growth divided by the number of origins. ``memory_bytes()`` is compared with
what tracemalloc sees on a smaller sample (it must bound it within 1.25x).

Usage (from the repository root)::

    .venv/bin/python -m benchmarks.origin_rss [--origins 20000] [--tracemalloc 2000]

Target: at most 2,048 bytes of RSS per origin. The figure for 1,000,000 origins
is extrapolated linearly.
"""

from __future__ import annotations

import argparse
import gc
import hashlib
import os
import sys
import time
import tracemalloc
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
CORPUS = REPO_ROOT.parent / "shared" / "corpus" / "robots"
TARGET = 2_048
TOKEN = "ScrapyBench"


def rss_bytes() -> int:
    """The resident set size of this process, from /proc (Linux)."""
    with open("/proc/self/statm", encoding="ascii") as fh:
        return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def bodies() -> list[tuple[str, bytes]]:
    return [(path.name, path.read_bytes()) for path in sorted(CORPUS.iterdir())]


def store(cache: object, host: str, body: bytes) -> None:
    """Parse, store and check one origin as the crawl does."""
    from scrapy_robots_std.cache import CacheEntry
    from scrapy_robots_std.robotstxt.robots import RobotsTxt

    robots = RobotsTxt.parse(body).without_diagnostics()
    now = time.time()
    origin = f"https://{host}:443"
    cache.put(  # type: ignore[attr-defined]
        CacheEntry(
            origin=origin,
            robots_url=f"https://{host}/robots.txt",
            verdict="parse",
            reason="2xx",
            detail="HTTP 200",
            robots=robots,
            status=200,
            fetched_at=now,
            expires_at=now + 86_400,
            body_sha256=hashlib.sha256(body).hexdigest(),
            body_bytes=len(body),
        )
    )
    robots.allowed(f"https://{host}/", TOKEN)


def run(count: int) -> tuple[int, float]:
    """RSS growth per origin for ``count`` origins, and the seconds it took."""
    from scrapy_robots_std.cache import MemoryCache

    files = bodies()
    cache = MemoryCache(max_origins=count + 1)
    # Warm the process (imports, caches of the parser) with other origins.
    for name, body in files[:200]:
        store(MemoryCache(max_origins=10), f"warm.{name}", body)
    gc.collect()
    before = rss_bytes()
    start = time.perf_counter()
    for index in range(count):
        name, body = files[index % len(files)]
        store(cache, f"o{index}.{name}", bytes(bytearray(body)))
    gc.collect()
    grown = rss_bytes() - before
    assert len(cache) == count  # type: ignore[arg-type]
    return grown // count, time.perf_counter() - start


def bounded(count: int) -> tuple[int, int]:
    """What tracemalloc sees per origin, and what memory_bytes() counts."""
    from scrapy_robots_std.cache import MemoryCache

    files = bodies()
    cache = MemoryCache(max_origins=count + 1)
    gc.collect()
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    for index in range(count):
        name, body = files[index % len(files)]
        store(cache, f"t{index}.{name}", body)
    gc.collect()
    seen = tracemalloc.get_traced_memory()[0] - before
    tracemalloc.stop()
    counted = sum(entry.robots.memory_bytes() for entry in cache._entries.values())  # type: ignore[attr-defined]
    return seen, counted


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--origins", type=int, default=20_000)
    parser.add_argument("--tracemalloc", type=int, default=2_000)
    args = parser.parse_args(argv)
    sys.path.insert(0, str(REPO_ROOT))
    per_origin, seconds = run(args.origins)
    verdict = "PASS" if per_origin <= TARGET else "MISS"
    print(
        f"{args.origins:,} origins: RSS +{per_origin:,} bytes per origin "
        f"(target {TARGET:,}: {verdict}); {seconds:.1f} s"
    )
    print(f"1,000,000 origins (extrapolated): {per_origin * 1_000_000 / 2**30:.2f} GiB")
    seen, counted = bounded(args.tracemalloc)
    print(
        f"{args.tracemalloc:,} origins under tracemalloc: {seen // args.tracemalloc:,}"
        f" bytes per origin seen (whole entries); RobotsTxt.memory_bytes() sums"
        f" {counted // args.tracemalloc:,} per origin"
    )
    return 0 if verdict == "PASS" else 1


if __name__ == "__main__":
    sys.exit(main())
