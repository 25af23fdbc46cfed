"""Property tests for usage preferences: parsing never raises, and usage lines never
change an access answer, in either standard."""

from __future__ import annotations

import contextlib
import os

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from scrapy_robots_std import RobotsTxt
from scrapy_robots_std.robotstxt.sfdict import StructuredFieldError, parse_dictionary

SETTINGS = settings(
    max_examples=int(os.environ.get("ROBOTS_STD_HYPOTHESIS_EXAMPLES", "200")),
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow],
)
TOKENS = ("FooBot", "bot", "Other")
URLS = (
    "http://example.com/",
    "http://example.com/a/b",
    "http://example.com/ai-ok/x.pdf",
    "http://example.com/%7Ea?q=1",
    "http://example.com/caf%C3%A9",
)
_PATHS = st.sampled_from(["/", "/a", "/a*", "/ai-ok/", "/*.pdf$", "/%7Ea", "/caf\xe9"])
_AGENTS = st.sampled_from(["*", "FooBot", "bot", "Other/1.0", "foobot"])
_VALUES = st.sampled_from(
    [
        "train-ai=n",
        "train-ai=y, search=n",
        "Train-AI=n",
        "train-ai",
        "search=yes, ai-train=no, use=reference",
        "bots=n",
        "a=(1 2",
        "",
        "\xff",
    ]
)

_ACCESS_LINE = st.builds(
    lambda key, path: f"{key}: {path}", st.sampled_from(["Allow", "Disallow"]), _PATHS
)
_OTHER_LINE = st.one_of(
    st.builds(lambda agent: f"User-agent: {agent}", _AGENTS),
    _ACCESS_LINE,
    st.sampled_from(["", "# comment", "Crawl-delay: 2", "Sitemap: http://x/s.xml"]),
)
_USAGE_LINE = st.one_of(
    st.builds(lambda v: f"Content-Signal: {v}", _VALUES),
    st.builds(lambda v: f"content-usage : {v}", _VALUES),
    st.builds(lambda p, v: f"Content-Usage: {p} {v}", _PATHS, _VALUES),
)


def _body(lines: list[str]) -> bytes:
    return "\n".join(lines).encode("utf-8", "surrogateescape")


@SETTINGS
@given(
    base=st.lists(_OTHER_LINE, max_size=14),
    inserts=st.lists(st.tuples(st.integers(0, 14), _USAGE_LINE), max_size=6),
    standard=st.sampled_from(["rfc9309", "1994"]),
)
def test_usage_lines_never_change_access(
    base: list[str], inserts: list[tuple[int, str]], standard: str
) -> None:
    lines = list(base)
    for position, line in inserts:
        lines.insert(min(position, len(lines)), line)
    without = RobotsTxt.parse(_body(base), standard)
    with_usage = RobotsTxt.parse(_body(lines), standard)
    for token in TOKENS:
        assert with_usage.groups_for(token) == without.groups_for(token)
        for url in URLS:
            assert with_usage.allowed(url, token) == without.allowed(url, token)
            prefs = with_usage.usage(url, token)
            if not with_usage.allowed(url, token):
                assert not prefs.stated
            prefs.with_headers([b"train-ai=n"], [b"ai-train=yes"]).decide("train-ai")


@SETTINGS
@given(body=st.binary(max_size=400), standard=st.sampled_from(["rfc9309", "1994"]))
def test_any_bytes_after_a_usage_label_parse(body: bytes, standard: str) -> None:
    data = b"User-agent: *\nContent-Usage: " + body + b"\nContent-Signal: " + body
    robots = RobotsTxt.parse(data, standard)
    for url in URLS:
        robots.usage(url, "FooBot").to_dict()
    robots.usage_summary()


@SETTINGS
@given(st.binary(max_size=200))
def test_dictionary_parser_only_raises_its_error(data: bytes) -> None:
    with contextlib.suppress(StructuredFieldError):
        parse_dictionary(data)
