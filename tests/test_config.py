"""Settings: read and validated in one place, without a crawler (STYLE 4).

A bad value raises :class:`SettingsError` whose message starts with the setting's
name. Values given on the command line (``-s NAME=VALUE``) arrive as strings, so
every numeric and boolean setting must accept its string form too.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import pytest
from scrapy import Spider
from scrapy.exceptions import NotConfigured
from scrapy.settings import Settings
from scrapy.utils.defer import deferred_f_from_coro_f
from scrapy.utils.test import get_crawler

from scrapy_robots_std.cache import MemoryCache
from scrapy_robots_std.config import DEFAULTS, Config, SettingsError
from scrapy_robots_std.scrapy.middleware import RobotsTxtStdMiddleware

#: The Config attribute each DEFAULTS setting fills.
ATTRIBUTES = {
    "ROBOTS_STD_STANDARD": "standard",
    "ROBOTS_STD_FETCH_TIMEOUT": "fetch_timeout",
    "ROBOTS_STD_FETCH_RETRIES": "fetch_retries",
    "ROBOTS_STD_RETRY_BACKOFF": "retry_backoff",
    "ROBOTS_STD_RETRY_AFTER_MAX": "retry_after_max",
    "ROBOTS_STD_MAX_WAIT": "max_wait",
    "ROBOTS_STD_FETCH_CONCURRENCY": "fetch_concurrency",
    "ROBOTS_STD_CACHE_BACKEND": "cache_backend",
    "ROBOTS_STD_CACHE_TTL": "cache_ttl",
    "ROBOTS_STD_CACHE_MIN_TTL": "cache_min_ttl",
    "ROBOTS_STD_UNREACHABLE_TTL": "unreachable_ttl",
    "ROBOTS_STD_CACHE_MAX_ORIGINS": "cache_max_origins",
    "ROBOTS_STD_MAX_DECOMPRESSED_SIZE": "max_decompressed_size",
    "ROBOTS_STD_DRY_RUN": "dry_run",
    "ROBOTS_STD_SUMMARY_TOP": "summary_top",
    "ROBOTS_STD_CRAWL_DELAY": "crawl_delay",
    "ROBOTS_STD_CRAWL_DELAY_MAX": "crawl_delay_max",
    "ROBOTS_STD_SITEMAP_CALLBACK": "sitemap_callback",
    # cache backends (more in test_config_backends.py)
    "ROBOTS_STD_CACHE_PATH": "cache_path",
    "ROBOTS_STD_REDIS_PREFIX": "redis_prefix",
    "ROBOTS_STD_REDIS_TIMEOUT": "redis_timeout",
    "ROBOTS_STD_CACHE_MAX_BYTES": "cache_max_bytes",
    "ROBOTS_STD_USAGE_PURPOSE": "usage_purpose",
    "ROBOTS_STD_USAGE_ENFORCE": "usage_enforce",
    "ROBOTS_STD_USAGE_UNKNOWN": "usage_unknown",
    "ROBOTS_STD_AUDIT_PATH": "audit_path",
    "ROBOTS_STD_PAGE_DIRECTIVES": "page_directives",
}


def _config(**values: Any) -> Config:
    return Config.from_settings(Settings(values))


def test_every_default_setting_is_checked_here() -> None:
    assert set(ATTRIBUTES) == set(DEFAULTS)


#: Settings whose default is worked out from another setting (tested below).
DERIVED = {"ROBOTS_STD_FETCH_CONCURRENCY"}


def test_defaults_equal_DEFAULTS() -> None:
    config = _config()
    for name, attribute in ATTRIBUTES.items():
        if name not in DERIVED:
            assert getattr(config, attribute) == DEFAULTS[name], name
    assert config.token is None
    assert config.default_user_agent == Settings().get("USER_AGENT")


@pytest.mark.parametrize("empty", [None, ""])
def test_unset_and_empty_values_mean_the_default(empty: object) -> None:
    settings = dict.fromkeys(ATTRIBUTES, empty)
    config = _config(**settings)
    for name, attribute in ATTRIBUTES.items():
        if name not in DERIVED:
            assert getattr(config, attribute) == DEFAULTS[name], name
    assert config.fetch_concurrency == Settings().getint("CONCURRENT_REQUESTS")


@pytest.mark.parametrize(
    ("settings", "expected"),
    [
        ({}, 16),
        ({"CONCURRENT_REQUESTS": 64}, 64),
        # 0 means "no limit" to Scrapy; robots.txt fetches keep a bound
        ({"CONCURRENT_REQUESTS": 0}, 16),
        ({"CONCURRENT_REQUESTS": 64, "ROBOTS_STD_FETCH_CONCURRENCY": "4"}, 4),
        ({"ROBOTS_STD_FETCH_CONCURRENCY": 1}, 1),
    ],
)
def test_fetch_concurrency_defaults_to_concurrent_requests(
    settings: dict[str, object], expected: int
) -> None:
    assert _config(**settings).fetch_concurrency == expected


def test_config_is_frozen() -> None:
    config = _config()
    with pytest.raises(AttributeError):
        config.fetch_timeout = 1.0  # type: ignore[misc]


VALID = [
    # standard: case and spaces are forgiven, an int year too
    ("ROBOTS_STD_STANDARD", "rfc9309", "rfc9309"),
    ("ROBOTS_STD_STANDARD", "1994", "1994"),
    ("ROBOTS_STD_STANDARD", 1994, "1994"),
    ("ROBOTS_STD_STANDARD", " RFC9309 ", "rfc9309"),
    # > 0
    ("ROBOTS_STD_FETCH_TIMEOUT", 30, 30.0),
    ("ROBOTS_STD_FETCH_TIMEOUT", "15", 15.0),
    ("ROBOTS_STD_FETCH_TIMEOUT", "0.5", 0.5),
    ("ROBOTS_STD_FETCH_TIMEOUT", 0.001, 0.001),
    # integer >= 0
    ("ROBOTS_STD_FETCH_RETRIES", 0, 0),
    ("ROBOTS_STD_FETCH_RETRIES", "5", 5),
    ("ROBOTS_STD_FETCH_RETRIES", 3.0, 3),
    # >= 0
    ("ROBOTS_STD_RETRY_BACKOFF", 0, 0.0),
    ("ROBOTS_STD_RETRY_BACKOFF", "0.25", 0.25),
    ("ROBOTS_STD_RETRY_AFTER_MAX", 0, 0.0),
    ("ROBOTS_STD_RETRY_AFTER_MAX", "120", 120.0),
    # > 0
    ("ROBOTS_STD_MAX_WAIT", "300", 300.0),
    ("ROBOTS_STD_MAX_WAIT", 0.1, 0.1),
    # import path or class
    ("ROBOTS_STD_CACHE_BACKEND", "myproject.cache.Redis", "myproject.cache.Redis"),
    ("ROBOTS_STD_CACHE_BACKEND", MemoryCache, MemoryCache),
    # 0..86400 (and not below the min TTL)
    ("ROBOTS_STD_CACHE_TTL", "3600", 3600.0),
    ("ROBOTS_STD_CACHE_TTL", 86400, 86400.0),
    ("ROBOTS_STD_CACHE_TTL", 60, 60.0),
    ("ROBOTS_STD_CACHE_MIN_TTL", 0, 0.0),
    ("ROBOTS_STD_CACHE_MIN_TTL", "300", 300.0),
    ("ROBOTS_STD_CACHE_MIN_TTL", 86400, 86400.0),
    ("ROBOTS_STD_UNREACHABLE_TTL", 0, 0.0),
    ("ROBOTS_STD_UNREACHABLE_TTL", "30", 30.0),
    ("ROBOTS_STD_UNREACHABLE_TTL", 86400, 86400.0),
    # integer >= 1
    ("ROBOTS_STD_CACHE_MAX_ORIGINS", 1, 1),
    ("ROBOTS_STD_CACHE_MAX_ORIGINS", "500", 500),
    # integer >= 1 MiB
    ("ROBOTS_STD_CACHE_MAX_BYTES", 1_048_576, 1_048_576),
    ("ROBOTS_STD_CACHE_MAX_BYTES", "134217728", 134_217_728),
    # usage preferences: a purpose, a mode, a policy (case and spaces forgiven)
    ("ROBOTS_STD_USAGE_PURPOSE", "train-ai", "train-ai"),
    ("ROBOTS_STD_USAGE_PURPOSE", " Search ", "search"),
    ("ROBOTS_STD_USAGE_PURPOSE", "AI-Use", "ai-use"),
    ("ROBOTS_STD_USAGE_PURPOSE", "ai-input", "ai-use"),  # Content Signals' name
    ("ROBOTS_STD_USAGE_ENFORCE", "tag", "tag"),
    ("ROBOTS_STD_USAGE_ENFORCE", "DROP", "drop"),
    ("ROBOTS_STD_USAGE_UNKNOWN", "deny", "deny"),
    # page-level robots directives
    ("ROBOTS_STD_PAGE_DIRECTIVES", "tag", "tag"),
    ("ROBOTS_STD_PAGE_DIRECTIVES", " Obey ", "obey"),
    ("ROBOTS_STD_PAGE_DIRECTIVES", "off", "off"),
    # integer >= 514049 (what the parser may read)
    ("ROBOTS_STD_MAX_DECOMPRESSED_SIZE", 514_049, 514_049),
    ("ROBOTS_STD_MAX_DECOMPRESSED_SIZE", "1048576", 1_048_576),
    # Scrapy's booleans
    ("ROBOTS_STD_DRY_RUN", True, True),
    ("ROBOTS_STD_DRY_RUN", False, False),
    ("ROBOTS_STD_DRY_RUN", "true", True),
    ("ROBOTS_STD_DRY_RUN", "True", True),
    ("ROBOTS_STD_DRY_RUN", "1", True),
    ("ROBOTS_STD_DRY_RUN", "false", False),
    ("ROBOTS_STD_DRY_RUN", "0", False),
    ("ROBOTS_STD_DRY_RUN", 1, True),
    # integer >= 0
    ("ROBOTS_STD_SUMMARY_TOP", 0, 0),
    ("ROBOTS_STD_SUMMARY_TOP", "20", 20),
    ("ROBOTS_STD_CRAWL_DELAY", True, True),
    ("ROBOTS_STD_CRAWL_DELAY", "false", False),
    # > 0
    ("ROBOTS_STD_CRAWL_DELAY_MAX", 10, 10.0),
    ("ROBOTS_STD_CRAWL_DELAY_MAX", "0.5", 0.5),
    # a method name
    ("ROBOTS_STD_SITEMAP_CALLBACK", "_parse_sitemap", "_parse_sitemap"),
    ("ROBOTS_STD_SITEMAP_CALLBACK", "parse_sitemap", "parse_sitemap"),
    # a file path (str or os.PathLike); the file is opened when the crawl starts
    ("ROBOTS_STD_AUDIT_PATH", "out/robots-audit.jsonl", "out/robots-audit.jsonl"),
    ("ROBOTS_STD_AUDIT_PATH", Path("out/audit.jsonl"), "out/audit.jsonl"),
]


@pytest.mark.parametrize(("name", "value", "expected"), VALID)
def test_setting_accepts(name: str, value: object, expected: object) -> None:
    settings: dict[str, Any] = {name: value}
    if name == "ROBOTS_STD_CACHE_TTL":
        settings["ROBOTS_STD_CACHE_MIN_TTL"] = 0
    result = getattr(_config(**settings), ATTRIBUTES[name])
    assert result == expected
    assert type(result) is type(expected)


_NAN = float("nan")
_INF = float("inf")

INVALID = [
    # a file path
    ("ROBOTS_STD_AUDIT_PATH", 5),
    ("ROBOTS_STD_AUDIT_PATH", True),
    ("ROBOTS_STD_AUDIT_PATH", ["a.jsonl"]),
    # unknown standard
    ("ROBOTS_STD_STANDARD", "rfc"),
    ("ROBOTS_STD_STANDARD", "2020"),
    ("ROBOTS_STD_STANDARD", 9309),
    ("ROBOTS_STD_STANDARD", True),
    ("ROBOTS_STD_STANDARD", ["1994"]),
    # numbers > 0
    ("ROBOTS_STD_FETCH_TIMEOUT", "soon"),
    ("ROBOTS_STD_FETCH_TIMEOUT", 0),
    ("ROBOTS_STD_FETCH_TIMEOUT", "0"),
    ("ROBOTS_STD_FETCH_TIMEOUT", -1),
    ("ROBOTS_STD_FETCH_TIMEOUT", _NAN),
    ("ROBOTS_STD_FETCH_TIMEOUT", "nan"),
    ("ROBOTS_STD_FETCH_TIMEOUT", True),
    ("ROBOTS_STD_FETCH_TIMEOUT", [15]),
    ("ROBOTS_STD_FETCH_CONCURRENCY", 0),
    ("ROBOTS_STD_FETCH_CONCURRENCY", "many"),
    ("ROBOTS_STD_FETCH_CONCURRENCY", 2.5),
    ("ROBOTS_STD_MAX_WAIT", 0),
    ("ROBOTS_STD_MAX_WAIT", "-5"),
    ("ROBOTS_STD_MAX_WAIT", "a minute"),
    ("ROBOTS_STD_MAX_WAIT", _NAN),
    # integers >= 0
    ("ROBOTS_STD_FETCH_RETRIES", "two"),
    ("ROBOTS_STD_FETCH_RETRIES", -1),
    ("ROBOTS_STD_FETCH_RETRIES", "-1"),
    ("ROBOTS_STD_FETCH_RETRIES", 1.5),
    ("ROBOTS_STD_FETCH_RETRIES", "1.5"),
    ("ROBOTS_STD_FETCH_RETRIES", True),
    ("ROBOTS_STD_FETCH_RETRIES", _NAN),
    pytest.param("ROBOTS_STD_FETCH_RETRIES", _INF),
    ("ROBOTS_STD_SUMMARY_TOP", -1),
    ("ROBOTS_STD_SUMMARY_TOP", "ten"),
    ("ROBOTS_STD_SUMMARY_TOP", 2.5),
    pytest.param("ROBOTS_STD_SUMMARY_TOP", -_INF),
    # numbers >= 0
    ("ROBOTS_STD_RETRY_BACKOFF", -0.1),
    ("ROBOTS_STD_RETRY_BACKOFF", "fast"),
    ("ROBOTS_STD_RETRY_BACKOFF", _NAN),
    ("ROBOTS_STD_RETRY_AFTER_MAX", -1),
    ("ROBOTS_STD_RETRY_AFTER_MAX", "never"),
    ("ROBOTS_STD_RETRY_AFTER_MAX", False),
    # TTLs: 0..86400
    ("ROBOTS_STD_CACHE_TTL", 86401),
    ("ROBOTS_STD_CACHE_TTL", "172800"),
    ("ROBOTS_STD_CACHE_TTL", -1),
    ("ROBOTS_STD_CACHE_TTL", "a day"),
    ("ROBOTS_STD_CACHE_TTL", _NAN),
    ("ROBOTS_STD_CACHE_TTL", _INF),
    ("ROBOTS_STD_CACHE_MIN_TTL", -1),
    ("ROBOTS_STD_CACHE_MIN_TTL", 86401),
    ("ROBOTS_STD_CACHE_MIN_TTL", "x"),
    ("ROBOTS_STD_UNREACHABLE_TTL", 86401),
    ("ROBOTS_STD_UNREACHABLE_TTL", -1),
    ("ROBOTS_STD_UNREACHABLE_TTL", "nan"),
    # integers >= 1
    ("ROBOTS_STD_CRAWL_DELAY", "sometimes"),
    ("ROBOTS_STD_CRAWL_DELAY_MAX", 0),
    ("ROBOTS_STD_CRAWL_DELAY_MAX", -1),
    ("ROBOTS_STD_CRAWL_DELAY_MAX", _INF),
    ("ROBOTS_STD_CRAWL_DELAY_MAX", "a while"),
    ("ROBOTS_STD_SITEMAP_CALLBACK", "parse sitemap"),
    ("ROBOTS_STD_SITEMAP_CALLBACK", "spider.parse"),
    ("ROBOTS_STD_SITEMAP_CALLBACK", 42),
    ("ROBOTS_STD_SITEMAP_CALLBACK", True),
    ("ROBOTS_STD_CACHE_MAX_ORIGINS", 0),
    ("ROBOTS_STD_CACHE_MAX_BYTES", 1_048_575),
    ("ROBOTS_STD_CACHE_MAX_BYTES", "128M"),
    ("ROBOTS_STD_USAGE_PURPOSE", "training"),
    ("ROBOTS_STD_USAGE_PURPOSE", "train-genai"),
    ("ROBOTS_STD_USAGE_PURPOSE", 1),
    ("ROBOTS_STD_USAGE_ENFORCE", "on"),
    ("ROBOTS_STD_USAGE_ENFORCE", True),
    ("ROBOTS_STD_USAGE_UNKNOWN", "block"),
    ("ROBOTS_STD_PAGE_DIRECTIVES", "on"),
    ("ROBOTS_STD_PAGE_DIRECTIVES", "drop"),
    ("ROBOTS_STD_PAGE_DIRECTIVES", True),
    ("ROBOTS_STD_CACHE_MAX_ORIGINS", "0"),
    ("ROBOTS_STD_CACHE_MAX_ORIGINS", 2.5),
    ("ROBOTS_STD_CACHE_MAX_ORIGINS", "lots"),
    # integers >= 514049
    ("ROBOTS_STD_MAX_DECOMPRESSED_SIZE", 514_048),
    ("ROBOTS_STD_MAX_DECOMPRESSED_SIZE", 511_999),
    ("ROBOTS_STD_MAX_DECOMPRESSED_SIZE", "1000"),
    ("ROBOTS_STD_MAX_DECOMPRESSED_SIZE", 0),
    ("ROBOTS_STD_MAX_DECOMPRESSED_SIZE", "4MB"),
    ("ROBOTS_STD_MAX_DECOMPRESSED_SIZE", 600_000.5),
    # booleans
    ("ROBOTS_STD_DRY_RUN", "maybe"),
    ("ROBOTS_STD_DRY_RUN", "yes"),
    ("ROBOTS_STD_DRY_RUN", "TRUE"),
    pytest.param("ROBOTS_STD_DRY_RUN", []),
    # backend: an import path or a class
    ("ROBOTS_STD_CACHE_BACKEND", 5),
    ("ROBOTS_STD_CACHE_BACKEND", MemoryCache()),
]


@pytest.mark.parametrize(("name", "value"), INVALID)
def test_setting_rejects(name: str, value: object) -> None:
    with pytest.raises(SettingsError) as info:
        _config(**{name: value})
    assert str(info.value).startswith(f"{name}:")


def test_settings_error_is_a_value_error() -> None:
    assert issubclass(SettingsError, ValueError)


def test_min_ttl_above_ttl_is_rejected_naming_both() -> None:
    with pytest.raises(SettingsError) as info:
        _config(ROBOTS_STD_CACHE_TTL="100", ROBOTS_STD_CACHE_MIN_TTL="200")
    message = str(info.value)
    assert message.startswith("ROBOTS_STD_CACHE_MIN_TTL")
    assert "ROBOTS_STD_CACHE_TTL" in message


def test_min_ttl_equal_to_ttl_is_accepted() -> None:
    config = _config(ROBOTS_STD_CACHE_TTL=300, ROBOTS_STD_CACHE_MIN_TTL=300)
    assert (config.cache_ttl, config.cache_min_ttl) == (300.0, 300.0)


def test_nan_rejection_names_the_value() -> None:
    with pytest.raises(SettingsError, match="nan"):
        _config(ROBOTS_STD_FETCH_TIMEOUT=math.nan)


# -- ROBOTSTXT_USER_AGENT / USER_AGENT ---------------------------------------------


@pytest.mark.parametrize(
    ("standard", "value", "token"),
    [
        ("rfc9309", "MyBot/1.0 (+http://x)", "MyBot"),
        ("rfc9309", "MyBot", "MyBot"),
        ("rfc9309", b"MyBot/2.0", "MyBot"),
        ("rfc9309", "  my_bot-x/3 extra", "my_bot-x"),
        # RFC 9309 tokens are [A-Za-z_-]+: cut at the first other character
        ("rfc9309", "Foo.Bot/1", "Foo"),
        ("1994", "MyBot/1.0 (+http://x)", "MyBot"),
        ("1994", "Foo.Bot/1", "Foo.Bot"),
        ("1994", "123", "123"),
        # unset or empty: each request's User-Agent header decides
        ("rfc9309", None, None),
        ("rfc9309", "", None),
    ],
)
def test_robotstxt_user_agent_reduced_to_its_product_token(
    standard: str, value: object, token: str | None
) -> None:
    config = _config(ROBOTS_STD_STANDARD=standard, ROBOTSTXT_USER_AGENT=value)
    assert config.token == token


@pytest.mark.parametrize(
    ("standard", "value"),
    [
        ("rfc9309", "/1.0"),
        ("1994", "/1.0"),
        ("rfc9309", "123"),
        ("rfc9309", "2bot/1.0"),
        ("rfc9309", "   "),
        ("rfc9309", 5),
        ("rfc9309", ["MyBot"]),
    ],
)
def test_robotstxt_user_agent_without_a_product_token_is_rejected(
    standard: str, value: object
) -> None:
    with pytest.raises(SettingsError) as info:
        _config(ROBOTS_STD_STANDARD=standard, ROBOTSTXT_USER_AGENT=value)
    assert str(info.value).startswith("ROBOTSTXT_USER_AGENT")


def test_user_agent_is_kept_for_requests_without_a_header() -> None:
    config = _config(USER_AGENT="MyBot/1.0 (+http://x)")
    assert config.default_user_agent == "MyBot/1.0 (+http://x)"
    assert config.token is None


def test_user_agent_must_be_a_string() -> None:
    with pytest.raises(SettingsError, match=r"^USER_AGENT:"):
        _config(USER_AGENT=5)


# -- inside a crawler ---------------------------------------------------------------

_ADDON = {"ADDONS": {"scrapy_robots_std.Addon": 0}}


class _NamedSpider(Spider):
    name = "config-test"


def test_middleware_with_a_bad_setting_fails_naming_it() -> None:
    crawler = get_crawler(
        _NamedSpider,
        {"ROBOTSTXT_OBEY": True, **_ADDON, "ROBOTS_STD_FETCH_TIMEOUT": "soon"},
    )
    with pytest.raises(SettingsError, match=r"^ROBOTS_STD_FETCH_TIMEOUT:.*'soon'"):
        RobotsTxtStdMiddleware.from_crawler(crawler)


@pytest.mark.crawl
@deferred_f_from_coro_f
async def test_crawl_with_a_bad_setting_stops_at_start() -> None:
    crawler = get_crawler(
        _NamedSpider,
        {"ROBOTSTXT_OBEY": True, **_ADDON, "ROBOTS_STD_FETCH_TIMEOUT": "soon"},
    )
    with pytest.raises(SettingsError, match=r"^ROBOTS_STD_FETCH_TIMEOUT:"):
        await crawler.crawl_async()
    assert not crawler.crawling


@pytest.mark.parametrize("obey", [False, "False", "0", None])
def test_middleware_not_configured_when_robotstxt_obey_is_off(obey: object) -> None:
    settings: dict[str, Any] = {**_ADDON, "ROBOTS_STD_FETCH_TIMEOUT": "soon"}
    if obey is not None:
        settings["ROBOTSTXT_OBEY"] = obey
    crawler = get_crawler(_NamedSpider, settings)
    # NotConfigured comes first: a crawl that does not obey robots.txt is not
    # stopped by a bad ROBOTS_STD_* value.
    with pytest.raises(NotConfigured, match="ROBOTSTXT_OBEY"):
        RobotsTxtStdMiddleware.from_crawler(crawler)


@pytest.mark.parametrize(
    "name",
    [
        "ROBOTS_STD_FETCH_TIMEOUT",
        "ROBOTS_STD_MAX_WAIT",
        "ROBOTS_STD_RETRY_BACKOFF",
        "ROBOTS_STD_RETRY_AFTER_MAX",
    ],
)
@pytest.mark.parametrize("value", [float("inf"), "inf", "Infinity"])
def test_infinite_waits_are_rejected(name: str, value: object) -> None:
    with pytest.raises(SettingsError, match=rf"^{name}: "):
        _config(**{name: value})


def test_a_short_ttl_lowers_the_default_min_ttl_with_it() -> None:
    config = _config(ROBOTS_STD_CACHE_TTL=30)
    assert (config.cache_ttl, config.cache_min_ttl) == (30.0, 30.0)


def test_an_explicit_min_ttl_above_the_ttl_is_still_an_error() -> None:
    with pytest.raises(SettingsError, match=r"^ROBOTS_STD_CACHE_MIN_TTL: "):
        _config(ROBOTS_STD_CACHE_TTL=30, ROBOTS_STD_CACHE_MIN_TTL=60)
