"""A store's blocking calls (SQLite, Redis), run on worker threads of their own.

The reactor thread never blocks on a store: every call returns a Deferred, has a
deadline, and a failure or a missed deadline is an answer (nothing stored, no claim
shared) rather than an error. By default one worker thread per store keeps the calls
in order and lets a SQLite connection stay on the thread that opened it. A store that
may be called from several threads at once (a network store such as Redis, whose
client has a connection pool) can be given ``workers > 1``: then one slow round trip
no longer holds up every other origin's call behind it.

The reactor does not block, but the fetch cycle of an origin awaits its store calls
(the read before the fetch, the claim, the read after the claim), and that origin's
requests wait for the verdict meanwhile. A call slower than :data:`SLOW_CALL` seconds
(from the moment it was asked for, queueing behind other calls included) is reported
once, at WARNING, with its duration and the part of it spent queued;
``robots_std/cache/store_slow`` counts them all.
"""

from __future__ import annotations

import logging
import threading
import time
from typing import TYPE_CHECKING, Any, Final, TypeVar

from twisted.internet.defer import Deferred, TimeoutError
from twisted.internet.threads import deferToThreadPool
from twisted.python.threadpool import ThreadPool

from scrapy_robots_std import stats as _stats

if TYPE_CHECKING:
    from collections.abc import Callable

    from scrapy.statscollectors import StatsCollector

__all__ = ["SLOW_CALL", "OffThread"]

logger = logging.getLogger("scrapy_robots_std.cache")

#: Seconds above which a store call is reported as slow.
SLOW_CALL: Final = 0.25

_T = TypeVar("_T")


class OffThread:
    """Runs ``store``'s methods on a worker thread; ``call`` gives a Deferred.

    ``deadline`` bounds how long the reactor side waits for one call, queueing
    included (the store's own socket or lock timeouts bound the thread); past it the
    call's ``default`` is the answer and a stat counts it. ``workers`` is how many
    calls may run at once: 1 (the default) runs them one after another, in order, on
    one thread; more is only for stores that are safe to call from several threads.
    """

    def __init__(
        self,
        describe: str,
        *,
        deadline: float,
        stats: StatsCollector | None = None,
        workers: int = 1,
    ) -> None:
        if workers < 1:
            raise ValueError("workers must be at least 1")
        self.describe = describe
        self.deadline = deadline
        self.workers = workers
        self._stats = stats
        self._pool: ThreadPool | None = None
        self._warned = False

    def start(self) -> None:
        if self._pool is None:
            self._pool = ThreadPool(
                minthreads=1, maxthreads=self.workers, name="robots-std-store"
            )
            # Daemon threads: a store that was never closed (a close step that
            # failed, a hung call) cannot keep the process alive after the crawl.
            self._pool.threadFactory = _daemon_thread  # type: ignore[assignment]
            self._pool.start()

    def stop(self) -> None:
        """Stop the worker once the calls queued so far have run."""
        pool, self._pool = self._pool, None
        if pool is not None:
            pool.stop()

    def submit(self, function: Callable[..., object], *args: Any) -> None:
        """Run ``function(*args)`` on the worker thread; nobody waits for it."""
        if self._pool is not None:
            self._pool.callInThread(_quietly, function, *args)

    async def call(
        self, default: _T, function: Callable[..., _T], *args: Any, **kwargs: Any
    ) -> _T:
        """``function(*args, **kwargs)`` on the worker thread, or ``default``."""
        # Imported here: importing the reactor installs the default one, and the
        # crawl's own choice (asyncio) must come first.
        from scrapy.utils.defer import maybe_deferred_to_future
        from twisted.internet import reactor

        if self._pool is None:
            return default
        started = time.monotonic()
        # When the worker thread took the call up: the rest was queueing.
        began: list[float] = []
        result: Deferred[_T] = deferToThreadPool(
            reactor,
            self._pool,
            _timed,
            began,
            function,
            *args,
            **kwargs,
        )
        result.addTimeout(self.deadline, reactor)
        try:
            value = await maybe_deferred_to_future(result)
        except TimeoutError:
            self._inc(_stats.CACHE_STORE_TIMEOUT)
            logger.warning(
                "%(store)s did not answer within %(deadline)g s; going on without it",
                {"store": self.describe, "deadline": self.deadline},
            )
            return default
        finally:
            ended = time.monotonic()
            queued = (began[0] if began else ended) - started
            self._note_duration(ended - started, queued)
        return value

    def _note_duration(self, seconds: float, queued: float) -> None:
        if seconds < SLOW_CALL:
            return
        self._inc(_stats.CACHE_STORE_SLOW)
        if not self._warned:
            self._warned = True
            logger.warning(
                "%(store)s is slow: one call took %(seconds).2f s (more than "
                "%(limit)g s; %(queued).2f s of it queued behind other calls). "
                "The reactor does not wait on it, but an origin whose robots.txt "
                "is not in memory yet waits for it before its fetch",
                {
                    "store": self.describe,
                    "seconds": seconds,
                    "limit": SLOW_CALL,
                    "queued": queued,
                },
            )

    def _inc(self, key: str) -> None:
        if self._stats is not None:
            self._stats.inc_value(key)


def _timed(
    began: list[float], function: Callable[..., _T], *args: Any, **kwargs: Any
) -> _T:
    began.append(time.monotonic())
    return function(*args, **kwargs)


def _quietly(function: Callable[..., object], *args: Any) -> None:
    try:
        function(*args)
    except Exception:  # a background call's failure is not the crawl's
        logger.debug("Background store call %r failed", function, exc_info=True)


def _daemon_thread(*args: Any, **kwargs: Any) -> threading.Thread:
    return threading.Thread(*args, daemon=True, **kwargs)
