"""Many wildcard patterns, indexed so that one check tries only a few of them.

A file of thousands of wildcard rules must not cost thousands of tries per
check (issue 16: 18,000 rules took 75-131 ms per 2 KB URL).  Every pattern
that matches a path contains each of its literal pieces, so each pattern is
filed under one *key*: up to four bytes that any matching path holds.  A key
is of one of three kinds:

* a *gram*, found anywhere in the path: up to four bytes of one piece;
* a *start*, the path's first bytes: of the piece before the first ``*``;
* an *end*, the path's last bytes: of the last piece of a ``$`` pattern.

Each pattern takes its rarest key among a few of each kind, a gram counting
more than a start or an end (a path holds thousands of grams, one start and
one end): a file whose patterns all share their longest piece, the piece an
index of longest pieces would file them under, cannot make every check try
them all.  A check reads which keys the path holds (its 4-, 3-, 2- and 1-byte
grams, built with array and set operations that run in C, and its first and
last bytes), and tries only the patterns filed under them.  Within a key,
patterns are kept best candidate first and the first that matches decides
for that key; keys are visited best first, so the search stops as soon as no
untried pattern can beat the match found.

The keys are numbers in sorted arrays, not a dict: a dict of 18,000 keys
would alone keep more than the file's 1 MiB allowance.  Past a few thousand
keys, a bit filter of them (eight bits per key, 32 KB at most) rules out most
of a short path's pieces before the sorted array is searched for the rest.
"""

from __future__ import annotations

import sys
from array import array
from bisect import bisect_left
from collections import Counter
from heapq import nlargest
from itertools import chain
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

# Key widths, widest first: a piece of 4 bytes or more gives 4-byte keys, a
# shorter piece is the key; a pattern of ``*`` alone has an empty key, always
# present.
_WIDTHS = (4, 3, 2, 1, 0)
_CODES = {4: "I", 3: "I", 2: "H", 1: "B", 0: "B"}

assert array("I").itemsize == 4
assert array("H").itemsize == 2

# Key kinds (see the module doc), the first byte of a key as chosen.
GRAM = 0
START = 1
END = 2
#: A gram key counts this many times its patterns: a path holds one start
#: and one end of each width, but a gram at every place.
_GRAM_WEIGHT = 4
#: A pattern keeps the 4 last bytes of its longest piece as its key unless
#: more patterns than this share them; then it takes its rarest key.
CROWDED = 16
#: Pieces of one pattern that give keys: the longest ones (and the first and
#: last, which give the start and end keys).  A line of 8,000 pieces is not
#: worth 8,000 keys.
_KEYED_PIECES = 8
_KIND_BYTE = (b"\x00", b"\x01", b"\x02")


def keys_of(pattern: bytes) -> set[bytes]:
    """The keys a pattern may be filed under: a kind byte, then up to 4 bytes.

    Any path the pattern matches holds each of them: a gram anywhere, a start
    at its beginning, an end at its end.
    """
    anchored = pattern[-1:] == b"$"
    pieces = (pattern[:-1] if anchored else pattern).split(b"*")
    found = set()
    if pieces[0]:
        found.add(b"\x01" + pieces[0][:4])
    if anchored and pieces[-1]:
        found.add(b"\x02" + pieces[-1][-4:])
    kept = set(pieces)
    kept.discard(b"")
    if len(kept) > _KEYED_PIECES:
        kept = set(nlargest(_KEYED_PIECES, kept, key=len))
    found.update([b"\x00" + piece[:4] for piece in kept])
    found.update([b"\x00" + piece[-4:] for piece in kept])
    return found or {b"\x00"}


def choose_keys(patterns: Sequence[bytes]) -> tuple[list[int] | None, list[bytes]]:
    """Each pattern's key, as (kinds, keys): the last 4 bytes of its longest
    piece, a gram, or when more than :data:`CROWDED` patterns share those, its
    rarest key across ``patterns`` (a gram weighing :data:`_GRAM_WEIGHT` times
    as much as a start or an end; on a tie, the widest).  ``kinds`` is None
    when every key is a gram.
    """
    bodies = [p[:-1] if p[-1:] == b"$" else p for p in patterns]
    keys = [max(body.split(b"*"), key=len)[-4:] for body in bodies]
    counts = Counter(keys)
    if max(counts.values(), default=0) <= CROWDED:
        return None, keys
    kinds = [GRAM] * len(keys)
    crowded = [i for i, key in enumerate(keys) if counts[key] > CROWDED]
    # From here on a key is its kind byte, then its bytes.
    offered = [keys_of(patterns[i]) for i in crowded]
    counts = Counter(b"\x00" + key for key in keys)
    counts.subtract([b"\x00" + keys[i] for i in crowded])
    counts.update(chain.from_iterable(offered))
    cost = {
        key: (count * (_GRAM_WEIGHT if key[0] == GRAM else 1)) << 3 | 5 - len(key)
        for key, count in counts.items()
    }
    for i, found in zip(crowded, offered, strict=True):
        best = min(found, key=cost.__getitem__)
        kinds[i], keys[i] = best[0], best[1:]
    return kinds, keys


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


