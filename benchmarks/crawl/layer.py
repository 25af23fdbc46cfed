"""Probes into the robots.txt layer of a running crawl (used in the crawl process).

* :func:`install_timers` wraps each layer's parser calls (parse, and the per-request
  check) with wall-clock accumulators. ``time.perf_counter`` is used rather than
  ``time.thread_time``: here a ``thread_time()`` call costs about 0.9 µs, as much as
  one of this package's match calls, while ``perf_counter()`` costs about 0.07 µs.
  The calls are synchronous and short, so their wall time is their CPU time unless
  the OS preempts the process inside one.
* :class:`StackSampler` is a statistical profile of the crawl process: on every
  ``ITIMER_PROF`` tick (process CPU time, so idle waits are never sampled) it looks
  at the main thread's stack and notes whether the robots.txt layer is at work: its
  own code, or Scrapy's machinery working on a robots.txt request or response. Shares of samples are shares
  of the same run's CPU, so a machine whose speed drifts between runs (this one's
  does, by 10-20 %) changes them little; wall and CPU ratios between runs it does.
* :func:`memory_probe` measures the memory the layer's robots.txt cache retains:
  with ``tracemalloc`` running since the crawl process started, traced memory is
  read, the cache is emptied, ``gc.collect()`` runs, and traced memory is read again;
  the difference divided by the number of cached origins is the retained memory per
  origin.
"""

from __future__ import annotations

import collections
import functools
import gc
import signal
import time
import tracemalloc
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Callable

    from scrapy.crawler import Crawler


@dataclass
class Timer:
    seconds: float = 0.0
    calls: int = 0


class LayerTimers:
    def __init__(self) -> None:
        self.parse = Timer()
        self.match = Timer()
        self._depth = 0

    def wrap(self, timer: Timer, func: Callable[..., Any]) -> Callable[..., Any]:
        clock = time.perf_counter

        @functools.wraps(func)
        def timed(*args: Any, **kwargs: Any) -> Any:
            if self._depth:  # a timed call inside another: counted by the outer one
                return func(*args, **kwargs)
            self._depth += 1
            start = clock()
            try:
                return func(*args, **kwargs)
            finally:
                timer.seconds += clock() - start
                timer.calls += 1
                self._depth -= 1

        return timed

    def as_dict(self) -> dict[str, Any]:
        return {"parse": asdict(self.parse), "match": asdict(self.match)}


def install_timers(way: str) -> LayerTimers:
    """Wrap the parser calls of ``way``'s layer (class attributes, this process only)."""
    timers = LayerTimers()
    if way == "builtin":
        # What RobotsTxtMiddleware calls: the parser's constructor (decode the body,
        # Protego.parse) and allowed(url, user_agent) per request.
        from scrapy.robotstxt import ProtegoRobotParser

        ProtegoRobotParser.__init__ = timers.wrap(  # type: ignore[method-assign]
            timers.parse, ProtegoRobotParser.__init__
        )
        ProtegoRobotParser.allowed = timers.wrap(  # type: ignore[method-assign]
            timers.match, ProtegoRobotParser.allowed
        )
    elif way == "ours":
        # What RobotsTxtStdMiddleware calls: RobotsTxt.parse(body, standard) per
        # robots.txt, allowed(url, token) per request (decide() only for drops).
        from scrapy_robots_std import RobotsTxt

        parse = RobotsTxt.parse.__func__  # type: ignore[attr-defined]
        RobotsTxt.parse = classmethod(timers.wrap(timers.parse, parse))  # type: ignore[method-assign,assignment]
        RobotsTxt.allowed = timers.wrap(timers.match, RobotsTxt.allowed)  # type: ignore[method-assign]
        RobotsTxt.decide = timers.wrap(timers.match, RobotsTxt.decide)  # type: ignore[method-assign]
    return timers


#: Where each way's robots.txt layer lives (path fragments of code files).
LAYER_CODE: dict[str, tuple[str, ...]] = {
    "off": (),
    "builtin": (
        "/scrapy/downloadermiddlewares/robotstxt.py",
        "/scrapy/robotstxt.py",
        "/protego/",
    ),
    "ours": ("/scrapy_robots_std/",),
}

