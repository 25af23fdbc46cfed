"""A process that writes to (and reads from) a SqliteCache file, for the crash and
concurrency tests of tests/test_cache_sqlite.py.

    python -m tests.helpers.sqlite_worker write PATH          # put entries until killed (bounded)
    python -m tests.helpers.sqlite_worker mixed PATH ID N     # N puts and reads, shared with others

``write`` prints ``committed <origin>`` after each put returns (the transaction is
committed then). ``mixed`` prints one JSON line: its counts and the warnings logged.
"""

from __future__ import annotations

import json
import logging
import random
import sys
import time

from scrapy_robots_std.cache import SqliteCache
from tests.helpers.bodies import body_for
from tests.helpers.cache import Stats, parse_entry

#: Bounds of the ``write`` loop, should nobody kill it.
MAX_WRITES = 20_000
MAX_SECONDS = 60.0
#: Origins every ``mixed`` worker writes (the others are its own).
SHARED = 40


def origin(name: str) -> str:
    return f"http://{name}.test:80"


def write(path: str) -> None:
    cache = SqliteCache(path, max_origins=MAX_WRITES)
    cache.open()
    deadline = time.monotonic() + MAX_SECONDS
    for index in range(MAX_WRITES):
        if time.monotonic() > deadline:
            break
        key = origin(f"w{index}")
        cache.put(
            parse_entry(key, body_for(index, rules=50)), body_for(index, rules=50)
        )
        print(f"committed {key}", flush=True)
    cache.close()


class _Warnings(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.messages.append(record.getMessage())


def mixed(path: str, worker: str, count: int) -> None:
    warnings = _Warnings()
    logging.getLogger("scrapy_robots_std").addHandler(warnings)
    stats = Stats()
    cache = SqliteCache(path, max_origins=100_000, stats=stats)  # type: ignore[arg-type]
    cache.open()
    rng = random.Random(worker)
    reads = found = wrong = 0
    for index in range(count):
        # Odd steps write the shared origins (all of them, with 80 steps or more).
        number = (index // 2) % SHARED if index % 2 else index
        name = f"shared{number}" if index % 2 else f"{worker}-{index}"
        body = body_for(number)
        cache.put(parse_entry(origin(name), body), body)
        # A fresh reader each time: every read goes to the file, not to memory.
        reader = SqliteCache(path, stats=stats)  # type: ignore[arg-type]
        probe = rng.randrange(SHARED)
        entry = reader.get(origin(f"shared{probe}"))
        reads += 1
        if entry is not None:
            found += 1
            # The body read back is the one written for that origin, whole.
            if entry.robots is None or entry.robots.allowed(
                f"http://shared{probe}.test/private-{probe}/0/", "Bot"
            ):
                wrong += 1
        reader.close()
    cache.close()
    result = {
        "worker": worker,
        "puts": count,
        "reads": reads,
        "found": found,
        "wrong": wrong,
        "store_errors": stats.values["robots_std/cache/store_error"],
        "warnings": warnings.messages,
    }
    print(json.dumps(result), flush=True)


if __name__ == "__main__":
    if sys.argv[1] == "write":
        write(sys.argv[2])
    else:
        mixed(sys.argv[2], sys.argv[3], int(sys.argv[4]))
