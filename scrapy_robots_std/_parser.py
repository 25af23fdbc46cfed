"""Bytes -> groups of rules, for both standards.

Pure and byte-level: no Scrapy, no Twisted, no I/O.  The parser never raises on
content; whatever it cannot use becomes a diagnostic with its line number.

The rfc9309 reader reproduces how Google's reference parser (robots.cc) splits a
body into lines, keys and values, including its leniencies.  The 1994 reader
follows "A Standard for Robot Exclusion" with the later draft's ``Allow`` line.
"""

from __future__ import annotations

import math
import re
from array import array
from dataclasses import dataclass
from typing import TYPE_CHECKING, NamedTuple

if TYPE_CHECKING:
    from collections.abc import Callable

RFC9309 = "rfc9309"
STD1994 = "1994"
STANDARDS = (RFC9309, STD1994)

#: RFC 9309 2.5: crawlers must parse at least the first 500 KiB.
MAX_BODY_BYTES = 512_000
#: The reference parser keeps at most this many bytes of one line (2083 * 8 - 1).
MAX_LINE_BYTES = 16_663

# Rule kinds, stored in ``Group.codes`` together with the spelling index.
DISALLOW = 0
ALLOW = 1

# Diagnostic kinds.
MISSPELLING = "misspelling"
MISSING_COLON = "missing-colon"
OUTSIDE_GROUP = "rule-outside-group"
UNKNOWN_FIELD = "unknown-field"
LINE_CUT = "line-cut"
BODY_CUT = "body-cut"
INVALID_VALUE = "invalid-value"
NO_COLON = "no-colon"
IGNORED_LINE = "ignored-line"

_UTF8_BOM = b"\xef\xbb\xbf"


@dataclass(frozen=True)
class Diagnostic:
    """A note about one line of a robots.txt body."""

    line: int
    kind: str
    message: str

    def __str__(self) -> str:
        return f"line {self.line}: {self.message}"


class Group:
    """One group (rfc9309) or record (1994): its user-agent lines and rules.

    Rules are kept compactly, because a crawl may hold tens of thousands of
    parsed files: line numbers in an ``array``, the directive's kind and
    spelling in a second one, and all patterns joined by ``\\n`` in one bytes
    object (a value can never contain a line break).
    """

    __slots__ = (
        "agents",
        "crawl_delay",
        "first_line",
        "is_global",
        "lines",
        "names",
        "request_rate",
        "rule_codes",
        "rule_patterns",
    )

    def __init__(self, first_line: int) -> None:
        self.first_line = first_line
        self.agents: list[str] = []
        self.names: set[str] = set()
        self.is_global = False
        self.lines = array("i")
        self.rule_codes = array("H")
        self.rule_patterns: bytes | list[bytes] = []
        self.crawl_delay: float | None = None
        self.request_rate: RequestRate | None = None

    def patterns(self) -> list[bytes]:
        if isinstance(self.rule_patterns, list):
            return self.rule_patterns
        return self.rule_patterns.split(b"\n")

    def freeze(self) -> None:
        if isinstance(self.rule_patterns, list):
            self.rule_patterns = b"\n".join(self.rule_patterns)


class RequestRate(NamedTuple):
    """``Request-rate: 1/5`` -> ``RequestRate(requests=1, seconds=5.0)``."""

    requests: int
    seconds: float


_REQUEST_RATE_RE = re.compile(rb"\s*(\d{1,9})\s*/\s*(\d{1,9}(?:\.\d{0,9})?)\s*([smhd]?)", re.I)
_UNIT_SECONDS = {b"": 1.0, b"s": 1.0, b"m": 60.0, b"h": 3600.0, b"d": 86400.0}


def parse_delay(value: bytes) -> float | None:
    """``Crawl-delay`` seconds, or None when the value is not a usable number."""
    try:
        delay = float(value.decode("ascii"))
    except (UnicodeDecodeError, ValueError):
        return None
    if math.isnan(delay) or math.isinf(delay) or delay < 0:
        return None
    return delay


