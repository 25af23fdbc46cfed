"""Settings of the persistent cache backends (SqliteCache, RedisCache).

Kept apart from test_config.py's tables; the same rule holds: a bad value raises
SettingsError whose message starts with the setting's name.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from scrapy.settings import Settings

from scrapy_robots_std.config import REDIS_URL_DEFAULT, Config, SettingsError


def _config(**values: Any) -> Config:
    return Config.from_settings(Settings(values))


@pytest.mark.parametrize(
    ("name", "value", "attribute", "expected"),
    [
        ("ROBOTS_STD_CACHE_PATH", "/var/cache/robots.sqlite3", "cache_path",
         "/var/cache/robots.sqlite3"),
        ("ROBOTS_STD_CACHE_PATH", Path("rel/robots.db"), "cache_path", "rel/robots.db"),
        ("ROBOTS_STD_CACHE_PATH", None, "cache_path", None),
        ("REDIS_URL", "redis://10.0.0.5:6380/2", "redis_url", "redis://10.0.0.5:6380/2"),
        ("REDIS_URL", "rediss://u:p@cache:6379", "redis_url", "rediss://u:p@cache:6379"),
        ("REDIS_URL", "unix:///run/redis.sock", "redis_url", "unix:///run/redis.sock"),
        ("REDIS_URL", "", "redis_url", REDIS_URL_DEFAULT),
        ("REDIS_URL", None, "redis_url", "redis://localhost:6379"),
        ("ROBOTS_STD_REDIS_PREFIX", "fleet:7", "redis_prefix", "fleet:7"),
        ("ROBOTS_STD_REDIS_PREFIX", None, "redis_prefix", "robots_std"),
        ("ROBOTS_STD_REDIS_TIMEOUT", "0.2", "redis_timeout", 0.2),
        ("ROBOTS_STD_REDIS_TIMEOUT", 60, "redis_timeout", 60.0),
        ("ROBOTS_STD_REDIS_TIMEOUT", None, "redis_timeout", 1.0),
    ],
)  # fmt: skip
def test_backend_setting_accepts(
    name: str, value: object, attribute: str, expected: object
) -> None:
    assert getattr(_config(**{name: value}), attribute) == expected


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("ROBOTS_STD_CACHE_PATH", 5),
        ("ROBOTS_STD_CACHE_PATH", ["a", "b"]),
        ("REDIS_URL", "localhost:6379"),
        ("REDIS_URL", "http://localhost:6379"),
        ("REDIS_URL", 6379),
        ("ROBOTS_STD_REDIS_PREFIX", 7),
        ("ROBOTS_STD_REDIS_TIMEOUT", 0),
        ("ROBOTS_STD_REDIS_TIMEOUT", "-1"),
        ("ROBOTS_STD_REDIS_TIMEOUT", 61),
        ("ROBOTS_STD_REDIS_TIMEOUT", "soon"),
        ("ROBOTS_STD_REDIS_TIMEOUT", float("inf")),
    ],
)
def test_backend_setting_rejects(name: str, value: object) -> None:
    with pytest.raises(SettingsError) as info:
        _config(**{name: value})
    assert str(info.value).startswith(f"{name}:")
