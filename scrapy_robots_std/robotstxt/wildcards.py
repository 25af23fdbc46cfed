"""Many wildcard patterns, indexed so that one check tries only a few of them.

A file of thousands of wildcard rules must not cost thousands of tries per
check (18,000 rules took 75-131 ms per 2 KB URL).  Every pattern
is filed under one key that any path it matches holds
(:mod:`~scrapy_robots_std.robotstxt.wildcard_keys`).  A check reads which
keys the path holds, and tries only the patterns filed under them.  Within a
key, patterns are kept best candidate first and the first that matches
decides for that key; keys are visited best first, so the search stops as
soon as no untried pattern can beat the match found.

Some files have no rare key to give (ordered one-letter pieces, rules of a
thousand pieces): a check counts its work and, past :func:`work_budget`,
answers :data:`TOO_COMPLEX` rather than run on (docs/standards.md, "Hostile
files").

The keys are numbers in sorted arrays, not a dict: a dict of 18,000 keys
would alone keep more than the file's 1 MiB allowance.
"""

from __future__ import annotations

import sys
from array import array
from bisect import bisect_left
from typing import TYPE_CHECKING

from scrapy_robots_std.robotstxt.wildcard_keys import (
    CODES,
    FILTER_ABOVE,
    GRAM,
    START,
    choose_keys,
    code_filter,
    key_code,
    present_positions,
)

if TYPE_CHECKING:
    from collections.abc import Callable


class _Keys:
    """Patterns of one key kind and width: key codes sorted, and each one's slot.

    ``codes[i]`` is the key of slot ``members[i]``; the slots of one key are
    a run, best first.  (No table of where runs start: most keys of a hostile
    file have one pattern, and 4 bytes each counts against its 1 MiB.)
    """

    __slots__ = ("bits", "codes", "kind", "members", "width")

    def __init__(self, kind: int, width: int, pairs: list[tuple[int, int]]) -> None:
        pairs.sort()  # by code, then slot: each key's slots best first
        self.kind = kind
        self.width = width
        self.codes = array(CODES[width], [code for code, _ in pairs])
        self.bits = (
            code_filter(self.codes)
            if kind == GRAM and len(pairs) > FILTER_ABOVE
            else None
        )
        # Slot numbers in 2 bytes when they fit: 48,000 tiny rules fit.
        slots = [slot for _, slot in pairs]
        self.members = array("H" if max(slots) <= 0xFFFF else "I", slots)

    def present(self, path: bytes, most: int) -> set[int] | tuple[int, ...] | None:
        """Where the keys that ``path`` holds are: the index of each one's
        first place in ``codes``; None when finding them would take more than
        ``most`` searches of the codes."""
        width = self.width
        if self.kind == GRAM:
            return present_positions(path, width, self.codes, self.bits, most)
        if len(path) < width:
            return ()
        code = key_code(path[:width] if self.kind == START else path[-width:])
        codes = self.codes
        at = bisect_left(codes, code)
        return (at,) if at < len(codes) and codes[at] == code else ()

    def size(self) -> int:
        return (
            sys.getsizeof(self)
            + sys.getsizeof(self.codes)
            + sys.getsizeof(self.members)
            + (0 if self.bits is None else sys.getsizeof(self.bits))
        )


