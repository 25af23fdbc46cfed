"""Every setting the middleware reads, read and checked in one place.

:meth:`Config.from_settings` raises :class:`SettingsError` (a ``ValueError``) whose
message starts with the setting's name, so a bad value stops the crawl at start
with a message that says what to fix. The README's settings table mirrors
:data:`DEFAULTS`.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

from scrapy_robots_std.policy import MAX_TTL
from scrapy_robots_std.robotstxt.reader import MAX_READ_BYTES, RFC9309, STANDARDS
from scrapy_robots_std.robotstxt.tokens import product_token
from scrapy_robots_std.usage.vocab import PURPOSES, SYNONYMS, check_purpose

if TYPE_CHECKING:
    from scrapy.settings import BaseSettings

__all__ = ["DEFAULTS", "Config", "SettingsError"]

#: ``ROBOTS_STD_*`` settings and their defaults.
DEFAULTS: Final[dict[str, Any]] = {
    "ROBOTS_STD_STANDARD": RFC9309,
    "ROBOTS_STD_FETCH_TIMEOUT": 15.0,
    "ROBOTS_STD_FETCH_RETRIES": 2,
    "ROBOTS_STD_RETRY_BACKOFF": 2.0,
    "ROBOTS_STD_RETRY_AFTER_MAX": 30.0,
    "ROBOTS_STD_MAX_WAIT": 60.0,
    # None: CONCURRENT_REQUESTS (16 when that is 0, "no limit")
    "ROBOTS_STD_FETCH_CONCURRENCY": None,
    "ROBOTS_STD_CACHE_BACKEND": "scrapy_robots_std.cache.MemoryCache",
    "ROBOTS_STD_CACHE_TTL": MAX_TTL,
    "ROBOTS_STD_CACHE_MIN_TTL": 60.0,
    "ROBOTS_STD_UNREACHABLE_TTL": 120.0,
    "ROBOTS_STD_CACHE_MAX_ORIGINS": 10_000,
    "ROBOTS_STD_CACHE_MAX_BYTES": 256 * 1024 * 1024,
    "ROBOTS_STD_MAX_DECOMPRESSED_SIZE": 4 * 1024 * 1024,
    "ROBOTS_STD_DRY_RUN": False,
    "ROBOTS_STD_SUMMARY_TOP": 5,
    "ROBOTS_STD_CRAWL_DELAY": False,
    "ROBOTS_STD_CRAWL_DELAY_MAX": 60.0,
    "ROBOTS_STD_SITEMAP_CALLBACK": None,
    "ROBOTS_STD_CACHE_PATH": None,
    "ROBOTS_STD_REDIS_PREFIX": "robots_std",
    "ROBOTS_STD_REDIS_TIMEOUT": 1.0,
    "ROBOTS_STD_USAGE_PURPOSE": None,
    "ROBOTS_STD_USAGE_ENFORCE": "off",
    "ROBOTS_STD_USAGE_UNKNOWN": "allow",
    "ROBOTS_STD_AUDIT_PATH": None,
    "ROBOTS_STD_PAGE_DIRECTIVES": "off",
}

#: ``ROBOTS_STD_FETCH_CONCURRENCY`` when unset and ``CONCURRENT_REQUESTS`` is 0.
_FETCH_CONCURRENCY_FALLBACK: Final = 16

#: ``REDIS_URL`` (scrapy-redis's setting) when it is not set: scrapy-redis's default
#: server too.
REDIS_URL_DEFAULT: Final = "redis://localhost:6379"
_REDIS_SCHEMES: Final = ("redis", "rediss", "unix")

#: The decompressed size below which a compressed robots.txt cannot be cut where
#: the parser stops reading (500 KiB and the line that crosses it).
_MIN_DECOMPRESSED: Final = MAX_READ_BYTES


#: The smallest ``ROBOTS_STD_CACHE_MAX_BYTES``: one parsed file keeps at most 1 MiB,
#: so the newest entry always fits.
MIN_CACHE_MAX_BYTES: Final = 1024 * 1024


#: ``ROBOTS_STD_USAGE_ENFORCE``: only expose usage preferences, also record a
#: decision for the declared purpose, or drop on a "no".
ENFORCE_OFF: Final = "off"
ENFORCE_TAG: Final = "tag"
ENFORCE_DROP: Final = "drop"
#: ``ROBOTS_STD_USAGE_UNKNOWN``: what an unknown preference means under ``drop``.
UNKNOWN_ALLOW: Final = "allow"
UNKNOWN_DENY: Final = "deny"


#: ``ROBOTS_STD_PAGE_DIRECTIVES``: page-level robots directives (``X-Robots-Tag``,
#: robots meta tags) not read at all, read and exposed, or also obeyed.
PAGE_OFF: Final = "off"
PAGE_TAG: Final = "tag"
PAGE_OBEY: Final = "obey"
_PAGE: Final = (PAGE_OFF, PAGE_TAG, PAGE_OBEY)


#: The setting that chooses the standard.
STANDARD_SETTING: Final = "ROBOTS_STD_STANDARD"


def standard_from_value(value: Any) -> str:
    """Normalise a ``ROBOTS_STD_STANDARD`` value; raise ``ValueError`` naming the setting."""
    if value is None or value == "":
        return RFC9309
    if isinstance(value, int) and not isinstance(value, bool):
        value = str(value)
    if isinstance(value, str):
        standard = value.strip().lower()
        if standard in STANDARDS:
            return standard
    raise ValueError(
        f"{STANDARD_SETTING}: unknown standard {value!r}; expected 'rfc9309' (the default) or '1994'"
    )


class SettingsError(ValueError):
    """A setting has a value the middleware cannot use."""


def _get(settings: BaseSettings, name: str) -> Any:
    value = settings.get(name)
    return DEFAULTS[name] if value is None or value == "" else value


def _number(
    settings: BaseSettings,
    name: str,
    *,
    low: float,
    high: float = math.inf,
    low_inclusive: bool = True,
) -> float:
    raw = _get(settings, name)
    try:
        if isinstance(raw, bool):
            raise TypeError
        value = float(raw)
    except (TypeError, ValueError):
        raise SettingsError(f"{name}: expected a number, got {raw!r}") from None
    too_low = value < low if low_inclusive else value <= low
    # Infinity is refused too: a dead origin must not keep a crawl from finishing.
    if not math.isfinite(value) or too_low or value > high:
        bound = ">=" if low_inclusive else ">"
        upper = f" and <= {high:g}" if high != math.inf else ""
        raise SettingsError(
            f"{name}: expected a number {bound} {low:g}{upper}, got {raw!r}"
        )
    return value


def _integer(settings: BaseSettings, name: str, *, low: int) -> int:
    raw = _get(settings, name)
    if isinstance(raw, bool):
        raise SettingsError(f"{name}: expected an integer, got {raw!r}")
    try:
        value = int(raw)
    except (TypeError, ValueError, OverflowError):
        raise SettingsError(f"{name}: expected an integer, got {raw!r}") from None
    if isinstance(raw, float) and raw != value:
        raise SettingsError(f"{name}: expected an integer, got {raw!r}")
    if value < low:
        raise SettingsError(f"{name}: expected an integer >= {low}, got {raw!r}")
    return value


def _fetch_concurrency(settings: BaseSettings) -> int:
    """``ROBOTS_STD_FETCH_CONCURRENCY``, or ``CONCURRENT_REQUESTS`` when unset."""
    name = "ROBOTS_STD_FETCH_CONCURRENCY"
    if settings.get(name) in (None, ""):
        return settings.getint("CONCURRENT_REQUESTS") or _FETCH_CONCURRENCY_FALLBACK
    return _integer(settings, name, low=1)


def _choice(
    settings: BaseSettings,
    name: str,
    choices: tuple[str, ...],
    *,
    optional: bool = False,
) -> Any:
    """One of ``choices`` (``None`` too when ``optional`` and the setting is unset)."""
    raw = settings.get(name)
    if raw is None or raw == "":
        raw = DEFAULTS[name]
        if raw is None and optional:
            return None
    if isinstance(raw, str) and raw.strip().lower() in choices:
        return raw.strip().lower()
    expected = ", ".join(repr(choice) for choice in choices)
    raise SettingsError(f"{name}: expected one of {expected}, got {raw!r}")


def _purpose(settings: BaseSettings) -> str | None:
    """``ROBOTS_STD_USAGE_PURPOSE`` by its own name (``ai-input`` is ``ai-use``)."""
    choices = (*PURPOSES, *SYNONYMS)
    purpose = _choice(settings, "ROBOTS_STD_USAGE_PURPOSE", choices, optional=True)
    return None if purpose is None else check_purpose(purpose)


def _boolean(settings: BaseSettings, name: str) -> bool:
    raw = settings.get(name)
    if raw is None or raw == "":
        return bool(DEFAULTS[name])
    try:
        return settings.getbool(name, DEFAULTS[name])
    except (TypeError, ValueError):
        raise SettingsError(
            f"{name}: expected True or False, got {settings.get(name)!r}"
        ) from None


def _method_name(settings: BaseSettings, name: str) -> str | None:
    raw = _get(settings, name)
    if raw is None:
        return None
    if not isinstance(raw, str) or not raw.isidentifier():
        raise SettingsError(
            f"{name}: expected the name of a spider method, got {raw!r}"
        )
    return raw


def _optional_path(settings: BaseSettings, name: str) -> str | None:
    raw = _get(settings, name)
    if raw is None:
        return None
    if isinstance(raw, os.PathLike):
        raw = os.fspath(raw)
    if not isinstance(raw, str):
        raise SettingsError(f"{name}: expected a file path, got {raw!r}")
    return raw


def _text(settings: BaseSettings, name: str) -> str:
    raw = _get(settings, name)
    if not isinstance(raw, str):
        raise SettingsError(f"{name}: expected a string, got {raw!r}")
    return str(raw)


def _redis_url(settings: BaseSettings) -> str:
    raw: object = settings.get("REDIS_URL")
    if raw is None or raw == "":
        return REDIS_URL_DEFAULT
    if (
        not isinstance(raw, str)
        or raw.partition("://")[0].lower() not in _REDIS_SCHEMES
    ):
        raise SettingsError(
            f"REDIS_URL: expected a redis://, rediss:// or unix:// URL, got {raw!r}"
        )
    return raw


def _token(settings: BaseSettings, standard: str) -> str | None:
    """``ROBOTSTXT_USER_AGENT``'s product token, or None when it is not set."""
    raw_token = settings.get("ROBOTSTXT_USER_AGENT")
    if not raw_token:
        return None
    if not isinstance(raw_token, (str, bytes)):
        raise SettingsError(
            f"ROBOTSTXT_USER_AGENT: expected a string, got {raw_token!r}"
        )
    token = product_token(raw_token, standard)
    if token is None:
        shape = "[A-Za-z_-]+" if standard == RFC9309 else "no whitespace or '/'"
        raise SettingsError(
            f"ROBOTSTXT_USER_AGENT: {raw_token!r} has no product token "
            f"({shape}) to match robots.txt groups with"
        )
    return token


