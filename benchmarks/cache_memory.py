"""Retained memory per cached origin: this package's robots cache vs Scrapy's built-in.

Definition (issue 4(d)): after every origin's robots.txt was parsed and queried at
least once with the crawl's token, the bytes that ``tracemalloc`` sees freed when
the robots cache is dropped, divided by the number of origins.

* built-in: ``scrapy.downloadermiddlewares.robotstxt.RobotsTxtMiddleware`` keeps
  ``self._parsers[netloc] = ProtegoRobotParser.from_crawler(crawler, body)``: the
  netloc string, the parser object (its ``__dict__``: ``spider`` and ``rp``) and
  the Protego object with whatever its first ``can_fetch`` built. The spider and
  crawler are shared by all origins and exist before the measurement starts.
* ours: ``MemoryCache`` holding one ``CacheEntry`` per origin, built the way
  ``RobotsTxtStdMiddleware._store`` builds it for a 200 response (origin key,
  robots URL, verdict, reason, detail, the ``RobotsTxt``, status, times), then one
  ``allowed(url, token)``.

Both structures are built directly (no crawl, no network) from the corpus bodies;
each parser gets its own copy of the body, so a parser that kept its input would
be charged for it. The token string is one shared object (Scrapy passes
``ROBOTSTXT_USER_AGENT`` through unchanged). Each structure is built, measured and
dropped in turn, under ``tracemalloc`` from the start of its build.

Usage (from the repository root)::

    .venv/bin/python benchmarks/cache_memory.py [--origins 10000] [--token ScrapyBench]
        [--standard rfc9309] [--no-urls] [--breakdown 25]

See benchmarks/README.md.
"""

from __future__ import annotations

import argparse
import gc
import statistics
import sys
import time
import tracemalloc
import types
from array import array
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlparse, urlsplit

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

REPO_ROOT = Path(__file__).resolve().parent.parent
DEFAULT_CORPUS = REPO_ROOT.parent / "shared" / "corpus"
TARGET_RATIO = 0.3

if str(REPO_ROOT) not in sys.path:
    sys.path.insert(0, str(REPO_ROOT))


@dataclass(frozen=True)
class Origin:
    """One cached origin of the simulated crawl."""

    site: str  # the corpus file it was served
    url: str  # the URL asked about it (absolute, on this origin)
    body: bytes


def load_origins(corpus: Path, count: int | None, use_urls: bool) -> list[Origin]:
    """``count`` origins (default: one per corpus file), cycling with new host names."""
    robots_dir = corpus / "robots"
    files = sorted(path for path in robots_dir.iterdir() if path.is_file())
    first_url: dict[str, str] = {}
    if use_urls:
        with (corpus / "urls.txt").open(encoding="utf-8") as fh:
            for line in fh:
                site, _, url = line.rstrip("\n").partition("\t")
                first_url.setdefault(site, url)
    bodies = [(path.name, path.read_bytes()) for path in files]
    origins = []
    for index in range(len(bodies) if count is None else count):
        site, body = bodies[index % len(bodies)]
        host = site[: -len("_443")] + ":443" if site.endswith("_443") else site
        url = first_url.get(site) or f"https://{host}/"
        cycle = index // len(bodies)
        if cycle:  # a distinct origin serving the same file
            parts = urlsplit(url)
            url = parts._replace(netloc=f"c{cycle}-{parts.netloc}").geturl()
        origins.append(Origin(site, url, body))
    return origins


# --------------------------------------------------------------------------
# The two caches, built as the middlewares build them
# --------------------------------------------------------------------------


def stored_entry(url: str, robots: Any) -> Any:
    """The ``CacheEntry`` ``RobotsTxtStdMiddleware._store`` makes for ``url``'s origin
    after a 200 without redirects, holding ``robots`` (a parsed ``RobotsTxt``)."""
    from scrapy_robots_std import policy as _policy
    from scrapy_robots_std.cache import CacheEntry
    from scrapy_robots_std.scrapy.origin import origin_of
    from scrapy_robots_std.scrapy.settle import describe as _describe

    origin = origin_of(url)
    assert origin is not None, url
    status = 200
    verdict = _policy.fetch_verdict(
        _policy.FetchOutcome(status=status), robots.standard
    )
    now = time.time()
    return CacheEntry(
        origin=origin.key,
        robots_url=origin.robots_url,
        verdict=verdict.verdict,
        reason=verdict.reason,
        detail=_describe(verdict, f"HTTP {status}"),
        robots=robots,
        status=status,
        fetched_at=now,
        expires_at=now + 86400.0,
    )