def parse_rate(value: bytes) -> RequestRate | None:
    match = _REQUEST_RATE_RE.match(value)
    if match is None:
        return None
    requests = int(match.group(1))
    seconds = float(match.group(2)) * _UNIT_SECONDS[match.group(3).lower()]
    if requests <= 0 or seconds <= 0:
        return None
    return RequestRate(requests, seconds)


@dataclass
class Parsed:
    groups: list[Group]
    sitemaps: list[str]
    spellings: list[str]
    diagnostics: list[tuple[int, str, str]]
    truncated: bool


def decode_text(value: bytes) -> str:
    """Bytes as written, for people: invalid UTF-8 shown as U+FFFD."""
    return value.decode("utf-8", "replace")


def prepare_body(body: bytes) -> tuple[bytes, bool]:
    """Cut the body to 500 KiB, skip a (partial) BOM, and end lines with LF.

    When the body is cut, the partial last line is dropped as well: half a
    rule (``Disallow: /private`` cut to ``Disallow: /``) can mean something
    very different from the whole one.
    """
    truncated = len(body) > MAX_BODY_BYTES
    if truncated:
        body = body[:MAX_BODY_BYTES]
        end = max(body.rfind(b"\n"), body.rfind(b"\r"))
        body = body[: end + 1] if end >= 0 else b""
    # The reference skips any prefix of the UTF-8 BOM, even a partial one.
    for size in (3, 2, 1):
        if body[:size] == _UTF8_BOM[:size]:
            body = body[size:]
            break
    # CR, LF and CRLF each end exactly one line, as in the reference.
    if b"\r" in body:
        body = body.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
    return body, truncated


def _cut_long_lines(text: bytes, notes: list[tuple[int, str, str]]) -> bytes:
    if len(text) <= MAX_LINE_BYTES:
        return text
    lines = text.split(b"\n")
    if max(map(len, lines)) <= MAX_LINE_BYTES:
        return text
    for index, line in enumerate(lines):
        if len(line) > MAX_LINE_BYTES:
            lines[index] = line[:MAX_LINE_BYTES]
            notes.append(
                (index + 1, LINE_CUT, f"line longer than {MAX_LINE_BYTES} bytes was cut")
            )
    return b"\n".join(lines)


# One row per line: (key, value, other).  ``key`` is set for "<key>:<value>"
# lines, ``other`` for lines with text but no colon before a comment, and all
# three are empty for blank and comment-only lines.  Every quantifier is
# greedy and bounded by the line, so the cost is linear in the line length.
_ROW_RE = re.compile(
    rb"^[ \t\v\f]*(?:"
    rb"([^:#\n\x00]*):[ \t\v\f]*([^#\n\x00]*)[^\n]*"
    rb"|(?:[#\x00][^\n]*)?"
    rb"|([^\n]*)"
    rb")$",
    re.MULTILINE,
)
# Without a colon the reference accepts exactly "<key><space or tab><value>".
_NO_COLON_RE = re.compile(rb"([^ \t]+)[ \t]+([^ \t]+)")

_UA, _ALLOW, _DISALLOW, _SITEMAP, _CRAWL_DELAY, _REQUEST_RATE, _UNKNOWN = range(7)

_RFC_TYPO_PREFIXES = (
    (b"useragent", _UA),
    (b"user agent", _UA),
    (b"dissallow", _DISALLOW),
    (b"dissalow", _DISALLOW),
    (b"disalow", _DISALLOW),
    (b"diasllow", _DISALLOW),
    (b"disallaw", _DISALLOW),
    (b"site-map", _SITEMAP),
)


