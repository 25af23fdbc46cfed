"""How a parsed file is stored: two objects, packed ints, named accessors.

A crawl keeps one parsed file per origin, so its rules are one ``bytes`` object
and its groups another (:class:`Rules`, :class:`Groups` add methods, no storage):
tables and texts as objects of their own cost ~250 bytes more per cached origin.
Every packed layout is written and read here only:

* a rule's **kind**: ``spelling << 1 | allow``, stored beside its line, each
  table in the fewest bytes that hold its items (:class:`Rules`);
* a rule's **candidate**, the int that orders rules the way a standard
  decides: ``priority | allow | (ENTRY_MASK - entry)`` (entries are in
  file order, so the earlier line is the larger);
* a group's **bounds**, :data:`_GROUP` in :class:`Groups`.
"""

from __future__ import annotations

import struct
import sys
import zlib
from array import array
from bisect import bisect_left
from itertools import accumulate
from typing import TYPE_CHECKING, Literal, cast

if TYPE_CHECKING:
    from typing import Self

# 2**12 key spellings per file at most: a kind then fits 16 bits.
MAX_SPELLINGS = 1 << 12

# Candidates: priority (the pattern's length) | allow | _ENTRY_MASK - entry.
_ALLOW_SHIFT = 20  # a 512,000-byte body has fewer than 2**20 entries
_PRIORITY_SHIFT = _ALLOW_SHIFT + 1
_ENTRY_MASK = (1 << _ALLOW_SHIFT) - 1
#: Not a candidate: no rule matched, or the budget of work ran out.
NO_MATCH = -1
TOO_COMPLEX = -2


def rule_kind(spelling: int, allow: bool) -> int:
    return spelling << 1 | allow


def kind_allows(kind: int) -> bool:
    """Whether a kind made by :func:`rule_kind` is an Allow rule's."""
    return kind & 1 == 1


def candidate_allows(value: int) -> bool:
    return value >> _ALLOW_SHIFT & 1 == 1


def candidate_entry(value: int) -> int:
    return _ENTRY_MASK - (value & _ENTRY_MASK)


class _Packed(bytes):
    """A packed table: ``bytes`` whose subclass adds methods, not storage."""

    __slots__ = ()

    def __reduce__(self) -> tuple[object, tuple[type[_Packed], bytes]]:
        return bytes.__new__, (type(self), bytes(self))  # not through __new__

    def size(self) -> int:
        return sys.getsizeof(self)


#: A :class:`Rules`' tail: entries, written values, flags, widths (see ``__new__``).
_RULES_TAIL = struct.Struct("<IIBB")
_FORMATS: dict[int, Literal["B", "H", "I"]] = {1: "B", 2: "H", 4: "I"}  # by width
_DEFLATED = 0x80  # a flag: the rest is the table as made, raw DEFLATE (Rules.opened)


def _width(top: int) -> int:
    """The bytes an unsigned table item needs, for items up to ``top``."""
    return 1 if top <= 0xFF else 2 if top <= 0xFFFF else 4


class Rules(_Packed):
    """Every rule entry of a file, in file order, group after group.

    The patterns (normalised) and the values as written that differ from them,
    one per line (none holds a line break), first.  Then a table per entry
    field, line and kind, and the entry numbers of the values as written.
    """

    __slots__ = ()

    def __new__(
        cls,
        patterns: list[bytes],
        lines: list[int],
        kinds: list[int],
        written: dict[int, bytes],
        rfc9309: bool,
        spellings: int,
    ) -> Self:
        # Entries are in file order: the last line is the largest.
        widths = _width(lines[-1] if lines else 0) | (1 if spellings <= 128 else 2) << 4
        keys = sorted(written)
        tail = _RULES_TAIL.pack(len(lines), len(keys), rfc9309, widths)
        tables = (
            array(_FORMATS[widths & 15], lines),
            array(_FORMATS[widths >> 4], kinds),
            array("I", keys),
            tail,
        )
        values = map(written.__getitem__, keys)
        return bytes.__new__(cls, b"\n".join([*patterns, *values, b"".join(tables)]))

    def once(self) -> Rules:
        """The cache's copy (``Parsed.without_notes``): a table of at most 256 entries
        and 48 KiB deflated (its matcher, a hot one, keeps no reference to the table
        inflated); a larger one as it is."""
        entries, _, flags, widths = self._tail()
        if flags & _DEFLATED or entries > 256 or len(self) > 48 << 10:
            return self
        mark = self[-_RULES_TAIL.size : -2] + bytes([flags | _DEFLATED, widths])
        packed = bytes.__new__(Rules, zlib.compress(self, wbits=-15) + mark)
        return packed if len(packed) < len(self) else self

    def opened(self) -> Rules:
        """The table to read (every method but this and ``rfc9309`` reads one)."""
        if not self[-2] & _DEFLATED:
            return self
        inflated = zlib.decompress(self[: -_RULES_TAIL.size], wbits=-15)
        return bytes.__new__(Rules, inflated)

    def _tail(self) -> tuple[int, int, int, int]:  # see _RULES_TAIL
        return _RULES_TAIL.unpack_from(self, len(self) - _RULES_TAIL.size)

    @property
    def rfc9309(self) -> bool:
        return self._tail()[2] & 1 == 1

    def table(self, field: int) -> memoryview:
        """``table(f)[i]`` is entry ``i``'s field ``f``: 0, its line; 1, its kind."""
        entries, kept, _, widths = self._tail()
        kinds_end = len(self) - _RULES_TAIL.size - 4 * kept
        lines_end = kinds_end - (widths >> 4) * entries
        end, width = (kinds_end, widths >> 4) if field else (lines_end, widths & 15)
        return memoryview(self)[end - width * entries : end].cast(_FORMATS[width])

    def fields(self, entry: int) -> tuple[int, int, bool]:
        """Entry ``entry``'s line, spelling (of ``Parsed.spellings``) and allow bit."""
        kind = self.table(1)[entry]
        return self.table(0)[entry], kind >> 1, kind & 1 == 1

    def patterns(self) -> list[bytes]:
        """Every entry's pattern, in entry order."""
        entries = self._tail()[0]
        found = bytes.split(self, b"\n", entries) if entries else []
        del found[entries:]  # the rest: values as written, tables
        return found

    def candidates(self, entries: list[int], found: list[bytes]) -> list[int]:
        """The candidate of each of ``entries`` (patterns ``found``): rfc9309: longest
        pattern, then allow, then earliest line; 1994: earliest line (first match)."""
        if not self._tail()[2] & 1:  # 1994
            return [_ENTRY_MASK - entry for entry in entries]
        kinds = self.table(1)
        return [
            len(pattern) << _PRIORITY_SHIFT
            | (kinds[entry] & 1) << _ALLOW_SHIFT
            | _ENTRY_MASK - entry
            for entry, pattern in zip(entries, found, strict=True)
        ]

    def value(self, entry: int) -> bytes:
        """Entry ``entry``'s value as written in the file."""
        entries, kept, _, _ = self._tail()
        keys = memoryview(self[-_RULES_TAIL.size - 4 * kept :])[: 4 * kept].cast("I")
        at = bisect_left(keys, entry)
        if at < kept and keys[at] == entry:  # after every entry's pattern
            return bytes.split(self, b"\n", entries + kept)[entries + at]
        return self.patterns()[entry]


