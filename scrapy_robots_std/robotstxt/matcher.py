"""URL -> comparable path, and patterns -> matchers that never backtrack.

rfc9309: a pattern matches from the start of the path; ``*`` matches any run of
characters and a final ``$`` anchors the end.  A wildcard pattern is split at
its ``*`` into literal segments, and each segment is found at its leftmost
place after the previous one (``str.find``).  Leftmost placement is always the
best choice, so nothing is ever retried: the cost is bounded by
len(path) x len(pattern), whatever the pattern.

The longest matching pattern decides, with allow winning ties.  Plain
prefixes, the bulk of real rules, are answered with one binary search over
the sorted patterns instead of a scan.
"""

from __future__ import annotations

import re
import sys
from array import array
from bisect import bisect_right
from itertools import compress, repeat
from operator import itemgetter, not_
from typing import TYPE_CHECKING

from scrapy_robots_std.robotstxt.packed import Strings, pack, strings_size, take
from scrapy_robots_std.robotstxt.wildcards import WildcardIndex

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

# scheme://authority then path+params+query, fragment left out.
# A ';' ends the authority too, as in the reference's GetPathParamsQuery.
HTTP_URL_RE = re.compile(r"[Hh][Tt][Tt][Pp][Ss]?://[^/?#;]+([^#]*)")
_URL_RE = re.compile(r"([A-Za-z][A-Za-z0-9+.-]*)://([^/?#;]*)")

_UNRESERVED = frozenset(
    b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~"
)


def split_url(url: object) -> str:
    """The path, params and query of an absolute http(s) URL, without fragment.

    An empty path is ``/``; a query directly after the host gets a ``/``.
    """
    match = HTTP_URL_RE.match(url) if isinstance(url, str) else None
    if match is None:
        raise ValueError(_url_problem(url))
    path = match.group(1)
    if path[:1] == "/":
        return path
    return "/" + path


def _url_problem(url: object) -> str:
    if not isinstance(url, str):
        return f"URL must be a str, not {type(url).__name__}"
    match = _URL_RE.match(url)
    if match is None or match.group(1).lower() not in ("http", "https"):
        return f"not an absolute http(s) URL: {url!r}"
    return f"URL has no host: {url!r}"


_HEX_DIGITS = b"0123456789abcdefABCDEF"
_HIGH_RUN_RE = re.compile(rb"([\x80-\xff]+)")


def _escape_table(decode: Callable[[int, bytes], bytes]) -> dict[bytes, bytes]:
    """What each ``%xx`` (its two hex digits) becomes: one dict lookup per escape."""
    return {
        bytes((a, b)): decode(int(bytes((a, b)), 16), bytes((a, b)))
        for a in _HEX_DIGITS
        for b in _HEX_DIGITS
    }


def _rfc9309_escape(octet: int, digits: bytes) -> bytes:
    return bytes((octet,)) if octet in _UNRESERVED else b"%" + digits.upper()


def _1994_escape(octet: int, digits: bytes) -> bytes:
    return b"%2F" if octet == 0x2F else bytes((octet,))


_RFC9309_ESCAPES = _escape_table(_rfc9309_escape)
_1994_ESCAPES = _escape_table(_1994_escape)


def _changes_re(table: dict[bytes, bytes]) -> re.Pattern[str]:
    """Finds an escape that ``table`` changes, as text: ``%`` and a pair of
    digits, grouped by the first digit (one character class each)."""
    seconds: dict[str, str] = {}
    for digits, form in table.items():
        if form != b"%" + digits:
            first, second = digits[:1].decode(), digits[1:].decode()
            seconds[first] = seconds.get(first, "") + second
    branches = "|".join(f"{first}[{rest}]" for first, rest in sorted(seconds.items()))
    return re.compile(f"%(?:{branches})")


# Most escaped URLs are already canonical (upper-case hex, no unreserved
# character escaped): one regex search tells, where _unescape() takes a
# split, a lookup per escape and a join.
_RFC9309_CHANGES = _changes_re(_RFC9309_ESCAPES)
# What _RFC9309_CHANGES finds becomes, as text ("%7e" -> "~", "%2f" -> "%2F").
_RFC9309_CHANGED = {
    f"%{digits.decode()}": form.decode()
    for digits, form in _RFC9309_ESCAPES.items()
    if form != b"%" + digits
}


