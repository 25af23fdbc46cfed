"""Spread CPU-bound, per-item test work (the corpus checks) over the machine's cores.

pytest runs in one process; the corpus tests parse and query thousands of files,
each independently.  They describe that work as a :class:`Job` (a module-level
function and its items), which worker processes compute; the assertions stay in
the test.  The work and the checks are those of a plain loop, only spread out.

A test decorated with :func:`prefetched` has its job started as soon as the
session is collected (tests/conftest.py), and is itself moved to the end of the
run: the workers compute while the rest of the suite
runs (and whenever the suite waits on a crawl, a server or a subprocess); by the
time the test asks, the answers are (mostly) there.  The workers run a little
below normal priority (NICE).  ``ROBOTS_STD_TEST_WORKERS=1``
runs every job in the test's own process, when the test asks (easier to debug);
a one-core machine does so anyway.

Workers are started with "spawn", not "fork": the test process has server threads
running (a forked child could inherit a held lock), and a spawned child imports the
test module by name from ``sys.path`` as the parent has it.  A job's function must
therefore be a module-level function of a module in ``tests/``, its items picklable.
"""

from __future__ import annotations

import multiprocessing
import os
from typing import TYPE_CHECKING, Any, NamedTuple

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence
    from multiprocessing.pool import AsyncResult, Pool

#: At most this many workers, whatever the machine: every worker costs a start-up
#: (~0.5 s) and a copy of the corpus in memory.
MAX_WORKERS = 4
#: Seconds a test waits for its job before failing (a wedged worker fails the
#: test, not the run).
TIMEOUT = 600.0


class Job(NamedTuple):
    """``[func(item) for item in items]``, under a name unique in the session."""

    key: str
    func: Callable[[Any], Any]
    items: Sequence[Any]
    chunksize: int = 64


def prefetched(
    make_job: Callable[..., Job],
) -> Callable[[Callable[..., None]], Callable[..., None]]:
    """Start the decorated test's job when the session is collected.

    ``make_job`` is called with the test's parametrize arguments (by name) and must
    return the Job the test then runs with ``parallel_map.run(...)``.
    """

    def mark(test: Callable[..., None]) -> Callable[..., None]:
        test.parallel_job = make_job  # type: ignore[attr-defined]
        return test

    return mark


def default_workers() -> int:
    configured = os.environ.get("ROBOTS_STD_TEST_WORKERS")
    if configured:
        return max(1, int(configured))
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        cores = os.cpu_count() or 1
    return max(1, min(MAX_WORKERS, cores))


#: How much the workers defer to the test process (``os.nice`` increment): enough
#: that timing-sensitive tests, servers and crawls get the CPU first, not so much
#: that the workers starve behind other busy processes on the machine.
NICE = int(os.environ.get("ROBOTS_STD_TEST_WORKER_NICE", "5"))


def _lower_priority() -> None:
    if NICE > 0:
        os.nice(NICE)


class ParallelMap:
    """Jobs over a lazily started pool of worker processes (in-process with one)."""

    def __init__(self, workers: int | None = None) -> None:
        self.workers = default_workers() if workers is None else workers
        self._pool: Pool | None = None
        self._started: dict[str, AsyncResult[list[Any]]] = {}

    def _get_pool(self) -> Pool:
        if self._pool is None:
            context = multiprocessing.get_context("spawn")
            self._pool = context.Pool(self.workers, initializer=_lower_priority)
        return self._pool

    def start(self, job: Job) -> None:
        """Begin computing ``job`` in the background (nothing with one worker)."""
        if self.workers > 1 and job.key not in self._started:
            self._started[job.key] = self._get_pool().map_async(
                job.func, list(job.items), job.chunksize
            )

    def run(self, job: Job) -> list[Any]:
        """``[job.func(item) for item in job.items]``, in order."""
        if self.workers <= 1:
            return [job.func(item) for item in job.items]
        self.start(job)
        try:
            return self._started.pop(job.key).get(timeout=TIMEOUT)
        except BaseException:
            self.close()
            raise

    def close(self) -> None:
        """Stop the workers, whatever they are doing (our own pool's processes)."""
        self._started.clear()
        if self._pool is not None:
            self._pool.terminate()
            self._pool.join()
            self._pool = None
