"""The cache backend interface: what a backend stores and how it is asked.

The middleware talks to a :class:`RobotsCache`; which class it uses is chosen by the
``ROBOTS_STD_CACHE_BACKEND`` setting (default :class:`MemoryCache`). A backend stores
:class:`CacheEntry` objects by origin (``"https://example.com:443"``) and bounds its
own size; the middleware decides freshness from ``expires_at``, so a backend may hand
back an expired entry (the middleware uses it only as a stale copy when the origin
has become unreachable, as RFC 9309 2.4 allows).

Three backends ship: :class:`MemoryCache` (this process only), :class:`SqliteCache`
(a file, e.g. under ``JOBDIR``: survives a paused crawl) and :class:`RedisCache`
(shared by a fleet of crawlers, which also take turns fetching through
:class:`SharedFetches`). The last two keep nothing in memory themselves: in a crawl
the middleware keeps one :class:`MemoryCache` in front of any backend, so a fresh
verdict is served from memory and the store is read only on a local miss.
"""

from __future__ import annotations

import re
import struct
import sys
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final, Protocol, runtime_checkable

if TYPE_CHECKING:
    from collections.abc import Callable

    from scrapy_robots_std.robotstxt.robots import RobotsTxt
    from scrapy_robots_std.tdmrep import TdmFile

__all__ = [
    "ROBOTS_TXT",
    "TDM_FILE",
    "CacheEntry",
    "RobotsCache",
    "SharedFetches",
    "is_tdm_key",
    "robots_url_of",
    "tdm_key",
]

#: The files an origin's entries are kept for (``Origin.kind``).
ROBOTS_TXT: Final = "robots.txt"
TDM_FILE: Final = "tdmrep.json"
#: The start of a ``tdmrep.json`` entry's key: no origin key (``http(s)://...``)
#: starts so, so an origin's two entries never collide in any backend.
_TDM_KEY_PREFIX: Final = "tdmrep:"


def tdm_key(origin: str) -> str:
    """The cache key of the ``/.well-known/tdmrep.json`` of ``origin`` (an origin
    key): ``"tdmrep:https://example.com:443"``."""
    return _TDM_KEY_PREFIX + origin


def is_tdm_key(key: str) -> bool:
    """Whether ``key`` is a ``tdmrep.json`` entry's (:func:`tdm_key`)."""
    return key.startswith(_TDM_KEY_PREFIX)


_DEFAULT_PORTS: Final = {"http": "80", "https": "443"}


def robots_url_of(origin: str) -> str:
    """The robots.txt URL of an origin key: ``"https://example.com:443"`` gives
    ``"https://example.com/robots.txt"`` (the default port left out)."""
    scheme, _, authority = origin.partition("://")
    host, _, port = authority.rpartition(":")
    suffix = "" if _DEFAULT_PORTS.get(scheme) == port else f":{port}"
    return f"{scheme}://{host}{suffix}/robots.txt"


# slots: no per-entry __dict__ (about 100 bytes less per cached origin). Four
# fields are kept in a smaller form than they are read in (see _kept_as below).
@dataclass(frozen=True, slots=True)
class CacheEntry:
    """One origin's robots.txt verdict.

    ``verdict`` is a :class:`~scrapy_robots_std.policy.Verdict`: ``"parse"``
    (``robots`` holds the rules), ``"allow-all"``, ``"disallow-all"`` (1994:
    401/403) or ``"unreachable"``. ``reason`` is the
    :class:`~scrapy_robots_std.policy.FetchReason` the fetch policy gave, a bounded
    label (``"2xx"``, ``"4xx"``, ``"5xx"``, ...; ``"ignored"`` on an ``allow-all``
    verdict when another downloader middleware raised ``IgnoreRequest`` on the
    robots.txt request; ``"shutdown"`` when the crawl stopped before the fetch
    ended), and ``detail`` a human sentence for log lines (``"HTTP 503 after 3
    attempts"``). Times are ``time.time()`` seconds.

    ``robots_url`` is the robots.txt the verdict comes from, after redirects.
    ``etag`` and ``last_modified`` are the response's validators, sent back as
    ``If-None-Match`` / ``If-Modified-Since`` when the entry has expired; a ``304``
    renews the entry without parsing again. ``checked_at`` is when the server last
    confirmed the body (``None``: at ``fetched_at``, which stays the body's identity).
    ``body_sha256`` (hex) and ``body_bytes`` describe the body of a ``parse``
    verdict.
    """

    origin: str
    robots_url: str
    verdict: str
    reason: str
    detail: str
    robots: RobotsTxt | None
    status: int | None
    fetched_at: float
    expires_at: float
    etag: str | None = None
    last_modified: str | None = None
    checked_at: float | None = None
    #: the body the rules were parsed from (as kept: at most ~500 KiB), for audits
    body_sha256: str | None = None
    body_bytes: int | None = None
    #: a ``tdmrep.json`` entry's parsed rules (its key is ``"tdmrep:" + origin``);
    #: ``robots`` is then ``None``
    tdm: TdmFile | None = None

    @property
    def confirmed_at(self) -> float:
        """When the server last stood by this body: fetched, or revalidated."""
        return self.fetched_at if self.checked_at is None else self.checked_at

    def fresh(self, now: float | None = None) -> bool:
        return (time.time() if now is None else now) < self.expires_at


