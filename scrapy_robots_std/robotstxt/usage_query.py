"""Which usage lines of a robots.txt speak for one (URL, token).

Group selection follows access exactly (rfc9309: every group naming the token,
merged, else the ``*`` groups; 1994: the first record naming the robot, else
the first ``*`` record), over the usage partition of the user-agent lines
(see ``usage_rules``).  Content-Usage paths match as rfc9309 Allow/Disallow
patterns do, in both standards: attach-05 builds on RFC 9309.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from scrapy_robots_std.robotstxt.matcher import wildcard_match
from scrapy_robots_std.robotstxt.parser import (
    RFC9309,
    agent_name_1994,
    agent_name_rfc9309,
)
from scrapy_robots_std.robotstxt.usage_rules import CONTENT_USAGE, Line, UsageRules

if TYPE_CHECKING:
    from collections.abc import Callable

#: Tokens whose selection a body keeps; a crawl asks with one or two.
_SELECTIONS_KEPT = 32


def select(
    rules: UsageRules, agents: tuple[str, ...], standard: str, token: str
) -> tuple[int, ...] | None:
    """The usage groups for ``token`` (validated already); None when no group
    of the file applies to it at all."""
    found = rules.selections.get(token)
    if found is None:
        if standard == RFC9309:
            chosen = _select_rfc9309(rules, agents, token.lower())
        else:
            chosen = _select_1994(rules, agents, token.lower())
        found = (-1,) if chosen is None else chosen
        if len(rules.selections) >= _SELECTIONS_KEPT:
            rules.selections = {}  # a new dict: readers in other threads keep theirs
        rules.selections[token] = found
    return None if found == (-1,) else found


def _names(
    rules: UsageRules, agents: tuple[str, ...], name_of: Callable[[str], str | None]
) -> list[set[str | None]]:
    names = []
    for group in range(rules.group_count):
        first, end = rules.agent_range(group)
        names.append({name_of(agent) for agent in agents[first:end]})
    return names


def _select_rfc9309(
    rules: UsageRules, agents: tuple[str, ...], name: str
) -> tuple[int, ...] | None:
    # Every user-agent line of the file counts for "some group names the
    # token", also those of groups holding no usage line (not kept here).
    everyone = {agent_name_rfc9309(agent) for agent in agents}
    wanted: str | None = name if name in everyone else None
    if wanted is None and None not in everyone:
        return None
    names = _names(rules, agents, agent_name_rfc9309)
    return tuple(group for group, found in enumerate(names) if wanted in found)


def _select_1994(
    rules: UsageRules, agents: tuple[str, ...], robot: str
) -> tuple[int, ...] | None:
    names = _names(rules, agents, agent_name_1994)
    for group, found in enumerate(names):
        if any(name and name in robot for name in found):
            return (group,)
    star = next((group for group, found in enumerate(names) if None in found), None)
    return None if star is None else (star,)


def matches(pattern: bytes, path: bytes) -> bool:
    """An rfc9309 pattern (normalised) against a normalised path."""
    if not pattern:
        return True  # a rule without a path covers the whole group
    star = pattern.find(b"*") >= 0
    if not star:
        if pattern[-1] == 0x24:  # "$"
            return path == pattern[:-1]
        return path.startswith(pattern)
    # The literal start first: it rejects most paths with one comparison.
    return path.startswith(pattern[: pattern.find(b"*")]) and wildcard_match(
        path, pattern
    )


def applicable(
    rules: UsageRules, groups: tuple[int, ...], path: bytes
) -> tuple[list[Line], list[Line]]:
    """The Content-Usage lines that decide for ``path`` (every match of the
    greatest length, attach-05 3.1) and every Content-Signal line of the groups."""
    lines = rules.lines()
    longest = -1
    usage: list[Line] = []
    signals: list[Line] = []
    for group in groups:
        for index in rules.line_range(group):
            line = lines[index]
            if line.kind != CONTENT_USAGE:
                signals.append(line)
                continue
            size = len(line.pattern)
            if size < longest or not matches(line.pattern, path):
                continue
            if size > longest:
                longest = size
                usage = []
            usage.append(line)
    return usage, signals
