"""Property tests for usage preferences: parsing never raises, and usage lines (and
TDMRep, and page directives) never change an access answer, in either standard."""

from __future__ import annotations

import contextlib
import json
import os

from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from scrapy_robots_std import RobotsTxt, pagerules, tdmrep
from scrapy_robots_std.usage.sfdict import StructuredFieldError, parse_dictionary
from scrapy_robots_std.usage.vocab import most_restrictive

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


def _access(robots: RobotsTxt, wide: set[int]) -> list[object]:
    """Everything access answers, and the notes on lines other than ``wide``."""
    said: list[object] = [robots.sitemaps, robots.truncated]
    said += [d for d in robots.diagnostics if d.line not in wide]
    for token in TOKENS:
        said += [robots.groups_for(token), robots.crawl_delay(token)]
        said += [robots.decide(url, token) for url in URLS]
    return said


@SETTINGS
@given(
    wide=st.lists(_USAGE_LINE, min_size=1, max_size=4),
    base=st.lists(_OTHER_LINE, max_size=14),
    inserts=st.lists(st.tuples(st.integers(0, 14), _USAGE_LINE), max_size=4),
    standard=st.sampled_from(["rfc9309", "1994"]),
)
def test_file_wide_usage_lines_never_change_access_and_combine_most_restrictively(
    wide: list[str], base: list[str], inserts: list[tuple[int, str]], standard: str
) -> None:
    """Usage lines in place of the comments that open a body: access (every answer,
    every note but theirs) stays; each category is the most restrictive of what the
    body said without them and what they say on their own."""
    body = list(base)
    for position, line in inserts:
        body.insert(min(position, len(body)), line)
    without = RobotsTxt.parse(_body(["# a comment"] * len(wide) + body), standard)
    with_wide = RobotsTxt.parse(_body(wide + body), standard)
    # What they say on their own: the same lines as the only group's.
    alone = RobotsTxt.parse(_body(["User-agent: *", *wide]), standard)
    slots = set(range(1, len(wide) + 1))
    assert _access(with_wide, slots) == _access(without, slots)
    # The body's own lines outside any group would share the longest match with
    # the added ones: the combination is exact only without them.
    assume(without.usage_summary().outside_group == 0)
    for token in TOKENS:
        for url in URLS:
            if not without.allowed(url, token):
                assert not with_wide.usage(url, token).stated
                continue
            parts = [r.usage(url, token) for r in (without, alone)]
            found = with_wide.usage(url, token)
            for name in ("aipref", "content-signal"):
                for category, preference in found.table(name).items():
                    said = [part.table(name)[category].value for part in parts]
                    assert preference.value == most_restrictive(said)


# -- TDMRep and page directives: use, never access ---------------------------------------

_TDM_RULE = st.fixed_dictionaries(
    {
        "location": st.sampled_from(["/", "/a*", "/ai-ok/", "/*.pdf$", "x", ""]),
        "tdm-reservation": st.sampled_from([0, 1, 2, "1", True]),
    }
)
_TDM_VALUES = st.lists(st.sampled_from([b"0", b"1", b"yes", b" 1 "]), max_size=3)
_ROBOTS_TAG = st.lists(
    st.sampled_from([b"noai", b"FooBot: noimageai", b"none", b"noindex", b"bot: all"]),
    max_size=3,
)


@SETTINGS
@given(
    lines=st.lists(st.one_of(_OTHER_LINE, _USAGE_LINE), max_size=14),
    rules=st.lists(_TDM_RULE, max_size=5),
    header=_TDM_VALUES,
    meta=_TDM_VALUES,
    robots_tag=_ROBOTS_TAG,
    standard=st.sampled_from(["rfc9309", "1994"]),
)
def test_tdmrep_and_page_sources_never_change_access_nor_search(
    lines: list[str],
    rules: list[dict[str, object]],
    header: list[bytes],
    meta: list[bytes],
    robots_tag: list[bytes],
    standard: str,
) -> None:
    """A tdmrep.json, TDMRep headers and meta tags, and page directives fold into
    the usage preferences; the Allow/Disallow answer is the same before and after,
    search is never decided by them, and a reservation is never a yes."""
    robots = RobotsTxt.parse(_body(lines), standard)
    file = tdmrep.parse_file(json.dumps(rules).encode())
    for token in TOKENS:
        for url in URLS:
            allowed = robots.allowed(url, token)
            prefs = robots.usage(url, token)
            statement, _ = file.statement(url)
            said = tdmrep.read(
                header,
                (),
                [("tdm-reservation", value.decode()) for value in meta],
                file=statement,
            )
            page = pagerules.read(robots_tag, (), token)
            folded = prefs.with_sources((*said.usage_sources(), *page.usage_sources()))
            assert robots.allowed(url, token) == allowed
            assert folded.decide("search").value == prefs.decide("search").value
            if said.reservation == 1:
                assert folded.decide("train-ai").value == "disallow"
                assert folded.decide("ai-use").value == "disallow"
