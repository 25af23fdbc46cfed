"""The small-group compile (robotstxt/compile.py): same answers, table built only when asked."""

from __future__ import annotations

import pytest

from scrapy_robots_std import RobotsTxt
from scrapy_robots_std.robotstxt import compile as small
from scrapy_robots_std.robotstxt import matcher
from scrapy_robots_std.robotstxt.matcher import INDEX_ABOVE, PatternTable
from tests.helpers.memory import kept_after_a_check

BODY = b"""User-agent: *
Disallow: /private/
Allow: /private/index.html
Disallow: /*.pdf$
Disallow: /*?sessionid=
Disallow: /%7euser/
Disallow: /caf\xc3\xa9/
Disallow: /exact$
Disallow: /private/
Disallow:
"""
PATHS = [
    "/",
    "/private/",
    "/private/x",
    "/private/index.html",
    "/a.pdf",
    "/a.pdf?x",
    "/x?sessionid=1",
    "/~user/",
    "/%7Euser/a",
    "/caf%C3%A9/",
    "/café/",
    "/exact",
    "/exact/",
]


def _answers(parsed: RobotsTxt) -> list[str]:
    return [str(parsed.decide("https://e.com" + path, "Bot")) for path in PATHS]


def test_the_first_check_of_a_small_group_builds_no_table():
    parsed = RobotsTxt.parse(BODY)
    assert not parsed.allowed("https://e.com/private/x", "Bot")
    assert isinstance(parsed._parsed.rule_values, bytes)


def test_the_same_answers_as_after_the_table_and_the_rule_as_written():
    fast = RobotsTxt.parse(BODY)
    fast.allowed("https://e.com/", "Bot")  # compiled without the table
    general = RobotsTxt.parse(BODY)
    general._table()  # the table first: the general path
    general.allowed("https://e.com/", "Bot")
    assert isinstance(general._parsed.rule_values, PatternTable)
    assert _answers(fast) == _answers(general)
    decision = fast.decide("https://e.com/~user/", "Bot")
    assert str(decision.rule) == "line 6 Disallow: /%7euser/"


@pytest.mark.parametrize(
    ("rules", "small_path"),
    [
        (small.SMALL_GROUP, True),
        (small.SMALL_GROUP + 1, False),
    ],
)
def test_large_groups_keep_the_general_path(rules, small_path):
    body = b"User-agent: *\n" + b"".join(
        b"Disallow: /p%d/\n" % number for number in range(rules)
    )
    parsed = RobotsTxt.parse(body)
    parsed.allowed("https://e.com/x", "Bot")
    assert isinstance(parsed._parsed.rule_values, bytes) is small_path


@pytest.mark.parametrize(
    ("length", "small_path"),
    [
        (small.SMALL_GROUP_BYTES // 4, True),
        (small.SMALL_GROUP_BYTES // 4 + 1, False),
    ],
)
def test_long_patterns_keep_the_general_path(length, small_path):
    # Four patterns: the small path would keep its own copy of their bytes
    # beside the parsed values (a 500 KiB file would keep twice that).
    # (One "*" each: many pieces would send them to the index, see below.)
    patterns = [b"/%d*" % n + b"a" * length for n in range(4)]
    patterns = [pattern[:length] for pattern in patterns]
    body = b"User-agent: *\n" + b"".join(b"Disallow: " + p + b"\n" for p in patterns)
    parsed = RobotsTxt.parse(body)
    assert not parsed.allowed("https://e.com/1" + "a" * length, "Bot")
    assert isinstance(parsed._parsed.rule_values, bytes) is small_path


@pytest.mark.parametrize(
    ("pieces", "small_path"),
    [(matcher.SCAN_PIECES, True), (matcher.SCAN_PIECES + 1, False)],
)
def test_many_pieces_in_all_keep_the_general_path(pieces, small_path):
    # The scans may place every piece of every pattern they try: past
    # SCAN_PIECES pieces, the index and its budget of work take the patterns.
    stars = [pieces // 4 + (n < pieces % 4) for n in range(4)]
    body = b"User-agent: *\n" + b"".join(
        b"Disallow: /%d" % n + b"*a" * count + b"\n" for n, count in enumerate(stars)
    )
    parsed = RobotsTxt.parse(body)
    assert not parsed.allowed("https://e.com/1" + "a" * pieces, "Bot")
    assert parsed.allowed("https://e.com/9", "Bot")
    assert isinstance(parsed._parsed.rule_values, bytes) is small_path
    rules = parsed._last.rules
    assert rules is not None
    assert (rules.index is None) is small_path


def test_many_wildcards_keep_the_general_path():
    body = b"User-agent: *\n" + b"".join(
        b"Disallow: /*p%d/\n" % number for number in range(INDEX_ABOVE + 1)
    )
    parsed = RobotsTxt.parse(body)
    assert not parsed.allowed("https://e.com/x/p7/", "Bot")
    assert isinstance(parsed._parsed.rule_values, PatternTable)


def test_memory_bytes_counts_what_the_small_path_keeps():
    body = BODY + b"".join(b"Disallow: /*w%d*x$\n" % n for n in range(200))
    kept, parsed = kept_after_a_check(body, "Bot")
    assert isinstance(parsed._parsed.rule_values, bytes)
    assert kept <= parsed.memory_bytes() <= kept * 1.5 + 4_096