def _classify_rfc9309(raw_key: bytes) -> tuple[int, str, bool]:
    """Key -> (type, key as written, accepted misspelling), the reference's way."""
    key = raw_key.rstrip()
    lower = key.lower()
    written = decode_text(key)
    # Same order and prefix tests as the reference's Key::Parse.
    if lower.startswith(b"user-agent"):
        return _UA, written, False
    if lower.startswith((b"useragent", b"user agent")):
        return _UA, written, True
    if lower.startswith(b"allow"):
        return _ALLOW, written, False
    if lower.startswith(b"disallow"):
        return _DISALLOW, written, False
    for prefix, key_type in _RFC_TYPO_PREFIXES:
        if key_type == _DISALLOW and lower.startswith(prefix):
            return _DISALLOW, written, True
    if lower.startswith(b"sitemap"):
        return _SITEMAP, written, False
    if lower.startswith(b"site-map"):
        return _SITEMAP, written, True
    # Not rules in the reference (it reports them as unknown), but we read them.
    if lower.startswith(b"crawl-delay"):
        return _CRAWL_DELAY, written, False
    if lower.startswith(b"request-rate"):
        return _REQUEST_RATE, written, False
    return _UNKNOWN, written, False


_KEY_CACHE: dict[bytes, tuple[int, str, bool]] = {}
_KEY_CACHE_LIMIT = 4096


def _key_type(raw_key: bytes) -> tuple[int, str, bool]:
    found = _KEY_CACHE.get(raw_key)
    if found is None:
        found = _classify_rfc9309(raw_key)
        if len(_KEY_CACHE) < _KEY_CACHE_LIMIT:
            _KEY_CACHE[raw_key] = found
    return found


def _agent_name(value: bytes) -> str | None:
    """The part of a user-agent value that is compared: leading [A-Za-z_-]+.

    Returns None for the global group (``*``, or ``*`` followed by a space).
    """
    if value[:1] == b"*" and (len(value) == 1 or value[1:2].isspace()):
        return None
    match = _AGENT_NAME_RE.match(value)
    return match.group().decode("ascii").lower() if match else ""


_AGENT_NAME_RE = re.compile(rb"[A-Za-z_-]+")


class _Builder:
    """Collects groups, sitemaps and diagnostics while lines are read."""

    def __init__(self, truncated: bool, notes: list[tuple[int, str, str]]) -> None:
        self.groups: list[Group] = []
        self.sitemaps: list[str] = []
        self.spellings: list[str] = ["Disallow", "Allow"]
        self.spelling_index: dict[str, int] = {"Disallow": 0, "Allow": 1}
        self.notes = notes
        self.truncated = truncated
        self.group: Group | None = None
        self.in_rules = False

    def spelling(self, written: str) -> int:
        index = self.spelling_index.get(written)
        if index is None:
            index = len(self.spellings)
            if index > 0xFFFF:  # cannot happen within 500 KiB, but stay safe
                index = 0
            else:
                self.spellings.append(written)
                self.spelling_index[written] = index
        return index

    def user_agent(self, line: int, value: bytes, name: str | None) -> Group:
        group = self.group
        if group is None or self.in_rules:
            group = self.group = Group(line)
            self.groups.append(group)
            self.in_rules = False
        group.agents.append(decode_text(value))
        if name is None:
            group.is_global = True
        elif name:
            group.names.add(name)
        return group

    def rule(self, line: int, kind: int, written: str, value: bytes) -> None:
        group = self.group
        if group is None:
            self.notes.append(
                (line, OUTSIDE_GROUP, f"{written} line before any User-agent line ignored")
            )
            return
        self.in_rules = True
        group.lines.append(line)
        group.rule_codes.append(self.spelling(written) << 1 | kind)
        patterns = group.rule_patterns
        assert isinstance(patterns, list)
        patterns.append(value)

    def group_value(
        self,
        line: int,
        written: str,
        value: bytes,
        field: str,
        convert: Callable[[bytes], object],
    ) -> None:
        group = self.group
        if group is None:
            self.notes.append(
                (line, OUTSIDE_GROUP, f"{written} line before any User-agent line ignored")
            )
            return
        converted = convert(value)
        if converted is None:
            self.notes.append(
                (line, INVALID_VALUE, f"{written} value {decode_text(value)!r} ignored")
            )
        elif getattr(group, field) is None:
            # The first usable value of a group counts.
            setattr(group, field, converted)

    def finish(self) -> Parsed:
        for group in self.groups:
            group.freeze()
        if self.truncated:
            self.notes.append(
                (
                    0,
                    BODY_CUT,
                    f"body longer than {MAX_BODY_BYTES} bytes: the rest was not parsed",
                )
            )
        self.notes.sort(key=lambda note: note[0])
        return Parsed(self.groups, self.sitemaps, self.spellings, self.notes, self.truncated)


