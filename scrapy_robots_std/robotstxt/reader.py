"""Bytes -> lines -> ``(line number, key, value)`` events, for both standards.

Pure and byte-level.  The rfc9309 reader splits a body the way Google's
reference parser does, leniencies included (docs/standards.md); the 1994
reader follows "A Standard for Robot Exclusion".  The reader never raises on
content: what it cannot use becomes a diagnostic with its line number.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import IntEnum
from itertools import compress, count, repeat
from operator import itemgetter, lt
from typing import TYPE_CHECKING, NamedTuple

if TYPE_CHECKING:
    from collections.abc import Sequence

RFC9309 = "rfc9309"
STD1994 = "1994"
STANDARDS = (RFC9309, STD1994)

#: RFC 9309 2.5: crawlers must parse at least the first 500 KiB.
MAX_BODY_BYTES = 512_000
#: A line that crosses :data:`MAX_BODY_BYTES` is completed up to its line end
#: when that end comes within this many bytes; otherwise the partial line is
#: dropped.  Nothing after that line is read.
LINE_COMPLETION_BYTES = 2_048
#: What a reader must keep of a longer body (the download, the CLI, the cache)
#: for the parser to decide as on the whole body: one byte more than it may
#: read, so that "there was more" stays visible.
MAX_READ_BYTES = MAX_BODY_BYTES + LINE_COMPLETION_BYTES + 1
#: The reference parser keeps at most this many bytes of one line (2083 * 8 - 1).
MAX_LINE_BYTES = 16_663
#: Diagnostics kept per body: an HTML page served as robots.txt has a note
#: for every line, and a crawl may hold thousands of parsed files.
MAX_NOTES = 1_000


class Field(IntEnum):
    """What a line's key says it is.  Disallow and Allow are the rule kinds."""

    DISALLOW = 0
    ALLOW = 1
    USER_AGENT = 2
    SITEMAP = 3
    CRAWL_DELAY = 4
    REQUEST_RATE = 5
    CONTENT_USAGE = 6
    CONTENT_SIGNAL = 7
    UNKNOWN = 8
    BLANK = 9  # 1994: a blank line ends the record


class Note(IntEnum):
    """Diagnostic kinds; :data:`_NOTES` holds each one's name, message and stage."""

    BODY_CUT = 0
    LINE_CUT = 1
    MISSPELLING = 2
    MISSING_COLON = 3
    OUTSIDE_GROUP = 4
    UNKNOWN_FIELD = 5
    INVALID_VALUE = 6
    NO_COLON = 7
    IGNORED_LINE = 8
    USAGE_INVALID = 9
    VALUE_OUTSIDE_GROUP = 10  # Crawl-delay, Request-rate: noted by the builder


_BODY_CUT_TEXT = (
    "body longer than 512000 bytes: what follows the line that crosses"
    " the limit (or that line, when longer than 2048 bytes past it) ignored"
)
_OUTSIDE_TEXT = "{} line outside any group (no User-agent line above it) ignored"
# Each kind's name, message and stage.  When a body has more than MAX_NOTES,
# the first are kept by stage, then line: the reader's stages, then the builder's.
_NOTES = (
    ("body-cut", _BODY_CUT_TEXT, 0),  # always kept, last
    ("line-cut", "line longer than 16663 bytes was cut", 0),
    ("misspelling", "misspelling {!r} accepted", 3),
    ("missing-colon", "missing ':' after {} accepted", 1),
    ("rule-outside-group", _OUTSIDE_TEXT, 6),
    ("unknown-field", "unknown field {!r} ignored", 4),
    ("invalid-value", "{} ignored", 7),
    ("no-colon", "line without ':' ignored", 1),
    ("ignored-line", "line without a key and a value ignored", 2),
    ("usage-value-invalid", "{}", 5),
    ("rule-outside-group", _OUTSIDE_TEXT, 7),
)
_STAGES = {RFC9309: [stage for _, _, stage in _NOTES]}
# 1994: the reader's notes and the builder's rules outside a record, in line order.
_STAGES[STD1994] = [
    1 if kind in (Note.UNKNOWN_FIELD, Note.OUTSIDE_GROUP) else stage
    for kind, stage in enumerate(_STAGES[RFC9309])
]


@dataclass(frozen=True)
class Diagnostic:
    """A note about one line of a robots.txt body."""

    line: int
    kind: str
    message: str

    def __str__(self) -> str:
        return f"line {self.line}: {self.message}"