#: Scrapy's own machinery: the frames that call into the layer and that the layer
#: calls back into (the engine, the downloader and its handlers, the middleware
#: managers and the other middlewares, extensions; the spider is below).
_BOUNDARY_CODE = (
    "/scrapy/core/",
    "/scrapy/middleware.py",
    "/scrapy/downloadermiddlewares/",
    "/scrapy/spidermiddlewares/",
    "/scrapy/extensions/",
)
#: The spider: machinery too, and its own work on each page (the callback and the
#: requests it builds) is the same in every way of variant (a), so a yardstick for
#: the machine's speed.
_SPIDER_CODE = "/benchmarks/crawl/spider.py"
_REFERENCE_FUNCTIONS = frozenset({"parse", "_request"})

_OTHER, _LAYER, _BOUNDARY, _SPIDER = 0, 1, 2, 3


class StackSampler:
    """Which share of the crawl's CPU the robots.txt layer takes (module docstring).

    Each sample is given to the innermost frame that is either the layer's code or
    Scrapy's machinery (``_BOUNDARY_CODE``); library code in between (URL parsing,
    stats, Twisted, asyncio) counts for whichever called it. The innermost frame
    decides because Deferred and coroutine callbacks nest: when a robots.txt arrives,
    the requests it releases go on through the downloader inside the frames that
    fired them, and that work is the crawl's, not the layer's.

    ``layer`` counts samples decided by a frame of the layer's code; ``fetch`` those
    decided by a frame of Scrapy's machinery working on a ``request`` or
    ``response`` for a robots.txt URL (the robots.txt requests themselves); ``gc``
    the ticks that fell inside a garbage collection (whoever triggered it: a share
    of the crawl's own allocations); ``reference`` those decided by the spider's
    callback or its request building (the same work in every way of variant (a));
    ``total`` counts every sample.
    """

    def __init__(self, way: str, interval: float = 0.005) -> None:
        self.interval = interval
        self.layer_code = LAYER_CODE[way]
        self.total = 0
        self.layer = 0
        self.fetch = 0
        self.gc = 0
        self.reference = 0
        self._gc_pending = False
        self._gc_remaining = 0.0
        self._gc_started = 0.0
        self._kind: dict[str, int] = {}  # code file -> _OTHER, _LAYER, ...
        # The layer functions that decided the layer's samples, and the innermost
        # frame of each, for looking into where the layer's time goes (--json).
        self.where: collections.Counter[str] = collections.Counter()
        # The same for the crawl's samples: the innermost machinery function.
        self.crawl_where: collections.Counter[str] = collections.Counter()

    def _file_kind(self, filename: str) -> int:
        path = filename.replace("\\", "/")
        if any(part in path for part in self.layer_code):
            kind = _LAYER
        elif _SPIDER_CODE in path:
            kind = _SPIDER
        elif any(part in path for part in _BOUNDARY_CODE):
            kind = _BOUNDARY
        else:
            kind = _OTHER
        self._kind[filename] = kind
        return kind

    def _gc_callback(self, phase: str, info: dict[str, int]) -> None:
        # A tick that falls inside a collection is handled after it, by whatever
        # Python code runs next; the timer's remaining time tells that it fell.
        remaining = signal.getitimer(signal.ITIMER_PROF)[0]
        if phase == "start":
            self._gc_remaining = remaining
            self._gc_started = time.perf_counter()
        elif (
            remaining > self._gc_remaining
            or time.perf_counter() - self._gc_started >= self.interval
        ):
            self._gc_pending = True

    def _tick(self, signum: int, frame: Any) -> None:
        self.total += 1
        if self._gc_pending:
            self._gc_pending = False
            self.gc += 1
            return
        kinds = self._kind
        innermost = frame
        while frame is not None:
            filename = frame.f_code.co_filename
            kind = kinds.get(filename)
            if kind is None:
                kind = self._file_kind(filename)
            if kind == _LAYER:
                self.layer += 1
                self.where[
                    f"{frame.f_code.co_name} <- {innermost.f_code.co_name} "
                    f"({innermost.f_code.co_filename.rsplit('/', 1)[-1]})"
                ] += 1
                return
            if kind >= _BOUNDARY:
                names = frame.f_code.co_varnames
                if ("request" in names or "response" in names) and _is_robots_fetch(
                    frame.f_locals
                ):
                    self.fetch += 1
                else:
                    code = frame.f_code
                    self.crawl_where[_where(code)] += 1
                    if kind == _SPIDER and code.co_name in _REFERENCE_FUNCTIONS:
                        self.reference += 1
                return
            frame = frame.f_back

    def start(self) -> None:
        gc.callbacks.append(self._gc_callback)
        signal.signal(signal.SIGPROF, self._tick)
        signal.setitimer(signal.ITIMER_PROF, self.interval, self.interval)

    def stop(self) -> None:
        signal.setitimer(signal.ITIMER_PROF, 0, 0)
        signal.signal(signal.SIGPROF, signal.SIG_DFL)
        if self._gc_callback in gc.callbacks:
            gc.callbacks.remove(self._gc_callback)

    def as_dict(self) -> dict[str, Any]:
        return {
            "interval": self.interval,
            "total": self.total,
            "layer": self.layer,
            "fetch": self.fetch,
            "gc": self.gc,
            "reference": self.reference,
            "where": dict(self.where.most_common(20)),
            "crawl_where": dict(self.crawl_where.most_common(40)),
        }