def parse_rfc9309(body: bytes) -> Parsed:
    text, truncated = prepare_body(body)
    notes: list[tuple[int, str, str]] = []
    text = _cut_long_lines(text, notes)
    builder = _Builder(truncated, notes)
    rows = _ROW_RE.findall(text)
    if len(rows) != text.count(b"\n") + 1:  # pragma: no cover - regex invariant
        rows = [_ROW_RE.match(line).groups() for line in text.split(b"\n")]  # type: ignore[union-attr]
    for line, (key, value, other) in enumerate(rows, 1):
        if key:
            key_type, written, typo = _key_type(key)
            if not written:
                continue  # ": value" - the reference ignores an empty key
        elif other:
            other = other.split(b"#", 1)[0].split(b"\x00", 1)[0].strip()
            match = _NO_COLON_RE.fullmatch(other)
            if match is None:
                if other:
                    notes.append((line, IGNORED_LINE, "line without a key and value ignored"))
                continue
            key, value = match.groups()
            key_type, written, typo = _key_type(key)
            notes.append((line, MISSING_COLON, f"missing ':' after {written} accepted"))
        else:
            continue
        if typo:
            notes.append((line, MISSPELLING, f"misspelling {written!r} accepted"))
        value = value.rstrip()
        if key_type == _DISALLOW or key_type == _ALLOW:
            builder.rule(line, DISALLOW if key_type == _DISALLOW else ALLOW, written, value)
        elif key_type == _UA:
            builder.user_agent(line, value, _agent_name(value))
        elif key_type == _SITEMAP:
            if value:
                builder.sitemaps.append(decode_text(value))
        elif key_type == _CRAWL_DELAY:
            builder.group_value(line, written, value, "crawl_delay", parse_delay)
        elif key_type == _REQUEST_RATE:
            builder.group_value(line, written, value, "request_rate", parse_rate)
        else:
            notes.append((line, UNKNOWN_FIELD, f"unknown field {written!r} ignored"))
    return builder.finish()


_1994_FIELDS = {
    b"user-agent": _UA,
    b"disallow": _DISALLOW,
    b"allow": _ALLOW,
    b"sitemap": _SITEMAP,
}


def _agent_name_1994(value: bytes) -> str | None:
    """Agent value with version information dropped, lower-cased; None for ``*``."""
    name = value.split(b"/", 1)[0].strip()
    if name == b"*":
        return None
    return decode_text(name).lower()


def parse_1994(body: bytes) -> Parsed:
    text, truncated = prepare_body(body)
    notes: list[tuple[int, str, str]] = []
    text = _cut_long_lines(text, notes)
    builder = _Builder(truncated, notes)
    for line, raw in enumerate(text.split(b"\n"), 1):
        content = raw.split(b"\x00", 1)[0]
        if not content.strip():
            # A blank line ends the record; rules after it belong to none.
            builder.group = None
            builder.in_rules = False
            continue
        content = content.split(b"#", 1)[0].strip()
        if not content:
            continue  # comment-only lines are not blank
        key, colon, value = content.partition(b":")
        written = decode_text(key.strip())
        if not colon:
            notes.append((line, NO_COLON, "line without ':' ignored"))
            continue
        value = value.strip()
        key_type = _1994_FIELDS.get(key.strip().lower(), _UNKNOWN)
        if key_type == _DISALLOW or key_type == _ALLOW:
            builder.rule(line, DISALLOW if key_type == _DISALLOW else ALLOW, written, value)
        elif key_type == _UA:
            builder.user_agent(line, value, _agent_name_1994(value))
        elif key_type == _SITEMAP:
            if value:
                builder.sitemaps.append(decode_text(value))
        else:
            notes.append((line, UNKNOWN_FIELD, f"unknown field {written!r} ignored"))
    return builder.finish()
