"""The robots.txt part of a URL's usage preferences (:meth:`RobotsTxt.usage`), as
docs/usage-preferences.md says ("Combining", "Hostile files")."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from scrapy_robots_std.robotstxt import groups as _groups
from scrapy_robots_std.robotstxt import patterns as _patterns
from scrapy_robots_std.robotstxt import tokens as _tokens
from scrapy_robots_std.robotstxt.patterns import TRY_WORK, wildcard_work, work_budget
from scrapy_robots_std.robotstxt.reader import RFC9309, Field
from scrapy_robots_std.usage.preferences import (
    REASON_DISALLOWED,
    REASON_NO_GROUP,
    REASON_NO_STATEMENT,
    REASON_RULES,
    REASON_TOO_COMPLEX,
    UsagePreferences,
)

if TYPE_CHECKING:
    from collections.abc import Sequence

    from scrapy_robots_std.robotstxt.parser import Parsed
    from scrapy_robots_std.robotstxt.usage_rules import Line


@dataclass(frozen=True)
class UsageSummary:
    """What a robots.txt holds in usage lines, for stats and logs."""

    content_usage: int = 0
    content_signal: int = 0
    invalid: int = 0
    outside_group: int = 0  # file-wide lines (before any group), counted above too

    @property
    def stated(self) -> bool:
        return bool(self.content_usage or self.content_signal)


def summary(parsed: Parsed) -> UsageSummary:
    rules = parsed.usage
    if rules is None:
        return UsageSummary()
    kinds = [line.field for line in rules.lines]
    usage, signal = kinds.count(Field.CONTENT_USAGE), kinds.count(Field.CONTENT_SIGNAL)
    return UsageSummary(usage, signal, rules.invalid, rules.outside)


def for_url(
    parsed: Parsed, standard: str, url: str, token: str, *, allowed: bool
) -> UsagePreferences:
    """The robots.txt part for ``url`` (``allowed``: its access verdict)."""
    if not allowed:
        return UsagePreferences.unknown(REASON_DISALLOWED)
    rules = parsed.usage
    if rules is None:
        return UsagePreferences.unknown(REASON_NO_STATEMENT)
    lines = rules.read_once()[0]
    chosen = select(parsed, standard, token)
    # File-wide lines speak with every group, and for a token no group names.
    wide = tuple(line for line in lines if line.group < 0)
    if chosen is None and not wide:
        return UsagePreferences.unknown(REASON_NO_GROUP)
    path = _patterns.path_rfc9309(_patterns.split_url(url))
    found = applying((wide, chosen or ()), path)
    if found is None:
        return UsagePreferences.unknown(REASON_TOO_COMPLEX)
    reason = REASON_NO_STATEMENT if chosen is not None else REASON_NO_GROUP
    sources = tuple(line.source for line in found)
    return UsagePreferences.combine(REASON_RULES if sources else reason, sources)


#: Tokens whose selection a file keeps; a crawl asks with one or two.
_SELECTIONS_KEPT = 8


def select(parsed: Parsed, standard: str, token: str) -> tuple[Line, ...] | None:
    """The lines read of the groups that apply to ``token``, in file order; None
    when no group does.  Remembered per token; tokens that choose the same lines
    share one tuple."""
    rules = parsed.usage
    assert rules is not None  # asked only of a file with usage lines
    selections = rules.selections
    if token in selections:
        return selections[token]
    name = _tokens.check_token(token, standard)
    agents = parsed.groups.agent_text.split(b"\n")[:-1]  # every value, in file order
    groups = [
        b"\n".join(agents[first:end])
        for first, end in zip(rules.firsts, rules.ends, strict=True)
    ]
    if standard == RFC9309:
        # Whether some group names the token counts every user-agent line, also
        # those of the groups not kept: one more group, holding no line, has
        # them all.
        groups.append(b"\n".join(agents))
    found = None
    if chosen := _groups.select(groups, name, standard):
        lines = rules.read_once()[0]
        found = tuple(line for line in lines if line.group in chosen)
        found = next(
            (known for known in tuple(selections.values()) if known == found), found
        )
    if len(selections) >= _SELECTIONS_KEPT:
        selections = rules.selections = {}  # readers in other threads keep theirs
    selections[token] = found
    return found


def applying(
    parts: tuple[tuple[Line, ...], ...], path: bytes
) -> tuple[Line, ...] | None:
    """The lines of ``parts`` (file-wide lines, the token's groups' lines) that
    speak for ``path``: in each part, the Content-Usage lines whose path matches
    with the greatest length (no path: length 0); then every Content-Signal line;
    a repeated value once.  None when that takes more work than one check may
    (:func:`patterns.work_budget`, for all parts): an untried line might have
    matched."""
    left = work_budget(len(path))
    found: list[Line] = []
    for part in parts:
        cost = best = 0
        longest: list[Line] = []
        for line in part:
            pattern = line.pattern
            if pattern is None or len(pattern) < best:
                continue
            if pattern:  # a line without a path matches with length 0
                if left < cost:  # another try like the last would overdraw the budget
                    return None
                done = wildcard_work(path, pattern)
                cost = TRY_WORK + (~done if done < 0 else done)
                left -= cost
                if done >= 0:
                    continue
            if len(pattern) > best:
                best, longest = len(pattern), []
            longest.append(line)
        found += longest
    signals = [line for part in parts for line in part if line.pattern is None]
    return distinct(found) + distinct(signals)


def distinct(lines: Sequence[Line]) -> tuple[Line, ...]:
    """``lines`` without repeated values (the first of each, where it is)."""
    kept: dict[int, Line] = {}
    for line in lines:
        kept.setdefault(line.first, line)
    return tuple(kept.values())
