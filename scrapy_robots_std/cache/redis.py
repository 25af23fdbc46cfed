"""``RedisCache``: one view of every site's robots.txt for a fleet of crawlers.

Crawler processes pointed at one Redis (``REDIS_URL``, the setting scrapy-redis
uses) share their verdicts, and take turns: before fetching an origin's robots.txt
a process claims it (``SET NX`` with an expiry); the others wait for the verdict it
stores. Each origin's robots.txt is then fetched once per lifetime of its verdict,
not once per process.

Keys, under ``ROBOTS_STD_REDIS_PREFIX`` (``robots_std``):

* ``<prefix>:robots:<origin>``: a hash; ``m`` the metadata (JSON), ``f`` the fetch
  time (to match a stale copy being re-dated), ``b`` the zlib-compressed body. Redis
  deletes it one ``ROBOTS_STD_CACHE_TTL`` after the verdict expires: that extra time
  keeps the stale copy RFC 9309 2.4 allows when the origin turns unreachable.
* ``<prefix>:claim:<origin>``: the fetching process's random token, with the expiry
  the middleware asks for: a short lease (``scrapy.store.CLAIM_LEASE``), renewed
  while the fetch goes on, so a process that dies while fetching holds nobody up for
  longer than that; then one waiting process takes the claim over.

redis-py calls are synchronous, with short socket timeouts (``ROBOTS_STD_REDIS_TIMEOUT``),
and happen only on a local miss, a write, or a claim. When Redis fails the cache
goes on in memory (see :mod:`scrapy_robots_std.cache.persistent`), claims always succeed
(nobody to take turns with) and robots.txt is fetched by this process.
"""

from __future__ import annotations

import secrets
from typing import TYPE_CHECKING, Any, Final
from urllib.parse import urlsplit, urlunsplit

from scrapy_robots_std.cache.persistent import RETRY_INTERVAL, PersistentCache
from scrapy_robots_std.config import Config, SettingsError
from scrapy_robots_std.policy import MAX_TTL
from scrapy_robots_std.robotstxt.reader import RFC9309

if TYPE_CHECKING:
    from typing import Self

    from scrapy.crawler import Crawler
    from scrapy.statscollectors import StatsCollector

    from scrapy_robots_std.cache.base import CacheEntry

__all__ = ["RedisCache"]

#: Deletes the claim only if it is still ours (it may have lapsed and been taken).
_RELEASE: Final = """
if redis.call('GET', KEYS[1]) == ARGV[1] then
    return redis.call('DEL', KEYS[1])
end
return 0
"""
#: Extends the claim only if it is still ours.
_RENEW: Final = """
if redis.call('GET', KEYS[1]) == ARGV[1] then
    return redis.call('PEXPIRE', KEYS[1], ARGV[2])
end
return 0
"""
#: Re-dates the record of one fetch (a stale copy standing in again), if it is
#: still the stored one.
_REDATE: Final = """
if redis.call('HGET', KEYS[1], 'f') == ARGV[1] then
    redis.call('HSET', KEYS[1], 'm', ARGV[2])
    redis.call('PEXPIREAT', KEYS[1], ARGV[3])
    return 1
end
return 0
"""


def _no_setinfo() -> dict[str, Any]:
    """The redis-py argument that skips the two CLIENT SETINFO round trips it sends
    on each new connection (``driver_info`` since redis-py 7, ``lib_name`` before)."""
    import inspect

    import redis

    parameters = inspect.signature(redis.Redis.__init__).parameters
    if "driver_info" in parameters:
        return {"driver_info": None}
    if "lib_name" in parameters:
        return {"lib_name": None, "lib_version": None}
    return {}