def build_ours(
    origins: list[Origin], token: str, standard: str, *, full_copy: bool = False
) -> Any:
    from scrapy_robots_std.cache import MemoryCache
    from scrapy_robots_std.robotstxt.robots import RobotsTxt
    from scrapy_robots_std.scrapy.robotparser import StdRobotParser

    cache = MemoryCache(max_origins=len(origins))
    for item in origins:
        parsed = RobotsTxt.parse(bytes(bytearray(item.body)), standard)
        # _store caches the copy without diagnostics; --with-diagnostics keeps
        # the full object, as versions before 0.3.1 did.
        robots = parsed if full_copy else parsed.without_diagnostics()
        cache.put(stored_entry(item.url, robots))
        # What the robots_parsed signal carries; its receivers are gone afterwards.
        StdRobotParser.from_robots(parsed)
        del parsed
        robots.allowed(item.url, token)
    return cache


def build_builtin(
    origins: list[Origin], token: str, standard: str, *, full_copy: bool = False
) -> Any:
    del standard, full_copy  # the built-in has one standard, and no diagnostics
    from scrapy import Spider
    from scrapy.robotstxt import ProtegoRobotParser

    crawler = _shared_crawler()
    parsers: dict[str, Any] = {}
    for item in origins:
        # RobotsTxtMiddleware.robot_parser: the key is urlparse_cached(request).netloc.
        netloc = urlparse(item.url).netloc
        parser = ProtegoRobotParser.from_crawler(crawler, bytes(bytearray(item.body)))
        parsers[netloc] = parser
        parser.allowed(item.url, token)
    assert isinstance(crawler.spider, Spider)
    return parsers


_CRAWLER: Any = None


def _shared_crawler() -> Any:
    """One crawler with a spider, made before any measurement (shared by all origins)."""
    global _CRAWLER
    if _CRAWLER is None:
        from scrapy import Spider
        from scrapy.utils.test import get_crawler

        class BenchSpider(Spider):
            name = "bench"

        crawler = get_crawler(BenchSpider, {"ROBOTSTXT_OBEY": True})
        crawler.spider = BenchSpider()
        _CRAWLER = crawler
    return _CRAWLER


# --------------------------------------------------------------------------
# Measurement
# --------------------------------------------------------------------------


def freed_bytes(build: Callable[[], Any]) -> tuple[int, int, int]:
    """Bytes freed when the built structure is dropped, bytes the build left
    allocated after that (module-level caches such as the parser's bounded
    cache of keys: shared, not per origin), and the peak while building."""
    gc.collect()
    tracemalloc.start()
    try:
        holder = [build()]
        gc.collect()
        before = tracemalloc.get_traced_memory()[0]
        holder.clear()
        gc.collect()
        after, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return before - after, after, peak


def walk(
    root: object, skip: set[int], seen: set[int], path: str = ""
) -> Iterator[tuple[str, int]]:
    """(path, sys.getsizeof) of every object reachable from root, each object once.

    Containers are followed; ``[]`` stands for any item, ``{}`` for any dict value
    and ``{k}`` for any dict key. Types, modules and functions are not followed
    (shared by everything); nor are the objects in ``skip``.
    """
    stack = [(root, path)]
    while stack:
        obj, where = stack.pop()
        key = id(obj)
        if key in seen or key in skip:
            continue
        if isinstance(
            obj,
            type
            | types.ModuleType
            | types.FunctionType
            | types.BuiltinFunctionType
            | types.MethodType,
        ):
            continue
        seen.add(key)
        yield where, sys.getsizeof(obj)
        if isinstance(obj, str | bytes | int | float | bool | array) or obj is None:
            continue
        if isinstance(obj, dict):
            for k, v in obj.items():
                stack.append((k, where + "{k}"))
                stack.append((v, where + "{}"))
            continue
        if isinstance(obj, tuple) and not hasattr(obj, "_fields"):
            stack.extend((item, where + "[]") for item in obj)
            continue
        if isinstance(obj, tuple):  # a named tuple: its fields by name
            stack.extend(
                (value, f"{where}.{name}")
                for name, value in zip(obj._fields, obj, strict=True)
            )
            continue
        if isinstance(obj, list | set | frozenset):
            stack.extend((item, where + "[]") for item in obj)
            continue
        slots = [
            name
            for cls in type(obj).__mro__
            for name in getattr(cls, "__slots__", ())
            if name not in ("__dict__", "__weakref__")
        ]
        # A slot read through a property (CacheEntry's fields kept in a smaller
        # form) is walked as it is kept, not as the property gives it.
        kept = getattr(type(obj), "_kept_slots", {})
        stack.extend(
            (
                kept[name].__get__(obj) if name in kept else getattr(obj, name),
                f"{where}.{name}",
            )
            for name in slots
            if hasattr(obj, name)
        )
        attrs = getattr(obj, "__dict__", None)
        if isinstance(attrs, dict):
            seen.add(id(attrs))
            yield where + ".__dict__", sys.getsizeof(attrs)
            for name, value in attrs.items():
                stack.append((value, f"{where}.{name}"))