class WildcardIndex:
    """Wildcard (and ``$``-anchored) patterns filed by key; see the module doc.

    Slot ``i`` holds the ``i``-th best pattern as a reference (a number the
    caller gives meaning to, 4 bytes): ``pattern_of(ref)`` reads its bytes
    from the file's pattern table and ``value_of(ref)`` works out its
    candidate, so nothing of the file is stored twice.
    """

    __slots__ = ("_pattern_of", "_value_of", "keys", "refs")

    def __init__(
        self,
        entries: list[tuple[int, int, bytes]],
        pattern_of: Callable[[int], bytes],
        value_of: Callable[[int], int],
    ) -> None:
        """``entries``: (candidate, reference, pattern); candidates distinct."""
        entries.sort(reverse=True)
        self.refs = array("I", [entry[1] for entry in entries])
        self._pattern_of = pattern_of
        self._value_of = value_of
        kinds, keys = choose_keys([entry[2] for entry in entries])
        codes = list(map(key_code, keys))
        sorts = list(map(len, keys))  # a gram's sort is its width
        if kinds is not None:
            sorts = [
                kind << 3 | width for kind, width in zip(kinds, sorts, strict=True)
            ]
        # Start and end keys first (a lookup each), then grams widest first.
        self.keys = tuple(
            _Keys(
                sort >> 3,
                sort & 7,
                [
                    (code, slot)
                    for slot, (code, found) in enumerate(zip(codes, sorts, strict=True))
                    if found == sort
                ],
            )
            for sort in sorted(set(sorts), key=lambda sort: (sort >> 3 == GRAM, -sort))
        )

    def size(self) -> int:
        return (
            sys.getsizeof(self)
            + sys.getsizeof(self.refs)
            + sys.getsizeof(self.keys)
            + sum(keys.size() for keys in self.keys)
            + 200  # the two callables
        )

    def best(self, path: bytes, floor: int, work: Callable[[bytes, bytes], int]) -> int:
        """The highest candidate above ``floor`` whose pattern matches, else
        ``floor``; :data:`TOO_COMPLEX` when that takes more than the check's
        budget of work.

        ``work(path, pattern)`` matches one pattern and tells the work it
        took (:func:`~scrapy_robots_std.robotstxt.matcher.wildcard_work`).
        """
        refs = self.refs
        value_of = self._value_of
        # Slots below ``limit`` beat ``floor``: the only ones worth a try.
        limit = bisect_left(refs, -floor, key=lambda ref: -value_of(ref))
        if limit == 0:
            return floor
        budget = work_budget(len(path))
        heads: list[tuple[int, int, _Keys]] = []
        for keys in self.keys:
            members = keys.members
            present = keys.present(path, budget // KEY_WORK)
            if present is None:
                return TOO_COMPLEX
            budget -= KEY_WORK * len(present)
            if budget < 0:
                return TOO_COMPLEX
            heads += [(members[at], at, keys) for at in present if members[at] < limit]
        heads.sort(key=_first)
        found = limit
        pattern_of = self._pattern_of
        for head, at, keys in heads:
            if head >= found:
                break
            # The key's run of slots, best first, from ``at`` on.
            codes, members = keys.codes, keys.members
            code, end = codes[at], len(codes)
            slot = head
            while slot < found:
                placed = work(path, pattern_of(refs[slot]))
                budget -= TRY_WORK + (~placed if placed < 0 else placed)
                if placed < 0:
                    found = slot
                    break
                if budget < 0:
                    # Untried patterns might beat what was found: no answer.
                    return TOO_COMPLEX
                at += 1
                if at == end or codes[at] != code:
                    break
                slot = members[at]
        return value_of(refs[found]) if found < limit else floor


#: What :meth:`WildcardIndex.best` returns when the check would take more
#: work than :func:`work_budget` allows (never a candidate: those are >= 0,
#: and -1 means no match).
TOO_COMPLEX = -2
#: Work is counted in units of about 0.15 us: a piece placed, or
#: ``matcher.SCANNED_BYTES_PER_WORK`` bytes of the path searched (both told
#: by ``matcher.wildcard_work``), and this many for each try beside them (the
#: calls, the pattern read).
TRY_WORK = 12
#: The work of each key the path holds (its place found in the sorted keys,
#: its run of patterns queued), and of each piece a filter of keys lets
#: through (a search of the sorted keys).
KEY_WORK = 8
#: The work one check may take: this much, and a unit per byte of the path
#: (a 2 KB path: 4,000 units, well under a millisecond; 100 KB: about 15 ms).
#: Real files stay far below: of 4,231 sites' files, six have a group of more
#: than 256 wildcard rules (575 at most), and their most demanding check takes
#: a quarter of its budget (521 units).
WORK_PER_CHECK = 2_000


def work_budget(path_length: int) -> int:
    """The work a check of a path of ``path_length`` bytes may take."""
    return WORK_PER_CHECK + path_length


def _first(item: tuple[int, int, _Keys]) -> int:
    return item[0]
