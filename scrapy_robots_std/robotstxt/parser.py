"""Bytes -> groups of rules, for both standards.

Pure and byte-level: no Scrapy, no Twisted, no I/O.  The parser never raises on
content; whatever it cannot use becomes a diagnostic with its line number.

The rfc9309 reader reproduces how Google's reference parser splits a
body into lines, keys and values, including its leniencies.  The 1994 reader
follows "A Standard for Robot Exclusion" with the later draft's ``Allow`` line.
"""

from __future__ import annotations

import math
import re
import sys
from array import array
from bisect import bisect_right
from dataclasses import dataclass
from itertools import accumulate, compress, count, repeat
from typing import TYPE_CHECKING, NamedTuple

from scrapy_robots_std.robotstxt import usage_rules as _usage_rules

if TYPE_CHECKING:
    from collections.abc import Callable

    from scrapy_robots_std.robotstxt.matcher import PatternTable
    from scrapy_robots_std.robotstxt.usage_rules import UsageRules

RFC9309 = "rfc9309"
STD1994 = "1994"
STANDARDS = (RFC9309, STD1994)

#: RFC 9309 2.5: crawlers must parse at least the first 500 KiB.
MAX_BODY_BYTES = 512_000
#: A line that crosses :data:`MAX_BODY_BYTES` is completed up to its line end
#: when that end comes within this many bytes past the boundary; otherwise
#: the partial line is dropped.  Nothing after that line is read.
LINE_COMPLETION_BYTES = 2_048
#: What a reader must keep of a longer body (the download, the CLI, the cache)
#: for the parser to decide exactly as on the whole body: one byte more than
#: it may read, so that "there was more" stays visible.
MAX_READ_BYTES = MAX_BODY_BYTES + LINE_COMPLETION_BYTES + 1
#: The reference parser keeps at most this many bytes of one line (2083 * 8 - 1).
MAX_LINE_BYTES = 16_663
#: Diagnostics kept per body: an HTML page served as robots.txt has a note for
#: every line, and a crawl may hold thousands of parsed files.
MAX_NOTES = 1_000

# Rule kinds: bit 0 of a rule's code (the other bits: the spelling id).
DISALLOW = 0
ALLOW = 1
# ``Parsed.rules`` packs each rule's line and code in 32 bits: a 512,000-byte
# body has fewer than 2**19 lines, and codes stay below 2**13 (_SPELLING_LIMIT).
LINE_SHIFT = 13
CODE_MASK = (1 << LINE_SHIFT) - 1

# Diagnostic kinds: (name, message template).
_NOTES = (
    (
        "body-cut",
        (
            "body longer than 512000 bytes: what follows the line that crosses"
            " the limit (or that line, when longer than 2048 bytes past it) ignored"
        ),
    ),
    ("line-cut", "line longer than 16663 bytes was cut"),
    ("misspelling", "misspelling {!r} accepted"),
    ("missing-colon", "missing ':' after {} accepted"),
    (
        "rule-outside-group",
        "{} line outside any group (no User-agent line above it) ignored",
    ),
    ("unknown-field", "unknown field {!r} ignored"),
    ("invalid-value", "{} ignored"),
    ("no-colon", "line without ':' ignored"),
    ("ignored-line", "line without a key and a value ignored"),
    ("usage-value-invalid", "{}"),
)
(
    BODY_CUT,
    LINE_CUT,
    MISSPELLING,
    MISSING_COLON,
    OUTSIDE_GROUP,
    UNKNOWN_FIELD,
    INVALID_VALUE,
    NO_COLON,
    IGNORED_LINE,
    USAGE_INVALID,
) = range(len(_NOTES))
_NOTE_KINDS = tuple(name for name, _ in _NOTES)
_NOTE_TEXT = tuple(text for _, text in _NOTES)

_UTF8_BOM = b"\xef\xbb\xbf"


@dataclass(frozen=True)
class Diagnostic:
    """A note about one line of a robots.txt body."""

    line: int
    kind: str
    message: str

    def __str__(self) -> str:
        return f"line {self.line}: {self.message}"


