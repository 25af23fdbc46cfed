"""Slow, obviously-correct answers to check the matcher against.

Every rule is tried one by one with a regular expression, and the standards'
choice (rfc9309: the longest match, allow winning ties, then the earliest
line; 1994: the first line that matches) is applied by hand.  Fine for small
inputs; for the hostile shapes (``tests/helpers/bodies.py``) a pattern with
more literal bytes than the path is refused before its regex is built (it
could not match, and a regex of 8,000 ``.*`` would backtrack for ever).

:func:`rules_for` reads the rules that apply to a token from a body, as RFC 9309
groups lines, without the package's parser: enough for the bodies the tests
build (no percent-escapes, no comments).
"""

from __future__ import annotations

import re

__all__ = ["Rule", "matches", "rules_for", "slow_1994", "slow_rfc9309"]

#: ``(allow, pattern, line)``: one rule line.
Rule = tuple[bool, str, int]

_AGENT_NAME = re.compile(r"[A-Za-z_-]*")


def _rfc9309_regex(pattern: str) -> re.Pattern[str]:
    anchored = pattern.endswith("$")
    body = pattern[:-1] if anchored else pattern
    parts = [re.escape(piece) for piece in body.split("*")]
    return re.compile(".*".join(parts) + ("$" if anchored else ""), re.DOTALL)


def matches(pattern: str, path: str) -> bool:
    """Whether the rfc9309 ``pattern`` matches ``path`` (a regex of ``.*``)."""
    literal = len(pattern) - pattern.count("*") - pattern.endswith("$")
    if literal > len(path):
        return False
    return _rfc9309_regex(pattern).match(path) is not None


def slow_rfc9309(rules: list[Rule], path: str) -> tuple[bool, int | None]:
    """RFC 9309 2.2.2 by brute force: (allowed, deciding line or None)."""
    best: tuple[int, int, int] | None = None  # (length, allow, -line)
    for allow, pattern, line in rules:
        matched = matches(pattern, path)
        length = len(pattern)
        if not matched and allow:
            # The reference's index.html rule: /dir/index.htm* also allows /dir/.
            slash = pattern.rfind("/")
            if pattern.startswith("/index.htm", slash):
                directory = pattern[: slash + 1] + "$"
                matched = matches(directory, path)
                length = len(directory)
        if matched:
            key = (length, int(allow), -line)
            if best is None or key > best:
                best = key
    if best is None:
        return True, None
    return bool(best[1]), -best[2]


def slow_1994(rules: list[Rule], path: str) -> tuple[bool, int | None]:
    """1994: the first rule (file order) whose value is a plain prefix decides."""
    for allow, pattern, line in sorted(rules, key=lambda rule: rule[2]):
        if path.startswith(pattern):
            return allow, line
    return True, None


def _name(agent: str) -> str:
    match = _AGENT_NAME.match(agent)
    assert match is not None  # the pattern matches the empty string
    return match.group().lower()


def rules_for(body: bytes, token: str) -> list[Rule]:
    """The rules of every group that names ``token`` (the leading
    ``[A-Za-z_-]`` of a user-agent value, any case), else of every ``*`` group,
    empty patterns left out."""
    groups: list[tuple[list[str], list[Rule]]] = []
    open_agents = False
    for number, line in enumerate(body.decode().splitlines(), start=1):
        key, colon, value = line.partition(":")
        if not colon:
            continue
        key, value = key.strip().lower(), value.strip()
        if key == "user-agent":
            if not open_agents:
                groups.append(([], []))
                open_agents = True
            groups[-1][0].append(value)
        elif key in ("allow", "disallow") and groups:
            open_agents = False
            if value:
                groups[-1][1].append((key == "allow", value, number))
    name = token.lower()
    named = [
        rules
        for agents, rules in groups
        if any(_name(agent) == name for agent in agents)
    ]
    if not named:
        named = [
            rules
            for agents, rules in groups
            if any(agent == "*" or agent.startswith("* ") for agent in agents)
        ]
    return [rule for rules in named for rule in rules]
