"""URL -> comparable path, and one pattern match that never backtracks.

Which pattern decides, per standard: docs/standards.md.  Paths and patterns are
compared as bytes in canonical percent-encoding: a bytes object costs 16 bytes less
than a str, and a crawl keeps thousands of patterns.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Collection, Iterable

# scheme://authority then path+params+query, fragment left out.
# A ';' ends the authority too, as in the reference's GetPathParamsQuery.
_HTTP_URL_RE = re.compile(r"[Hh][Tt][Tt][Pp][Ss]?://[^/?#;]+([^#]*)")
_URL_RE = re.compile(r"([A-Za-z][A-Za-z0-9+.-]*)://")

_UNRESERVED = frozenset(
    b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~"
)


def split_url(url: object) -> str:
    """The path, params and query of an absolute http(s) URL, without fragment.

    An empty path is ``/``; a query directly after the host gets a ``/``.
    """
    match = _HTTP_URL_RE.match(url) if isinstance(url, str) else None
    if match is not None:
        path: str = match[1]  # not match.group(1): no method call (~15% of a split)
        return path if path[:1] == "/" else "/" + path
    if not isinstance(url, str):
        raise ValueError(f"URL must be a str, not {type(url).__name__}")  # noqa: TRY004
    scheme = _URL_RE.match(url)
    if scheme is None or scheme.group(1).lower() not in ("http", "https"):
        raise ValueError(f"not an absolute http(s) URL: {url!r}")
    raise ValueError(f"URL has no host: {url!r}")


_HEX_DIGITS = b"0123456789abcdefABCDEF"
_HIGH_RUN_RE = re.compile(rb"([\x80-\xff]+)")


def _escape_table(decoded: Collection[int]) -> dict[bytes, bytes]:
    """What each ``%xx`` (its two hex digits) becomes: the octet when it is in
    ``decoded``, else the escape with upper-case hex.  One lookup per escape."""
    pairs = (bytes((a, b)) for a in _HEX_DIGITS for b in _HEX_DIGITS)
    octets = {digits: int(digits, 16) for digits in pairs}
    return {
        digits: bytes((octet,)) if octet in decoded else b"%" + digits.upper()
        for digits, octet in octets.items()
    }


def _any_of(escapes: Iterable[str]) -> re.Pattern[str]:
    """Finds any of ``escapes`` (``%`` and two digits), one character class of
    second digits per first digit."""
    seconds: dict[str, str] = {}
    for escape in escapes:
        seconds[escape[1]] = seconds.get(escape[1], "") + escape[2]
    branches = "|".join(f"{first}[{rest}]" for first, rest in sorted(seconds.items()))
    return re.compile(f"%(?:{branches})")


_RFC9309_ESCAPES = _escape_table(_UNRESERVED)
# 1994: %2F stays (the standard); so does %0A, in one case, on both sides: a
# stored pattern holds no line break (layout.Rules).
_1994_ESCAPES = _escape_table(frozenset(range(256)) - {0x2F, 0x0A})
# Most escaped URLs are already canonical (upper-case hex, no unreserved
# character escaped): one regex search finds an escape that changes, where
# _unescape() takes a split, a lookup per escape and a join.
_RFC9309_CHANGED = {
    f"%{digits.decode()}": form.decode()
    for digits, form in _RFC9309_ESCAPES.items()
    if form != b"%" + digits
}
_RFC9309_CHANGES = _any_of(_RFC9309_CHANGED)


def _unescape(value: bytes, table: dict[bytes, bytes]) -> bytes:
    """Every ``%xx`` of ``value`` replaced as ``table`` says, others kept.

    A split at ``%`` and one dict lookup per piece: a regex callback per escape
    made a 100 KB URL of escapes cost 22-45 ms.
    """
    head, *pieces = value.split(b"%")
    get = table.get
    forms = [
        b"%" + piece if (found := get(piece[:2])) is None else found + piece[2:]
        for piece in pieces
    ]
    return b"".join([head, *forms])


def _escape_high(value: bytes) -> bytes:
    """Octets outside ASCII as ``%XX``, a run at a time (``bytes.hex`` in C)."""
    parts = _HIGH_RUN_RE.split(value)
    parts[1::2] = [b"%" + run.hex("%").upper().encode() for run in parts[1::2]]
    return b"".join(parts)


def normalize_rfc9309(value: bytes) -> bytes:
    """Canonical percent-encoding (RFC 3986 6.2.2): the form both sides are compared in.

    ``%XX`` of an unreserved character is decoded, other ``%xx`` get upper-case
    hex, and octets outside ASCII are percent-encoded.  ``%2F`` stays ``%2F``.
    A value that needs no change is returned as is (the same object).
    """
    escaped = value if value.isascii() else _escape_high(value)
    if value.find(b"%") < 0:
        return escaped
    # The escapes _escape_high() makes are upper-case and not unreserved:
    # _unescape() keeps them as they are.
    form = _unescape(escaped, _RFC9309_ESCAPES)
    return value if form == value else form


#: Paths up to this long have their escapes changed by a callback each.
_SHORT_PATH = 256


def path_rfc9309(path: str) -> bytes:
    if path.isascii():
        if "%" not in path:
            return path.encode()
        if len(path) <= _SHORT_PATH:
            # A callback per escape changed: fine on a short path, not on a
            # 100 KB one of escapes (_unescape() is the bound there).
            return _RFC9309_CHANGES.sub(_changed, path).encode()
        if not _RFC9309_CHANGES.search(path):
            return path.encode()
    return normalize_rfc9309(path.encode("utf-8", "surrogatepass"))


def _changed(escape: re.Match[str]) -> str:
    return _RFC9309_CHANGED[escape[0]]


def normalize_1994(value: bytes) -> bytes:
    """1994: ``%XX`` is decoded before comparing, but ``%2F`` (and ``%0A``)
    stay.  A value without ``%`` is returned as is (the same object)."""
    return _unescape(value, _1994_ESCAPES) if value.find(b"%") >= 0 else value


def path_1994(path: str) -> bytes:
    return normalize_1994(path.encode("utf-8", "surrogatepass"))


def wildcard_work(path: bytes, pattern: bytes) -> int:
    """Whether ``pattern`` (``*`` pieces, maybe a final ``$``) matches from the
    start of ``path``, and the work ``n`` it took: ``~n`` (negative) on a match.

    Each piece is found at its leftmost place after the previous one, always the
    best choice: nothing is retried, the cost is at most len(path) x pieces.
    ``n`` counts the middle pieces placed and the bytes searched (a unit per
    :data:`SCANNED_BYTES_PER_WORK`): pieces left to right, the tail right to left.
    """
    anchored = pattern[-1] == 0x24  # "$"
    if len(pattern) > len(path) and len(pattern) - pattern.count(b"*") - anchored > len(
        path
    ):
        return 0  # more literal bytes than the path holds
    star = pattern.find(b"*")
    first = pattern[: len(pattern) - anchored] if star < 0 else pattern[:star]
    if not path.startswith(first):
        return 0
    position = len(first)
    if star < 0:  # no "*": an exact pattern
        return ~0 if not anchored or len(path) == position else 0
    # The tail first: most tries end there, before the pieces are split out.
    last_star = pattern.rfind(b"*")
    tail = pattern[last_star + 1 : len(pattern) - anchored]
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
    middle = pattern[star + 1 : last_star].split(b"*") if last_star > star else []
    find = path.find
    for index, segment in enumerate(middle, 1):
        found = find(segment, position)
        if found < 0:
            return index + (len(path) - bound + len(path)) // SCANNED_BYTES_PER_WORK
        position = found + len(segment)
        if position > bound:
            return index + (len(path) - bound + position) // SCANNED_BYTES_PER_WORK
    last = len(middle) + 1
    return ~(last + (len(path) - bound + position) // SCANNED_BYTES_PER_WORK)


#: Bytes of the path searched that count as one unit of work (about as long
#: as placing a piece).
SCANNED_BYTES_PER_WORK = 128
#: The work charged for each wildcard pattern tried, beyond what it searched.
TRY_WORK = 2
#: The work one check may take: this much, and a unit per two bytes of the path.
#: The most a check of the corpus takes is about a quarter of it (408 units;
#: docs/standards.md, "Hostile files").
WORK_PER_CHECK = 1_500


def work_budget(path_length: int) -> int:
    """The work a check of a path of ``path_length`` bytes may take."""
    return WORK_PER_CHECK + path_length // 2


class Budget:
    """The work one check may still take: :func:`work_budget`, less what the
    patterns tried so far took."""

    __slots__ = ("left",)

    def __init__(self, path_length: int) -> None:
        self.left = work_budget(path_length)

    def take(self, work: int) -> bool:
        """Take ``work``; whether the budget is now overdrawn."""
        self.left -= work
        return self.left < 0


def index_html_directory(pattern: bytes) -> bytes | None:
    """``/dir/index.html`` allowed also allows ``/dir/`` (the reference's
    HandleAllow): the pattern ``/dir/$``."""
    slash = pattern.rfind(b"/")
    if slash < 0 or not pattern.startswith(b"/index.htm", slash):
        return None
    return pattern[: slash + 1] + b"$"


def literal_prefix(pattern: bytes) -> bytes:
    """What any path the pattern matches starts with: the pattern up to its
    first ``*`` (or without its final ``$``)."""
    star = pattern.find(b"*")
    if star >= 0:
        return pattern[:star]
    return pattern[:-1] if pattern.endswith(b"$") else pattern  # the same object