class Group(NamedTuple):
    """One group (rfc9309) or record (1994): its user-agent lines and rules.

    A view made on demand from the compact tables of :class:`Parsed`.  The
    group's rules are always one contiguous run ``start:end`` of the file-wide
    rule tables, because a group only ends where the next one starts.
    """

    number: int
    agents: tuple[str, ...]
    start: int
    end: int


class _GroupDraft:
    """A group while its lines are read; :meth:`Parsed.pack_groups` packs them."""

    __slots__ = ("agents", "crawl_delay", "end", "request_rate", "start")

    def __init__(self, start: int) -> None:
        self.agents: list[bytes] = []  # as written; decoded once, when packed
        self.start = start
        self.end = start
        self.crawl_delay: float | None = None
        self.request_rate: RequestRate | None = None

    def add_agent(self, value: bytes) -> None:
        self.agents.append(value)


class RequestRate(NamedTuple):
    """``Request-rate: 1/5`` -> ``RequestRate(requests=1, seconds=5.0)``."""

    requests: int
    seconds: float


_REQUEST_RATE_RE = re.compile(
    rb"\s*(\d{1,9})\s*/\s*(\d{1,9}(?:\.\d{0,9})?)\s*([smhd]?)", re.IGNORECASE
)
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


# Spellings of Allow/Disallow keys: each file numbers its own, so a rule
# stores a small number instead of a string, and no table outlives its file
# (a table shared by every file grew with each hostile one).
# Codes stay below 2**13 (CODE_MASK): past that many spellings in one file, a
# new one is reported in its canonical form.
CANONICAL_SPELLINGS = ("Disallow", "Allow")
_SPELLING_LIMIT = 1 << (LINE_SHIFT - 1)


class _NoteLog:
    """Diagnostics as kind numbers; turned into text only when asked for."""

    __slots__ = ("details", "dropped", "kinds", "lines")

    def __init__(self) -> None:
        self.lines = array("I")
        self.kinds = array("B")
        self.details: list[str] = []
        self.dropped = 0

    def text(self) -> str:
        """All notes in one string: a crawl keeps thousands of parsed files.

        The first line holds the number of notes not kept, then one line per
        note: ``<line> <kind> <detail>`` (a detail comes from one line of the
        body, so it never holds a line break).
        """
        records = [
            f"{line} {kind} {detail}"
            for line, kind, detail in zip(
                self.lines, self.kinds, self.details, strict=True
            )
        ]
        return "\n".join([str(self.dropped), *records])


_NO_RULES = array("I")


