"""The fast matcher against a slow, obviously-correct one (hypothesis).

The matcher answers with a binary search over sorted prefixes, parent links,
exact-match and wildcard tables.  Here every rule is tried one by one with a
regular expression instead (fine for these tiny inputs), and the longest
match / allow-wins-ties / first-line-in-1994 rules are applied by hand.  The
two must agree on every generated body and path.
"""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from scrapy_robots_std import RobotsTxt

# Small alphabets make prefixes, shared pieces and wildcard overlaps likely.
PATTERN_CHARS = "/ab.*$"
PATH_CHARS = "/ab.$*"

patterns = st.text(PATTERN_CHARS, min_size=1, max_size=7).map(lambda text: "/" + text)
rules = st.lists(st.tuples(st.booleans(), patterns), min_size=0, max_size=12)
paths = st.text(PATH_CHARS, max_size=9).map(lambda text: "/" + text)


def _body(rule_list: list[tuple[bool, str]]) -> bytes:
    lines = ["User-agent: *"]
    lines += [
        f"{'Allow' if allow else 'Disallow'}: {pattern}" for allow, pattern in rule_list
    ]
    return ("\n".join(lines) + "\n").encode()


def _rfc9309_regex(pattern: str) -> re.Pattern[str]:
    anchored = pattern.endswith("$")
    body = pattern[:-1] if anchored else pattern
    parts = [re.escape(piece) for piece in body.split("*")]
    return re.compile(".*".join(parts) + ("$" if anchored else ""), re.DOTALL)


def _slow_rfc9309(
    rule_list: list[tuple[bool, str]], path: str
) -> tuple[bool, int | None]:
    """RFC 9309 2.2.2 by brute force: (allowed, deciding line or None)."""
    best: tuple[int, int, int] | None = None  # (length, allow, -line)
    for offset, (allow, pattern) in enumerate(rule_list):
        line = offset + 2
        matched = _rfc9309_regex(pattern).match(path) is not None
        length = len(pattern)
        if not matched and allow:
            # The reference's index.html rule: /dir/index.htm* also allows /dir/.
            slash = pattern.rfind("/")
            if pattern.startswith("/index.htm", slash):
                directory = pattern[: slash + 1] + "$"
                matched = _rfc9309_regex(directory).match(path) is not None
                length = len(directory)
        if matched:
            key = (length, int(allow), -line)
            if best is None or key > best:
                best = key
    if best is None:
        return True, None
    return bool(best[1]), -best[2]


def _slow_1994(rule_list: list[tuple[bool, str]], path: str) -> tuple[bool, int | None]:
    """1994: the first rule (file order) whose value is a plain prefix decides."""
    for offset, (allow, pattern) in enumerate(rule_list):
        if path.startswith(pattern):
            return allow, offset + 2
    return True, None


@settings(max_examples=400, deadline=None)
@given(rule_list=rules, path=paths)
def test_rfc9309_matcher_agrees_with_brute_force(rule_list, path):
    robots = RobotsTxt.parse(_body(rule_list))
    url = "https://example.com" + path
    expected_allowed, expected_line = _slow_rfc9309(rule_list, path)
    decision = robots.decide(url, "FooBot")
    assert decision.allowed is expected_allowed
    assert robots.allowed(url, "FooBot") is expected_allowed
    assert (decision.rule.line if decision.rule else None) == expected_line


@settings(max_examples=400, deadline=None)
@given(rule_list=rules, path=paths)
def test_1994_matcher_agrees_with_brute_force(rule_list, path):
    robots = RobotsTxt.parse(_body(rule_list), standard="1994")
    url = "https://example.com" + path
    expected_allowed, expected_line = _slow_1994(rule_list, path)
    decision = robots.decide(url, "FooBot")
    assert decision.allowed is expected_allowed
    assert robots.allowed(url, "FooBot") is expected_allowed
    assert (decision.rule.line if decision.rule else None) == expected_line