class GcTimer:
    """Time the crawl process spends in the cyclic garbage collector (gc.callbacks).

    A layer that keeps more objects alive, or makes more reference cycles, makes
    every collection of the crawl slower; the stack samples give that time to
    whatever allocated when a collection started, so it is measured on its own.
    """

    def __init__(self) -> None:
        self.seconds = 0.0
        self.collections = [0, 0, 0]
        self._started = 0.0

    def _callback(self, phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            self._started = time.perf_counter()
        else:
            self.seconds += time.perf_counter() - self._started
            self.collections[info["generation"]] += 1

    def start(self) -> None:
        gc.callbacks.append(self._callback)

    def stop(self) -> None:
        if self._callback in gc.callbacks:
            gc.callbacks.remove(self._callback)

    def as_dict(self) -> dict[str, Any]:
        return {"seconds": self.seconds, "collections": self.collections}


def _where(code: Any) -> str:
    return "/".join(code.co_filename.rsplit("/", 2)[-2:]) + ":" + code.co_name


def _is_robots_fetch(local_vars: Any) -> bool:
    for name in ("request", "response"):
        url = getattr(local_vars.get(name), "url", None)
        if isinstance(url, str) and url.endswith("/robots.txt"):
            return True
    return False


def _robots_middleware(crawler: Crawler) -> Any:
    from scrapy.downloadermiddlewares.robotstxt import RobotsTxtMiddleware

    from scrapy_robots_std.scrapy.middleware import RobotsTxtStdMiddleware

    assert crawler.engine is not None
    for mw in crawler.engine.downloader.middleware.middlewares:
        if isinstance(mw, (RobotsTxtMiddleware, RobotsTxtStdMiddleware)):
            return mw
    return None


def _drop_cache(mw: Any) -> int:
    """Empty the layer's robots.txt cache; return how many origins it held."""
    from scrapy.downloadermiddlewares.robotstxt import RobotsTxtMiddleware

    if isinstance(mw, RobotsTxtMiddleware):
        count = len(mw._parsers)
        mw._parsers.clear()
        return count
    cache = mw.store.memory
    count = len(cache)
    # The default MemoryCache keeps its entries in _entries; another backend is
    # emptied through its close() (which may keep data elsewhere: then say so).
    entries = getattr(cache, "_entries", None)
    if entries is not None:
        entries.clear()
    else:
        cache.close()
    return count


def memory_probe(crawler: Crawler, top: int = 8) -> dict[str, Any]:
    """Retained memory per cached origin (see the module docstring)."""
    mw = _robots_middleware(crawler)
    if mw is None or not tracemalloc.is_tracing():
        return {}
    gc.collect()
    before_snapshot = tracemalloc.take_snapshot()
    before = tracemalloc.get_traced_memory()[0]
    origins = _drop_cache(mw)
    gc.collect()
    after = tracemalloc.get_traced_memory()[0]
    after_snapshot = tracemalloc.take_snapshot()
    freed = before - after
    diff = after_snapshot.compare_to(before_snapshot, "filename")
    by_file = [
        {"file": str(stat.traceback[0].filename), "freed": -stat.size_diff}
        for stat in sorted(diff, key=lambda s: s.size_diff)[:top]
        if stat.size_diff < 0
    ]
    return {
        "backend": type(getattr(mw, "cache", None)).__name__
        if hasattr(mw, "cache")
        else "dict",
        "origins": origins,
        "traced_before": before,
        "traced_after": after,
        "freed": freed,
        "per_origin": freed / origins if origins else None,
        "by_file": by_file,
    }