class Parsed:
    """Everything read from one body, in compact tables.

    Rule ``i`` is at line ``rules[i] >> LINE_SHIFT``; ``rules[i] & CODE_MASK``
    is its code: its kind (bit 0: allow) and the id of its key's spelling; its
    pattern is the ``i``-th item of ``rule_values.split(b"\\n")`` (a value never
    holds a line break) until the first query replaces the bytes by a
    :class:`~scrapy_robots_std.robotstxt.matcher.PatternTable`.

    Groups: ``agent_text`` holds every group's user-agent values in file
    order, each followed by a line break (one string: 40,000 agent lines as
    separate strings kept 3 MB), and ``group_bounds`` three numbers per group
    (where its agents start in ``agent_text``, its first rule, the rule after
    its last), then the length of ``agent_text``.  ``group_extras`` maps a
    group's number to its (Crawl-delay, Request-rate) when it has either.
    ``spellings``: the Allow/Disallow keys as written, by spelling id.
    """

    __slots__ = (
        "_size",
        "agent_text",
        "group_bounds",
        "group_extras",
        "note_text",
        "notes",
        "rule_values",
        "rules",
        "sitemap_text",
        "spellings",
        "truncated",
        "usage",
    )

    def __init__(self) -> None:
        self.agent_text = ""
        self._size: int | None = None  # see size()
        self.spellings: tuple[str, ...] = CANONICAL_SPELLINGS
        self.group_bounds: array[int] = _NO_RULES
        self.group_extras: dict[int, tuple[float | None, RequestRate | None]] | None
        self.group_extras = None
        self.rules = array("I")
        self.rule_values: bytes | PatternTable = b""
        # Sitemap URLs joined by line breaks (a URL comes from one line).
        self.sitemap_text: str | None = None
        self.notes: _NoteLog | None = None  # while parsing
        self.note_text: str | None = None  # see _NoteLog.text
        self.truncated = False
        # Content-Usage / Content-Signal lines, when the body has any.
        self.usage: UsageRules | None = None

    def note(
        self, line: int, kind: int, detail: str = "", *, always: bool = False
    ) -> None:
        notes = self.notes
        if notes is None:
            notes = self.notes = _NoteLog()
        if len(notes.lines) >= MAX_NOTES and not always:
            notes.dropped += 1
            return
        notes.lines.append(line)
        notes.kinds.append(kind)
        notes.details.append(detail)

    def note_many(
        self, lines: list[int], kind: int, details: list[str] | None = None
    ) -> None:
        if not lines:
            return
        notes = self.notes
        if notes is None:
            notes = self.notes = _NoteLog()
        room = max(0, MAX_NOTES - len(notes.lines))
        if len(lines) > room:
            notes.dropped += len(lines) - room
            lines = lines[:room]
            details = details[:room] if details is not None else None
        notes.lines.extend(lines)
        notes.kinds.extend(bytes((kind,)) * len(lines))
        notes.details.extend(details if details is not None else [""] * len(lines))

    def pack_groups(self, drafts: list[_GroupDraft]) -> None:
        texts: list[str] = []
        bounds: list[int] = []
        extras = {}
        size = 0
        for number, draft in enumerate(drafts):
            bounds += (size, draft.start, draft.end)
            # One decode per group: a value never holds a line break, and
            # invalid UTF-8 is replaced within its own value.
            text = decode_text(b"\n".join(draft.agents) + b"\n")
            texts.append(text)
            size += len(text)
            if draft.crawl_delay is not None or draft.request_rate is not None:
                extras[number] = (draft.crawl_delay, draft.request_rate)
        if drafts:
            bounds.append(size)
            wide = max(bounds) > 0xFFFF
            self.group_bounds = array("I" if wide else "H", bounds)
        self.agent_text = "".join(texts)
        self.group_extras = extras or None

    def agents(self, group: int) -> tuple[str, ...]:
        """Group ``group``'s user-agent values, as written (decoded)."""
        bounds = self.group_bounds
        start = 3 * group
        return tuple(self.agent_text[bounds[start] : bounds[start + 3] - 1].split("\n"))

    def all_agents(self) -> tuple[str, ...]:
        """Every user-agent value in file order (every group's, in turn), decoded."""
        return tuple(self.agent_text.split("\n")[:-1])

    def size(self) -> int:
        """Bytes kept, the rule patterns excepted (an estimate from above).

        Counted once: nothing it counts changes after parsing.  The usage
        table is not counted here: what usage queries keep changes, and is
        counted by the table itself (``usage.size()``).
        """
        size = self._size
        if size is None:
            size = self._size = self._count()
        return size

    def _count(self) -> int:
        size = sys.getsizeof(self) + sys.getsizeof(self.agent_text)
        size += sys.getsizeof(self.group_bounds) + sys.getsizeof(self.rules)
        if self.spellings is not CANONICAL_SPELLINGS:
            size += sys.getsizeof(self.spellings)
            size += sum(map(sys.getsizeof, self.spellings))
        for text in (self.sitemap_text, self.note_text):
            if text is not None:
                size += sys.getsizeof(text)
        if self.group_extras is not None:
            # The dict, and a tuple, an int, a float and maybe a RequestRate each.
            size += sys.getsizeof(self.group_extras) + 200 * len(self.group_extras)
        return size

    @property
    def group_count(self) -> int:
        return len(self.group_bounds) // 3

    def groups(self) -> list[Group]:
        bounds = self.group_bounds
        agents = self.agents
        return [
            Group(number, agents(number), bounds[i + 1], bounds[i + 2])
            for number, i in enumerate(range(0, len(bounds) - 1, 3))
        ]

    def group_of(self, index: int) -> int:
        """The number of the group that holds rule ``index``."""
        bounds = self.group_bounds
        # Groups hold contiguous runs of rules, in order: the last group that
        # starts at or before the rule, stepping back over empty ones.
        number = bisect_right(bounds[1:-1:3], index) - 1
        while number >= 0 and bounds[3 * number + 2] <= index:
            number -= 1
        if number < 0:
            raise ValueError(index)
        return number

    def extras(self, group: int) -> tuple[float | None, RequestRate | None]:
        extras = self.group_extras
        if extras is None:
            return (None, None)
        return extras.get(group, (None, None))

    def without_notes(self) -> Parsed:
        """A copy sharing every table but the diagnostics."""
        copy = Parsed.__new__(Parsed)
        for name in Parsed.__slots__:
            setattr(copy, name, getattr(self, name))
        copy.note_text = None
        copy._size = None
        return copy

    def line(self, index: int) -> int:
        return self.rules[index] >> LINE_SHIFT

    def code(self, index: int) -> int:
        return self.rules[index] & CODE_MASK

    def directive(self, index: int) -> str:
        return self.spellings[self.code(index) >> 1]

    @property
    def sitemaps(self) -> tuple[str, ...]:
        text = self.sitemap_text
        return () if text is None else tuple(text.split("\n"))

    def diagnostics(self) -> list[Diagnostic]:
        if self.note_text is None:
            return []
        dropped, *records = self.note_text.split("\n")
        notes = []
        for record in records:
            line, kind, detail = record.split(" ", 2)
            notes.append((int(line), int(kind), detail))
        notes.sort()
        found = [
            Diagnostic(line, _NOTE_KINDS[kind], _NOTE_TEXT[kind].format(detail))
            for line, kind, detail in notes
        ]
        if dropped != "0":
            text = f"{dropped} more notes not kept (at most {MAX_NOTES} are)"
            found.append(Diagnostic(0, "notes-cut", text))
        return found


