"""Page-level robots directives, pure: pagerules.py (the directives) and pagehead.py
(the meta tags of an HTML head, read with lxml). Issue 25, point 3.

Sources: Google's "Robots meta tag, data-nosnippet, and X-Robots-Tag
specifications" and Bing's "Robots meta tags" (directive names, the comma list,
the ``token:`` prefix of an ``X-Robots-Tag`` line, ``unavailable_after`` dates in
RFC 822 / RFC 850 / ISO 8601 forms, the most restrictive of conflicting
directives). ``noai`` / ``noimageai`` are de-facto AI opt-outs.
"""

from __future__ import annotations

import os
import time

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from scrapy_robots_std import PageDirectives, RobotsTxt, UsagePreferences
from scrapy_robots_std.pagehead import HEAD_MAX_BYTES, HeadReader, read_head
from scrapy_robots_std.pagerules import (
    EMPTY,
    MAX_DIRECTIVES,
    MAX_LINES,
    MAX_METAS,
    MAX_VALUE,
    meta_filter,
    names_token,
    read,
)

TOKEN = "TestBot"
SETTINGS = settings(
    max_examples=int(os.environ.get("ROBOTS_STD_HYPOTHESIS_EXAMPLES", "200")),
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow],
)


def header(*lines: bytes | str, token: str = TOKEN) -> PageDirectives:
    return read(list(lines), (), token)


def head(html: bytes | str, token: str = TOKEN, **kwargs: object) -> PageDirectives:
    body = html.encode() if isinstance(html, str) else html
    found = read_head(body, meta_filter(token), **kwargs)  # type: ignore[arg-type]
    return read((), found.metas, token, notes=found.notes)


# -- directives ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("line", "directives"),
    [
        ("noindex", (("noindex", None),)),
        ("noindex, nofollow", (("noindex", None), ("nofollow", None))),
        ("NoIndex,NOFOLLOW", (("noindex", None), ("nofollow", None))),
        ("  none  ", (("none", None),)),
        ("noai, noimageai", (("noai", None), ("noimageai", None))),
        ("all", (("all", None),)),
        ("noarchive, nosnippet", (("noarchive", None), ("nosnippet", None))),
        # values after a colon are kept as written
        ("max-snippet: 20", (("max-snippet", "20"),)),
        (
            "unavailable_after: 2026-12-31",
            (("unavailable_after", "2026-12-31"),),
        ),
        # RFC 822 and RFC 850 dates hold a comma: still one directive
        (
            "unavailable_after: Fri, 25 Jun 2010 15:00:00 PST",
            (("unavailable_after", "Fri, 25 Jun 2010 15:00:00 PST"),),
        ),
        (
            "noindex, unavailable_after: Friday, 25-Jun-10 15:00:00 PST, nofollow",
            (
                ("noindex", None),
                ("unavailable_after", "Friday, 25-Jun-10 15:00:00 PST"),
                ("nofollow", None),
            ),
        ),
        # empty pieces are skipped; an unknown directive is kept
        (",, noindex ,,", (("noindex", None),)),
        ("noindex nofollow", (("noindex nofollow", None),)),
    ],
)
def test_google_a_header_line_is_a_comma_separated_list(
    line: str, directives: tuple[tuple[str, str | None], ...]
) -> None:
    page = header(line)
    assert len(page.statements) == 1
    assert page.statements[0].directives == directives
    assert page.statements[0].origin == "header"
    assert page.statements[0].field == "X-Robots-Tag"


def test_google_none_means_noindex_and_nofollow() -> None:
    page = header("none")
    assert page.noindex
    assert page.nofollow
    assert page.says("noindex", "none") is page.statements[0]