def _ttls(settings: BaseSettings) -> tuple[float, float]:
    """``ROBOTS_STD_CACHE_TTL`` and ``ROBOTS_STD_CACHE_MIN_TTL``, checked together."""
    ttl = _number(settings, "ROBOTS_STD_CACHE_TTL", low=0, high=MAX_TTL)
    if settings.get("ROBOTS_STD_CACHE_MIN_TTL") in (None, ""):
        min_ttl = min(float(DEFAULTS["ROBOTS_STD_CACHE_MIN_TTL"]), ttl)
    else:
        min_ttl = _number(settings, "ROBOTS_STD_CACHE_MIN_TTL", low=0, high=MAX_TTL)
    if min_ttl > ttl:
        raise SettingsError(
            f"ROBOTS_STD_CACHE_MIN_TTL: {min_ttl:g} is above "
            f"ROBOTS_STD_CACHE_TTL ({ttl:g})"
        )
    return ttl, min_ttl


def _crawl_side(settings: BaseSettings) -> dict[str, Any]:
    """What the crawl does with verdicts: reports, politeness, the stores'
    addresses, usage preferences, page directives."""
    return {
        "dry_run": _boolean(settings, "ROBOTS_STD_DRY_RUN"),
        "summary_top": _integer(settings, "ROBOTS_STD_SUMMARY_TOP", low=0),
        "crawl_delay": _boolean(settings, "ROBOTS_STD_CRAWL_DELAY"),
        "crawl_delay_max": _number(
            settings, "ROBOTS_STD_CRAWL_DELAY_MAX", low=0, low_inclusive=False
        ),
        "sitemap_callback": _method_name(settings, "ROBOTS_STD_SITEMAP_CALLBACK"),
        "cache_path": _optional_path(settings, "ROBOTS_STD_CACHE_PATH"),
        "redis_url": _redis_url(settings),
        "redis_prefix": _text(settings, "ROBOTS_STD_REDIS_PREFIX"),
        "redis_timeout": _number(
            settings, "ROBOTS_STD_REDIS_TIMEOUT", low=0, high=60, low_inclusive=False
        ),
        "usage_purpose": _purpose(settings),
        "usage_enforce": _choice(
            settings,
            "ROBOTS_STD_USAGE_ENFORCE",
            (ENFORCE_OFF, ENFORCE_TAG, ENFORCE_DROP),
        ),
        "usage_unknown": _choice(
            settings, "ROBOTS_STD_USAGE_UNKNOWN", (UNKNOWN_ALLOW, UNKNOWN_DENY)
        ),
        "audit_path": _optional_path(settings, "ROBOTS_STD_AUDIT_PATH"),
        "page_directives": _choice(settings, "ROBOTS_STD_PAGE_DIRECTIVES", _PAGE),
    }