def decode_text(value: bytes) -> str:
    """Bytes as written, for people: invalid UTF-8 shown as U+FFFD."""
    return value.decode("utf-8", "replace")


def body_end(body: bytes) -> int:
    """Where the parser stops reading ``body``: RFC 9309 2.5 (docs/standards.md).

    At least :data:`MAX_BODY_BYTES`; the line that crosses that boundary is
    completed up to its line end (CR, LF or CRLF) when the end comes within
    :data:`LINE_COMPLETION_BYTES`, or kept whole when the body ends there.
    Otherwise that partial line is dropped: half a rule (``Disallow: /private``
    cut to ``Disallow: /``) can mean something very different from the whole.
    """
    size = len(body)
    limit = MAX_BODY_BYTES
    if size <= limit:
        return size
    if body[limit - 1] in _LINE_ENDS:
        end = limit
    else:
        window = body[limit : limit + LINE_COMPLETION_BYTES - 1]
        ends = [at for at in (window.find(b"\n"), window.find(b"\r")) if at >= 0]
        if ends:
            end = limit + min(ends) + 1
        elif size <= limit + LINE_COMPLETION_BYTES - 1:
            return size  # the last line ends with the body
        else:
            head = body[:limit]
            end = max(head.rfind(b"\n"), head.rfind(b"\r")) + 1
    if end and body[end - 1] == 0x0D and body[end : end + 1] == b"\n":
        end += 1  # the LF of a CRLF
    return end


_LINE_ENDS = b"\r\n"


def prepare_body(body: bytes) -> tuple[bytes, bool]:
    """Cut the body where the parser stops (:func:`body_end`), skip a (partial)
    BOM, and end lines with LF.  ``truncated``: something was left out."""
    end = body_end(body)
    truncated = end < len(body)
    if truncated:
        body = body[:end]
    # The reference skips any prefix of the UTF-8 BOM, even a partial one.
    for size in (3, 2, 1):
        if body[:size] == _UTF8_BOM[:size]:
            body = body[size:]
            break
    # CR, LF and CRLF each end exactly one line, as in the reference.
    if b"\r" in body:
        body = body.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
    return body, truncated


def _cut_long_lines(text: bytes, lines: list[bytes], parsed: Parsed) -> None:
    if len(text) <= MAX_LINE_BYTES or max(map(len, lines)) <= MAX_LINE_BYTES:
        return
    for index, line in enumerate(lines):
        if len(line) > MAX_LINE_BYTES:
            lines[index] = line[:MAX_LINE_BYTES]
            parsed.note(index + 1, LINE_CUT)


