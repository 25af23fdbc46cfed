"""Which usage lines of a robots.txt speak for one (URL, token).

The groups are chosen as access chooses them (:func:`groups.select`, RFC 9309
2.2.1), over the usage partition of the user-agent lines (``usage_rules``).
``Content-Usage`` paths match as RFC 9309 2.2.2 Allow/Disallow patterns do, in
both standards (attach-05 section 3 builds on RFC 9309): the longest match, with
the access rules' pattern match and its budget of work per check; past it, the
query has no answer (docs/standards.md, "Hostile files").
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from scrapy_robots_std.robotstxt import groups as _groups
from scrapy_robots_std.robotstxt.patterns import TRY_WORK, wildcard_work, work_budget
from scrapy_robots_std.robotstxt.reader import RFC9309

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    from scrapy_robots_std.robotstxt.usage_rules import Line, UsageRules

#: Tokens whose selection a file keeps; a crawl asks with one or two.
_SELECTIONS_KEPT = 8


def select(
    rules: UsageRules,
    lines: tuple[Line, ...],
    all_agents: Callable[[], tuple[str, ...]],
    standard: str,
    token: str,
) -> tuple[Line, ...] | None:
    """The lines of the groups that apply to ``token``, in file order; None when
    no group of the file applies to it at all.  ``lines``: every line of the
    file, read.  Remembered per token, and tokens that choose the same lines
    share one tuple."""
    selections = rules.selections
    if token in selections:
        return selections[token]
    name = _groups.check_token(token, standard)
    found = _chosen(rules, lines, all_agents(), standard, name)
    if found is not None:
        found = next(
            (known for known in tuple(selections.values()) if known == found), found
        )
    if len(selections) >= _SELECTIONS_KEPT:
        selections = rules.selections = {}  # readers in other threads keep theirs
    selections[token] = found
    return found


def _chosen(
    rules: UsageRules,
    lines: tuple[Line, ...],
    agents: tuple[str, ...],
    standard: str,
    name: str,
) -> tuple[Line, ...] | None:
    bounds = rules.groups
    starts = range(0, len(bounds), 3)
    kept: list[Sequence[str]] = [agents[bounds[i] : bounds[i + 1]] for i in starts]
    if standard == RFC9309:
        # Whether some group names the token counts every user-agent line, also
        # those of the groups without usage lines, which are not kept: one more
        # group, holding no line, has them.
        rest: list[str] = []
        start = 0
        for i in starts:
            rest += agents[start : bounds[i]]
            start = bounds[i + 1]
        kept.append((*rest, *agents[start:]))
    chosen = _groups.select(kept, name, standard)
    if not chosen:
        return None
    # A group's lines start where the previous kept group's end.
    return tuple(
        line
        for group in chosen
        if group < len(starts)
        for line in lines[
            bounds[3 * group - 1] if group else rules.outside : bounds[3 * group + 2]
        ]
    )


def applying(
    parts: tuple[tuple[Line, ...], ...], path: bytes
) -> tuple[Line, ...] | None:
    """The lines of ``parts`` (the file-wide lines, the token's groups' lines)
    that speak for ``path``: each part's longest-matching Content-Usage lines
    (:func:`longest`), then every Content-Signal line; a repeated value once.
    None when finding them takes more work than one check may
    (:func:`patterns.work_budget`, shared by the parts)."""
    left = work_budget(len(path))
    found: list[Line] = []
    for part in parts:
        longest_lines, left = longest(part, path, left)
        if longest_lines is None:
            return None
        found += longest_lines
    signals = [line for part in parts for line in part if line.pattern is None]
    return distinct(found) + distinct(signals)


def longest(
    lines: tuple[Line, ...], path: bytes, left: int
) -> tuple[list[Line] | None, int]:
    """The Content-Usage lines of ``lines`` whose path matches ``path`` with the
    greatest length or, when none does, those without a path, and what is left of
    the budget ``left``.  None when another try would overdraw it: an untried line
    might have matched."""
    cost = best = 0
    found: list[Line] = []
    everywhere: list[Line] = []
    for line in lines:
        pattern = line.pattern
        if pattern is None or len(pattern) < best:
            continue
        if not pattern:
            everywhere.append(line)
            continue
        if left < cost:
            # Another try like the last would overdraw the budget.
            return None, left
        done = wildcard_work(path, pattern)
        cost = TRY_WORK + (~done if done < 0 else done)
        left -= cost
        if done < 0:
            if len(pattern) > best:
                best, found = len(pattern), []
            found.append(line)
    return (found if best else everywhere), left


def distinct(lines: Sequence[Line]) -> tuple[Line, ...]:
    """``lines`` without repeated values, the first of each where it is: the same
    value twice adds nothing to a most-restrictive combination."""
    kept: dict[int, Line] = {}
    for line in lines:
        kept.setdefault(line.first, line)
    return tuple(kept.values())
