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
would alone keep more than the file's 1 MiB allowance.  Past a few thousand
keys, a bit filter of them (two bits per key) rules out most of a short
path's pieces before the sorted array is searched for the rest.
"""

from __future__ import annotations

import sys
from array import array
from bisect import bisect_left, bisect_right
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

# Key widths, widest first: a piece of 4 bytes or more gives a 4-byte key, a
# shorter piece is the key; a pattern of ``*`` alone has an empty key, always
# present.
_WIDTHS = (4, 3, 2, 1, 0)
_CODES = {4: "I", 3: "I", 2: "H", 1: "B", 0: "B"}

assert array("I").itemsize == 4
assert array("H").itemsize == 2


def key_of(pattern: bytes) -> bytes:
    """Bytes that occur in every path the pattern matches (its key)."""
    body = pattern[:-1] if pattern.endswith(b"$") else pattern
    piece = max(body.split(b"*"), key=len)
    return piece[-4:]


def path_grams(path: bytes, width: int) -> list[array[int]]:
    """The codes of every ``width``-byte piece of ``path``, in a few arrays.

    Arrays filled from the bytes in C: a set of 100,000 codes took 17 ms to
    build, an array of them well under 1 ms.
    """
    if width == 1:
        return [array("B", path)]
    step = 2 if width == 2 else 4
    # A 3-byte piece is read as 4 bytes whose last is zeroed, as its key is.
    padded = path + b"\x00" if width == 3 else path
    found = []
    for start in range(step):
        usable = (len(padded) - start) // step * step
        if usable <= 0:
            continue
        chunk: bytes | bytearray = padded[start : start + usable]
        if width == 3:
            chunk = bytearray(chunk)
            chunk[3::4] = bytes(usable // 4)
        grams = array(_CODES[width])
        grams.frombytes(chunk)
        found.append(grams)
    return found


def present_codes(
    path: bytes, width: int, codes: array[int], bits: bytes | None = None
) -> set[int]:
    """Which of the sorted ``codes`` occur as ``width``-byte pieces of ``path``.

    The smaller side becomes the set and the other streams through it.
    ``bits``: the codes' filter (:func:`code_filter`), when there are many.
    """
    if width == 0:
        return set(codes)
    arrays = path_grams(path, width)
    if sum(map(len, arrays)) <= len(codes):
        grams: set[int] = set()
        for part in arrays:
            grams.update(part)
        if bits is None:
            return grams.intersection(codes)
        # Streaming 48,000 codes through the set boxes each one (2 ms for a
        # 2 KB path): the filter rules out most pieces, a bisect checks the rest.
        shift = _HASH_BITS - (len(bits) * 8).bit_length() + 1
        last = len(codes) - 1  # a piece above every code lands on the last
        return {
            gram
            for gram in grams
            if bits[(at := (gram * _HASH_FACTOR & _HASH_MASK) >> shift) >> 3]
            >> (at & 7)
            & 1
            and codes[bisect_left(codes, gram, 0, last)] == gram
        }
    wanted = set(codes)
    found: set[int] = set()
    for part in arrays:
        found.update(wanted.intersection(part))
    return found


# A multiplicative hash of a code (at most 32 bits) to _HASH_BITS bits.
_HASH_FACTOR = 0x9E3779B1
_HASH_BITS = 32
_HASH_MASK = (1 << _HASH_BITS) - 1
#: Above this many keys of one width a check reads a filter, not every key.
FILTER_ABOVE = 4096


def code_filter(codes: array[int]) -> bytes:
    """A bit per hash of each code, two bits per code rounded up to a power of
    two (48,000 codes: 16 KB, a third of other pieces let through)."""
    size = 1 << max(3, (2 * len(codes) - 1).bit_length())
    shift = _HASH_BITS - size.bit_length() + 1
    bits = bytearray(size // 8)
    for code in codes:
        at = (code * _HASH_FACTOR & _HASH_MASK) >> shift
        bits[at >> 3] |= 1 << (at & 7)
    return bytes(bits)


class _Keys:
    """Patterns of one key width: key codes sorted, and each one's slot.

    ``codes[i]`` is the key of slot ``members[i]``; the slots of one key are
    a run, best first.  (No table of where runs start: most keys of a hostile
    file have one pattern, and 4 bytes each counts against its 1 MiB.)
    """

    __slots__ = ("bits", "codes", "members", "width")

    def __init__(self, width: int, pairs: list[tuple[int, int]]) -> None:
        pairs.sort()  # by code, then slot: each key's slots best first
        self.width = width
        self.codes = array(_CODES[width], [code for code, _ in pairs])
        self.bits = code_filter(self.codes) if len(pairs) > FILTER_ABOVE else None
        # Slot numbers in 2 bytes when they fit: 48,000 tiny rules fit.
        slots = [slot for _, slot in pairs]
        self.members = array("H" if max(slots) <= 0xFFFF else "I", slots)

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
        # key_of() inlined, and the key read as a number the way path_grams
        # reads the path (a 3-byte key padded to 4): this runs for every pattern.
        bodies = [p[:-1] if p[-1:] == b"$" else p for _, _, p in entries]
        keys = [max(body.split(b"*"), key=len)[-4:] for body in bodies]
        order = sys.byteorder
        codes = [
            int.from_bytes(key + b"\x00" if len(key) == 3 else key, order)
            for key in keys
        ]
        widths = list(map(len, keys))
        found = set(widths)
        self.keys = tuple(
            _Keys(
                width,
                [
                    (code, slot)
                    for slot, (code, w) in enumerate(zip(codes, widths, strict=True))
                    if w == width
                ],
            )
            for width in _WIDTHS
            if width in found
        )

    def size(self) -> int:
        return (
            sys.getsizeof(self)
            + sys.getsizeof(self.refs)
            + sys.getsizeof(self.keys)
            + sum(keys.size() for keys in self.keys)
            + 200  # the two callables
        )

    def best(
        self, path: bytes, floor: int, match: Callable[[bytes, bytes], bool]
    ) -> int:
        """The highest candidate above ``floor`` whose pattern matches, else ``floor``."""
        refs = self.refs
        value_of = self._value_of
        # Slots below ``limit`` beat ``floor``: the only ones worth a try.
        limit = bisect_left(refs, -floor, key=lambda ref: -value_of(ref))
        if limit == 0:
            return floor
        heads: list[tuple[int, Sequence[int]]] = []
        for keys in self.keys:
            codes, members = keys.codes, keys.members
            for code in present_codes(path, keys.width, codes, keys.bits):
                start = bisect_left(codes, code)
                if members[start] < limit:
                    end = bisect_right(codes, code, start)
                    heads.append((members[start], members[start:end]))
        heads.sort(key=_first)
        found = limit
        pattern_of = self._pattern_of
        for head, slots in heads:
            if head >= found:
                break
            for slot in slots:
                if slot >= found:
                    break
                if match(path, pattern_of(refs[slot])):
                    found = slot
                    break
        return value_of(refs[found]) if found < limit else floor


def _first(item: tuple[int, Sequence[int]]) -> int:
    return item[0]