# Without a colon the reference accepts exactly "<key><space or tab><value>".
_NO_COLON_RE = re.compile(rb"([^ \t]+)[ \t]+([^ \t]+)")

# Key types.  Disallow and Allow are 0 and 1, the rule kinds.
_UA, _SITEMAP, _CRAWL_DELAY, _REQUEST_RATE, _UNKNOWN, _NOT_A_KEY, _COMMENT = range(2, 9)
# Usage-preference lines (attach-05): group rules for usage, unseen by access.
_CONTENT_USAGE, _CONTENT_SIGNAL = 9, 10
_USAGE_LABELS = {
    b"content-usage": _CONTENT_USAGE,
    b"content-signal": _CONTENT_SIGNAL,
}
# The lines that shape usage groups, as usage_rules names them.
_USAGE_ROLES = {
    _UA: _usage_rules.AGENT,
    ALLOW: _usage_rules.ACCESS,
    DISALLOW: _usage_rules.ACCESS,
    _CONTENT_USAGE: _usage_rules.CONTENT_USAGE,
    _CONTENT_SIGNAL: _usage_rules.CONTENT_SIGNAL,
}

_DISALLOW_TYPOS = (b"dissallow", b"dissalow", b"disalow", b"diasllow", b"disallaw")
# The first letters of every key below, both cases (a one-byte slice of the key).
_KEY_INITIALS = frozenset(bytes((c,)) for c in b"uadscrUADSCR")


class _Key:
    """A line's key, classified.  Compared and hashed by identity: a file's
    distinct keys are looked up once per rule line (``codes`` in
    :func:`parse_rfc9309`), and cached keys are shared objects."""

    __slots__ = ("type", "typo", "written")

    def __init__(self, type: int, written: str, typo: bool) -> None:
        self.type = type
        self.written = written  # the key as written, without surrounding whitespace
        self.typo = typo  # an accepted misspelling


def _classify_rfc9309(raw_key: bytes) -> _Key:
    """The reference's Key::Parse: same order, prefix tests, accepted typos.

    ``raw_key`` is everything before a line's first colon.  When it holds a
    ``#``, the colon was inside a comment: the line has no key of this kind.
    """
    if b"#" in raw_key:
        return _COMMENT_KEY if raw_key.lstrip()[:1] == b"#" else _NOT_A_KEY_KEY
    key = raw_key.strip()
    written = decode_text(key)
    if key[:1] not in _KEY_INITIALS:
        # Most junk (an HTML page's "<a href=...") fails here, before the tests.
        return _Key(_UNKNOWN, written, False)
    lower = key.lower()
    key_type, typo = _UNKNOWN, False
    if lower.startswith(b"user-agent"):
        key_type = _UA
    elif lower.startswith((b"useragent", b"user agent")):
        key_type, typo = _UA, True
    elif lower.startswith(b"allow"):
        key_type = ALLOW
    elif lower.startswith(b"disallow"):
        key_type = DISALLOW
    elif lower.startswith(_DISALLOW_TYPOS):
        key_type, typo = DISALLOW, True
    elif lower.startswith(b"sitemap"):
        key_type = _SITEMAP
    elif lower.startswith(b"site-map"):
        key_type, typo = _SITEMAP, True
    # The reference reports these two as unknown keys; we read them for
    # politeness, and they never change which rules apply.
    elif lower.startswith(b"crawl-delay"):
        key_type = _CRAWL_DELAY
    elif lower.startswith(b"request-rate"):
        key_type = _REQUEST_RATE
    elif lower in _USAGE_LABELS:  # the whole label, as attach-05 writes it
        key_type = _USAGE_LABELS[lower]
    return _Key(key_type, written, typo)


# A colon inside a comment: the whole line is a comment, or the text before
# the "#" has no colon and must be read again as "<key> <value>".
_COMMENT_KEY = _Key(_COMMENT, "", False)
_NOT_A_KEY_KEY = _Key(_NOT_A_KEY, "", False)