def _unescape(value: bytes, table: dict[bytes, bytes]) -> bytes:
    """Every ``%xx`` of ``value`` replaced as ``table`` says, others kept.

    A split at ``%`` and one dict lookup per piece: a regex callback per escape
    made a 100 KB URL of escapes cost 22-45 ms.
    """
    head, *pieces = value.split(b"%")
    get = table.get
    return b"".join(
        [
            head,
            *[
                b"%" + piece if (found := get(piece[:2])) is None else found + piece[2:]
                for piece in pieces
            ],
        ]
    )


def _escape_high(value: bytes) -> bytes:
    """Octets outside ASCII as ``%XX``, a run at a time (``bytes.hex`` in C)."""
    parts = _HIGH_RUN_RE.split(value)
    parts[1::2] = [b"%" + run.hex("%").upper().encode() for run in parts[1::2]]
    return b"".join(parts)


# Patterns and paths are compared as bytes: a bytes object costs 16 bytes less
# than a str in CPython 3.11, and a crawl keeps thousands of patterns.


def normalize_rfc9309(value: bytes) -> bytes:
    """Canonical percent-encoding (RFC 3986 6.2.2): the form both sides are compared in.

    ``%XX`` of an unreserved character is decoded, other ``%xx`` get upper-case
    hex, and octets outside ASCII are percent-encoded.  ``%2F`` stays ``%2F``.
    A value that needs no change is returned as is (the same object).
    """
    if value.find(b"%") < 0:
        return value if value.isascii() else _escape_high(value)
    # Escapes made of high octets are upper-case and not unreserved: the
    # second pass leaves them as they are.
    form = _unescape(
        value if value.isascii() else _escape_high(value), _RFC9309_ESCAPES
    )
    return value if form == value else form


def path_rfc9309(path: str) -> bytes:
    if path.isascii():
        if "%" not in path:
            return path.encode()
        if len(path) <= _LONG_PATH:
            # A callback per escape changed: fine on a short path, not on a
            # 100 KB one of escapes (_unescape() is the bound there).
            return _RFC9309_CHANGES.sub(_changed, path).encode()
        if not _RFC9309_CHANGES.search(path):
            return path.encode()
    return normalize_rfc9309(path.encode("utf-8", "surrogatepass"))


def _changed(escape: re.Match[str]) -> str:
    return _RFC9309_CHANGED[escape.group()]


def normalize_1994(value: bytes) -> bytes:
    """1994: ``%XX`` is decoded before comparing, except ``%2F``.

    A value without ``%`` is returned as is (the same object).
    """
    if value.find(b"%") >= 0:
        return _unescape(value, _1994_ESCAPES)
    return value


def path_1994(path: str) -> bytes:
    if "%" not in path and path.isascii():
        return path.encode()
    return normalize_1994(path.encode("utf-8", "surrogatepass"))


def is_robots_txt(path: str) -> bool:
    """RFC 9309 2.2.2: the ``/robots.txt`` URI itself is always allowed (``path``
    normalized, with its query): the exact path, no query. ``/robots.txt?x=1`` is an
    ordinary URL, to which the rules apply (docs/standards.md)."""
    return path == "/robots.txt"


# A candidate is one int that orders rules the way the reference decides:
# longest pattern first, then allow over disallow, then the earliest line.
# Bits: priority (pattern length) | allow | (LINE_MAX - line) | rule index.
INDEX_BITS = 20
LINE_BITS = 20
ALLOW_SHIFT = INDEX_BITS + LINE_BITS
PRIORITY_SHIFT = ALLOW_SHIFT + 1
INDEX_MASK = (1 << INDEX_BITS) - 1
LINE_MAX = (1 << LINE_BITS) - 1


def candidate(priority: int, allow: int, line: int, index: int) -> int:
    # A 512,000-byte body has fewer than 2**20 lines and rules.
    return (
        priority << PRIORITY_SHIFT
        | allow << ALLOW_SHIFT
        | (LINE_MAX - line) << INDEX_BITS
        | index
    )


def candidate_allows(value: int) -> bool:
    return bool(value >> ALLOW_SHIFT & 1)


