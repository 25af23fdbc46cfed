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
from array import array
from bisect import bisect_right
from operator import itemgetter

# scheme://authority then path+params+query, fragment left out.
# A ';' ends the authority too, as in the reference's GetPathParamsQuery.
HTTP_URL_RE = re.compile(r"[Hh][Tt][Tt][Pp][Ss]?://[^/?#;]+([^#]*)")
_URL_RE = re.compile(r"([A-Za-z][A-Za-z0-9+.-]*)://([^/?#;]*)")

_UNRESERVED = frozenset(
    b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~"
)
_PERCENT_OR_HIGH_RE = re.compile(rb"%([0-9A-Fa-f]{2})|([\x80-\xff])")
_PERCENT_RE = re.compile(rb"%([0-9A-Fa-f]{2})")


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


def _rfc_escape(match: re.Match[bytes]) -> bytes:
    hex_digits = match.group(1)
    if hex_digits is None:
        return b"%%%02X" % match.group(2)[0]
    octet = int(hex_digits, 16)
    if octet in _UNRESERVED:
        return bytes((octet,))
    return b"%" + hex_digits.upper()


def normalize_rfc9309(value: bytes) -> str:
    """Canonical percent-encoding (RFC 3986 6.2.2): the form both sides are compared in.

    ``%XX`` of an unreserved character is decoded, other ``%xx`` get upper-case
    hex, and octets outside ASCII are percent-encoded.  ``%2F`` stays ``%2F``.
    """
    if b"%" not in value and value.isascii():
        return value.decode("ascii")
    return _PERCENT_OR_HIGH_RE.sub(_rfc_escape, value).decode("ascii")


def path_rfc9309(path: str) -> str:
    if "%" not in path and path.isascii():
        return path
    return normalize_rfc9309(path.encode("utf-8", "surrogatepass"))


def _decode_1994(match: re.Match[bytes]) -> bytes:
    octet = int(match.group(1), 16)
    if octet == 0x2F:
        return b"%2F"
    return bytes((octet,))


def normalize_1994(value: bytes) -> str:
    """1994: ``%XX`` is decoded before comparing, except ``%2F``.

    The result holds one character per octet (latin-1), so comparing strings
    compares octets.
    """
    if b"%" in value:
        value = _PERCENT_RE.sub(_decode_1994, value)
    return value.decode("latin-1")


def path_1994(path: str) -> str:
    if "%" not in path and path.isascii():
        return path
    return normalize_1994(path.encode("utf-8", "surrogatepass"))


def is_robots_txt(path: str) -> bool:
    """RFC 9309 2.2.2: /robots.txt itself is always allowed."""
    return path.startswith("/robots.txt") and (len(path) == 11 or path[11] == "?")


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


def wildcard_match(path: str, segments: tuple[str, ...], anchored: bool) -> bool:
    """Match ``segments`` (a pattern split at ``*``) from the start of path."""
    first = segments[0]
    if not path.startswith(first):
        return False
    position = len(first)
    last = len(segments) - 1
    for index in range(1, last):
        found = path.find(segments[index], position)
        if found < 0:
            return False
        position = found + len(segments[index])
    tail = segments[last]
    if anchored:
        return len(path) - len(tail) >= position and path.endswith(tail)
    return path.find(tail, position) >= 0


# (candidate, lead, needle, segments, anchored): ``needle`` is the longest
# literal piece, which must occur in any path the pattern matches, and
# ``lead`` its first character - a one-character search is the cheapest test.
_Wildcard = tuple[int, str, str, tuple[str, ...], bool]


class PrefixIndex:
    """Plain prefixes, sorted, with a link from each to its longest proper prefix.

    The patterns that start a path all lie on one chain: the last pattern that
    sorts before the path, then its parents.  One bisect and a short walk find
    them, whatever the number of patterns.
    """

    __slots__ = ("parents", "patterns", "values")

    def __init__(self, best_of: dict[str, int]) -> None:
        self.patterns = patterns = sorted(best_of)
        # Arrays, not lists of int objects: a crawl keeps thousands of these.
        self.values = array("q", map(best_of.__getitem__, patterns))
        self.parents = array("i", _parents(patterns))

    def longest(self, path: str) -> int:
        """The value of the longest pattern that starts ``path``, or -1."""
        patterns = self.patterns
        index = bisect_right(patterns, path) - 1
        parents = self.parents
        while index >= 0 and not path.startswith(patterns[index]):
            index = parents[index]
        return self.values[index] if index >= 0 else -1

    def highest(self, path: str) -> int:
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