# Keys as classified, shared by every parse: bounded in entries and in the
# size of each key, so hostile bodies cannot grow it past about 300 KB.
_KEY_CACHE: dict[bytes, _Key] = {}
_KEY_CACHE_LIMIT = 4096
_KEY_CACHE_MAX_KEY = 32


def _key_rfc9309(raw_key: bytes) -> _Key:
    found = _KEY_CACHE.get(raw_key)
    if found is None:
        found = _classify_rfc9309(raw_key)
        # Junk (HTML served as robots.txt) must not fill the cache: keep
        # recognised keys and short unknown ones ("Host", "Clean-param").
        cacheable = len(raw_key) <= _KEY_CACHE_MAX_KEY and (
            found.type < _UNKNOWN
            or found.type > _COMMENT
            or (found.type == _UNKNOWN and len(raw_key) <= 24)
        )
        if cacheable and len(_KEY_CACHE) < _KEY_CACHE_LIMIT:
            _KEY_CACHE[raw_key] = found
    return found


class _Builder:
    """Assembles a :class:`Parsed` while lines are read, in file order."""

    def __init__(self, parsed: Parsed) -> None:
        self.parsed = parsed
        self.values: list[bytes] = []
        self.groups: list[_GroupDraft] = []
        self.group: _GroupDraft | None = None
        self.sitemaps: list[str] = []
        self.spellings = {"Disallow": 0, "Allow": 1}  # CANONICAL_SPELLINGS

    def code(self, key: _Key) -> int:
        """A rule's code (spelling id << 1 | kind) for a key of this file."""
        spellings = self.spellings
        found = spellings.get(key.written)
        if found is None:
            if len(spellings) >= _SPELLING_LIMIT:
                found = key.type  # the canonical spelling of its kind
            else:
                found = spellings[key.written] = len(spellings)
        return found << 1 | key.type

    def end_group(self) -> None:
        if self.group is not None:
            self.group.end = len(self.values)
        self.group = None

    def user_agent(self, value: bytes) -> None:
        group = self.group
        # Consecutive user-agent lines share one group; one that follows a
        # rule of the group starts the next group.
        if group is None or len(self.values) > group.start:
            self.end_group()
            group = self.group = _GroupDraft(len(self.values))
            self.groups.append(group)
        group.add_agent(value)

    def rule(self, line: int, key: _Key, value: bytes) -> None:
        if self.group is None:
            self.parsed.note(line, OUTSIDE_GROUP, key.written)
            return
        self.parsed.rules.append(line << LINE_SHIFT | self.code(key))
        self.values.append(value)

    def group_value(
        self, line: int, key: _Key, value: bytes, convert: Callable[[bytes], object]
    ) -> None:
        group = self.group
        if group is None:
            self.parsed.note(line, OUTSIDE_GROUP, key.written)
            return
        converted = convert(value)
        field = "crawl_delay" if key.type == _CRAWL_DELAY else "request_rate"
        if converted is None:
            self.parsed.note(
                line, INVALID_VALUE, f"{key.written} value {decode_text(value)!r}"
            )
        elif getattr(group, field) is None:
            setattr(group, field, converted)  # the first usable value counts

    def finish(self) -> Parsed:
        self.end_group()
        parsed = self.parsed
        parsed.rule_values = b"\n".join(self.values)
        parsed.pack_groups(self.groups)
        if self.sitemaps:
            parsed.sitemap_text = "\n".join(self.sitemaps)
        if len(self.spellings) > len(CANONICAL_SPELLINGS):
            parsed.spellings = tuple(self.spellings)
        if not parsed.rules:
            parsed.rules = _NO_RULES
        if parsed.truncated:
            parsed.note(0, BODY_CUT, always=True)
        if parsed.notes is not None:
            parsed.note_text = parsed.notes.text()
            parsed.notes = None
        return parsed


def _first(entry: tuple[int, bytes, _Key]) -> int:
    return entry[0]


def _start(body: bytes) -> tuple[bytes, list[bytes], _Builder]:
    """The prepared body, its lines (over-long ones cut), and a builder."""
    text, truncated = prepare_body(body)
    parsed = Parsed()
    parsed.truncated = truncated
    lines = text.split(b"\n")
    _cut_long_lines(text, lines, parsed)
    return text, lines, _Builder(parsed)