def candidate_index(value: int) -> int:
    return value & INDEX_MASK


def wildcard_match(path: bytes, pattern: bytes) -> bool:
    """Match a pattern holding ``*`` (and maybe a final ``$``) from the start of path."""
    return wildcard_work(path, pattern) < 0


def wildcard_work(path: bytes, pattern: bytes) -> int:
    """:func:`wildcard_match`, with the work it took: ``n`` when the pattern
    does not match and ``~n`` (a negative number) when it does.

    ``n`` counts the middle pieces placed and the bytes of the path searched
    (one unit per :data:`SCANNED_BYTES_PER_WORK`), read off where the search
    stopped: the pieces are found left to right, the tail right to left.
    """
    anchored = pattern[-1] == 0x24  # "$"
    if len(pattern) > len(path) and len(pattern) - pattern.count(b"*") - anchored > len(
        path
    ):
        return 0  # more literal bytes than the path holds
    segments = (pattern[:-1] if anchored else pattern).split(b"*")
    first = segments[0]
    if not path.startswith(first):
        return 0
    position = len(first)
    last = len(segments) - 1
    if last == 0:  # no "*": an exact pattern
        return ~0 if not anchored or len(path) == position else 0
    tail = segments[last]
    # The tail's last place bounds where the middle pieces may end: a pattern
    # of thousands of pieces fails at the first piece placed past it.
    if anchored:
        bound = len(path) - len(tail)
        if bound < position or not path.endswith(tail):
            return 0
    else:
        bound = path.rfind(tail, position)
        if bound < 0:
            return (len(path) - position) // SCANNED_BYTES_PER_WORK
    find = path.find
    for index in range(1, last):
        segment = segments[index]
        found = find(segment, position)
        if found < 0:
            return index + (len(path) - bound + len(path)) // SCANNED_BYTES_PER_WORK
        position = found + len(segment)
        if position > bound:
            return index + (len(path) - bound + position) // SCANNED_BYTES_PER_WORK
    return ~(last + (len(path) - bound + position) // SCANNED_BYTES_PER_WORK)


#: Bytes of the path searched that count as one unit of work (about as long
#: as placing a piece: 0.15 us).
SCANNED_BYTES_PER_WORK = 128


# Wildcard patterns, best candidate first, as three parallel sequences:
# (candidates, needles, patterns).  A ``needle`` is the pattern's longest literal
# piece, which must occur in any path the pattern matches: a cheap test first.
_Wildcards = tuple["array[int]", tuple[str, ...], tuple[bytes, ...]]

_NO_VALUES = array("q")
_NO_PARENTS = array("h")


class PatternTable:
    """A file's rule patterns once a query needs them (built by ``_robots``).

    Each distinct pattern is kept once, in the form paths are compared in:
    ``plain`` holds the plain prefixes, sorted, ``other`` the rest; rule ``i``'s
    pattern is number ``ids[i]`` of ``plain + other``.  ``written`` maps the few
    rules whose value as written differs from that form to the written bytes.
    The per-token indexes point at these same objects, and one that needs every
    plain prefix of the file shares the sorted tuple and its parent links.
    """

    __slots__ = ("_parents", "_size", "ids", "other", "plain", "written")

    def __init__(
        self,
        plain: Strings,
        other: Strings,
        ids: array[int],
        written: dict[int, bytes] | None,
    ) -> None:
        self.plain = plain
        self.other = other
        self.ids = ids
        self.written = written
        self._parents: array[int] | None = None
        self._size: int | None = None

    def pattern(self, number: int) -> bytes:
        """Distinct pattern ``number`` (plain prefixes first)."""
        plain = self.plain
        return plain[number] if number < len(plain) else self.other[number - len(plain)]

    def patterns_at(self, indexes: list[int]) -> list[bytes]:
        """The patterns of rules ``indexes`` (normalized), in one pass."""
        ids = self.ids
        plain, other = self.plain, self.other
        if isinstance(plain, tuple) and isinstance(other, tuple):
            every = plain + other
            return [every[ids[index]] for index in indexes]
        count = len(plain)
        numbers = [ids[index] for index in indexes]
        plains = iter(take(plain, [n for n in numbers if n < count]))
        others = iter(take(other, [n - count for n in numbers if n >= count]))
        return [next(plains) if n < count else next(others) for n in numbers]

    def value(self, index: int) -> bytes:
        """Rule ``index``'s pattern as written."""
        written = self.written
        if written is not None and index in written:
            return written[index]
        return self.pattern(self.ids[index])

    def plain_parents(self, walk: Sequence[bytes] | None = None) -> array[int]:
        """The parent links of ``plain``, built once (``walk``: ``plain`` as a
        list, when the caller holds one)."""
        parents = self._parents
        if parents is None:
            parents = self._parents = _parents_array(self.plain, walk)
        return parents

    def size(self) -> int:
        """Bytes kept (an estimate from above; see ``RobotsTxt.memory_bytes``).

        Counted once; the parent links, built later, are added when they exist.
        """
        size = self._size
        if size is None:
            size = self._size = self._count()
        parents = self._parents
        return size if parents is None else size + sys.getsizeof(parents)

    def _count(self) -> int:
        written = self.written
        return (
            sys.getsizeof(self)
            + strings_size(self.plain)
            + strings_size(self.other)
            + sys.getsizeof(self.ids)
            + (
                0
                if written is None
                else sys.getsizeof(written)
                + sum(map(sys.getsizeof, written.values()))
                + 32 * len(written)
            )
        )


def _parents_array(
    patterns: Strings, walk: Sequence[bytes] | None = None
) -> array[int]:
    typecode = "h" if len(patterns) < 0x8000 else "i"
    # A list to walk (``walk`` when given): indexing a Packed is a Python
    # call per pattern.
    found = walk if walk is not None else _listed(patterns)
    # nested[i]: pattern i + 1 starts with pattern i.  When a pattern starts
    # with another, the one sorted just after that prefix starts with it too
    # (everything sorted between the two shares it): with no pattern nested
    # in its neighbour there is no link at all (most files).
    nested = list(map(bytes.startswith, found[1:], found))
    if True not in nested:
        return array(typecode, [-1]) * len(found)
    return array(typecode, _parents(found, nested))


def _listed(patterns: Strings) -> Sequence[bytes]:
    """``patterns`` as a tuple or list (indexing a Packed is a Python call)."""
    return patterns if isinstance(patterns, tuple) else list(patterns)


def _prefix_tables(
    best_of: dict[bytes, int], shared: PatternTable | None
) -> tuple[Strings, array[int], array[int]]:
    """Sorted patterns, their values, and the index of each one's longest prefix."""
    if not best_of:
        return (), _NO_VALUES, _NO_PARENTS
    # ``order``: the patterns as a list (a Packed is read once).
    if shared is not None and len(best_of) == len(shared.plain):
        # Every plain prefix of the file (they come from it): share the tables.
        patterns = shared.plain
        order = _listed(patterns)
        parents = shared.plain_parents(order)
    else:
        order = sorted(best_of)
        patterns = pack(order)
        parents = _parents_array(patterns, order)
    # Arrays, not lists of int objects: a crawl keeps thousands of these.
    # (From a list: an array reads a list faster than an iterator.)
    return patterns, array("q", list(map(best_of.__getitem__, order))), parents


class PrefixIndex:
    """Plain prefixes, sorted, with a link from each to its longest proper prefix.

    The patterns that start a path all lie on one chain: the last pattern that
    sorts before the path, then its parents.  One bisect and a short walk find
    them, whatever the number of patterns.
    """

    __slots__ = ("parents", "patterns", "values")

    def __init__(
        self, best_of: dict[bytes, int], shared: PatternTable | None = None
    ) -> None:
        self.patterns, self.values, self.parents = _prefix_tables(best_of, shared)

    def size(self, table: PatternTable | None) -> int:
        """Bytes kept by this index, beyond the file's ``table``."""
        size = sys.getsizeof(self) + sys.getsizeof(self.values)
        if table is None or self.patterns is not table.plain:
            size += sys.getsizeof(self.parents) + strings_size(self.patterns)
        return size

    def highest(self, path: bytes) -> int:
        """The highest value among all patterns that start ``path``, or -1."""
        patterns = self.patterns
        values = self.values
        parents = self.parents
        index = bisect_right(patterns, path) - 1
        best = -1
        while index >= 0:
            if path.startswith(patterns[index]):
                best = max(best, values[index])
            index = parents[index]
        return best


def best_of(patterns: list[bytes], candidates: list[int]) -> dict[bytes, int]:
    """Each distinct pattern with its highest candidate (the only one that can win)."""
    found = dict(zip(patterns, candidates, strict=True))
    if len(found) < len(patterns):
        # A pattern given twice: sorted by candidate, the dict keeps the best.
        found = dict(sorted(zip(patterns, candidates, strict=True), key=_second))
    return found


def _wildcards(
    patterns: list[bytes], needles: list[str], best: dict[bytes, int]
) -> _Wildcards:
    """The three parallel sequences of ``patterns`` (best first)."""
    candidates = array("q", list(map(best.__getitem__, patterns)))
    return candidates, tuple(needles), tuple(patterns)


def _wildcards_at(
    positions: list[int],
    patterns: list[bytes],
    needles: list[str],
    best: dict[bytes, int],
) -> _Wildcards:
    """:func:`_wildcards` of the patterns at ``positions`` only."""
    return _wildcards(
        [patterns[at] for at in positions], [needles[at] for at in positions], best
    )


class RuleSet:
    """The rules that apply to one token (rfc9309), compiled for longest-match.

    * plain prefixes: sorted ``patterns`` with their ``values`` and ``parents``
      (as in :class:`PrefixIndex`, inlined: this is every request's path);
    * ``$``-anchored patterns without ``*``: a dict, exact lookup;
    * wildcard patterns ending in ``$`` and a literal: filed under that last
      octet, so only those that can end like the path are tried;
    * other wildcard patterns: tried best candidate first when the best of them
      could beat the match so far; the first that matches decides between them.

    The tables that a file does not need are None.
    """

    __slots__ = (
        "by_last_octet",
        "exact",
        "has_special",
        "index",
        "parents",
        "patterns",
        "values",
        "wildcards",
    )

    def __init__(
        self,
        plain: dict[bytes, int],
        special: dict[bytes, int],
        shared: PatternTable | None = None,
        codes: array[int] | None = None,
    ) -> None:
        """``plain``: plain prefixes; ``special``: the other patterns (see
        :func:`best_of` for both); ``shared``: the file's pattern table and
        ``codes`` its packed rules (``Parsed.rules``), which the index reads."""
        self.patterns, self.values, self.parents = _prefix_tables(plain, shared)
        self.exact: dict[bytes, int] | None = None
        self.by_last_octet: dict[int, _Wildcards] | None = None
        self.wildcards: _Wildcards | None = None
        self.index: WildcardIndex | None = None
        # Whether any of the four tables above is set: best() skips them all.
        self.has_special = bool(special)
        if needs_index(special):
            self.index = _wildcard_index(special, shared, codes)
        elif special:
            self._file_special(special)

    def size(self, table: PatternTable | None) -> int:
        """Bytes kept by this token's index, beyond the file's ``table``."""
        size = sys.getsizeof(self) + sys.getsizeof(self.values)
        if table is None or self.patterns is not table.plain:
            size += sys.getsizeof(self.parents) + strings_size(self.patterns)
        if self.exact is not None:
            size += sys.getsizeof(self.exact) + sum(map(sys.getsizeof, self.exact))
            size += 32 * len(self.exact)
        tables = list((self.by_last_octet or {}).values())
        if self.wildcards is not None:
            tables.append(self.wildcards)
        for candidates, needles, patterns in tables:
            size += sys.getsizeof(candidates) + sys.getsizeof(needles)
            size += sys.getsizeof(patterns) + sum(map(sys.getsizeof, needles))
            size += 120  # the dict entry and the tuple of three
            if table is None:  # the patterns are not the table's: ours
                size += sum(map(sys.getsizeof, patterns))
        if self.index is not None:
            size += self.index.size()
        return size

    def _file_special(self, best: dict[bytes, int]) -> None:
        # Best candidate first (they are distinct): each table keeps that order.
        order = sorted(best, key=best.__getitem__, reverse=True)
        # count(), not "in": "in" on bytes first tries the needle as an int.
        starred = list(map(bool, map(bytes.count, order, repeat(b"*"))))
        if False in starred:
            # Without "*" a special pattern ends with "$": an exact path.
            self.exact = {
                pattern[:-1]: best[pattern]
                for pattern in compress(order, map(not_, starred))
            }
        if True in starred:
            self._file_wildcards(list(compress(order, starred)), best)

    def _file_wildcards(self, patterns: list[bytes], best: dict[bytes, int]) -> None:
        """File the wildcard ``patterns`` (best first): those ending in ``$``
        after a literal by that literal's last octet, the others apart."""
        # The needle is text: "in" on bytes first tries the needle as an int.
        # Latin-1 keeps every octet as one character: the same pieces.
        texts = b"\n".join(patterns).decode("latin-1")
        needles = [
            max(text.removesuffix("$").split("*"), key=len)
            for text in texts.split("\n")
        ]
        if f"{texts}\n".find("$\n") < 0:  # none ends with "$" (most files)
            self.wildcards = _wildcards(patterns, needles, best)
            return
        by_last_octet: dict[int, list[int]] = {}
        others: list[int] = []
        for position, pattern in enumerate(patterns):
            if pattern[-1] == 0x24 and pattern[-2] != 0x2A:  # "$" after a literal
                by_last_octet.setdefault(pattern[-2], []).append(position)
            else:
                others.append(position)
        if by_last_octet:
            self.by_last_octet = {
                octet: _wildcards_at(found, patterns, needles, best)
                for octet, found in by_last_octet.items()
            }
        if others:
            self.wildcards = _wildcards_at(others, patterns, needles, best)

    def best(self, path: bytes, text: str) -> int:
        """The deciding candidate for ``path``, or -1 when no rule matches.

        ``text`` is the same path as a str: ``in`` is fast on text only.
        """
        patterns = self.patterns
        index = bisect_right(patterns, path) - 1
        if index >= 0:
            parents = self.parents
            while index >= 0 and not path.startswith(patterns[index]):
                index = parents[index]
        best = self.values[index] if index >= 0 else -1
        if not self.has_special:  # plain prefixes only (most files)
            return best
        if self.exact is not None:
            best = max(best, self.exact.get(path, -1))
        if len(path) > _LONG_PATH:
            return self._best_long(path, text, best)
        # The two wildcard scans below are the same loop, written out twice:
        # this is the hot path of every request, and a shared helper costs a
        # call each (about 0.2 us).  Only the needles are read until one is
        # found: best first, the first full match decides, and on real files
        # nearly every wildcard could beat the plain match, so checking each
        # one's value on the way would only slow the loop.
        if self.by_last_octet is not None:
            tables = self.by_last_octet.get(path[-1])
            if tables is not None and tables[0][0] > best:
                for index, needle in enumerate(tables[1]):
                    if needle in text and wildcard_match(path, tables[2][index]):
                        best = max(best, tables[0][index])
                        break
        if self.index is not None:
            return self.index.best(path, best, wildcard_work)
        tables = self.wildcards
        if tables is not None and tables[0][0] > best:
            for index, needle in enumerate(tables[1]):
                if needle in text and wildcard_match(path, tables[2][index]):
                    return max(best, tables[0][index])
        return best

    def _best_long(self, path: bytes, text: str, best: int) -> int:
        """The wildcard part of :meth:`best` for a path over ``_LONG_PATH``
        bytes: the same scans, in a helper (a long path is rare)."""
        if self.by_last_octet is not None:
            tables = self.by_last_octet.get(path[-1])
            if tables is not None and tables[0][0] > best:
                best = max(best, _first_match_long(tables, path, text))
        if self.index is not None:
            return self.index.best(path, best, wildcard_work)
        tables = self.wildcards
        if tables is not None and tables[0][0] > best:
            best = max(best, _first_match_long(tables, path, text))
        return best


def _first_match_long(tables: _Wildcards, path: bytes, text: str) -> int:
    """The candidate of the first pattern of ``tables`` that matches, or -1.

    On a long path a missing literal costs a full scan, so a one-character
    search (memchr) rejects first.
    """
    for index, needle in enumerate(tables[1]):
        if (
            needle[:1] in text
            and needle in text
            and wildcard_match(path, tables[2][index])
        ):
            return tables[0][index]
    return -1


_LONG_PATH = 256
_second = itemgetter(1)
#: Above this many patterns with ``*`` or ``$``, a token's rules go into a
#: :class:`~scrapy_robots_std.robotstxt.wildcards.WildcardIndex`.  Real files
#: have a few dozen, which the scans of :meth:`RuleSet.best` answer faster; up
#: to 256 the scans stay well under a millisecond even on a 100 KB path, where
#: reading the path's pieces for the index costs more (100 rules of 30 '*'
#: against 10,000 'a': 46 us scanned, 520 us indexed).
INDEX_ABOVE = 256
#: Past this many pieces in all, special patterns go into the index too.
#: The scans try each pattern whose needle occurs in the path, and a try
#: may place every piece of its pattern: 250 patterns of 1,000 pieces took
#: 35 ms a check.  The index's checks have a budget of work.
SCAN_PIECES = 2_048


def needs_index(special: dict[bytes, int]) -> bool:
    """Whether ``special`` patterns go into a :class:`WildcardIndex` rather
    than the scans of :meth:`RuleSet.best`."""
    if len(special) > INDEX_ABOVE:
        return True
    return sum(map(bytes.count, special, repeat(b"*"))) > SCAN_PIECES


def _wildcard_index(
    special: dict[bytes, int], table: PatternTable | None, codes: array[int] | None
) -> WildcardIndex:
    """Every special pattern in one index, kept as references to its rule.

    A reference is the rule's index (its pattern is in ``table``, its line and
    kind in ``codes``, the file's packed rules), with :data:`_DIRECTORY` set
    for the directory an ``index.html`` rule also allows.
    """
    if table is None or codes is None:
        # No file behind the patterns: keep them, and their candidates.
        own = pack(special)
        values = array("q", special.values())
        mine = list(zip(values, range(len(values)), special, strict=True))
        return WildcardIndex(mine, own.__getitem__, values.__getitem__)
    ids = table.ids
    pattern = table.pattern
    entries = [
        (value, value & INDEX_MASK, written) for written, value in special.items()
    ]
    if b"/$\n" in b"\n".join([*special, b""]):
        # Only a directory ("/dir/$") can stand for an index.html rule.
        entries = [
            (value, ref, written)
            if not written.endswith(b"/$") or pattern(ids[ref]) == written
            else (value, ref | _DIRECTORY, written)
            for value, ref, written in entries
        ]

    def pattern_of(ref: int) -> bytes:
        found = pattern(ids[ref & INDEX_MASK])
        if ref & _DIRECTORY:
            return index_html_directory(found) or b""
        return found

    def value_of(ref: int) -> int:
        index = ref & INDEX_MASK
        code = codes[index]
        return candidate(len(pattern_of(ref)), code & 1, code >> _LINE_SHIFT, index)

    return WildcardIndex(entries, pattern_of, value_of)


# The parser's layout of a rule's code (parser.LINE_SHIFT), and a flag that
# is never a rule index (those have INDEX_BITS bits).
_LINE_SHIFT = 13
_DIRECTORY = 1 << 31


def index_html_directory(pattern: bytes) -> bytes | None:
    """``/dir/index.html`` also allows ``/dir/`` (the reference's HandleAllow)."""
    slash = pattern.rfind(b"/")
    if slash < 0 or not pattern.startswith(b"/index.htm", slash):
        return None
    return pattern[: slash + 1] + b"$"


def _parents(patterns: Sequence[bytes], nested: list[bool]) -> list[int]:
    """For each sorted pattern, the index of its longest proper prefix in the list.

    That prefix is the pattern just before, or on that one's chain of links.
    A pattern whose predecessor has no link and is not its prefix has no
    link either: only the runs that start at a nested pair are walked.
    """
    count = len(patterns)
    parents = [-1] * count
    index = 0
    while True:
        try:
            index = nested.index(True, index) + 1
        except ValueError:
            return parents
        while index < count:
            pattern = patterns[index]
            link = index - 1
            while link >= 0 and not pattern.startswith(patterns[link]):
                link = parents[link]
            parents[index] = link
            if link < 0:
                break
            index += 1