def best_of(patterns: list[str], candidates: list[int]) -> dict[str, int]:
    """Each distinct pattern with its highest candidate (the only one that can win)."""
    found = dict(zip(patterns, candidates, strict=True))
    if len(found) < len(patterns):
        # A pattern given twice: sorted by candidate, the dict keeps the best.
        found = dict(sorted(zip(patterns, candidates, strict=True), key=_second))
    return found


class RuleSet:
    """The rules that apply to one token (rfc9309), compiled for longest-match.

    * plain prefixes: a :class:`PrefixIndex`;
    * ``$``-anchored patterns without ``*``: a dict, exact lookup;
    * wildcard patterns ending in ``$`` and a literal: filed under that last
      character, so only those that can end like the path are tried;
    * other wildcard patterns: tried in order, best candidate first, only while
      they could still beat the best match so far.
    """

    __slots__ = ("by_last_char", "exact", "plain", "wildcards")

    def __init__(self, patterns: list[str], candidates: list[int]) -> None:
        best = best_of(patterns, candidates)
        text = "\n".join(best)
        special = "*" in text or "$" in text
        if special:
            plain = {p: c for p, c in best.items() if "*" not in p and p[-1] != "$"}
        self.plain = PrefixIndex(plain if special else best)
        self.exact: dict[str, int] = {}
        self.by_last_char: dict[str, list[_Wildcard]] = {}
        self.wildcards: list[_Wildcard] = []
        if special:
            self._file_special(best)

    def _file_special(self, best: dict[str, int]) -> None:
        by_last_char = self.by_last_char
        for pattern, value in best.items():
            anchored = pattern.endswith("$")
            if "*" not in pattern:
                if anchored:
                    self.exact[pattern[:-1]] = value
                continue
            segments = tuple((pattern[:-1] if anchored else pattern).split("*"))
            needle = max(segments, key=len)
            entry = (value, needle[:1], needle, segments, anchored)
            if anchored and segments[-1]:
                by_last_char.setdefault(segments[-1][-1], []).append(entry)
            else:
                self.wildcards.append(entry)
        for group in by_last_char.values():
            group.sort(reverse=True)
        self.wildcards.sort(reverse=True)

    def best(self, path: str) -> int:
        """The deciding candidate for ``path``, or -1 when no rule matches."""
        best = self.plain.longest(path)
        if self.exact:
            best = max(best, self.exact.get(path, -1))
        # The two wildcard scans below are the same loop, written out twice:
        # this is the hot path of every request, and a shared helper costs a
        # call each (about 0.2 us).  On a long path a missing literal costs a
        # full scan, so a one-character search (memchr) rejects first.
        long_path = len(path) > _LONG_PATH
        if self.by_last_char:
            for value, lead, needle, segments, anchored in self.by_last_char.get(
                path[-1], ()
            ):
                if value <= best:
                    break
                if (
                    (not long_path or lead in path)
                    and needle in path
                    and wildcard_match(path, segments, anchored)
                ):
                    best = value
                    break
        for value, lead, needle, segments, anchored in self.wildcards:
            if value <= best:
                break
            if (
                (not long_path or lead in path)
                and needle in path
                and wildcard_match(path, segments, anchored)
            ):
                return value
        return best


_LONG_PATH = 256
_second = itemgetter(1)


def _parents(patterns: list[str]) -> list[int]:
    """For each sorted pattern, the index of its longest proper prefix in the list."""
    parents: list[int] = []
    append = parents.append
    stack = [-1]
    top = ""  # the pattern at the top of the stack; "" never stops the walk
    for index, pattern in enumerate(patterns):
        while top and not pattern.startswith(top):
            stack.pop()
            top = patterns[stack[-1]] if stack[-1] >= 0 else ""
        append(stack[-1])
        stack.append(index)
        top = pattern
    return parents