def breakdown(
    roots: list[tuple[str, object]], skip: set[int]
) -> tuple[dict[str, int], list[int]]:
    """Bytes by path over all roots, and each root's own total."""
    by_path: dict[str, int] = defaultdict(int)
    per_root = []
    seen: set[int] = set()
    for label, root in roots:
        total = 0
        for where, size in walk(root, skip, seen, label):
            by_path[where] += size
            total += size
        per_root.append(total)
    return by_path, per_root


def ours_roots(cache: Any) -> list[tuple[str, object]]:
    # The entries first, so that each one's own bytes are attributed to it.
    entries = cache._entries
    return [*(("entry", entry) for entry in entries.values()), ("cache", cache)]


def builtin_roots(parsers: dict[str, Any]) -> list[tuple[str, object]]:
    return [*(("parser", parser) for parser in parsers.values()), ("dict", parsers)]


def print_breakdown(
    title: str, roots: list[tuple[str, object]], count: int, top: int
) -> None:
    crawler = _shared_crawler()
    skip = {id(crawler), id(crawler.spider)}
    by_path, per_root = breakdown(roots, skip)
    total = sum(by_path.values())
    sizes = sorted(per_root[:-1])
    print(f"\n{title}: sys.getsizeof walk, {total / count:,.0f} bytes/origin")
    print(
        f"  per origin: median {statistics.median(sizes):,.0f}, "
        f"p90 {sizes[int(len(sizes) * 0.9)]:,}, max {sizes[-1]:,}; "
        f"the largest 1% of origins hold "
        f"{sum(sizes[-max(1, len(sizes) // 100) :]) / total:.0%} of the bytes"
    )
    print(f"  {'bytes/origin':>12}  {'share':>6}  path")
    for where, size in sorted(by_path.items(), key=lambda kv: -kv[1])[:top]:
        print(f"  {size / count:>12,.1f}  {size / total:>6.1%}  {where}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    parser.add_argument(
        "--origins",
        type=int,
        default=None,
        help="number of origins (default: one per corpus file; more cycle the "
        "files under new host names)",
    )
    parser.add_argument("--token", default="ScrapyBench")
    parser.add_argument("--standard", default="rfc9309", choices=("rfc9309", "1994"))
    parser.add_argument(
        "--no-urls",
        action="store_true",
        help="query https://<host>/ instead of the site's first URL in urls.txt",
    )
    parser.add_argument(
        "--with-diagnostics",
        action="store_true",
        help="ours: cache the full parsed object, diagnostics included (what "
        "versions before 0.3.1 kept), to see what dropping them saves",
    )
    parser.add_argument(
        "--breakdown",
        type=int,
        default=25,
        metavar="TOP",
        help="print the TOP paths of each structure by size (0: none)",
    )
    args = parser.parse_args(argv)

    origins = load_origins(args.corpus, args.origins, not args.no_urls)
    count = len(origins)
    token = args.token
    # Imports (and the crawler) before any measurement: not per origin.
    build_ours(origins[:1], token, args.standard)
    build_builtin(origins[:1], token, args.standard)
    full = args.with_diagnostics
    print(
        f"{count:,} origins from {args.corpus / 'robots'}, token {token!r}, "
        f"standard {args.standard}, queried URL: "
        + ("https://<host>/" if args.no_urls else "the site's first URL in urls.txt")
        + (", ours caches the full object (diagnostics kept)" if full else "")
    )
    results = {}
    for label, build in (("ours", build_ours), ("built-in", build_builtin)):
        freed, left, peak = freed_bytes(
            lambda build=build: build(origins, token, args.standard, full_copy=full)
        )
        results[label] = freed / count
        print(
            f"{label:>9}: {freed:>13,} bytes freed, {freed / count:>9,.0f} bytes/origin"
            f" (left allocated after the drop: {left:,}; peak {peak / 1e6:,.1f} MB)"
        )
    ratio = results["ours"] / results["built-in"]
    verdict = "PASS" if ratio <= TARGET_RATIO else "MISS"
    print(f"ratio ours / built-in: {ratio:.3f}x (target <= {TARGET_RATIO}x: {verdict})")

    if args.breakdown:
        cache = build_ours(origins, token, args.standard, full_copy=full)
        print_breakdown("ours", ours_roots(cache), count, args.breakdown)
        del cache
        parsers = build_builtin(origins, token, args.standard)
        print_breakdown("built-in", builtin_roots(parsers), count, args.breakdown)
    return 0


if __name__ == "__main__":
    sys.exit(main())
