"""A token's rules (rfc9309) compiled from its groups' values alone: the usual case.

A crawl parses a file and then checks its URLs with one token.  The general
path (``RobotsTxt._compile_rfc9309``) first builds the whole file's
:class:`~scrapy_robots_std.robotstxt.matcher.PatternTable` (every rule of every
group normalized, deduplicated and sorted), which cost more than compiling the
token's own few dozen rules.  For groups of at most :data:`SMALL_GROUP` rules
(and :data:`SMALL_GROUP_BYTES` of patterns) and at most ``INDEX_ABOVE`` special
patterns, this module slices the groups' values out of the parsed bytes and
compiles only them; the table is built later if something needs it (the rule
text of a ``Decision``).

Larger groups keep the general path: their ``RuleSet`` shares the table's
packed patterns and its ``WildcardIndex`` refers to rules by index, which is
what bounds the memory a hostile file keeps.
"""

from __future__ import annotations

from itertools import compress
from typing import TYPE_CHECKING

from scrapy_robots_std.robotstxt import matcher as _matcher
from scrapy_robots_std.robotstxt.packed import PACK_ABOVE
from scrapy_robots_std.robotstxt.parser import LINE_SHIFT
from scrapy_robots_std.robotstxt.pattern_table import special_patterns

if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence

    from scrapy_robots_std.robotstxt.parser import Parsed

#: Up to this many rules the token's patterns are kept in tuples of their
#: own (as ``pack`` keeps them): past it, the general path and its tables.
SMALL_GROUP = PACK_ABOVE
#: Up to this many bytes of patterns, too.  This path keeps its own copies
#: beside the parsed values, which the general path's table replaces: 31
#: patterns of 16 KB made a 500 KiB file keep 1 MB here, twice its 500 KB.
SMALL_GROUP_BYTES = 64 * 1024

_ALLOW_SHIFT = _matcher.ALLOW_SHIFT
_PRIORITY_SHIFT = _matcher.PRIORITY_SHIFT
_INDEX_BITS = _matcher.INDEX_BITS
_LINE_MAX = _matcher.LINE_MAX
_LINE_SHIFT = LINE_SHIFT


def small_ruleset(
    parsed: Parsed, numbers: tuple[int, ...], blob: bytes
) -> _matcher.RuleSet | None:
    """The rules of groups ``numbers`` compiled from ``blob``, the file's rule
    values as parsed; None when they are too many, or too long, for this path."""
    bounds = parsed.group_bounds
    if len(numbers) == 1:  # most files: one run of rules, sliced
        start, end = bounds[3 * numbers[0] + 1], bounds[3 * numbers[0] + 2]
        if end - start > SMALL_GROUP:
            return None
        # Split only as far as the last rule wanted: the rest stays one piece.
        values = blob.split(b"\n", end)[start:end]
        if sum(map(len, values)) > SMALL_GROUP_BYTES:
            return None
        return _ruleset(values, parsed.rules[start:end], range(start, end))
    spans = [
        range(bounds[3 * number + 1], bounds[3 * number + 2]) for number in numbers
    ]
    if sum(map(len, spans)) > SMALL_GROUP:
        return None
    indexes = [index for span in spans for index in span]
    every = blob.split(b"\n", max(span.stop for span in spans))
    values = list(map(every.__getitem__, indexes))
    if sum(map(len, values)) > SMALL_GROUP_BYTES:
        return None
    codes = list(map(parsed.rules.__getitem__, indexes))
    return _ruleset(values, codes, indexes)


def _ruleset(
    values: list[bytes], codes: Sequence[int], indexes: Sequence[int]
) -> _matcher.RuleSet | None:
    joined = b"\n".join(values)
    if not joined.isascii() or joined.find(b"%") >= 0:
        values = list(map(_matcher.normalize_rfc9309, values))
        joined = b"\n".join(values)
    values, _, candidates = rule_candidates(values, codes, indexes)
    best = _matcher.best_of(values, candidates)
    special = _pop_special(best, joined)
    if joined.find(b"/index.htm") >= 0:
        add_index_directories(values, candidates, special)
    if _matcher.needs_index(special):
        return None  # a WildcardIndex: the general path's, on the file's table
    return _matcher.RuleSet(best, special)


def rule_candidates(
    patterns: list[bytes], codes: Sequence[int], indexes: Sequence[int]
) -> tuple[list[bytes], Sequence[int], list[int]]:
    """The rules' patterns, indexes and candidates, empty patterns left out
    (one matches with priority 0: it never decides).  ``codes``: the rules'
    packed codes (``Parsed.rules``); both compile paths share this."""
    if b"" in patterns:
        keep = list(map(bool, patterns))
        indexes = list(compress(indexes, keep))
        codes = list(compress(codes, keep))
        patterns = list(compress(patterns, keep))
    # _matcher.candidate() inlined: this runs for every rule of the group.
    candidates = [
        len(pattern) << _PRIORITY_SHIFT
        | (code & 1) << _ALLOW_SHIFT
        | (_LINE_MAX - (code >> _LINE_SHIFT)) << _INDEX_BITS
        | index
        for pattern, code, index in zip(patterns, codes, indexes, strict=True)
    ]
    return patterns, indexes, candidates


def _pop_special(best: dict[bytes, int], joined: bytes) -> dict[bytes, int]:
    """The patterns with a "*" or a final "$", moved out of ``best``."""
    marks = joined.count(b"*") + joined.count(b"$")
    if not marks:
        return {}
    found: Iterable[bytes]
    if marks > len(best) // 4:  # many: each distinct pattern looked at once
        flags = [pattern.find(b"*") >= 0 or pattern.endswith(b"$") for pattern in best]
        found = compress(list(best), flags)
    else:  # few: found in the joined values, bytes.find skipping the plain ones
        found = special_patterns(joined)
    return {pattern: best.pop(pattern) for pattern in found}


def add_index_directories(
    values: list[bytes], candidates: list[int], special: dict[bytes, int]
) -> None:
    """``/dir/index.html`` allowed also allows ``/dir/`` (the reference's
    HandleAllow): as the pattern ``/dir/$``, which matches with its length."""
    for pattern, value in zip(values, candidates, strict=True):
        if pattern.find(b"/index.htm") < 0:
            continue
        directory = _matcher.index_html_directory(pattern)
        if directory is not None and _matcher.candidate_allows(value):
            index = _matcher.candidate_index(value)
            line = _LINE_MAX - (value >> _INDEX_BITS & _LINE_MAX)
            found = _matcher.candidate(len(directory), 1, line, index)
            # As best_of() over both: the highest candidate per pattern.
            special[directory] = max(special.get(directory, -1), found)
