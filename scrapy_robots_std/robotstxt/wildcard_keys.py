"""What a wildcard pattern is filed under, and which keys a path holds.

The index of :mod:`~scrapy_robots_std.robotstxt.wildcards` files each pattern
under one *key*: up to four bytes that any path the pattern matches holds.
A key is of one of three kinds:

* a *gram*, found anywhere in the path: up to four bytes of one piece;
* a *start*, the path's first bytes: of the piece before the first ``*``;
* an *end*, the path's last bytes: of the last piece of a ``$`` pattern.

A pattern keeps the last four bytes of its longest piece, unless many
patterns share them: then it takes its rarest key, a gram counting more than
a start or an end (a path holds thousands of grams, one start and one end),
so that a file whose patterns all share their longest piece cannot make
every check try them all.

A path's grams are read as numbers with array and set operations that run
in C; past a few thousand keys, a bit filter of them rules out most of a
short path's pieces before the sorted keys are searched for the rest.
"""

from __future__ import annotations

import sys
from array import array
from bisect import bisect_left
from collections import Counter
from heapq import nlargest
from itertools import chain
from operator import itemgetter
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Sequence

#: The array type code of a key of each width (a piece of 4 bytes or more
#: gives 4-byte keys, a shorter piece is the key; a pattern of ``*`` alone has
#: an empty key, always present).  A 3-byte key is read as 4 bytes, the last
#: zeroed.
CODES = {4: "I", 3: "I", 2: "H", 1: "B", 0: "B"}

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
#: A piece longer than this offers grams spread over it, about this many,
#: beside its first and last 4 bytes (a shorter piece offers those two only).
_SPREAD_ABOVE = 16
_GRAMS_PER_PIECE = 16


def keys_of(pattern: bytes) -> set[bytes]:
    """The keys a pattern may be filed under: a kind byte, then up to 4 bytes.

    Any path the pattern matches holds each of them: a gram anywhere, a start
    at its beginning, an end at its end.  (No start key of one byte: every
    path starts with "/".)
    """
    anchored = pattern[-1:] == b"$"
    pieces = (pattern[:-1] if anchored else pattern).split(b"*")
    kept = set(pieces)
    kept.discard(b"")
    if len(kept) > _KEYED_PIECES:
        kept = set(nlargest(_KEYED_PIECES, kept, key=len))
    # map() over C callables, not comprehensions: this runs for every pattern
    # of a crowded file.
    found = set(map(_GRAM.__add__, map(_FIRST_4, kept)))
    longest = max(map(len, kept), default=0)
    if longest > 4:
        found.update(map(_GRAM.__add__, map(_LAST_4, kept)))
    if len(pieces[0]) > 1:
        found.add(_START + pieces[0][:4])
    if anchored and pieces[-1]:
        found.add(_END + pieces[-1][-4:])
    if longest > _SPREAD_ABOVE:
        for piece in kept:
            if len(piece) > _SPREAD_ABOVE:
                # Grams spread over a long piece: the part that tells patterns
                # apart may be anywhere ("/medialibrary/pdfs/<name>dsna").
                step = len(piece) // _GRAMS_PER_PIECE + 1
                found.update(
                    [
                        _GRAM + piece[at : at + 4]
                        for at in range(4, len(piece) - 4, step)
                    ]
                )
    return found or {_GRAM}


_GRAM, _START, _END = b"\x00", b"\x01", b"\x02"
_FIRST_4 = itemgetter(slice(None, 4))
_LAST_4 = itemgetter(slice(-4, None))


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
    counts = Counter(map(_GRAM.__add__, keys))
    counts.subtract([_GRAM + keys[i] for i in crowded])
    counts.update(chain.from_iterable(offered))
    # The key's own bytes end each cost, so that no two are equal: a tie does
    # not go to whichever a set yields first (the same choice in every run).
    cost = {
        key: (count * (_GRAM_WEIGHT if key[0] == GRAM else 1)) << 43
        | (5 - len(key)) << 40
        | int.from_bytes(key, "big")
        for key, count in counts.items()
    }
    for i, found in zip(crowded, offered, strict=True):
        best = min(found, key=cost.__getitem__)
        kinds[i], keys[i] = best[0], best[1:]
    return kinds, keys


def key_code(key: bytes) -> int:
    """A key of up to 4 bytes as the number :func:`path_grams` reads (a 3-byte
    key padded with a zero byte)."""
    return int.from_bytes(key + b"\x00" if len(key) == 3 else key, sys.byteorder)


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
        grams = array(CODES[width])
        grams.frombytes(chunk)
        found.append(grams)
    return found


def present_positions(
    path: bytes,
    width: int,
    codes: array[int],
    bits: bytes | None = None,
    most: int | None = None,
) -> set[int] | None:
    """Where the sorted ``codes`` that occur as ``width``-byte pieces of
    ``path`` are: the index of each one's first place in ``codes``.

    The smaller side becomes the set and the other streams through it.
    ``bits``: the codes' filter (:func:`code_filter`), when there are many;
    then None when more than ``most`` pieces pass it (each would cost a
    search of the codes: the caller's budget is spent).
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
            passed = [
                gram
                for gram in grams
                if bits[(at := (gram * _HASH_FACTOR & _HASH_MASK) >> shift) >> 3]
                >> (at & 7)
                & 1
            ]
            if most is not None and len(passed) > most:
                return None
            last = len(codes) - 1  # a piece above every code lands on the last
            return {
                at
                for gram in passed
                if codes[(at := bisect_left(codes, gram, 0, last))] == gram
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