def test_google_the_most_restrictive_applies_across_lines_and_tags() -> None:
    found = read_head(
        b'<head><meta name="robots" content="all"><meta name="robots" '
        b'content="nofollow"></head>',
        meta_filter(TOKEN),
    )
    page = read([b"index, follow", b"noindex"], found.metas, TOKEN)
    assert page.noindex
    assert page.nofollow
    assert page.directives == ("index", "follow", "noindex", "all", "nofollow")
    assert page.unknown == ()
    # The first statement that says it is the one named.
    assert str(page.says("nofollow")) == 'meta tag "robots: nofollow"'
    assert str(page.says("noindex")) == 'header "X-Robots-Tag: noindex"'


def test_unknown_directives_are_kept_and_change_nothing() -> None:
    page = header("noodp, max-image-preview: large, indexifembedded")
    assert page.unknown == ("noodp", "max-image-preview", "indexifembedded")
    assert (page.noindex, page.nofollow, page.noai) == (False, False, False)
    assert page.usage_sources() == ()


def test_unavailable_after_is_kept_raw_and_not_interpreted() -> None:
    page = header("unavailable_after: 1999-01-01", "unavailable_after: soon")
    assert page.unavailable_after == ("1999-01-01", "soon")
    assert not page.noindex


def test_empty_input_is_the_shared_empty_answer() -> None:
    assert read((), (), TOKEN) is EMPTY
    assert header("", "  ", ",") is EMPTY
    assert EMPTY.to_dict()["directives"] == []


# -- scope: a leading token --------------------------------------------------------------


@pytest.mark.parametrize(
    ("line", "applies"),
    [
        ("testbot: noindex", True),
        ("TESTBOT: noindex", True),
        ("TestBot/1.0: noindex", True),  # version information, as in robots.txt
        ("TestBot2000: noindex", True),  # RFC 9309 reads the leading letters
        ("otherbot: noindex", False),
        ("googlebot-news: noindex", False),
        ("testbot-news: noindex", False),
    ],
)
def test_google_a_leading_token_scopes_a_line_to_one_crawler(
    line: str, applies: bool
) -> None:
    page = header(line)
    assert page.noindex is applies
    assert page.other_crawlers == (0 if applies else 1)
    if applies:
        assert page.statements[0].scope == line.partition(":")[0]


@pytest.mark.parametrize(
    "line",
    [
        "unavailable_after: 25 Jun 2010 15:00:00 PST",
        "max-snippet: 20",
        "noindex, otherbot: nofollow",  # a comma first: not a leading token
    ],
)
def test_a_directive_with_a_value_is_not_a_scope(line: str) -> None:
    page = header(line)
    assert page.other_crawlers == 0
    assert page.statements[0].scope is None


def test_lines_for_other_crawlers_are_counted_not_applied() -> None:
    page = header("googlebot: noindex", "bingbot: none", "testbot: noai", "nosnippet")
    assert page.other_crawlers == 2
    assert page.directives == ("noai", "nosnippet")
    assert not page.noindex


@pytest.mark.parametrize(
    ("name", "token", "names"),
    [
        ("robots", "TestBot", False),
        ("testbot", "TestBot", True),
        (" TestBot ", "TestBot", True),
        ("Foo.Bot/2", "Foo.Bot", True),  # a 1994 token, up to the "/"
        ("Foo.Bot", "Foo", True),  # RFC 9309: the leading letters
        ("*", "TestBot", False),
    ],
)
def test_names_are_matched_like_robots_txt_user_agents(
    name: str, token: str, names: bool
) -> None:
    assert names_token(name, token) is names


# -- meta tags ---------------------------------------------------------------------------


def test_meta_robots_and_the_crawlers_own_meta_tag_are_read() -> None:
    page = head(
        "<!doctype html><html><head><title>t</title>"
        '<META NAME="Robots" CONTENT="NoIndex">'
        '<meta name="testbot" content="noai, nofollow">'
        '<meta name="googlebot" content="noarchive">'
        '<meta name="description" content="noindex">'
        "</head><body><p>x</p></body></html>"
    )
    assert [str(s) for s in page.statements] == [
        'meta tag "Robots: NoIndex"',
        'meta tag "testbot: noai, nofollow"',
    ]
    assert page.statements[0].scope is None
    assert page.statements[1].scope == "testbot"
    assert (page.noindex, page.nofollow, page.noai) == (True, True, True)
    assert "noarchive" not in page.directives