def present_positions(
    path: bytes, width: int, codes: array[int], bits: bytes | None = None
) -> set[int]:
    """Where the sorted ``codes`` that occur as ``width``-byte pieces of
    ``path`` are: the index of each one's first place in ``codes``.

    The smaller side becomes the set and the other streams through it.
    ``bits``: the codes' filter (:func:`code_filter`), when there are many.
    """
    if width == 0:
        return {0} if codes else set()
    arrays = path_grams(path, width)
    if sum(map(len, arrays)) <= len(codes):
        grams: set[int] = set()
        for part in arrays:
            grams.update(part)
        if bits is not None:
            # Streaming 48,000 codes through the set boxes each one (2 ms for
            # a 2 KB path): the filter rules out most pieces, a bisect checks
            # the rest and tells where it is.
            shift = _HASH_BITS - (len(bits) * 8).bit_length() + 1
            last = len(codes) - 1  # a piece above every code lands on the last
            return {
                at
                for gram in grams
                if bits[(at := (gram * _HASH_FACTOR & _HASH_MASK) >> shift) >> 3]
                >> (at & 7)
                & 1
                and codes[(at := bisect_left(codes, gram, 0, last))] == gram
            }
        found = grams.intersection(codes)
    else:
        wanted = set(codes)
        found = set()
        for part in arrays:
            found.update(wanted.intersection(part))
    return {bisect_left(codes, code) for code in found}


# A multiplicative hash of a code (at most 32 bits) to _HASH_BITS bits.
_HASH_FACTOR = 0x9E3779B1
_HASH_BITS = 32
_HASH_MASK = (1 << _HASH_BITS) - 1
#: Above this many keys of one width a check reads a filter, not every key.
FILTER_ABOVE = 4096


#: Bits of filter per key, and the most bits one filter has (32 KB).  Each
#: piece the filter lets through costs a search of the sorted keys: 20,000
#: keys in 8 KB let 28 % of other pieces through, in 32 KB 7 %.
FILTER_BITS_PER_KEY = 8
FILTER_MAX_BITS = 1 << 18


def code_filter(codes: array[int]) -> bytes:
    """A bit per hash of each code, :data:`FILTER_BITS_PER_KEY` bits per code
    rounded up to a power of two, at most :data:`FILTER_MAX_BITS` (48,000
    codes: 32 KB, a sixth of other pieces let through)."""
    wanted = FILTER_BITS_PER_KEY * len(codes) - 1
    size = min(FILTER_MAX_BITS, 1 << max(3, wanted.bit_length()))
    shift = _HASH_BITS - size.bit_length() + 1
    bits = bytearray(size // 8)
    for code in codes:
        at = (code * _HASH_FACTOR & _HASH_MASK) >> shift
        bits[at >> 3] |= 1 << (at & 7)
    return bytes(bits)


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
        self.codes = array(_CODES[width], [code for code, _ in pairs])
        self.bits = (
            code_filter(self.codes)
            if kind == GRAM and len(pairs) > FILTER_ABOVE
            else None
        )
        # Slot numbers in 2 bytes when they fit: 48,000 tiny rules fit.
        slots = [slot for _, slot in pairs]
        self.members = array("H" if max(slots) <= 0xFFFF else "I", slots)

    def present(self, path: bytes) -> set[int] | tuple[int, ...]:
        """Where the keys that ``path`` holds are: the index of each one's
        first place in ``codes``."""
        width = self.width
        if self.kind == GRAM:
            return present_positions(path, width, self.codes, self.bits)
        if len(path) < width:
            return ()
        key = path[:width] if self.kind == START else path[len(path) - width :]
        code = int.from_bytes(key + b"\x00" if width == 3 else key, sys.byteorder)
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
        # Each key read as a number (a 3-byte key as 4 bytes, the last
        # zeroed, as path_grams reads the path): this runs for every pattern.
        kinds, keys = choose_keys([entry[2] for entry in entries])
        order = sys.byteorder
        codes = [
            int.from_bytes(key + b"\x00" if len(key) == 3 else key, order)
            for key in keys
        ]
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
            present = keys.present(path)
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
#: its run of patterns queued).
KEY_WORK = 6
#: The work one check may take: this much, and a unit per byte of the path
#: (a 2 KB path: 4,000 units, well under a millisecond; 100 KB: about 15 ms).
#: Real files never come near: 575 wildcard rules in a group is the most
#: among 4,231 sites' files, and a check tries only those whose key the path
#: holds.
WORK_PER_CHECK = 2_000


def work_budget(path_length: int) -> int:
    """The work a check of a path of ``path_length`` bytes may take."""
    return WORK_PER_CHECK + path_length


def _first(item: tuple[int, int, _Keys]) -> int:
    return item[0]
