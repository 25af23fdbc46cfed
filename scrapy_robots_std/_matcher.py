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
from bisect import bisect_right

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


# A candidate rule is the tuple (priority, allow, -line, rule index): the
# highest tuple decides - longest pattern, then allow over disallow, then the
# earliest line, as in the reference.
Candidate = tuple[int, int, int, int]


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


class RuleSet:
    """The rules that apply to one token, compiled for fast longest-match.

    * plain prefixes: sorted; ``parents[i]`` is the longest other plain pattern
      that is a prefix of ``plain[i]``, so the longest prefix of a path is found
      by one bisect and a short walk up that chain;
    * ``$``-anchored patterns without ``*``: a dict, exact lookup;
    * wildcard patterns: tried in order of decreasing candidate, only while
      they could still beat the best plain or exact one; ``needle`` (their
      longest literal piece) rejects most paths with one substring test.
    """

    __slots__ = ("exact", "parents", "plain", "plain_best", "wildcards")

    def __init__(self, entries: list[tuple[str, Candidate]]) -> None:
        plain: dict[str, Candidate] = {}
        exact: dict[str, Candidate] = {}
        wildcard: dict[str, Candidate] = {}
        for pattern, candidate in entries:
            if "*" in pattern:
                table = wildcard
            elif pattern.endswith("$"):
                table, pattern = exact, pattern[:-1]
            else:
                table = plain
            # The same pattern twice: only the better candidate can ever decide.
            known = table.get(pattern)
            if known is None or candidate > known:
                table[pattern] = candidate
        self.plain = sorted(plain)
        self.plain_best = [plain[pattern] for pattern in self.plain]
        self.parents = self._parents(self.plain)
        self.exact = exact
        wildcards = []
        for pattern, candidate in wildcard.items():
            anchored = pattern.endswith("$")
            segments = tuple((pattern[:-1] if anchored else pattern).split("*"))
            suffix = segments[-1] if anchored else ""
            needle = max(segments, key=len)
            wildcards.append(
                (candidate, segments[0], suffix, needle, segments, anchored)
            )
        wildcards.sort(reverse=True)
        self.wildcards = wildcards

    @staticmethod
    def _parents(patterns: list[str]) -> list[int]:
        parents: list[int] = []
        stack: list[int] = []
        for index, pattern in enumerate(patterns):
            while stack and not pattern.startswith(patterns[stack[-1]]):
                stack.pop()
            parents.append(stack[-1] if stack else -1)
            stack.append(index)
        return parents

    def best(self, path: str) -> Candidate | None:
        best: Candidate | None = None
        plain = self.plain
        if plain:
            index = bisect_right(plain, path) - 1
            parents = self.parents
            while index >= 0 and not path.startswith(plain[index]):
                index = parents[index]
            if index >= 0:
                best = self.plain_best[index]
        if self.exact:
            candidate = self.exact.get(path)
            if candidate is not None and (best is None or candidate > best):
                best = candidate
        # Cheap tests first: the fixed start, the fixed end when anchored, and
        # the longest literal piece; only then the full left-to-right match.
        for candidate, first, suffix, needle, segments, anchored in self.wildcards:
            if best is not None and candidate <= best:
                break
            if (
                path.startswith(first)
                and path.endswith(suffix)
                and needle in path
                and wildcard_match(path, segments, anchored)
            ):
                return candidate
        return best