@pytest.mark.parametrize(
    "html",
    [
        # in the body: not a head's
        "<html><head></head><body><meta name=robots content=noindex></body>",
        # text in the head opens the body (HTML parsing): the tag after it is not read
        "<head><title>t</title>words<meta name=robots content=noindex>",
        "<head><div></div><meta name=robots content=noindex>",
        # not a tag
        "<head><!-- <meta name=robots content=noindex> --></head>",
        "<head><script>'<meta name=robots content=noindex>'</script></head>",
        # no content
        "<head><meta name=robots></head>",
    ],
)
def test_only_the_heads_meta_tags_count(html: str) -> None:
    assert not head(html).noindex


def test_a_meta_tag_between_head_and_body_is_the_heads() -> None:
    # HTML parsing (the "after head" insertion mode) puts it back in the head.
    assert head("<head></head><meta name=robots content=noindex><body>").noindex


def test_meta_tags_without_html_or_head_elements_are_in_the_implied_head() -> None:
    page = head("<meta name=robots content=noindex><p>text")
    assert page.noindex


def test_the_declared_encoding_is_used() -> None:
    html = '<head><meta name=robots content="unavailable_after: 31 déc. 2026">'
    page = head(html.encode("latin-1"), encoding="latin-1")
    assert page.unavailable_after == ("31 déc. 2026",)
    # An encoding lxml does not know: it reads on without one.
    assert head(b"<meta name=robots content=noindex>", encoding="x-nope").noindex


def test_a_utf16_page_with_a_byte_order_mark_is_read() -> None:
    assert head("<meta name=robots content=noindex>".encode("utf-16")).noindex


# -- bounds (hostile input) --------------------------------------------------------------


def test_1000_header_lines_read_the_first_64() -> None:
    page = header(*[b"noindex"] * 1000)
    assert len(page.statements) == MAX_LINES
    assert page.notes == ("X-Robots-Tag: 936 field line(s) past the first 64 not read",)


def test_a_100_kb_header_value_is_cut() -> None:
    started = time.perf_counter()
    page = header(b"nofollow, " + b"x" * 100_000 + b", noindex")
    assert time.perf_counter() - started < 0.05
    statement = page.statements[0]
    assert len(statement.value) == MAX_VALUE
    assert page.nofollow
    assert not page.noindex  # past the cut
    assert page.notes == ("1 value(s) cut at 4,096 characters",)
    # A log line shows at most 200 characters of it.
    assert len(str(statement)) < 230


def test_a_statement_of_many_directives_keeps_the_first_32() -> None:
    page = header(", ".join(f"x{n}" for n in range(300)))
    assert len(page.statements[0].directives) == MAX_DIRECTIVES
    assert page.notes == (
        "1 statement(s) of more than 32 directives: the rest not read",
    )


def test_more_than_64_robots_meta_tags_read_the_first_64() -> None:
    found = read_head(
        b"<head>" + b"<meta name=robots content=noindex>" * 1000, meta_filter(TOKEN)
    )
    assert len(found.metas) == MAX_METAS
    assert found.more == 1000 - MAX_METAS
    page = read((), found.metas, TOKEN, notes=found.notes)
    assert len(page.statements) == MAX_METAS
    assert page.notes == ("936 robots meta tag(s) past the first 64 not read",)


def test_invalid_bytes_and_control_characters_never_raise() -> None:
    page = header(b"\xff\xfe noindex \x00\x1b[31m", b"\x00")
    assert page.statements[0].directives == (
        ("\ufffd\ufffd noindex \x00\x1b[31m", None),
    )
    assert not page.noindex  # one unknown directive, as written