class Notes:
    """Diagnostics while a body is read: every noted line, by kind.  Only the
    first :data:`MAX_NOTES` in stage order become text; the others are counted,
    so an HTML page served as robots.txt costs no text for its thousands of lines."""

    __slots__ = ("found", "stage_of")

    def __init__(self, standard: str = RFC9309) -> None:
        self.found: list[tuple[int, list[int], Sequence[Detail] | None]] = []
        self.stage_of = _STAGES[standard]

    def add(self, line: int, kind: Note, detail: Detail = "") -> None:
        self.found.append((int(kind), [line], [detail]))  # an int formats fast

    def collect(self, kind: Note) -> tuple[list[int], list[Detail]]:
        """Two lists for a reader to fill with notes of ``kind``, in line order:
        their lines, and a detail each (or none at all)."""
        lines: list[int] = []
        details: list[Detail] = []
        self.found.append((int(kind), lines, details))
        return lines, details

    def text(self, body_cut: bool) -> str | None:
        """The notes kept, in one string (a crawl keeps thousands of parsed
        files): the number not kept, then ``<line> <kind> <detail>`` per line;
        the body cut (``body_cut``) is always last."""
        records: list[tuple[int, int, Detail]] = []
        stages = {self.stage_of[kind] for kind, lines, _ in self.found if lines}
        for stage in sorted(stages):
            room = MAX_NOTES - len(records)
            if room <= 0:
                break  # later stages cannot be kept
            found: list[tuple[int, int, Detail]] = []
            for kind, lines, details in self.found:
                if self.stage_of[kind] == stage:
                    found += zip(lines[:room], repeat(kind), details or repeat(""))
            records += sorted(found, key=_LINE)[:room]
        texts = [f"{line} {kind} {_shown(detail)}" for line, kind, detail in records]
        if body_cut:
            texts.append(f"0 {int(Note.BODY_CUT)} ")
        if not texts:
            return None
        noted = sum(len(lines) for _, lines, _ in self.found)
        return "\n".join([str(noted - len(records)), *texts])


#: A note's detail: text, or a key as read (shown stripped, see _shown).
Detail = str | bytes


def _shown(detail: Detail) -> str:
    return detail if isinstance(detail, str) else decode_text(detail.strip())


_LINE = itemgetter(0)


def diagnostics(text: str | None) -> list[Diagnostic]:
    """The notes of :meth:`Notes.text`, in line order."""
    if text is None:
        return []
    dropped, *records = text.split("\n")
    notes = sorted(
        (int(line), int(kind), detail)
        for line, kind, detail in (record.split(" ", 2) for record in records)
    )
    found = [
        Diagnostic(line, _NOTES[kind][0], _NOTES[kind][1].format(detail))
        for line, kind, detail in notes
    ]
    if dropped != "0":
        text = f"{dropped} more notes not kept (at most {MAX_NOTES} are)"
        found.append(Diagnostic(0, "notes-cut", text))
    return found


def decode_text(value: bytes) -> str:
    """Bytes as written, for people: invalid UTF-8 shown as U+FFFD."""
    return value.decode("utf-8", "replace")


class Key(NamedTuple):
    """A line's key: its field, the key as written (stripped), and the note
    its lines get (an accepted typo, an unknown field), if any."""

    field: Field
    written: str
    note: Note | None = None


class Reading(NamedTuple):
    """The events of a body as columns (no object per line: a body has
    thousands of lines, and the garbage collector would chase each one)."""

    numbers: list[int]
    keys: list[Key]
    values: list[bytes]
    notes: Notes
    truncated: bool


# -- the body ---------------------------------------------------------------

_UTF8_BOM = b"\xef\xbb\xbf"
_LINE_END_RE = re.compile(rb"[\r\n]")


def body_end(body: bytes) -> int:
    """Where the parser stops reading ``body`` (RFC 9309 2.5, docs/standards.md): at
    :data:`MAX_BODY_BYTES`, completing the line that crosses it when its end
    comes within :data:`LINE_COMPLETION_BYTES`; otherwise that partial line is
    dropped (half a rule can mean something very different from the whole)."""
    size, limit = len(body), MAX_BODY_BYTES
    if size <= limit:
        return size
    found = _LINE_END_RE.search(body, limit - 1, limit + LINE_COMPLETION_BYTES - 1)
    if found is not None:
        end = found.end()
    elif size <= limit + LINE_COMPLETION_BYTES - 1:
        return size  # the last line ends with the body
    else:
        end = max(body.rfind(b"\n", 0, limit), body.rfind(b"\r", 0, limit)) + 1
    if end and body[end - 1 : end + 1] == b"\r\n":
        end += 1  # the LF of a CRLF
    return end


