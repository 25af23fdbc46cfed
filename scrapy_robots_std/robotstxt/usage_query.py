"""Which usage lines of a robots.txt speak for one (URL, token).

Group selection follows access exactly (rfc9309: every group naming the token,
merged, else the ``*`` groups; 1994: the first record naming the robot, else
the first ``*`` record), over the usage partition of the user-agent lines
(see ``usage_rules``).  Content-Usage paths match as rfc9309 Allow/Disallow
patterns do, in both standards: attach-05 builds on RFC 9309.

Wildcard paths are matched by the access rules' matcher
(:func:`~scrapy_robots_std.robotstxt.matcher.wildcard_work`, which never
backtracks), within the same budget of work per check
(:func:`~scrapy_robots_std.robotstxt.wildcards.work_budget`): past it, the
query has no answer (docs/standards.md, "Hostile files").
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from scrapy_robots_std.robotstxt.matcher import (
    SCANNED_BYTES_PER_WORK,
    PrefixIndex,
    wildcard_work,
)
from scrapy_robots_std.robotstxt.parser import (
    RFC9309,
    agent_name_1994,
    agent_name_rfc9309,
)
from scrapy_robots_std.robotstxt.usage_rules import (
    CONTENT_USAGE,
    Line,
    UsageRules,
    deep_size,
)
from scrapy_robots_std.robotstxt.wildcards import TRY_WORK, work_budget

if TYPE_CHECKING:
    from collections.abc import Callable, Collection

#: Tokens whose selection a body keeps; a crawl asks with one or two.
_SELECTIONS_KEPT = 8


def select(
    rules: UsageRules,
    lines: tuple[Line, ...],
    all_agents: Callable[[], tuple[str, ...]],
    standard: str,
    token: str,
    signal_part: Callable[[tuple[Line, ...]], Any],
    shared: Collection[int] = (),
) -> Compiled | None:
    """The usage lines for ``token`` (validated already), compiled; None when no
    group of the file applies to it at all.  ``lines``: every line of the file,
    read (:meth:`UsageRules.lines`); ``signal_part``: what a query needs of the
    chosen Content-Signal lines, made once; ``shared``: the ids of the
    constants it refers to (see :class:`Compiled`)."""
    selections = rules.selections
    if token in selections:
        known: Compiled | None = selections[token]
        return known
    agents = all_agents()  # decoded only when a token is first selected
    if standard == RFC9309:
        chosen = _select_rfc9309(rules, agents, token.lower())
    else:
        chosen = _select_1994(rules, agents, token.lower())
    found = None
    if chosen is not None:
        # Tokens that choose the same groups share their compiled lines.
        found = next(
            (
                known
                for known in tuple(selections.values())
                if known is not None and known.groups == chosen
            ),
            None,
        ) or Compiled(rules, lines, chosen, signal_part, shared)
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


class Compiled:
    """One selection's usage lines, ready for any path.

    Plain path prefixes go in a :class:`PrefixIndex` (one bisect finds the
    longest that starts a path, as for Allow/Disallow); ``*`` and ``$``
    patterns are tried longest first, within a budget of work; lines without a
    path match every path.  Content-Signal lines have no path: what a query
    needs of them (``signal_part``) is made once, with the selection.
    ``size``: the bytes it keeps beyond the lines themselves, measured once.
    """

    __slots__ = (
        "everywhere",
        "groups",
        "plain",
        "plain_lines",
        "signal_part",
        "signals",
        "size",
        "special",
    )

    def __init__(
        self,
        rules: UsageRules,
        lines: tuple[Line, ...],
        groups: tuple[int, ...],
        signal_part: Callable[[tuple[Line, ...]], Any],
        shared: Collection[int] = (),
    ) -> None:
        self.groups = groups
        by_pattern: dict[bytes, list[Line]] = {}
        signals = []
        for group in groups:
            for index in rules.line_range(group):
                line = lines[index]
                if line.kind == CONTENT_USAGE:
                    by_pattern.setdefault(line.pattern, []).append(line)
                else:
                    signals.append(line)
        self.signals = _distinct(signals)
        self.everywhere = _distinct(by_pattern.pop(b"", []))
        plain = {}
        self.plain_lines: list[tuple[Line, ...]] = []
        special = []
        for pattern, found in by_pattern.items():
            if pattern.find(b"*") < 0 and pattern[-1] != 0x24:  # "$"
                plain[pattern] = len(pattern) << _ID_BITS | len(self.plain_lines)
                self.plain_lines.append(tuple(found))
            else:
                special.append((len(pattern), pattern, tuple(found), found[0].needle))
        special.sort(key=_first, reverse=True)
        self.special = special
        self.plain = PrefixIndex(plain) if plain else None
        self.signal_part: Any = signal_part(self.signals)
        # The lines (patterns, needles, sources) are counted with the file's;
        # 32: the int below.
        owned = {id(item) for line in lines for item in (line, *line)}
        self.size = 32 + deep_size([self], owned.union(shared))

    def longest(self, path: bytes) -> tuple[Line, ...] | None:
        """Every Content-Usage line whose path matches with the greatest length;
        None when finding them takes more work than one check may
        (:func:`~scrapy_robots_std.robotstxt.wildcards.work_budget`)."""
        best = -1
        found: list[Line] = []
        if self.plain is not None:
            value = self.plain.highest(path)
            if value >= 0:
                best = value >> _ID_BITS
                found = list(self.plain_lines[value & _ID_MASK])
        special = self.special
        if special and special[0][0] >= best:
            budget = work_budget(len(path))
            # A needle's search: one unit and a unit per 128 bytes of the path.
            search = 1 + len(path) // SCANNED_BYTES_PER_WORK
            for size, pattern, lines, needle in special:
                if size < best:
                    break
                if budget < 0:
                    return None  # an untried line might match, at this length or more
                budget -= search
                if path.find(needle) < 0:
                    continue
                done = wildcard_work(path, pattern)
                if done < 0:
                    budget -= TRY_WORK + ~done
                    if size > best:
                        best, found = size, []
                    found += lines
                else:
                    budget -= TRY_WORK + done
        if best < 0:
            return self.everywhere
        if len(found) > 1:  # a plain prefix and wildcard patterns of its length
            found.sort(key=_number)
            return _distinct(found)
        return tuple(found)


def _distinct(lines: list[Line]) -> tuple[Line, ...]:
    """``lines`` (in file order) without repeated values: the first of each
    stays, where it is.  The same value twice adds nothing to a
    most-restrictive combination."""
    kept: dict[int, Line] = {}
    for line in lines:
        kept.setdefault(line.first, line)
    return tuple(kept.values())


def _number(line: Line) -> int:
    return line.number


_ID_BITS = 32
_ID_MASK = (1 << _ID_BITS) - 1


def _first(entry: tuple[int, bytes, tuple[Line, ...], bytes]) -> int:
    return entry[0]