def _clean_value(value: bytes) -> bytes:
    """The value as the reference sees it: comment cut off, whitespace stripped."""
    return value.split(b"#", 1)[0].strip()


def _lines_without_key(
    lines: list[bytes], numbers: list[int], parsed: Parsed
) -> list[tuple[int, bytes, _Key]]:
    """Lines with no colon before their comment: "<key> <value>", or junk."""
    found = []
    junk = []
    fullmatch = _NO_COLON_RE.fullmatch
    for number in numbers:
        content = lines[number - 1].split(b"#", 1)[0].strip()
        if not content:
            continue  # blank or comment-only
        match = fullmatch(content)
        if match is None:
            junk.append(number)
            continue
        raw_key, value = match.groups()
        key = _key_rfc9309(raw_key)
        parsed.note(number, MISSING_COLON, key.written)
        # Only spaces and tabs separate, but all ASCII whitespace is stripped.
        found.append((number, value.strip(), key))
    parsed.note_many(junk, IGNORED_LINE)
    return found


def parse_rfc9309(body: bytes) -> Parsed:
    """Read a body the way the reference parser does.

    The work is done in whole-list passes over parallel lists (``split``,
    ``find``, ``compress``, comprehensions) rather than one Python-level step
    per line, and it creates no container object per line, so the garbage
    collector has nothing to chase.  Only user-agent lines and the rare
    special lines are visited one by one.
    """
    text, lines, builder = _start(body)
    parsed = builder.parsed
    note = parsed.note
    if b"\x00" in text:
        # A NUL octet ends its line, as in the reference (which works on C strings).
        lines = [
            line.split(b"\x00", 1)[0] if b"\x00" in line else line for line in lines
        ]
    colons = list(map(bytes.find, lines, repeat(b":")))

    # Parallel lists over the lines that have a colon: line number, raw value, key.
    numbers = [number for number, colon in enumerate(colons, 1) if colon >= 0]
    values = [
        line[colon + 1 :]
        for line, colon in zip(lines, colons, strict=True)
        if colon >= 0
    ]
    cache = _KEY_CACHE
    keys = [
        cache.get(raw) or _key_rfc9309(raw)
        for raw in [
            line[:colon]
            for line, colon in zip(lines, colons, strict=True)
            if colon >= 0
        ]
    ]
    types = [key.type for key in keys]

    # Lines with text but no colon before any comment: "key value", or junk.
    # (Comment lines with a colon stay in the lists as _COMMENT and are ignored.)
    odd = [
        n
        for n, line, colon in zip(count(1), lines, colons, strict=False)
        if colon < 0 and line and line[0] != 35  # "#"
    ]
    if _NOT_A_KEY in types:
        odd = sorted(
            odd + [n for n, t in zip(numbers, types, strict=True) if t == _NOT_A_KEY]
        )
        keep = [t != _NOT_A_KEY for t in types]
        numbers = list(compress(numbers, keep))
        values = list(compress(values, keep))
        keys = list(compress(keys, keep))
        types = list(compress(types, keep))
    bare = _lines_without_key(lines, odd, parsed) if odd else []
    if bare:
        merged = sorted([*zip(numbers, values, keys, strict=True), *bare], key=_first)
        numbers = [entry[0] for entry in merged]
        values = [entry[1] for entry in merged]
        keys = [entry[2] for entry in merged]
        types = [key.type for key in keys]

    special = [i for i, key in enumerate(keys) if _UA < key.type < _COMMENT or key.typo]
    for i in special:
        key = keys[i]
        if key.typo:
            note(numbers[i], MISSPELLING, key.written)
        if key.type == _SITEMAP:
            value = _clean_value(values[i])
            if value:
                builder.sitemaps.append(decode_text(value))
    # ": value" (an empty key) is ignored without a note, as in the reference.
    unknown = [i for i in special if keys[i].type == _UNKNOWN and keys[i].written]
    parsed.note_many(
        [numbers[i] for i in unknown], UNKNOWN_FIELD, [keys[i].written for i in unknown]
    )

    if _CONTENT_USAGE in types or _CONTENT_SIGNAL in types:
        roles = _USAGE_ROLES
        entries = [
            _usage_rules.Entry(number, roles[key_type], _clean_value(value))
            for number, key_type, value in zip(numbers, types, values, strict=True)
            if key_type in roles
        ]
        _collect_usage(parsed, entries, every_record=False)

    agent_lines = [i for i, key_type in enumerate(types) if key_type == _UA]
    first = agent_lines[0] if agent_lines else len(types)
    for i in [i for i, key_type in enumerate(types[:first]) if key_type <= ALLOW]:
        note(numbers[i], OUTSIDE_GROUP, keys[i].written)
    if not agent_lines:
        return builder.finish()

    # Rules from the first user-agent line on, in file order, in the tables.
    is_rule = [key_type <= ALLOW for key_type in types[first:]]
    # Each distinct key of the file gets its code once (keys are few).
    codes = {
        key: builder.code(key) for key in dict.fromkeys(compress(keys[first:], is_rule))
    }
    parsed.rules = array(
        "I",
        [
            number << LINE_SHIFT | codes[key]
            for number, key in zip(
                compress(numbers[first:], is_rule),
                compress(keys[first:], is_rule),
                strict=True,
            )
        ],
    )
    rule_values = compress(values[first:], is_rule)
    if b"#" in text:
        builder.values = [value.split(b"#", 1)[0].strip() for value in rule_values]
    else:
        builder.values = [value.strip() for value in rule_values]

    # rules_before[i]: how many rules of the tables come before entry first + i.
    rules_before = list(accumulate(is_rule, initial=0))
    group_of_agent: list[_GroupDraft] = []
    group: _GroupDraft | None = None
    for i in agent_lines:
        position = rules_before[i - first]
        if group is None or position > group.start:
            # A user-agent line after a rule starts the next group.
            if group is not None:
                group.end = position
            group = _GroupDraft(position)
            builder.groups.append(group)
        group.add_agent(_clean_value(values[i]))
        group_of_agent.append(group)

    for i in special:
        key = keys[i]
        if key.type == _CRAWL_DELAY or key.type == _REQUEST_RATE:
            # The group of the closest user-agent line above.
            owner = bisect_right(agent_lines, i) - 1
            builder.group = group_of_agent[owner] if owner >= 0 else None
            convert = parse_delay if key.type == _CRAWL_DELAY else parse_rate
            builder.group_value(numbers[i], key, _clean_value(values[i]), convert)
    builder.group = group
    return builder.finish()