class Indexed:
    """A file's rules with each pattern's place in the packed object: a matcher
    of thousands of rules reads one pattern at a time."""

    __slots__ = ("kinds", "offsets", "rfc9309", "rules")

    def __init__(self, rules: Rules) -> None:
        self.rules = rules
        self.kinds = rules.table(1)
        self.rfc9309 = rules.rfc9309
        lengths = [len(item) + 1 for item in rules.patterns()]
        self.offsets = array("I", accumulate(lengths, initial=0))

    def pattern(self, entry: int) -> bytes:
        return self.rules[self.offsets[entry] : self.offsets[entry + 1] - 1]

    def candidate(self, entry: int) -> int:
        """:meth:`Rules.candidates` of one entry (a compact matcher reads them so)."""
        if not self.rfc9309:
            return _ENTRY_MASK - entry
        length = self.offsets[entry + 1] - self.offsets[entry] - 1
        allow = self.kinds[entry] & 1
        return length << _PRIORITY_SHIFT | allow << _ALLOW_SHIFT | _ENTRY_MASK - entry

    def size(self) -> int:  # and the tables' views, with the buffer they share
        return sys.getsizeof(self) + sys.getsizeof(self.offsets) + 400


#: A group's bounds in :class:`Groups`: where its user-agent values start and
#: end in the packed object, its first entry, the entry after its last, and
#: whether it has rule lines (1994: a record without them names nobody).
_GROUP = struct.Struct("<5I")
_COUNT = struct.Struct("<I")  # the number of groups, first
_SHARED_GROUPS: dict[bytes, Groups] = {}  # small tables by content (see Groups)


class Groups(_Packed):
    """Every group's bounds (:data:`_GROUP`), then user-agent values, one per line."""

    __slots__ = ()

    def __new__(
        cls,
        agents: list[list[bytes]],
        starts: list[int],
        entries: int,
        has_rules: list[bool],
    ) -> Self:
        """Groups from each one's user-agent values, first rule entry and
        whether it has rule lines; ``entries``: the rules' total."""
        texts = [b"\n".join(group) + b"\n" for group in agents]
        text = b"".join(texts)
        if not text.isascii():  # invalid UTF-8 replaced (a "\n" ends a bad sequence)
            texts = [item.decode("utf-8", "replace").encode() for item in texts]
            text = b"".join(texts)
        bounds = [len(texts)]  # the count, then each group's bounds
        end = _COUNT.size + _GROUP.size * len(texts)
        for group, item in enumerate(texts):
            stop = starts[group + 1] if group + 1 < len(texts) else entries
            bounds += (end, end + len(item), starts[group], stop, has_rules[group])
            end += len(item)
        made = bytes.__new__(cls, b"".join((array("I", bounds), text)))
        if len(made) > 64:  # most files: "*" and a few rules, one object each
            return made
        if len(_SHARED_GROUPS) >= 1024:
            _SHARED_GROUPS.clear()
        return cast("Self", _SHARED_GROUPS.setdefault(made, made))

    @property
    def number(self) -> int:
        """How many groups the file has."""
        return int.from_bytes(self[: _COUNT.size], "little")

    @property
    def agent_text(self) -> bytes:
        """Every user-agent value (UTF-8), in file order, each ended by a line break."""
        return self[_COUNT.size + _GROUP.size * self.number :]

    def _bounds(self, group: int) -> tuple[int, ...]:
        return _GROUP.unpack_from(self, _COUNT.size + _GROUP.size * group)

    def agents(self, group: int) -> tuple[str, ...]:
        return tuple(self.agent_lines(group).decode().split("\n"))

    def agent_lines(self, group: int) -> bytes:
        """The group's user-agent values, one per line (UTF-8)."""
        start, end, _, _, _ = self._bounds(group)
        return self[start : end - 1]

    def entries(self, group: int) -> range:
        """The group's rule entries (one run of the file's :class:`Rules`)."""
        return range(*self._bounds(group)[2:4])

    def has_rules(self, group: int) -> bool:
        return self._bounds(group)[4] == 1
