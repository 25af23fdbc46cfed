"""Invalid arguments to the parser API raise a clear ValueError (SPEC 5, CONTRACT)."""

from __future__ import annotations

import pytest

from scrapy_robots_std import RobotsTxt, parse

BODY = b"User-agent: *\nDisallow: /private\n"
URL = "http://example.com/private/x"


@pytest.fixture(params=["rfc9309", "1994"])
def robots(request):
    return RobotsTxt.parse(BODY, standard=request.param)


# --------------------------------------------------------------------------------------
# standard
# --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "standard", ["rfc-9309", "RFC 9309", "2019", "", "google", "1994 "]
)
def test_api_errors_unknown_standard(standard):
    with pytest.raises(ValueError, match=r"(?i)unknown standard"):
        RobotsTxt.parse(BODY, standard=standard)
    with pytest.raises(ValueError, match=r"(?i)unknown standard"):
        parse(BODY, standard=standard)


def test_api_errors_unknown_standard_names_value_and_choices():
    with pytest.raises(ValueError, match=r"(?i)unknown standard") as info:
        RobotsTxt.parse(BODY, standard="rfc2616")
    message = str(info.value)
    assert "rfc2616" in message
    assert "rfc9309" in message
    assert "1994" in message


@pytest.mark.parametrize("body", ["User-agent: *\n", None, 42, ["Disallow: /"]])
def test_api_errors_body_not_bytes(body):
    with pytest.raises(TypeError):
        RobotsTxt.parse(body)


@pytest.mark.parametrize("body", [b"", bytearray(BODY), memoryview(BODY)])
def test_api_errors_bytes_like_bodies_accepted(body):
    rt = RobotsTxt.parse(body)
    assert rt.allowed(URL, "FooBot") is (body == b"")


# --------------------------------------------------------------------------------------
# token
# --------------------------------------------------------------------------------------

BAD_TOKENS_BOTH = [
    pytest.param("", id="empty"),
    pytest.param("Foo Bot", id="space"),
    pytest.param(" FooBot", id="leading-space"),
    pytest.param("FooBot\t", id="tab"),
    pytest.param("Foo\nBot", id="newline"),
    pytest.param("FooBot/1.0", id="slash"),
    pytest.param("/", id="only-slash"),
    pytest.param("Mozilla/5.0 (compatible; FooBot)", id="full-user-agent"),
]
BAD_TOKENS_RFC9309 = [
    pytest.param("FooBot2", id="digit"),
    pytest.param("MJ12bot", id="digits-inside"),
    pytest.param("foo.bot", id="dot"),
    pytest.param("foo*", id="star"),
    pytest.param("*", id="only-star"),
    pytest.param("Fööbot", id="non-ascii"),
    pytest.param("foo:bot", id="colon"),
]


@pytest.mark.parametrize("token", BAD_TOKENS_BOTH)
def test_api_errors_bad_token(robots, token):
    with pytest.raises(ValueError, match=r"(?i)token"):
        robots.allowed(URL, token)
    with pytest.raises(ValueError, match=r"(?i)token"):
        robots.decide(URL, token)


@pytest.mark.parametrize("token", BAD_TOKENS_RFC9309)
def test_api_errors_bad_token_rfc9309(token):
    rt = RobotsTxt.parse(BODY, standard="rfc9309")
    with pytest.raises(ValueError, match=r"(?i)token"):
        rt.allowed(URL, token)
    with pytest.raises(ValueError, match=r"(?i)token"):
        rt.decide(URL, token)


@pytest.mark.parametrize("token", BAD_TOKENS_RFC9309)
def test_api_errors_1994_accepts_any_token_without_space_or_slash(token):
    rt = RobotsTxt.parse(BODY, standard="1994")
    assert rt.allowed(URL, token) is False  # the "*" record applies to every robot
    assert rt.decide(URL, token).rule is not None


@pytest.mark.parametrize(
    "token", ["FooBot", "foo-bot", "foo_bot", "Googlebot-Image", "x"]
)
def test_api_errors_good_tokens_accepted(robots, token):
    assert robots.allowed(URL, token) is False
    assert robots.allowed("http://example.com/public", token) is True


def test_api_errors_bad_token_message_names_token():
    rt = RobotsTxt.parse(BODY)
    with pytest.raises(ValueError, match=r"(?i)token") as info:
        rt.allowed(URL, "Foo Bot")
    assert "Foo Bot" in str(info.value)


# --------------------------------------------------------------------------------------
# url
# --------------------------------------------------------------------------------------