_1994_FIELDS = {
    b"user-agent": _UA,
    b"disallow": DISALLOW,
    b"allow": ALLOW,
    b"sitemap": _SITEMAP,
    **_USAGE_LABELS,
}


def _collect_usage(
    parsed: Parsed, entries: list[_usage_rules.Entry], *, every_record: bool
) -> None:
    usage, notes = _usage_rules.collect(entries, every_record=every_record)
    for line, outside, detail in notes:
        parsed.note(line, OUTSIDE_GROUP if outside else USAGE_INVALID, detail)
    parsed.usage = usage


def parse_1994(body: bytes) -> Parsed:
    _, lines, builder = _start(body)
    parsed = builder.parsed
    usage = False
    for line, raw in enumerate(lines, 1):
        content = raw.split(b"\x00", 1)[0]
        if not content.strip():
            builder.end_group()  # a blank line ends the record
            continue
        content = content.split(b"#", 1)[0].strip()
        if not content:
            continue  # a comment-only line is not blank
        raw_key, colon, value = content.partition(b":")
        if not colon:
            parsed.note(line, NO_COLON)
            continue
        value = value.strip()
        written = decode_text(raw_key.strip())
        key_type = _1994_FIELDS.get(raw_key.strip().lower(), _UNKNOWN)
        if key_type <= ALLOW:
            builder.rule(line, _Key(key_type, written, False), value)
        elif key_type == _UA:
            builder.user_agent(value)
        elif key_type == _SITEMAP:
            if value:
                builder.sitemaps.append(decode_text(value))
        elif key_type > _COMMENT:
            usage = True
        else:
            parsed.note(line, UNKNOWN_FIELD, written)
    if usage:
        _collect_usage(parsed, _usage_rules.entries_1994(lines), every_record=True)
    return builder.finish()
