"""A file's rule values -> its :class:`~scrapy_robots_std.robotstxt.matcher.PatternTable`.

Built on a file's first query (by ``RobotsTxt``), for every rule of the file:
each distinct pattern once, plain prefixes sorted apart from the patterns with
``*`` or ``$``.
"""

from __future__ import annotations

import re
from array import array
from itertools import filterfalse
from typing import TYPE_CHECKING

from scrapy_robots_std.robotstxt.matcher import PatternTable
from scrapy_robots_std.robotstxt.packed import pack

if TYPE_CHECKING:
    from collections.abc import Callable

# A pattern (one per line) with a "*" or a final "$": not a plain prefix.
_SPECIAL_RE = re.compile(rb"^[^\n]*(?:\*[^\n]*|\$)$", re.MULTILINE)


def pattern_table(
    values: list[bytes],
    *,
    unchanged: bool,
    normalize: Callable[[bytes], bytes],
    special: bool,
) -> tuple[PatternTable, list[bytes]]:
    """Each distinct pattern once; the written form kept only where it differs.
    With the table, every value in its normalized form (in rule order).

    ``special``: some value may hold ``*`` or ``$`` (rfc9309), which makes it
    something else than a plain prefix.
    """
    written: dict[int, bytes] | None = None
    if not unchanged:
        normalized = [normalize(value) for value in values]
        written = {
            index: value
            for index, (value, form) in enumerate(zip(values, normalized, strict=True))
            if form is not value and form != value
        }
        values = normalized
    distinct = dict.fromkeys(values)
    empty = b"" in distinct
    distinct.pop(b"", None)
    other = []
    if special:
        specials = special_patterns(b"\n".join(distinct))
        other = list(filter(specials.__contains__, distinct))
        plain = sorted(filterfalse(specials.__contains__, distinct))
    else:
        plain = sorted(distinct)
    if empty:
        other.append(b"")
    order = [*plain, *other]
    number = dict(zip(order, range(len(order)), strict=True))
    typecode = "B" if len(number) <= 0xFF else "H" if len(number) <= 0xFFFF else "I"
    ids = array(typecode, map(number.__getitem__, values))
    table = PatternTable(pack(plain), pack(other), ids, written or None)
    return table, values


def special_patterns(blob: bytes) -> set[bytes]:
    """The lines of ``blob`` that hold a ``*`` or end with ``$``.

    Real files have a few: each is found with ``bytes.find`` from its mark,
    which skips the plain lines in C.  Past a few hundred marks, one regex
    pass over all the lines costs less than a step per mark.
    """
    if blob.count(b"*") + blob.count(b"$") > _FIND_MARKS_UP_TO:
        return set(_SPECIAL_RE.findall(blob))
    found = set()
    find = blob.find
    for mark in (b"*", b"$\n"):
        at = find(mark)
        while at >= 0:
            end = find(b"\n", at)
            if end < 0:
                end = len(blob)
            found.add(blob[blob.rfind(b"\n", 0, at) + 1 : end])
            at = find(mark, end)
    if blob.endswith(b"$"):
        found.add(blob[blob.rfind(b"\n") + 1 :])
    return found


_FIND_MARKS_UP_TO = 256
