"""Which usage lines of a robots.txt speak for one (URL, token).

Group selection follows access exactly (rfc9309: every group naming the token,
merged, else the ``*`` groups; 1994: the first record naming the robot, else
the first ``*`` record), over the usage partition of the user-agent lines
(see ``usage_rules``).  Content-Usage paths match as rfc9309 Allow/Disallow
patterns do, in both standards: attach-05 builds on RFC 9309.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from scrapy_robots_std.robotstxt.matcher import PrefixIndex, wildcard_match
from scrapy_robots_std.robotstxt.parser import (
    RFC9309,
    agent_name_1994,
    agent_name_rfc9309,
)
from scrapy_robots_std.robotstxt.usage_rules import CONTENT_USAGE, Line, UsageRules

if TYPE_CHECKING:
    from collections.abc import Callable

#: Tokens whose selection a body keeps; a crawl asks with one or two.
_SELECTIONS_KEPT = 8


def select(
    rules: UsageRules,
    all_agents: Callable[[], tuple[str, ...]],
    standard: str,
    token: str,
) -> Compiled | None:
    """The usage lines for ``token`` (validated already), compiled; None when no
    group of the file applies to it at all."""
    selections = rules.selections
    if token in selections:
        known: Compiled | None = selections[token]
        return known
    agents = all_agents()  # decoded only when a token is first selected
    if standard == RFC9309:
        chosen = _select_rfc9309(rules, agents, token.lower())
    else:
        chosen = _select_1994(rules, agents, token.lower())
    found = None if chosen is None else Compiled(rules, chosen)
    if len(selections) >= _SELECTIONS_KEPT:
        selections = rules.selections = {}  # readers in other threads keep theirs
    selections[token] = found
    return found


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


class Compiled:
    """One selection's usage lines, ready for any path.

    Plain path prefixes go in a :class:`PrefixIndex` (one bisect finds the
    longest that starts a path, as for Allow/Disallow); ``*`` and ``$``
    patterns are tried longest first; lines without a path match every path.
    Content-Signal lines have no path: the caller reads them once.
    """

    __slots__ = (
        "everywhere",
        "plain",
        "plain_lines",
        "signal_part",
        "signals",
        "special",
    )

    def __init__(self, rules: UsageRules, groups: tuple[int, ...]) -> None:
        lines = rules.lines()
        by_pattern: dict[bytes, list[Line]] = {}
        self.signals: tuple[Line, ...] = ()
        signals = []
        for group in groups:
            for index in rules.line_range(group):
                line = lines[index]
                if line.kind == CONTENT_USAGE:
                    by_pattern.setdefault(line.pattern, []).append(line)
                else:
                    signals.append(line)
        # A repeated value adds nothing to a most-restrictive combination.
        self.signals = tuple({line.value: line for line in reversed(signals)}.values())[
            ::-1
        ]
        #: filled by usage.py: the Content-Signal sources and table (each line's
        #: source is kept once, on the UsageRules)
        self.signal_part: Any = None
        self.everywhere = tuple(by_pattern.pop(b"", ()))
        plain = {}
        self.plain_lines: list[tuple[Line, ...]] = []
        special = []
        for pattern, found in by_pattern.items():
            if pattern.find(b"*") < 0 and pattern[-1] != 0x24:  # "$"
                plain[pattern] = len(pattern) << _ID_BITS | len(self.plain_lines)
                self.plain_lines.append(tuple(found))
            else:
                pieces = pattern.rstrip(b"$").split(b"*")
                needle = max(pieces, key=len)  # in every path it matches
                special.append((len(pattern), pattern, tuple(found), needle))
        special.sort(key=_first, reverse=True)
        self.special = special
        self.plain = PrefixIndex(plain) if plain else None

    def longest(self, path: bytes) -> list[Line]:
        """Every Content-Usage line whose path matches with the greatest length."""
        best = -1
        found: list[Line] = []
        if self.plain is not None:
            value = self.plain.highest(path)
            if value >= 0:
                best = value >> _ID_BITS
                found = list(self.plain_lines[value & _ID_MASK])
        for size, pattern, lines, needle in self.special:
            if size < best:
                break
            if path.find(needle) >= 0 and matches(pattern, path):
                if size > best:
                    best, found = size, []
                found += lines
        if best < 0:
            found = list(self.everywhere)
        if len(found) > 1:  # the same value twice adds nothing
            found = list({line.value: line for line in reversed(found)}.values())[::-1]
        return found


_ID_BITS = 32
_ID_MASK = (1 << _ID_BITS) - 1


def _first(entry: tuple[int, bytes, tuple[Line, ...], bytes]) -> int:
    return entry[0]
