"""The compiled matchers: hot and compact forms answer alike, and the
process-wide bound on what they hold (``matcher.RING``)."""

from __future__ import annotations

import gc
import pickle
from unittest import mock

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scrapy_robots_std import RobotsTxt
from scrapy_robots_std.robotstxt import matcher
from tests.helpers.bodies import star_group, url

PIECES = st.sampled_from(["a", "b", "ab", "ba", "/", ".", "%41", "index.html"])
PATTERNS = st.lists(st.one_of(PIECES, st.just("*")), max_size=5).map(
    lambda parts: "/" + "".join(parts)
) | st.lists(st.one_of(PIECES, st.just("*")), min_size=1, max_size=4).map(
    lambda parts: "*" + "".join(parts) + "$"
)
RULES = st.lists(st.tuples(st.booleans(), PATTERNS), min_size=1, max_size=25)
PATHS = st.lists(PIECES, max_size=6).map(lambda parts: "/" + "".join(parts))


@settings(max_examples=100, deadline=None)
@given(rules=RULES, paths=st.lists(PATHS, min_size=1, max_size=6))
def test_a_compact_matcher_answers_as_a_hot_one(rules, paths):
    body = star_group(rules)
    hot = RobotsTxt.parse(body)
    want = [hot.decide(url(path), "Bot") for path in paths]
    with mock.patch.object(matcher, "HOT_ENTRIES", 0):
        compact = RobotsTxt.parse(body)
        assert [compact.decide(url(path), "Bot") for path in paths] == want
    assert compact._matcher is not None
    # The compact form reads its needles one at a time (each search charged);
    # the hot form holds them as a tuple, searched in C.
    assert not isinstance(compact._matcher.needles, tuple)
    assert hot._matcher is not None
    assert isinstance(hot._matcher.needles, tuple)


@settings(max_examples=100, deadline=None)
@given(rules=RULES, path=PATHS)
def test_a_matcher_dropped_by_the_ring_is_compiled_again_alike(rules, path):
    body = star_group(rules)
    parsed = RobotsTxt.parse(body)
    first = parsed.decide(url(path), "Bot")
    assert parsed._matcher is not None
    parsed.drop_matcher(id(parsed._matcher))
    assert parsed._matcher is None
    assert parsed.decide(url(path), "Bot") == first
    assert parsed._matcher is not None


def _file(number: int) -> bytes:
    rules = "".join(f"Disallow: /{number}/{rule}/*.pdf$\n" for rule in range(20))
    return f"User-agent: *\n{rules}".encode()


def test_the_ring_holds_at_most_its_bound_and_drops_the_oldest():
    ring = matcher.Ring(max_bytes=64 * 1024)
    with mock.patch.object(matcher, "RING", ring):
        files = [RobotsTxt.parse(_file(number)) for number in range(200)]
        for number, parsed in enumerate(files):
            assert not parsed.allowed(url(f"/{number}/3/x.pdf"), "Bot")
            assert ring.total <= ring.max_bytes
        held = [parsed for parsed in files if parsed._matcher is not None]
        assert 0 < len(held) == len(ring._held) < len(files)
        assert held == files[-len(held) :]  # the newest are kept
        assert ring.total == sum(parsed._matcher.size for parsed in held)
        # A dropped matcher is compiled again at its file's next check.
        assert files[0]._matcher is None
        assert files[0].allowed(url("/0/3/x.html"), "Bot")
        assert files[0]._matcher is not None


def test_a_file_that_dies_leaves_the_ring():
    ring = matcher.Ring(max_bytes=1 << 20)
    with mock.patch.object(matcher, "RING", ring):
        files = [RobotsTxt.parse(_file(number)) for number in range(10)]
        for parsed in files:
            parsed.allowed(url("/x"), "Bot")
        assert len(ring._held) == 10
        total = ring.total
        del files[:5]
        gc.collect()
        assert len(ring._held) == 5
        assert ring.total < total


def test_a_file_compiles_again_only_for_another_selection():
    body = b"User-agent: a\nDisallow: /a\n\nUser-agent: b\nDisallow: /b\n"
    parsed = RobotsTxt.parse(body)
    with mock.patch.object(
        matcher, "compile_rules", wraps=matcher.compile_rules
    ) as compile_rules:
        for _ in range(3):
            assert not parsed.allowed(url("/a"), "a")
            assert parsed.allowed(url("/a"), "b")
            assert not parsed.allowed(url("/a"), "a")
            assert not parsed.allowed(url("/a"), "A")  # the same group as "a"
    # Each switch between the two groups compiles: the last selection's
    # matcher is the one held.
    assert compile_rules.call_count == 3 * 2 + 1


def test_a_line_break_in_a_1994_pattern_stays_escaped_on_both_sides():
    # 1994 decodes %XX before comparing; a stored pattern holds no line break,
    # so %0A stays escaped (as %2F does), in the path as in the pattern.
    body = b"User-agent: *\nDisallow: /a%0ab\nDisallow: /c\n"
    parsed = RobotsTxt.parse(body, standard="1994")
    assert not parsed.allowed(url("/a%0Ab"), "Bot")
    assert not parsed.allowed(url("/a%0ab/x"), "Bot")
    assert parsed.allowed(url("/a"), "Bot")
    assert not parsed.allowed(url("/c"), "Bot")
    assert parsed.decide(url("/a%0Ab"), "Bot").rule.pattern == "/a%0ab"


@pytest.mark.parametrize("hot_entries", [matcher.HOT_ENTRIES, 0])
def test_a_parsed_file_pickles_without_its_matcher(hot_entries):
    body = b"User-agent: *\nDisallow: /a\nDisallow: /*.pdf$\nAllow: /a/b\n"
    with mock.patch.object(matcher, "HOT_ENTRIES", hot_entries):
        parsed = RobotsTxt.parse(body)
        assert not parsed.allowed(url("/a"), "Bot")
        assert parsed._matcher is not None
        copy = pickle.loads(pickle.dumps(parsed))
        assert copy._matcher is None  # compiled again when asked
        for path in ("/a", "/a/b", "/x.pdf", "/x.pdf?q", "/b"):
            assert copy.decide(url(path), "Bot") == parsed.decide(url(path), "Bot")