@dataclass(frozen=True)
class Config:
    """The middleware's settings, validated. See the README's settings table."""

    standard: str
    #: ``ROBOTSTXT_USER_AGENT`` reduced to its product token, or ``None`` to use each
    #: request's ``User-Agent`` header.
    token: str | None
    default_user_agent: str
    fetch_timeout: float
    fetch_retries: int
    retry_backoff: float
    retry_after_max: float
    max_wait: float
    #: robots.txt fetch cycles the scheduler's queue keeps in flight at once
    fetch_concurrency: int
    cache_backend: Any
    cache_ttl: float
    cache_min_ttl: float
    unreachable_ttl: float
    cache_max_origins: int
    #: the bound on the in-memory cache's total bytes (every backend's memory layer)
    cache_max_bytes: int
    max_decompressed_size: int
    dry_run: bool
    summary_top: int
    #: Honour Crawl-delay / Request-rate through the downloader slots.
    crawl_delay: bool
    crawl_delay_max: float
    #: Name of the spider method that gets each Sitemap URL's response, or None.
    sitemap_callback: str | None
    #: the SqliteCache file (``None``: ``<JOBDIR>/robots_std.sqlite3``)
    cache_path: str | None
    redis_url: str
    redis_prefix: str
    redis_timeout: float
    #: the declared purpose of the crawl's requests (``None``: none declared)
    usage_purpose: str | None
    usage_enforce: str
    usage_unknown: str
    #: the audit file (JSON Lines, appended); ``None``: no audit
    audit_path: str | None
    #: page-level robots directives: ``"off"``, ``"tag"`` or ``"obey"``
    page_directives: str = PAGE_OFF

    @classmethod
    def from_settings(cls, settings: BaseSettings) -> Config:
        try:
            standard = standard_from_value(settings.get(STANDARD_SETTING))
        except ValueError as exc:
            raise SettingsError(str(exc)) from None
        user_agent = settings.get("USER_AGENT") or ""
        if not isinstance(user_agent, str):
            raise SettingsError(f"USER_AGENT: expected a string, got {user_agent!r}")
        ttl, min_ttl = _ttls(settings)
        backend = _get(settings, "ROBOTS_STD_CACHE_BACKEND")
        if not isinstance(backend, (str, type)):
            raise SettingsError(
                "ROBOTS_STD_CACHE_BACKEND: expected an import path or a class, "
                f"got {backend!r}"
            )
        return cls(
            standard=standard,
            token=_token(settings, standard),
            default_user_agent=user_agent,
            fetch_timeout=_number(
                settings, "ROBOTS_STD_FETCH_TIMEOUT", low=0, low_inclusive=False
            ),
            fetch_retries=_integer(settings, "ROBOTS_STD_FETCH_RETRIES", low=0),
            retry_backoff=_number(settings, "ROBOTS_STD_RETRY_BACKOFF", low=0),
            retry_after_max=_number(settings, "ROBOTS_STD_RETRY_AFTER_MAX", low=0),
            max_wait=_number(
                settings, "ROBOTS_STD_MAX_WAIT", low=0, low_inclusive=False
            ),
            fetch_concurrency=_fetch_concurrency(settings),
            cache_backend=backend,
            cache_ttl=ttl,
            cache_min_ttl=min_ttl,
            unreachable_ttl=_number(
                settings, "ROBOTS_STD_UNREACHABLE_TTL", low=0, high=MAX_TTL
            ),
            cache_max_origins=_integer(settings, "ROBOTS_STD_CACHE_MAX_ORIGINS", low=1),
            cache_max_bytes=_integer(
                settings, "ROBOTS_STD_CACHE_MAX_BYTES", low=MIN_CACHE_MAX_BYTES
            ),
            max_decompressed_size=_integer(
                settings, "ROBOTS_STD_MAX_DECOMPRESSED_SIZE", low=_MIN_DECOMPRESSED
            ),
            **_crawl_side(settings),
        )