class RedisCache(PersistentCache):
    """robots.txt verdicts in Redis, with fetch claims (in a crawl, behind the
    middleware's in-memory layer).

    ``keep_stale`` is how long (seconds) a record outlives its verdict's expiry, as
    a stale copy; ``timeout`` bounds every Redis call. ``len()`` counts the records
    under the prefix with ``SCAN`` (a walk of the whole keyspace: not for a hot path).
    """

    #: One slow round trip must not queue every other origin's calls behind it.
    store_workers = 8

    def __init__(
        self,
        url: str = "redis://localhost:6379",
        *,
        prefix: str = "robots_std",
        timeout: float = 1.0,
        keep_stale: float = 86400.0,
        standard: str = RFC9309,
        stats: StatsCollector | None = None,
        retry_interval: float = RETRY_INTERVAL,
    ) -> None:
        # Imported here: redis-py is an optional extra, needed by this backend only.
        try:
            import redis
            from redis.backoff import NoBackoff
            from redis.retry import Retry
        except ImportError as exc:
            raise ImportError(
                "RedisCache needs redis-py: pip install 'scrapy-robots-std[redis]'"
            ) from exc
        super().__init__(
            standard=standard,
            stats=stats,
            retry_interval=retry_interval,
        )
        self.url = url
        self.prefix = prefix
        self.keep_stale = keep_stale
        self._errors = (redis.RedisError, OSError)
        no_setinfo = _no_setinfo()
        # One retry (no wait) reconnects after Redis restarted; redis-py's default
        # of 10 would block the crawl ten times longer on an outage.
        try:
            self._redis: Any = redis.Redis.from_url(
                url,
                socket_timeout=timeout,
                socket_connect_timeout=timeout,
                retry=Retry(NoBackoff(), 1),
                **no_setinfo,
            )
        except ValueError as exc:  # a port that is not a number, say
            raise SettingsError(f"REDIS_URL: {exc} in {url!r}") from None
        self._release_script = self._redis.register_script(_RELEASE)
        self._redate_script = self._redis.register_script(_REDATE)
        self._renew_script = self._redis.register_script(_RENEW)
        #: origin -> the token of the claim this process holds
        self._claims: dict[str, str] = {}

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        config = Config.from_settings(crawler.settings)
        return cls(
            config.redis_url,
            prefix=config.redis_prefix,
            timeout=config.redis_timeout,
            # The 24 h RFC 9309 allows: the record stays to be revalidated (304) or
            # to stand in while its origin is unreachable, even when its verdict's
            # own TTL is short.
            keep_stale=MAX_TTL,
            standard=config.standard,
            stats=crawler.stats,
        )

    def describe(self) -> str:
        return f"Redis at {_without_password(self.url)}"

    # -- claims (SharedFetches) ------------------------------------------------------

    def claim(self, origin: str, seconds: float) -> bool:
        """``True``: this process fetches ``origin`` (Redis down counts as yes)."""
        token = secrets.token_hex(8)
        won = self._call(
            self._redis.set,
            self._claim_key(origin),
            token,
            nx=True,
            px=max(1, round(seconds * 1000)),
            default=True,
        )
        if not won:  # None: the key exists, another process holds the claim
            return False
        self._claims[origin] = token
        return True

    def renew(self, origin: str, seconds: float) -> bool:
        """Extend this process's claim on ``origin``; ``False`` if it is no longer ours."""
        token = self._claims.get(origin)
        if token is None:
            return False
        kept = self._call(
            self._renew_script,
            keys=[self._claim_key(origin)],
            args=[token, max(1, round(seconds * 1000))],
            default=1,
        )
        if not kept:
            self._claims.pop(origin, None)
        return bool(kept)

    def release(self, origin: str) -> None:
        token = self._claims.pop(origin, None)
        if token is not None:
            keys = [self._claim_key(origin)]
            self._call(self._release_script, keys=keys, args=[token], default=0)

    def close(self) -> None:
        for origin in list(self._claims):
            self.release(origin)
        super().close()

    def __len__(self) -> int:
        """Records under the prefix (0 while Redis is unavailable)."""
        return self._call(self._count, default=0)

    # -- the store -------------------------------------------------------------------

    def _store_open(self) -> None:
        self._redis.ping()  # an outage shows in the log when the spider opens

    def _store_close(self) -> None:
        self._redis.close()

    def _store_read(
        self, origin: str, *, body: bool
    ) -> tuple[bytes | None, bytes | None]:
        key = self._entry_key(origin)
        if body:
            meta, blob = self._redis.hmget(key, ["m", "b"])
            return meta, blob
        return self._redis.hget(key, "m"), None

    def _store_write(self, entry: CacheEntry, meta: bytes, blob: bytes | None) -> int:
        key = self._entry_key(entry.origin)
        fields: dict[str, bytes | str] = {"m": meta, "f": repr(entry.fetched_at)}
        if blob is not None:
            fields["b"] = blob
        pipe = self._redis.pipeline(transaction=True)
        pipe.delete(key)  # no body left over from an older record
        pipe.hset(key, mapping=fields)
        pipe.pexpireat(key, self._expiry_ms(entry))
        pipe.execute()
        return 0  # Redis bounds itself by expiry (and its own maxmemory policy)

    def _store_redate(self, entry: CacheEntry, meta: bytes) -> bool:
        updated = self._redate_script(
            keys=[self._entry_key(entry.origin)],
            args=[repr(entry.fetched_at), meta, self._expiry_ms(entry)],
        )
        return bool(updated)

    def _count(self) -> int:
        pattern = _glob_escape(self._entry_key("")) + "*"
        return sum(1 for _ in self._redis.scan_iter(match=pattern, count=1000))

    def _expiry_ms(self, entry: CacheEntry) -> int:
        return round((entry.expires_at + self.keep_stale) * 1000)

    def _entry_key(self, origin: str) -> str:
        return f"{self.prefix}:robots:{origin}"

    def _claim_key(self, origin: str) -> str:
        return f"{self.prefix}:claim:{origin}"


def _glob_escape(text: str) -> str:
    """``text`` matched literally by a Redis glob pattern (SCAN's ``MATCH``)."""
    return "".join("\\" + char if char in "\\*?[]" else char for char in text)


def _without_password(url: str) -> str:
    parts = urlsplit(url)
    if parts.password is None:
        return url
    host = parts.hostname or ""
    if ":" in host:
        host = f"[{host}]"
    if parts.port is not None:
        host = f"{host}:{parts.port}"
    user = f"{parts.username}:***@" if parts.username else ":***@"
    return urlunsplit(parts._replace(netloc=user + host))
