"""How a parsed file is stored: few objects, packed ints, named accessors.

A crawl keeps one parsed file per origin, so a file is a handful of flat
tables rather than an object per rule.  Every packed layout is written and
read here only:

* a rule's **code**: ``line << LINE_SHIFT | spelling << 1 | allow`` while a
  file is built; stored with the fewest bits the file's spellings need
  (:class:`Rules`), in 16-bit ints when they fit;
* a rule's **candidate**, the int that orders rules the way a standard
  decides: ``priority | allow | (LINE_MAX - line) | entry``;
* a group's **bounds**, :data:`GROUP_STRIDE` numbers per group.

A token's rules in match order are compiled from these by ``matcher.py``.
"""

from __future__ import annotations

import sys
from array import array
from itertools import accumulate, repeat
from operator import and_, lshift, or_, rshift

# A 512,000-byte body has fewer than 2**19 lines; 2**12 key spellings per file.
SPELLING_BITS = 12
LINE_SHIFT = SPELLING_BITS + 1
MAX_SPELLINGS = 1 << SPELLING_BITS

# Candidates: priority (the pattern's length) | allow | LINE_MAX - line | entry.
_ENTRY_BITS = 20
_LINE_BITS = 20
_ALLOW_SHIFT = _ENTRY_BITS + _LINE_BITS
_PRIORITY_SHIFT = _ALLOW_SHIFT + 1
_ENTRY_MASK = (1 << _ENTRY_BITS) - 1
LINE_MAX = (1 << _LINE_BITS) - 1
#: Not a candidate: no rule matched, or the budget of work ran out.
NO_MATCH = -1
TOO_COMPLEX = -2


def rule_code(line: int, spelling: int, allow: bool) -> int:
    return line << LINE_SHIFT | spelling << 1 | allow


def with_line(code: int, line: int) -> int:
    """A code made at line 0 (:func:`rule_code`), at ``line``."""
    return line << LINE_SHIFT | code


def with_lines(codes: list[int], lines: list[int]) -> list[int]:
    """:func:`with_line` for columns (in C: a file may have thousands)."""
    return list(map(or_, map(lshift, lines, repeat(LINE_SHIFT)), codes))


def candidate_allows(value: int) -> bool:
    return value >> _ALLOW_SHIFT & 1 == 1


def candidate_entry(value: int) -> int:
    return value & _ENTRY_MASK


def _array(values: list[int]) -> array[int]:
    top = max(values, default=0)
    return array("H" if top <= 0xFFFF else "I", values)


class Rules:
    """Every rule entry of a file, in file order, group after group.

    The patterns (normalised) are one ``bytes`` object, one per line: a pattern
    holds no line break, and a compiled matcher reads them all at once
    (:meth:`split`).  ``codes[i]`` is entry ``i``'s rule's code.  ``written``:
    the entries whose value as written differs from the pattern (a sparse,
    packed map).
    """

    __slots__ = ("blob", "codes", "rfc9309", "shift", "written")

    def __init__(
        self,
        patterns: list[bytes],
        codes: list[int],
        written: dict[int, bytes],
        rfc9309: bool,
        spellings: int,
    ) -> None:
        self.blob = b"\n".join(patterns)
        # Most files spell two keys: a code of line << 2 | spelling << 1 | allow.
        shift = 1 + max(1, (spellings - 1).bit_length())
        if shift != LINE_SHIFT:
            lines = map(rshift, codes, repeat(LINE_SHIFT))
            low = map(and_, codes, repeat((1 << LINE_SHIFT) - 1))
            codes = list(map(or_, map(lshift, lines, repeat(shift)), low))
        self.codes = _array(codes)
        self.shift = shift
        self.written = _Sparse(written) if written else None
        self.rfc9309 = rfc9309

    def __len__(self) -> int:
        return len(self.codes)

    def line(self, entry: int) -> int:
        return self.codes[entry] >> self.shift

    def spelling(self, entry: int) -> int:
        """The number of the key's spelling (``Parsed.spellings``)."""
        return self.codes[entry] >> 1 & ((1 << self.shift - 1) - 1)

    def allows(self, entry: int) -> bool:
        return self.codes[entry] & 1 == 1

    def split(self) -> list[bytes]:
        """Every entry's pattern, in entry order."""
        return self.blob.split(b"\n") if self.codes else []

    def candidates(self, entries: list[int], found: list[bytes]) -> list[int]:
        """The candidate of each of ``entries`` (whose patterns are ``found``):
        rfc9309: longest pattern, then allow, then earliest line; 1994:
        earliest line (the first rule that matches)."""
        codes, shift = self.codes, self.shift
        lines = [
            (LINE_MAX - (codes[entry] >> shift)) << _ENTRY_BITS | entry
            for entry in entries
        ]
        if not self.rfc9309:
            return lines
        return [
            len(pattern) << _PRIORITY_SHIFT | (codes[entry] & 1) << _ALLOW_SHIFT | line
            for entry, pattern, line in zip(entries, found, lines, strict=True)
        ]

    def value(self, entry: int) -> bytes:
        """Entry ``entry``'s value as written in the file."""
        written = self.written
        found = None if written is None else written.get(entry)
        return self.split()[entry] if found is None else found

    def size(self) -> int:
        size = sys.getsizeof(self) + sys.getsizeof(self.blob)
        size += sys.getsizeof(self.codes)
        if self.written is not None:
            size += self.written.size()
        return size