def prepare_body(body: bytes) -> tuple[bytes, bool]:
    """The body cut at :func:`body_end`, a (partial) BOM skipped; and whether
    something was left out.  (Its lines: ``bytes.splitlines``, which ends a
    line at CR, LF or CRLF and nowhere else.)"""
    end = body_end(body)
    truncated = end < len(body)
    body = body[:end] if truncated else body
    if body[:1] == _UTF8_BOM[:1]:
        for size in (3, 2, 1):  # the reference skips even a partial BOM
            if body[:size] == _UTF8_BOM[:size]:
                return body[size:], truncated
    return body, truncated


# -- rfc9309 ----------------------------------------------------------------

_DISALLOW_TYPOS = (b"dissallow", b"dissalow", b"disalow", b"diasllow", b"disallaw")
# (prefix, field, typo) in the order of the reference's Key::Parse.
_PREFIXES = (
    (b"user-agent", Field.USER_AGENT, False),
    (b"useragent", Field.USER_AGENT, True),
    (b"user agent", Field.USER_AGENT, True),
    (b"allow", Field.ALLOW, False),
    (b"disallow", Field.DISALLOW, False),
    *((typo, Field.DISALLOW, True) for typo in _DISALLOW_TYPOS),
    (b"sitemap", Field.SITEMAP, False),
    (b"site-map", Field.SITEMAP, True),
    # Unknown to the reference; read for politeness, they never change access.
    (b"crawl-delay", Field.CRAWL_DELAY, False),
    (b"request-rate", Field.REQUEST_RATE, False),
)
# The first letters of every key above and below, both cases.
_KEY_INITIALS = frozenset(bytes((c,)) for c in b"uadscrUADSCR")
# Usage lines (attach-05) are recognised by their whole name.
_WHOLE_NAMES = {
    b"content-usage": Field.CONTENT_USAGE,
    b"content-signal": Field.CONTENT_SIGNAL,
}
_UNKNOWN = Field.UNKNOWN
_JUNK = Key(_UNKNOWN, "", Note.UNKNOWN_FIELD)  # its line's key, as read, is its note
# Keys as classified, shared by every parse; bounded so junk cannot grow it.
_KEY_CACHE: dict[bytes, Key] = {}
_KEY_CACHE_LIMIT = 4096


def classify_rfc9309(raw_key: bytes) -> Key:
    """The reference's Key::Parse: prefix tests in its order, accepted typos.
    ``raw_key`` starts (after blanks) with one of :data:`_KEY_INITIALS`; the
    reader looked it up in :data:`_KEY_CACHE` first."""
    key = raw_key.strip()
    found, lower = _JUNK, key.lower()
    for prefix, field, typo in _PREFIXES:
        if lower.startswith(prefix):
            found = Key(field, decode_text(key), Note.MISSPELLING if typo else None)
            break
    else:
        if lower in _WHOLE_NAMES:
            found = Key(_WHOLE_NAMES[lower], decode_text(key))
    if len(raw_key) <= 32 and len(_KEY_CACHE) < _KEY_CACHE_LIMIT:
        _KEY_CACHE[raw_key] = found
    return found


# "#" starts a comment anywhere and a NUL octet ends a line's value (the
# reference works on C strings): both cut the rest of the line, so a colon
# after either is no colon.  (One literal each: the regex engine then skips
# to it at C speed.)
_COMMENT_RE = re.compile(rb"#[^\r\n]*")
_NUL_RE = re.compile(rb"\x00[^\r\n]*")
# The same where no CR ends a line alone: it may take a CRLF's CR (its LF
# still ends the line), and the regex engine skips "not LF" in its fastest loop.
_LF_COMMENT_RE = re.compile(rb"#[^\n]*")
# Without a colon the reference accepts exactly "<key><space or tab><value>".
_NO_COLON_RE = re.compile(rb"([^ \t]++)[ \t]++([^ \t]++)")
# An int: ``b"#" in body`` first tries its needle as an int, and that failed
# try costs ten times the search.
_HASH_BYTE = ord("#")