# -- fields kept in a smaller form ------------------------------------------------------
#
# A cached origin's entry is one of the costs the cache's memory is made of. Five
# fields are stored in their slot in a smaller form and given back as documented: the
# dataclass's __init__ (and so dataclasses.replace, pickling) sets them through
# ``keep``, and every read (==, repr, hash included) goes through ``give``.
#
# * robots_url: None when it is the origin's own robots.txt (nearly always), derived
#   from ``origin`` when read; kept when a redirect led elsewhere.
# * detail: one shared string per common text ("HTTP 200", "HTTP 404 means no
#   restrictions"), not one per entry.
# * body_sha256: the 32-byte digest rather than its 64-character hex text.
# * body_bytes: below 4 GiB, four more bytes of the digest's slot (set just before,
#   the fields' order), not an int object of 32 bytes (most bodies are over 256
#   bytes, the largest of CPython's shared ints); its own slot then holds None.
# * fetched_at: with them, eight more bytes of the digest's slot (a float object is
#   32 bytes; the digest's 77 bytes take the 80 its 69 took); None in its own slot.
#   ``expires_at``, read for every request (``fresh``), stays a float of its own.

#: The slots the five fields are kept in (the dataclass's own member descriptors).
_SLOTS: Final[dict[str, Any]] = {}


def _kept_as(
    name: str,
    keep: Callable[[CacheEntry, Any], Any],
    give: Callable[[CacheEntry, Any], Any],
) -> None:
    slot = _SLOTS[name] = CacheEntry.__dict__[name]

    def read(entry: CacheEntry) -> Any:
        return give(entry, slot.__get__(entry, CacheEntry))

    def write(entry: CacheEntry, value: Any) -> None:
        slot.__set__(entry, keep(entry, value))

    setattr(CacheEntry, name, property(read, write))


def _keep_robots_url(entry: CacheEntry, url: str) -> str | None:
    # ``origin`` is set first: the dataclass sets the fields in their order.
    return None if url == robots_url_of(entry.origin) else url


def _give_robots_url(entry: CacheEntry, kept: str | None) -> str:
    return robots_url_of(entry.origin) if kept is None else kept


#: Common details, one string each; emptied when full (entries keep their own).
_SHARED_TEXT: dict[str, str] = {}
_SHARED_TEXT_MAX: Final = 1024
#: Longer details, or those naming a URL, are one entry's own: not shared.
_SHARED_TEXT_LEN: Final = 120


def _keep_detail(entry: CacheEntry, text: str) -> str:
    shared = _SHARED_TEXT.get(text)
    if shared is not None:
        return shared
    if len(text) <= _SHARED_TEXT_LEN and "://" not in text:
        if len(_SHARED_TEXT) >= _SHARED_TEXT_MAX:
            _SHARED_TEXT.clear()
        _SHARED_TEXT[text] = text
    return text


def _give_as_is(entry: CacheEntry, kept: Any) -> Any:
    return kept


_SHA256_HEX: Final = re.compile(r"[0-9a-f]{64}")


def _keep_sha256(entry: CacheEntry, hexdigest: str | None) -> bytes | str | None:
    if isinstance(hexdigest, str) and _SHA256_HEX.fullmatch(hexdigest):
        return bytes.fromhex(hexdigest)
    return hexdigest  # not a SHA-256 as hashlib writes it: kept as given


def _give_sha256(entry: CacheEntry, kept: bytes | str | None) -> str | None:
    return kept[:_DIGEST_BYTES].hex() if isinstance(kept, bytes) else kept


_DIGEST_BYTES: Final = 32