BAD_URLS = [
    pytest.param("/private/x", id="relative-path"),
    pytest.param("private/x", id="relative"),
    pytest.param("example.com/private", id="no-scheme"),
    pytest.param("//example.com/private", id="scheme-relative"),
    pytest.param("ftp://example.com/private", id="ftp"),
    pytest.param("file:///etc/passwd", id="file"),
    pytest.param("mailto:bot@example.com", id="mailto"),
    pytest.param("javascript:alert(1)", id="javascript"),
    pytest.param("http://", id="http-no-host"),
    pytest.param("https:///private", id="https-empty-host"),
    pytest.param("http:/example.com/private", id="one-slash"),
    pytest.param("", id="empty"),
]
NON_STR_URLS = [
    pytest.param(b"http://example.com/private", id="bytes"),
    pytest.param(None, id="none"),
    pytest.param(42, id="int"),
]


@pytest.mark.parametrize("url", BAD_URLS)
def test_api_errors_bad_url(robots, url):
    with pytest.raises(ValueError, match=r"(?i)url"):
        robots.allowed(url, "FooBot")
    with pytest.raises(ValueError, match=r"(?i)url"):
        robots.decide(url, "FooBot")


@pytest.mark.parametrize("url", NON_STR_URLS)
def test_api_errors_non_str_url(robots, url):
    with pytest.raises(ValueError, match=r"(?i)url"):
        robots.allowed(url, "FooBot")
    with pytest.raises(ValueError, match=r"(?i)url"):
        robots.decide(url, "FooBot")


def test_api_errors_bad_url_message_names_url():
    rt = RobotsTxt.parse(BODY)
    with pytest.raises(ValueError, match=r"(?i)url") as info:
        rt.allowed("ftp://example.com/private", "FooBot")
    assert "ftp://example.com/private" in str(info.value)


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        pytest.param("http://example.com", True, id="no-path"),
        pytest.param("HTTP://EXAMPLE.COM/private/x", False, id="upper-case-scheme"),
        pytest.param(
            "https://example.com:8443/private?x=1#f", False, id="port-query-fragment"
        ),
        pytest.param("http://user:pw@example.com/private", False, id="userinfo"),
        pytest.param("http://[::1]/private", False, id="ipv6"),
        pytest.param("http://127.0.0.1/public", True, id="ipv4"),
        pytest.param("http://bücher.example/private", False, id="idn"),
    ],
)
def test_api_errors_good_urls_accepted(robots, url, expected):
    assert robots.allowed(url, "FooBot") is expected


# -- the package's public names ----------------------------------------------------------


def test_api_every_name_in_all_imports():
    import importlib

    package = importlib.import_module("scrapy_robots_std")
    for name in package.__all__:
        exec(f"from scrapy_robots_std import {name}", {})  # noqa: S102
        assert getattr(package, name) is not None


def test_api_dir_lists_the_lazily_imported_names():
    import subprocess
    import sys

    # A fresh interpreter: nothing lazily imported yet.
    code = "import scrapy_robots_std as p; print(' '.join(dir(p)))"
    names = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout.split()
    import scrapy_robots_std

    assert set(scrapy_robots_std.__all__) <= set(names)
    for name in ("SettingsError", "RobotsTxtDisallowed", "Addon", "StdRobotParser"):
        assert name in names


def test_api_dir_lists_all_names_without_scrapy_redis():
    """``RobotsAwareRedisQueue`` needs scrapy-redis; dir() names it all the same."""
    import subprocess
    import sys

    code = (
        "import sys; sys.modules['scrapy_redis'] = None; "
        "import scrapy_robots_std as p; print(' '.join(dir(p)))"
    )
    names = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout.split()
    import scrapy_robots_std

    assert set(scrapy_robots_std.__all__) <= set(names)
    assert "RobotsAwareRedisQueue" in names


def test_api_public_exceptions_are_exported():
    import scrapy_robots_std
    from scrapy_robots_std.config import SettingsError
    from scrapy_robots_std.scrapy.middleware import RobotsTxtDisallowed

    assert scrapy_robots_std.SettingsError is SettingsError
    assert issubclass(SettingsError, ValueError)
    assert scrapy_robots_std.RobotsTxtDisallowed is RobotsTxtDisallowed
    assert {"SettingsError", "RobotsTxtDisallowed"} <= set(scrapy_robots_std.__all__)


def test_api_help_shows_the_lazy_names():
    import pydoc

    import scrapy_robots_std

    text = pydoc.render_doc(scrapy_robots_std)
    assert "SettingsError" in text
    assert "RobotsTxtDisallowed" in text
