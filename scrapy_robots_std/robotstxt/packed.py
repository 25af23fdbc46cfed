"""Many byte strings in one bytes object: 4 bytes each instead of about 40.

A hostile body holds tens of thousands of patterns; as separate ``bytes``
objects (33 bytes of header each, plus a pointer in a tuple) they alone would
keep more than the 1 MiB a parsed file may keep.  Real files hold a few dozen,
and keep tuples: indexing a tuple is faster than slicing (see ``pack``).
"""

from __future__ import annotations

import sys
from array import array
from itertools import accumulate
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator

#: Up to this many strings a tuple is kept: speed where memory does not matter.
PACK_ABOVE = 512


class Packed:
    """A read-only sequence of bytes stored back to back (bisect works on it)."""

    __slots__ = ("_blob", "_ends")

    def __init__(self, items: Iterable[bytes]) -> None:
        items = list(items)
        self._blob = b"".join(items)
        self._ends = array("I", accumulate(map(len, items)))

    def __len__(self) -> int:
        return len(self._ends)

    def __getitem__(self, index: int) -> bytes:
        ends = self._ends
        if index < 0:
            index += len(ends)
        end = ends[index]
        return self._blob[ends[index - 1] if index else 0 : end]

    def __iter__(self) -> Iterator[bytes]:
        # All at once in a comprehension: a generator costs a resume per item.
        blob = self._blob
        ends = self._ends
        return iter(
            [blob[start:end] for start, end in zip([0, *ends], ends, strict=False)]
        )

    def take(self, positions: Iterable[int]) -> list[bytes]:
        """The strings at ``positions`` (non-negative), in one pass."""
        blob = self._blob
        ends = self._ends
        return [blob[ends[i - 1] if i else 0 : ends[i]] for i in positions]

    def length(self, index: int) -> int:
        ends = self._ends
        return ends[index] - (ends[index - 1] if index else 0)

    def size(self) -> int:
        """Bytes kept (the object, its blob and its offsets)."""
        return (
            sys.getsizeof(self) + sys.getsizeof(self._blob) + sys.getsizeof(self._ends)
        )


Strings = tuple[bytes, ...] | Packed


def pack(items: Iterable[bytes]) -> Strings:
    """A tuple for a few strings, :class:`Packed` for many."""
    found = tuple(items)
    return Packed(found) if len(found) > PACK_ABOVE else found


def take(strings: Strings, positions: Iterable[int]) -> list[bytes]:
    """``[strings[i] for i in positions]``, without a call per string."""
    if isinstance(strings, Packed):
        return strings.take(positions)
    return [strings[i] for i in positions]


def strings_size(strings: Strings) -> int:
    """Bytes kept by a sequence from :func:`pack` (the strings included)."""
    if isinstance(strings, Packed):
        return strings.size()
    return sys.getsizeof(strings) + sum(map(sys.getsizeof, strings))
