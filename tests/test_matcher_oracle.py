"""The fast matcher against a slow, obviously-correct one (hypothesis).

The matcher answers with a binary search over sorted prefixes, their parent
links, and the wildcard patterns best first.  Here every rule is tried one by
one with a regular expression instead (``tests/helpers/oracle.py``, fine for
these tiny inputs), and the longest match / allow-wins-ties /
first-line-in-1994 rules are applied by hand.  The two must agree on every
generated body and path.
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from scrapy_robots_std import RobotsTxt
from tests.helpers.oracle import Rule, slow_1994, slow_rfc9309

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


def _rules(rule_list: list[tuple[bool, str]]) -> list[Rule]:
    """The rules with their lines (the first rule is on line 2)."""
    return [
        (allow, pattern, line) for line, (allow, pattern) in enumerate(rule_list, 2)
    ]


@settings(max_examples=400, deadline=None)
@given(rule_list=rules, path=paths)
def test_rfc9309_matcher_agrees_with_brute_force(rule_list, path):
    robots = RobotsTxt.parse(_body(rule_list))
    url = "https://example.com" + path
    expected_allowed, expected_line = slow_rfc9309(_rules(rule_list), path)
    decision = robots.decide(url, "FooBot")
    assert decision.allowed is expected_allowed
    assert robots.allowed(url, "FooBot") is expected_allowed
    assert (decision.rule.line if decision.rule else None) == expected_line


@settings(max_examples=400, deadline=None)
@given(rule_list=rules, path=paths)
def test_1994_matcher_agrees_with_brute_force(rule_list, path):
    robots = RobotsTxt.parse(_body(rule_list), standard="1994")
    url = "https://example.com" + path
    expected_allowed, expected_line = slow_1994(_rules(rule_list), path)
    decision = robots.decide(url, "FooBot")
    assert decision.allowed is expected_allowed
    assert robots.allowed(url, "FooBot") is expected_allowed
    assert (decision.rule.line if decision.rule else None) == expected_line
