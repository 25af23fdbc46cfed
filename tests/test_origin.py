"""Origins (SPEC 3): scheme + host + port, and where each origin's robots.txt lives."""

from __future__ import annotations

from typing import TYPE_CHECKING
from urllib.parse import urlparse, urlsplit

import pytest

from scrapy_robots_std.scrapy.origin import Origin, origin_of

if TYPE_CHECKING:
    from collections.abc import Callable
    from urllib.parse import ParseResult, SplitResult


@pytest.mark.parametrize(
    ("url", "key", "robots_url"),
    [
        # default ports are the same as no port
        ("http://example.com/a", "http://example.com:80", "http://example.com/robots.txt"),
        ("http://example.com", "http://example.com:80", "http://example.com/robots.txt"),
        ("http://example.com:80/a", "http://example.com:80", "http://example.com/robots.txt"),
        ("https://example.com/a", "https://example.com:443", "https://example.com/robots.txt"),
        ("https://example.com:443/", "https://example.com:443", "https://example.com/robots.txt"),
        ("https://example.com:0443/", "https://example.com:443", "https://example.com/robots.txt"),
        # a non-default port is kept, in the key and the robots.txt URL
        ("http://example.com:8080/a", "http://example.com:8080", "http://example.com:8080/robots.txt"),
        ("https://example.com:80/", "https://example.com:80", "https://example.com:80/robots.txt"),
        ("http://example.com:443/", "http://example.com:443", "http://example.com:443/robots.txt"),
        # scheme and host are case-insensitive
        ("HTTP://EXAMPLE.COM/A", "http://example.com:80", "http://example.com/robots.txt"),
        ("hTTpS://Example.Com:443/", "https://example.com:443", "https://example.com/robots.txt"),
        # IDN: punycode
        ("http://Bücher.example/", "http://xn--bcher-kva.example:80", "http://xn--bcher-kva.example/robots.txt"),
        ("http://xn--bcher-kva.example/", "http://xn--bcher-kva.example:80", "http://xn--bcher-kva.example/robots.txt"),
        ("https://BÜCHER.example:8443/x", "https://xn--bcher-kva.example:8443", "https://xn--bcher-kva.example:8443/robots.txt"),
        # userinfo is not part of the origin, and is not sent
        ("http://user:secret@example.com/x", "http://example.com:80", "http://example.com/robots.txt"),
        ("https://user@example.com:8443/", "https://example.com:8443", "https://example.com:8443/robots.txt"),
        # path, query and fragment do not matter
        ("http://example.com/a/b?c=d#e", "http://example.com:80", "http://example.com/robots.txt"),
        ("http://example.com/robots.txt", "http://example.com:80", "http://example.com/robots.txt"),
        # a trailing dot names the same host
        ("http://example.com./", "http://example.com:80", "http://example.com/robots.txt"),
        # IP literals
        ("http://192.0.2.1:8080/x", "http://192.0.2.1:8080", "http://192.0.2.1:8080/robots.txt"),
        ("http://[::1]:8080/x", "http://[::1]:8080", "http://[::1]:8080/robots.txt"),
        ("http://[::1]/", "http://[::1]:80", "http://[::1]/robots.txt"),
        ("https://[2001:DB8::1]:443/", "https://[2001:db8::1]:443", "https://[2001:db8::1]/robots.txt"),
    ],
)  # fmt: skip
def test_origin_of(url: str, key: str, robots_url: str) -> None:
    assert origin_of(url) == Origin(key, robots_url)


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("http://example.com/", "http://example.com:80/x"),
        ("http://EXAMPLE.com/", "http://example.COM/"),
        ("http://Bücher.example/", "http://xn--bcher-kva.example/"),
        ("http://u:p@example.com/", "http://example.com/"),
        ("https://example.com/", "https://example.com:443/"),
    ],
)
def test_same_origin(a: str, b: str) -> None:
    origin_a, origin_b = origin_of(a), origin_of(b)
    assert origin_a is not None
    assert origin_a == origin_b


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("http://example.com/", "https://example.com/"),
        ("https://example.com/", "https://example.com:80/"),
        ("http://example.com/", "http://example.com:8080/"),
        ("http://example.com/", "http://www.example.com/"),
        ("http://[::1]/", "http://127.0.0.1/"),
    ],
)
def test_different_origins(a: str, b: str) -> None:
    origin_a, origin_b = origin_of(a), origin_of(b)
    assert origin_a is not None
    assert origin_b is not None
    assert origin_a.key != origin_b.key


@pytest.mark.parametrize(
    "url",
    [
        # robots.txt covers http(s) only
        "ftp://example.com/file",
        "data:text/plain,hello",
        "file:///etc/passwd",
        "mailto:someone@example.com",
        "ws://example.com/",
        "about:blank",
        # not absolute
        "//example.com/x",
        "/x",
        "",
        # bad port
        "http://example.com:99999/",
        "http://example.com:abc/",
        "https://example.com:-1/",
        # empty host
        "http:///x",
        "http://:80/",
        "https://user@:443/",
        # a host IDNA cannot encode (a label over 63 characters)
        "http://" + "ü" * 70 + ".example/",
    ],
)
def test_origin_of_returns_none(url: str) -> None:
    assert origin_of(url) is None


@pytest.mark.parametrize("parse", [urlsplit, urlparse])
def test_origin_of_accepts_parsed_urls(
    parse: Callable[[str], SplitResult | ParseResult],
) -> None:
    assert origin_of(parse("https://Example.com:8443/a;b?c")) == Origin(
        "https://example.com:8443", "https://example.com:8443/robots.txt"
    )


def test_port_zero_is_no_origin() -> None:
    assert origin_of("http://example.com:0/") is None


def test_middleware_remembers_origins_per_scheme_and_netloc() -> None:
    """The middleware's memo gives the same origin as origin_of, on a miss and on
    a hit, for spellings of one origin and for URLs that have none."""
    from scrapy import Request, Spider
    from scrapy.utils.test import get_crawler

    from scrapy_robots_std import RobotsTxtStdMiddleware

    crawler = get_crawler(
        Spider, {"ROBOTSTXT_OBEY": True, "ADDONS": {"scrapy_robots_std.Addon": 0}}
    )
    mw = RobotsTxtStdMiddleware.from_crawler(crawler)
    urls = [
        "http://Example.COM/a",
        "http://example.com:80/b?q=1",
        "https://example.com/c",
        "https://user:pw@example.com:8443/d",
        "http://xn--bcher-kva.example/e",
        "http://[::1]:8080/f",
        "ftp://example.com/h",
        # The memo is keyed by the text before the first "/" after "://".
        "HTTP://EXAMPLE.com",
        "http://example.com?next=/g",
        "http://" + "u" * 600 + "@example.com:8080/i",
        "http://example.com#" + "x" * 600,
        "http://other.example/j?u=http://example.com/k",
        "data:text/plain,http://example.com/l",
    ]
    for _ in range(2):  # the second pass reads the memo
        for url in urls:
            assert mw.book.origin_to_check(Request(url)) == origin_of(url), url
    assert all(len(key) <= 512 for key in mw.book._origins), "long keys are not kept"
    assert (
        mw.book.origin_to_check(
            Request("http://example.com/", meta={"dont_obey_robotstxt": True})
        )
        is None
    )