HOSTILE_HEADS = {
    "100,000 nested divs": b"<head>" + b"<div>" * 100_000,
    "100,000 nested heads": b"<html>" + b"<head>" * 100_000,
    "100,000 nested noscripts": b"<head>" + b"<noscript>" * 100_000,
    "100,000 nested templates": b"<head>" + b"<template>" * 100_000,
    "a 1 MB script": b"<head><script>" + b"x" * 1_000_000,
    "a 1 MB comment": b"<head><!--" + b"x" * 1_000_000,
    "a 1 MB title of '<'": b"<head><title>" + b"<" * 1_000_000,
    "100,000 attributes": b"<head><meta " + b"a=b " * 100_000 + b">",
    "binary junk": bytes(range(256)) * 4000,
    "NUL bytes": b"\x00" * 1_000_000,
    "unclosed tags": b"<head><meta name=robots content='noindex" + b"<" * 500_000,
    "100,000 meta tags": b"<head>" + b"<meta name=robots content=noindex>" * 100_000,
}


@pytest.mark.parametrize("body", HOSTILE_HEADS.values(), ids=list(HOSTILE_HEADS))
def test_hostile_html_is_read_within_its_bound(body: bytes) -> None:
    started = time.perf_counter()
    found = read_head(body + b"<meta name=robots content=noindex>", meta_filter(TOKEN))
    elapsed = time.perf_counter() - started
    # 128 KiB at most, whatever the nesting: tens of ms on a slow shared machine
    # (a few ms on a laptop), never the whole body.
    assert elapsed < 0.5, elapsed
    assert len(found.metas) <= MAX_METAS
    page = read((), found.metas, TOKEN, notes=found.notes)
    assert len(page.statements) <= MAX_METAS


def test_a_head_past_the_byte_bound_is_cut_with_a_note() -> None:
    body = b"<head><script>" + b"x" * HEAD_MAX_BYTES + b"</script>"
    found = read_head(body + b"<meta name=robots content=noindex>", meta_filter(TOKEN))
    assert found.metas == ()
    assert found.notes == ("HTML head: cut at 131,072 bytes; meta tags after not read",)


def test_a_large_page_costs_what_its_head_costs() -> None:
    small = b"<html><head><meta name=robots content=noindex></head><body>"
    large = small + b"<div><p>text <a href=/x>link</a></p></div>" * 50_000
    # The head is read, not the 2 MB body: no note, and the same answer.
    assert read_head(large, meta_filter(TOKEN)) == read_head(small, meta_filter(TOKEN))


def test_a_reader_kept_for_many_pages_answers_as_a_fresh_one() -> None:
    """The crawl keeps one HeadReader (and its lxml parsers) per token: a page cut
    short, broken or in another encoding leaves nothing behind for the next."""
    bodies = [
        *HOSTILE_HEADS.values(),
        b"<head><meta name=robots content=noindex></head><body>",
        "<meta name=robots content=é>".encode("utf-16"),
        b"",
        b"<head><meta name=testbot content=nofollow>",
    ]
    reader = HeadReader(meta_filter(TOKEN))
    for _ in range(2):
        for body in bodies:
            for encoding in (None, "latin-1"):
                fresh = read_head(body, meta_filter(TOKEN), encoding=encoding)
                assert reader.read(body, encoding) == fresh


def test_empty_and_tagless_bodies_read_nothing_without_a_note() -> None:
    for body in (b"", b"   ", b"just text"):
        assert read_head(body, meta_filter(TOKEN)).notes == ()


# -- usage preferences: noai and noimageai -----------------------------------------------


def test_noai_is_a_no_for_the_ai_purposes_only() -> None:
    page = header("noai")
    folded = UsagePreferences.unknown().with_sources(page.usage_sources())
    assert folded.decide("train-ai").value == "disallow"
    assert folded.decide("ai-input").value == "disallow"
    assert folded.decide("search").value == "unknown"
    decision = folded.decide("train-ai")
    assert [str(s) for s in decision.sources] == ['header "X-Robots-Tag: noai"']
    assert decision.sources[0].origin == "header"
    assert folded.sources == page.usage_sources()