def read_rfc9309(body: bytes) -> Reading:
    """Every line with a field's key, as the reference reads it, and a note
    for each other line that says something.

    One Python step per line: a loop of a few operations per line measured
    faster than whole-list passes (``map``, ``compress``), which walk every
    line's object once per pass.
    """
    raw, truncated = prepare_body(body)
    notes = Notes()
    text = raw
    if _HASH_BYTE in raw:
        lone_cr = raw.count(b"\r") > raw.count(b"\r\n")
        text = (_COMMENT_RE if lone_cr else _LF_COMMENT_RE).sub(b"", raw)
    if 0 in text:
        text = _NUL_RE.sub(b"", text)
    lines = _split_lines(text, raw, notes)
    numbers: list[int] = []
    keys: list[Key] = []
    values: list[bytes] = []
    ignored, _ = notes.collect(Note.IGNORED_LINE)
    missing, heads = notes.collect(Note.MISSING_COLON)
    misspelt, misspellings = notes.collect(Note.MISSPELLING)
    unknown, unknown_keys = notes.collect(Note.UNKNOWN_FIELD)
    cache, initials = _KEY_CACHE, _KEY_INITIALS
    for number, line in enumerate(lines, 1):
        head, colon, value = line.partition(b":")
        if not colon:
            stripped = line.strip()
            if not stripped:
                continue
            blanks = 32 in stripped or 9 in stripped  # no regex over one long word
            match = _NO_COLON_RE.fullmatch(stripped) if blanks else None
            if match is None:
                ignored.append(number)
                continue
            head, value = match.groups()
            missing.append(number)
            heads.append(head)
        key = cache.get(head)
        if key is None:
            first = head.lstrip()[:1]
            if not first:
                continue  # an empty key (": x") is ignored without a note
            key = classify_rfc9309(head) if first in initials else _JUNK
        # key[2], key[0]: its note and field (by index: an attribute of a named
        # tuple is a descriptor call; and an enum's hash is a Python call: no dict)
        if key[2] is not None:
            if key[0] is _UNKNOWN:  # noted, not an event
                unknown.append(number)
                unknown_keys.append(head)
                continue
            misspelt.append(number)
            misspellings.append(head)
        numbers.append(number)
        keys.append(key)
        values.append(value.strip())
    return Reading(numbers, keys, values, notes, truncated)


def _split_lines(text: bytes, raw: bytes, notes: Notes) -> list[bytes]:
    """The lines of ``text`` (``raw``, maybe with comments cut), cut where the
    reference cuts ``raw``'s lines: at :data:`MAX_LINE_BYTES`."""
    lines = text.splitlines()
    if len(raw) > MAX_LINE_BYTES:
        raw_lines = lines if raw is text else raw.splitlines()
        too_long = map(lt, repeat(MAX_LINE_BYTES), map(len, raw_lines))
        for index in compress(count(), too_long):
            lines[index] = lines[index][:MAX_LINE_BYTES]
            notes.add(index + 1, Note.LINE_CUT)
    return lines


# -- 1994 -------------------------------------------------------------------

_1994_FIELDS = {
    b"user-agent": Field.USER_AGENT,
    b"disallow": Field.DISALLOW,
    b"allow": Field.ALLOW,
    b"sitemap": Field.SITEMAP,
    **_WHOLE_NAMES,
}
_BLANK = Key(Field.BLANK, "")


def read_1994(body: bytes) -> Reading:
    """Every record-shaping line: exact field names, blank lines end records."""
    text, truncated = prepare_body(body)
    notes = Notes(STD1994)
    lines = _split_lines(text, text, notes)
    numbers: list[int] = []
    keys: list[Key] = []
    values: list[bytes] = []
    no_colon, _ = notes.collect(Note.NO_COLON)
    unknown, unknown_keys = notes.collect(Note.UNKNOWN_FIELD)
    for number, raw in enumerate(lines, 1):
        content = raw.split(b"\x00", 1)[0]
        if not content.strip():
            numbers.append(number)
            keys.append(_BLANK)
            values.append(b"")
            continue
        content = content.split(b"#", 1)[0].strip()
        if not content:
            continue  # a comment-only line is not blank
        raw_key, colon, value = content.partition(b":")
        if not colon:
            no_colon.append(number)
            continue
        raw_key = raw_key.strip()
        field = _1994_FIELDS.get(raw_key.lower(), Field.UNKNOWN)
        if field is Field.UNKNOWN:
            unknown.append(number)
            unknown_keys.append(raw_key)
            continue
        numbers.append(number)
        keys.append(Key(field, decode_text(raw_key)))
        values.append(value.strip())
    return Reading(numbers, keys, values, notes, truncated)