class Indexed:
    """A file's rules with each pattern's place in the blob: a matcher of
    thousands of rules reads one pattern at a time."""

    __slots__ = ("offsets", "rules")

    def __init__(self, rules: Rules, found: list[bytes]) -> None:
        self.rules = rules
        self.offsets = array(
            "I", accumulate([len(item) + 1 for item in found], initial=0)
        )

    def pattern(self, entry: int) -> bytes:
        offsets = self.offsets
        return self.rules.blob[offsets[entry] : offsets[entry + 1] - 1]

    def candidate(self, entry: int) -> int:
        """:meth:`Rules.candidates` of one entry (a compact matcher reads them one
        at a time)."""
        rules, offsets = self.rules, self.offsets
        code = rules.codes[entry]
        line = (LINE_MAX - (code >> rules.shift)) << _ENTRY_BITS | entry
        if not rules.rfc9309:
            return line
        length = offsets[entry + 1] - offsets[entry] - 1
        return length << _PRIORITY_SHIFT | (code & 1) << _ALLOW_SHIFT | line

    def size(self) -> int:
        return sys.getsizeof(self) + sys.getsizeof(self.offsets)


class _Sparse:
    """A few entries' byte strings, packed: sorted keys, one blob, offsets."""

    __slots__ = ("blob", "keys", "offsets")

    def __init__(self, items: dict[int, bytes]) -> None:
        keys = sorted(items)
        values = [items[key] for key in keys]
        self.keys = array("I", keys)
        self.blob = b"".join(values)
        self.offsets = array("I", accumulate(map(len, values), initial=0))

    def get(self, key: int) -> bytes | None:
        from bisect import bisect_left

        at = bisect_left(self.keys, key)
        if at == len(self.keys) or self.keys[at] != key:
            return None
        return self.blob[self.offsets[at] : self.offsets[at + 1]]

    def size(self) -> int:
        return sum(map(sys.getsizeof, (self, self.keys, self.blob, self.offsets)))


#: Numbers per group in :class:`Groups` bounds: where its agents end in the
#: agent text, its first entry, the entry after its last, and whether it has rule
#: lines (1994: a record without them names nobody).
GROUP_STRIDE = 4


class Groups:
    """Every group's user-agent values (one string) and bounds (one array)."""

    __slots__ = ("agent_text", "bounds")

    def __init__(
        self, agents: list[list[str]], spans: list[tuple[int, int, bool]]
    ) -> None:
        texts = ["".join(value + "\n" for value in values) for values in agents]
        self.agent_text = "".join(texts)
        ends = accumulate(map(len, texts))
        self.bounds = _array(
            [
                number
                for end, (start, stop, has_rules) in zip(ends, spans, strict=True)
                for number in (end, start, stop, has_rules)
            ]
        )

    def __len__(self) -> int:
        return len(self.bounds) // GROUP_STRIDE

    def agents(self, group: int) -> tuple[str, ...]:
        at = GROUP_STRIDE * group
        start = self.bounds[at - GROUP_STRIDE] if group else 0
        return tuple(self.agent_text[start : self.bounds[at] - 1].split("\n"))

    def entries(self, group: int) -> range:
        """The group's rule entries (one run of the file's :class:`Rules`)."""
        at = GROUP_STRIDE * group
        return range(self.bounds[at + 1], self.bounds[at + 2])

    def has_rules(self, group: int) -> bool:
        return self.bounds[GROUP_STRIDE * group + 3] == 1

    def group_of(self, entry: int) -> int:
        """The group that holds ``entry`` (each group's entries are one run)."""
        return next(group for group in range(len(self)) if entry in self.entries(group))

    def size(self) -> int:
        return (
            sys.getsizeof(self)
            + sys.getsizeof(self.agent_text)
            + sys.getsizeof(self.bounds)
        )
