"""Many wildcard patterns, indexed so that one check tries only a few of them.

A file of thousands of wildcard rules must not cost thousands of tries per
check (issue 16: 18,000 rules took 75-131 ms per 2 KB URL).  Every pattern
that matches a path contains each of its literal pieces, so each pattern is
filed under one *key*: up to four bytes of its longest piece.  A check reads
the keys that occur in the path (the path's 4-, 2- and 1-byte grams, built
with array and set operations that run in C), and tries only the patterns
filed under them.  Within a key, patterns are kept best candidate first and
the first that matches decides for that key; keys are visited best first, so
the search stops as soon as no untried pattern can beat the match found.

The keys are numbers in sorted arrays, not a dict: a dict of 18,000 keys
would alone keep more than the file's 1 MiB allowance.
"""

from __future__ import annotations

import sys
from array import array
from bisect import bisect_left
from collections.abc import Callable, Sequence
from itertools import accumulate

# Key widths, widest first: a piece of 4 bytes or more gives a 4-byte key,
# 2 or 3 bytes a 2-byte key, 1 byte a 1-byte key; a pattern of ``*`` alone
# has an empty key, always present.
_WIDTHS = (4, 2, 1, 0)
_CODES = {4: "I", 2: "H", 1: "B", 0: "B"}
assert array("I").itemsize == 4 and array("H").itemsize == 2  # noqa: S101


def key_of(pattern: bytes) -> bytes:
    """Bytes that occur in every path the pattern matches (its key)."""
    body = pattern[:-1] if pattern.endswith(b"$") else pattern
    piece = max(body.split(b"*"), key=len)
    if len(piece) >= 4:
        return piece[-4:]
    if len(piece) >= 2:
        return piece[:2]
    return piece


def _code(key: bytes) -> int:
    return int.from_bytes(key, sys.byteorder) if key else 0


def path_grams(path: bytes, width: int) -> set[int]:
    """The codes of every ``width``-byte piece of ``path`` (width 4, 2 or 1)."""
    if width == 1:
        return set(path)
    found: set[int] = set()
    code = _CODES[width]
    for start in range(width):
        usable = (len(path) - start) // width * width
        if usable > 0:
            grams = array(code)
            grams.frombytes(path[start : start + usable])
            found.update(grams)
    return found


class _Keys:
    """Patterns of one key width: sorted key codes, and each key's slots."""

    __slots__ = ("codes", "members", "starts", "width")

    def __init__(self, width: int, pairs: list[tuple[int, int]]) -> None:
        pairs.sort()  # by code, then slot: each key's slots best first
        codes: list[int] = []
        counts: list[int] = []
        for code, _ in pairs:
            if codes and codes[-1] == code:
                counts[-1] += 1
            else:
                codes.append(code)
                counts.append(1)
        self.width = width
        self.codes = array(_CODES[width], codes)
        self.starts = array("I", accumulate(counts, initial=0))
        self.members = array("I", [slot for _, slot in pairs])

    def size(self) -> int:
        return (
            sys.getsizeof(self)
            + sys.getsizeof(self.codes)
            + sys.getsizeof(self.starts)
            + sys.getsizeof(self.members)
        )


class WildcardIndex:
    """Wildcard (and ``$``-anchored) patterns filed by key; see the module doc.

    Slot ``i`` is the ``i``-th best pattern: ``values[i]`` is its candidate
    (descending), ``pattern(i)`` its bytes (read from the file's pattern
    table through ``numbers``, so no pattern is stored twice).
    """

    __slots__ = ("_pattern_of", "keys", "numbers", "values")

    def __init__(
        self,
        entries: list[tuple[int, int, bytes]],
        pattern_of: Callable[[int], bytes],
    ) -> None:
        """``entries``: (candidate, pattern number, pattern); candidates distinct."""
        entries.sort(reverse=True)
        self.values = array("q", [entry[0] for entry in entries])
        self.numbers = array("I", [entry[1] for entry in entries])
        self._pattern_of = pattern_of
        by_width: dict[int, list[tuple[int, int]]] = {}
        for slot, (_, _, pattern) in enumerate(entries):
            key = key_of(pattern)
            by_width.setdefault(len(key), []).append((_code(key), slot))
        self.keys = tuple(
            _Keys(width, by_width[width]) for width in _WIDTHS if width in by_width
        )

    def size(self) -> int:
        return (
            sys.getsizeof(self)
            + sys.getsizeof(self.values)
            + sys.getsizeof(self.numbers)
            + sys.getsizeof(self.keys)
            + sum(keys.size() for keys in self.keys)
        )

    def best(
        self, path: bytes, floor: int, match: Callable[[bytes, bytes], bool]
    ) -> int:
        """The highest candidate above ``floor`` whose pattern matches, else ``floor``."""
        values = self.values
        # Slots below ``limit`` beat ``floor``: the only ones worth a try.
        limit = bisect_left(values, -floor, key=_negative)
        if limit == 0:
            return floor
        heads: list[tuple[int, Sequence[int]]] = []
        for keys in self.keys:
            if keys.width == 0:
                present: Sequence[int] = keys.codes
            else:
                present = sorted(path_grams(path, keys.width).intersection(keys.codes))
            codes, starts, members = keys.codes, keys.starts, keys.members
            for code in present:
                at = bisect_left(codes, code)
                start = starts[at]
                if members[start] < limit:
                    heads.append((members[start], members[start : starts[at + 1]]))
        heads.sort(key=_first)
        found = limit
        numbers = self.numbers
        pattern_of = self._pattern_of
        for head, slots in heads:
            if head >= found:
                break
            for slot in slots:
                if slot >= found:
                    break
                if match(path, pattern_of(numbers[slot])):
                    found = slot
                    break
        return values[found] if found < limit else floor


def _negative(value: int) -> int:
    return -value


def _first(item: tuple[int, Sequence[int]]) -> int:
    return item[0]
