"""``SqliteCache``: verdicts kept in an SQLite file, e.g. under ``JOBDIR``.

A crawl paused and resumed (or restarted) within the verdicts' lifetime reads them
back instead of fetching every robots.txt again. The file is in WAL mode and every
write is one short transaction, so a process killed mid-write (``kill -9``) leaves a
valid file with every committed entry, and several processes may share one file
(SQLite serialises the writers; ``busy_timeout`` bounds how long one waits).
"""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import TYPE_CHECKING, Final

from scrapy.utils.job import job_dir

from scrapy_robots_std.cache.persistent import RETRY_INTERVAL, PersistentCache
from scrapy_robots_std.config import Config, SettingsError
from scrapy_robots_std.robotstxt.reader import RFC9309

if TYPE_CHECKING:
    from typing import Self

    from scrapy.crawler import Crawler
    from scrapy.statscollectors import StatsCollector

    from scrapy_robots_std.cache.base import CacheEntry

__all__ = ["FILE_NAME", "SqliteCache"]

#: The file's name under ``JOBDIR`` when ``ROBOTS_STD_CACHE_PATH`` is not set.
FILE_NAME: Final = "robots_std.sqlite3"
#: How long a statement waits for another process's write (seconds). Writes are
#: one small transaction each, so a longer wait means something is wrong.
BUSY_TIMEOUT: Final = 2.0

_SCHEMA: Final = """
CREATE TABLE IF NOT EXISTS robots_std_entries (
    origin TEXT PRIMARY KEY,
    fetched_at REAL NOT NULL,
    expires_at REAL NOT NULL,
    meta BLOB NOT NULL,
    body BLOB
);
CREATE INDEX IF NOT EXISTS robots_std_entries_expiry
    ON robots_std_entries (expires_at);
"""


class SqliteCache(PersistentCache):
    """robots.txt verdicts in an SQLite file (in a crawl, behind the middleware's
    in-memory layer).

    At most ``max_origins`` rows are kept; beyond that the rows that expire first
    (expired ones before all others) are deleted. An expired row stays until then,
    as the stale copy RFC 9309 2.4 allows when the origin turns unreachable.
    """

    _errors = (sqlite3.Error,)

    def __init__(
        self,
        path: str | Path,
        *,
        max_origins: int = 10_000,
        standard: str = RFC9309,
        stats: StatsCollector | None = None,
        retry_interval: float = RETRY_INTERVAL,
    ) -> None:
        super().__init__(
            standard=standard,
            stats=stats,
            retry_interval=retry_interval,
        )
        self.path = Path(path)
        self.max_origins = max_origins
        self._db: sqlite3.Connection | None = None

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        config = Config.from_settings(crawler.settings)
        path = config.cache_path
        if path is None:
            directory = job_dir(crawler.settings)
            if directory is None:
                raise SettingsError(
                    "ROBOTS_STD_CACHE_PATH: SqliteCache needs a file; set "
                    "ROBOTS_STD_CACHE_PATH, or JOBDIR to keep it there as "
                    f"{FILE_NAME}"
                )
            path = str(Path(directory) / FILE_NAME)
        try:
            # Here rather than when the store opens: a crawl that cannot keep its
            # cache stops at start, with the setting named.
            Path(path).parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise SettingsError(
                f"ROBOTS_STD_CACHE_PATH: cannot create the directory of {path!r}: "
                f"{exc.strerror or exc}"
            ) from None
        return cls(
            path,
            max_origins=config.cache_max_origins,
            standard=config.standard,
            stats=crawler.stats,
        )

    def describe(self) -> str:
        return f"robots.txt cache file {self.path}"

    def __len__(self) -> int:
        """Rows in the file (0 while it is unavailable)."""
        return self._call(self._count, default=0)

    # -- the store -------------------------------------------------------------------

    def _connection(self) -> sqlite3.Connection:
        if self._db is None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            # Autocommit mode: transactions are opened explicitly, one per write.
            db = sqlite3.connect(self.path, timeout=BUSY_TIMEOUT, isolation_level=None)
            try:
                # WAL: readers never block the writer, and a commit is atomic
                # even when the process dies halfway. NORMAL survives a killed
                # process; only a power cut can lose the last commits.
                db.execute("PRAGMA journal_mode=WAL")
                db.execute("PRAGMA synchronous=NORMAL")
                db.executescript(_SCHEMA)
            except sqlite3.Error:
                db.close()
                raise
            self._db = db
        return self._db

    def _store_open(self) -> None:
        self._connection()

    def _store_close(self) -> None:
        db, self._db = self._db, None
        if db is not None:
            db.close()

    def _reset_after_failure(self) -> None:
        # A fresh connection on the next try, rather than one in an odd state.
        try:
            self._store_close()
        except sqlite3.Error:
            self._db = None

    def _store_read(
        self, origin: str, *, body: bool
    ) -> tuple[bytes | None, bytes | None]:
        columns = "meta, body" if body else "meta, NULL"
        row = (
            self._connection()
            .execute(
                f"SELECT {columns} FROM robots_std_entries WHERE origin = ?",
                (origin,),
            )
            .fetchone()
        )
        if row is None:
            return None, None
        return _as_bytes(row[0]), _as_bytes(row[1])

    def _store_write(self, entry: CacheEntry, meta: bytes, blob: bytes | None) -> int:
        db = self._connection()
        # IMMEDIATE takes the write lock at once: no deadlock between two
        # processes that both read first and then want to write.
        db.execute("BEGIN IMMEDIATE")
        try:
            db.execute(
                "INSERT OR REPLACE INTO robots_std_entries "
                "(origin, fetched_at, expires_at, meta, body) VALUES (?, ?, ?, ?, ?)",
                (entry.origin, entry.fetched_at, entry.expires_at, meta, blob),
            )
            (count,) = db.execute("SELECT count(*) FROM robots_std_entries").fetchone()
            excess = max(0, count - self.max_origins)
            if excess:
                db.execute(
                    "DELETE FROM robots_std_entries WHERE origin IN ("
                    " SELECT origin FROM robots_std_entries WHERE origin != ?"
                    " ORDER BY expires_at LIMIT ?)",
                    (entry.origin, excess),
                )
            db.execute("COMMIT")
        except BaseException:
            if db.in_transaction:
                db.execute("ROLLBACK")
            raise
        return int(excess)

    def _store_redate(self, entry: CacheEntry, meta: bytes) -> bool:
        cursor = self._connection().execute(
            "UPDATE robots_std_entries SET expires_at = ?, meta = ? "
            "WHERE origin = ? AND fetched_at = ?",
            (entry.expires_at, meta, entry.origin, entry.fetched_at),
        )
        return cursor.rowcount > 0

    def _count(self) -> int:
        (count,) = (
            self._connection()
            .execute("SELECT count(*) FROM robots_std_entries")
            .fetchone()
        )
        return int(count)


def _as_bytes(value: object) -> bytes | None:
    if isinstance(value, str):  # a row another program wrote as text
        return value.encode()
    if isinstance(value, (bytes, bytearray, memoryview)):
        return bytes(value)
    return None