def _keep_body_bytes(entry: CacheEntry, size: int | None) -> int | None:
    # The last of the five set (the fields' order): the digest takes the size and,
    # a float, the time fetched.
    digest = _SLOTS["body_sha256"].__get__(entry, CacheEntry)
    if type(size) is int and 0 <= size < 1 << 32 and isinstance(digest, bytes):
        digest = digest[:_DIGEST_BYTES] + size.to_bytes(4, "little")
        fetched = _SLOTS["fetched_at"].__get__(entry, CacheEntry)
        if type(fetched) is float:
            digest += _FETCHED_AT.pack(fetched)
            _SLOTS["fetched_at"].__set__(entry, None)
        _SLOTS["body_sha256"].__set__(entry, digest)
        return None
    return size


def _give_body_bytes(entry: CacheEntry, kept: int | None) -> int | None:
    digest = _SLOTS["body_sha256"].__get__(entry, CacheEntry)
    if kept is None and isinstance(digest, bytes) and len(digest) > _DIGEST_BYTES:
        return int.from_bytes(digest[_DIGEST_BYTES : _DIGEST_BYTES + 4], "little")
    return kept


_FETCHED_AT: Final = struct.Struct("<d")  # after the digest and the size


def _give_fetched_at(entry: CacheEntry, kept: float | None) -> float:
    if kept is None:  # kept with the digest (see _keep_body_bytes)
        digest = _SLOTS["body_sha256"].__get__(entry, CacheEntry)
        return float(_FETCHED_AT.unpack_from(digest, _DIGEST_BYTES + 4)[0])
    return kept


_kept_as("robots_url", _keep_robots_url, _give_robots_url)
_kept_as("fetched_at", _give_as_is, _give_fetched_at)
_kept_as("detail", _keep_detail, _give_as_is)
_kept_as("body_sha256", _keep_sha256, _give_sha256)
_kept_as("body_bytes", _keep_body_bytes, _give_body_bytes)
#: For memory walks (benchmarks/cache_memory.py): what the slots really hold.
CacheEntry._kept_slots = _SLOTS  # type: ignore[attr-defined]


def own_objects_bytes(entry: CacheEntry) -> int:
    """The size of the strings ``entry`` keeps for itself (shared ones and the
    rules aside): what the cache's byte bound adds to the entry object."""
    kept = [entry.origin, entry.etag, entry.last_modified]
    kept += [slot.__get__(entry, CacheEntry) for slot in _SLOTS.values()]
    size = 0
    for value in kept:
        if (
            value is None
            or isinstance(value, float)
            or (isinstance(value, str) and _SHARED_TEXT.get(value) is value)
        ):
            continue
        size += sys.getsizeof(value)
    return size


@runtime_checkable
class RobotsCache(Protocol):
    """The interface a cache backend implements.

    ``get`` returns the entry for an origin (fresh or not) or ``None``; ``put``
    stores one and returns how many entries it evicted to stay within its bound.
    ``body`` is the robots.txt body the entry's rules were parsed from (``parse``
    verdicts fetched just now; ``None`` otherwise): a backend that persists entries
    stores it and parses it again when it loads the entry, so what it keeps does not
    depend on the parser's internals. ``open``/``close`` are called when the spider
    opens and closes. Backends are built with
    ``scrapy.utils.misc.build_from_crawler``, so a ``from_crawler`` classmethod may
    read settings.
    """

    def open(self) -> None: ...

    def close(self) -> None: ...

    def get(self, origin: str) -> CacheEntry | None: ...

    def put(self, entry: CacheEntry, body: bytes | None = None) -> int: ...

    def __len__(self) -> int: ...


@runtime_checkable
class SharedFetches(Protocol):
    """What a backend shared between processes adds so only one of them fetches.

    Optional: the middleware uses it when the backend has these methods. Before it
    fetches an origin's robots.txt it calls ``claim(origin, seconds)``: ``True``
    means this process fetches (the claim lapses by itself after ``seconds``, should
    the process die); ``False`` means another process is fetching, and the
    middleware polls ``get`` until that process's verdict arrives, trying to claim
    again each time. ``renew(origin, seconds)`` extends a claim held while the fetch
    goes on, so a short lease is enough and a dead holder's claim lapses soon.
    ``release(origin)`` ends this process's claim once the verdict is stored (or
    the fetch was given up). All three are called off the reactor thread.
    """

    def claim(self, origin: str, seconds: float) -> bool: ...

    def renew(self, origin: str, seconds: float) -> bool: ...

    def release(self, origin: str) -> None: ...