def test_noimageai_counts_as_no_too_and_a_meta_tag_says_where_it_came_from() -> None:
    page = head("<meta name=robots content=noimageai>")
    folded = UsagePreferences.unknown().with_sources(page.usage_sources())
    decision = folded.decide("train-ai")
    assert decision.value == "disallow"
    assert [s.to_dict()["from"] for s in decision.sources] == ["meta tag"]
    assert str(decision) == 'disallow for train-ai by meta tag "robots: noimageai"'


def test_a_page_no_beats_a_yes_from_the_other_sources() -> None:
    yes = UsagePreferences.unknown().with_headers(
        content_usage=[b"train-ai=y"], content_signal=[b"ai-train=yes"]
    )
    folded = yes.with_sources(header("noai").usage_sources())
    assert folded.decide("train-ai").value == "disallow"
    # The page can only make a category stricter.
    assert yes.with_sources(header("noindex").usage_sources()) is yes


def test_a_page_source_is_in_the_json_form() -> None:
    folded = UsagePreferences.unknown().with_sources(header("noai").usage_sources())
    said = folded.to_dict()
    assert said["aipref"]["train-ai"]["value"] == "disallow"
    assert said["sources"][0]["field"] == "X-Robots-Tag"
    assert said["sources"][0]["members"] == {"noai": ""}


# -- properties ----------------------------------------------------------------------------

_RANK = {"unknown": 0, "allow": 1, "disallow": 2}
_PIECES = st.sampled_from(
    [
        "noindex",
        "NoFollow",
        "none",
        "noai",
        "noimageai",
        "all",
        "testbot:",
        "otherbot:",
        "unavailable_after: Fri",
        " 25 Jun 2010 15:00:00 PST",
        "max-snippet: 20",
        ",",
        ", ",
        ":",
        " ",
        "\x00",
        "\x1b",
        "é",
    ]
)
_LINE = st.lists(_PIECES, max_size=12).map("".join)
_ROBOTS = st.sampled_from(
    [
        b"User-agent: *\nDisallow: /private\nContent-Usage: train-ai=y\n",
        b"User-agent: TestBot\nAllow: /\nContent-Signal: ai-train=yes, search=yes\n",
        b"User-agent: *\nDisallow: /\n",
        b"",
    ]
)
_URLS = st.sampled_from(
    ["http://example.com/", "http://example.com/private/x", "http://example.com/a"]
)


@SETTINGS
@given(
    lines=st.lists(_LINE, max_size=8),
    metas=st.lists(
        st.tuples(st.sampled_from(["robots", "TestBot", "other"]), _LINE), max_size=4
    ),
    robots=_ROBOTS,
    url=_URLS,
)
def test_page_directives_never_raise_never_loosen_and_never_change_access(
    lines: list[str], metas: list[tuple[str, str]], robots: bytes, url: str
) -> None:
    page = read(lines, metas, TOKEN)
    assert len(page.statements) <= MAX_LINES + MAX_METAS
    page.to_dict()
    parsed = RobotsTxt.parse(robots)
    allowed = parsed.allowed(url, TOKEN)
    before = parsed.usage(url, TOKEN)
    after = before.with_sources(page.usage_sources())
    # Access is robots.txt's alone; the page can only make a preference stricter.
    assert parsed.allowed(url, TOKEN) is allowed
    assert after.reason == before.reason
    for vocabulary in ("aipref", "content-signal"):
        for category, preference in before.table(vocabulary).items():
            now = after.table(vocabulary)[category].value
            assert _RANK[now] >= _RANK[preference.value]
    if page.noai:
        assert after.decide("train-ai").value == "disallow"
    assert after.decide("search") == before.decide("search")
