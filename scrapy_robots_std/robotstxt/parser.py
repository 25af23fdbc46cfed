"""Events -> :class:`Parsed`, for both standards, complete when parse returns.

rfc9309 (RFC 9309 2.1, as the reference groups lines): consecutive user-agent
lines open a group, which ends only when a user-agent line follows a rule;
rules before the first user-agent line are ignored.  1994: a record is
user-agent lines then rule lines, ended by a blank line.

At the end of the parse each group's rules are normalised and stored in file
order (``layout.Rules``); a check compiles its token's groups into match order
(``matcher.py``).  No query changes a :class:`Parsed`.
"""

from __future__ import annotations

import math
import re
import sys
from dataclasses import dataclass, replace
from itertools import compress, count
from operator import is_not
from typing import TYPE_CHECKING, NamedTuple

from scrapy_robots_std.robotstxt import usage_rules as _usage_rules
from scrapy_robots_std.robotstxt.layout import (
    MAX_SPELLINGS,
    Groups,
    Rules,
    kind_allows,
    rule_kind,
)
from scrapy_robots_std.robotstxt.patterns import (
    index_html_directory,
    normalize_1994,
    normalize_rfc9309,
)
from scrapy_robots_std.robotstxt.reader import (
    RFC9309,
    Field,
    Key,
    Note,
    Notes,
    Reading,
    decode_text,
    read_1994,
    read_rfc9309,
)

if TYPE_CHECKING:
    from scrapy_robots_std.robotstxt.usage_rules import UsageRules


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


Extras = tuple[float | None, RequestRate | None]


@dataclass(slots=True, eq=False, repr=False)  # a repr would print every table
class Parsed:
    """Everything read from one body.  Immutable: built by :func:`parse`."""

    standard: str
    groups: Groups
    rules: Rules
    spellings: tuple[str, ...]  # Allow/Disallow keys as written, by id
    extras: dict[int, Extras] | None = None  # Crawl-delay, Request-rate
    sitemap_text: str | None = None  # one URL per line
    note_text: str | None = None  # see reader.Notes.text
    truncated: bool = False
    usage: UsageRules | None = None  # Content-Usage / Content-Signal

    @property
    def sitemaps(self) -> tuple[str, ...]:
        text = self.sitemap_text
        return () if text is None else tuple(text.split("\n"))

    def without_notes(self) -> Parsed:
        """A copy sharing every table but the diagnostics (rules: see Rules.once)."""
        return replace(self, note_text=None, rules=self.rules.once())

    def size(self) -> int:
        """Bytes kept (an estimate from above, see ``RobotsTxt.memory_bytes``)."""
        size = sys.getsizeof(self) + self.groups.size() + self.rules.size()
        for text in (self.sitemap_text, self.note_text):
            if text is not None:
                size += sys.getsizeof(text)
        if self.extras is not None:
            # The dict, and a tuple, a float and maybe a RequestRate each.
            size += sys.getsizeof(self.extras) + 200 * len(self.extras)
        if self.spellings is not _CANONICAL_SPELLINGS:
            size += sys.getsizeof(self.spellings) + sum(
                map(sys.getsizeof, self.spellings)
            )
        return size


_CANONICAL_SPELLINGS = ("Disallow", "Allow")  # spelling numbers 0 and 1, as Field's
_CANONICAL_KINDS = {
    written: rule_kind(at, at == Field.ALLOW)
    for at, written in enumerate(_CANONICAL_SPELLINGS)
}


# Members as plain names: ``Field.ALLOW`` in a loop would be a class-attribute
# lookup through the enum's metaclass for every line.
_ALLOW, _USER_AGENT, _BLANK = Field.ALLOW, Field.USER_AGENT, Field.BLANK
_UNKNOWN = Field.UNKNOWN
_SITEMAP, _CRAWL_DELAY = Field.SITEMAP, Field.CRAWL_DELAY
_USAGE_FIELDS = frozenset((Field.CONTENT_USAGE, Field.CONTENT_SIGNAL))


class _Columns:
    """What a builder collects, for :func:`_assemble`: each group's agents and
    first rule, and every group's rules (group after group, in file order)."""

    def __init__(self) -> None:
        self.agents: list[list[bytes]] = []
        self.starts: list[int] = []  # each group's first rule in the rule columns
        self.has_rules: list[bool] = []
        self.lines: list[int] = []  # the rule columns: line, kind, value
        self.kinds: list[int] = []
        self.values: list[bytes] = []
        self.kind_of = dict(_CANONICAL_KINDS)  # each rule key spelling's kind
        self.spellings = list(_CANONICAL_SPELLINGS)
        self.extras: dict[int, Extras] = {}  # groups with a usable value
        self.sitemaps: list[str] = []
        self.values_outside: list[tuple[int, str]] = []
        self.usage = False

    def kind(self, key: Key) -> int:
        """A new rule key spelling's kind: its number in this file, allow or not."""
        spelling = len(self.spellings)
        if spelling < MAX_SPELLINGS:
            self.spellings.append(key.written)
        else:
            spelling = int(key.field)  # reported in its canonical form
        kind = self.kind_of[key.written] = rule_kind(spelling, key.field is _ALLOW)
        return kind

    def other(
        self, group: int, line: int, key: Key, value: bytes, notes: Notes
    ) -> None:
        """A Sitemap, usage, Crawl-delay or Request-rate line; ``group`` is
        the group it belongs to, or -1."""
        field = key.field
        if field is _SITEMAP:
            if value:
                self.sitemaps.append(decode_text(value))
            return
        if field in _USAGE_FIELDS:
            self.usage = True
            return
        if group < 0:
            # Noted at the end, and only when the file has groups at all.
            self.values_outside.append((line, key.written))
            return
        delay, rate = self.extras.get(group, (None, None))
        found = parse_delay(value) if field is _CRAWL_DELAY else parse_rate(value)
        if found is None:
            detail = f"{key.written} value {decode_text(value)!r}"
            notes.add(line, Note.INVALID_VALUE, detail)
        elif isinstance(found, RequestRate):  # the first usable value counts
            self.extras[group] = (delay, rate or found)
        elif delay is None:
            self.extras[group] = (found, rate)


def _build(standard: str, reading: Reading) -> Parsed:
    """Events -> groups, line by line, for both standards.

    User-agent lines open a group (1994: a record), which a user-agent line
    after a rule line ends (RFC 9309 2.1); in 1994 a blank line ends it too
    (the rfc9309 reader emits none).  Rule lines outside a group are ignored.
    """
    found, notes = _Columns(), reading.notes
    kind_of = found.kind_of
    is_open = rules_seen = False
    events = zip(reading.numbers, reading.keys, reading.values, strict=True)
    for line, key, value in events:
        field = key.field
        if field <= _ALLOW:
            if not is_open:
                notes.add(line, Note.OUTSIDE_GROUP, key.written)
                continue
            if not rules_seen:
                rules_seen = found.has_rules[-1] = True
            if value:  # an empty pattern never decides
                kind = kind_of.get(key.written)
                if kind is None:
                    kind = found.kind(key)
                found.lines.append(line)
                found.kinds.append(kind)
                found.values.append(value)
        elif field is _USER_AGENT:
            if not is_open or rules_seen:
                is_open, rules_seen = True, False
                found.agents.append([])
                found.starts.append(len(found.values))
                found.has_rules.append(False)
            found.agents[-1].append(value)
        elif field is _BLANK:
            is_open = False
        elif field is not _UNKNOWN:  # (no reader emits one)
            found.other(len(found.agents) - 1, line, key, value, notes)
    return _assemble(standard, reading, found)


def _assemble(standard: str, reading: Reading, found: _Columns) -> Parsed:
    """The :class:`Parsed` of a built body: tables, agents, extras, notes."""
    notes = reading.notes
    spellings = tuple(found.spellings)
    if spellings == _CANONICAL_SPELLINGS:
        spellings = _CANONICAL_SPELLINGS
    rules, starts, entries = _rules(standard == RFC9309, found, len(spellings))
    groups = Groups(found.agents, starts, entries, found.has_rules)
    sitemaps = "\n".join(found.sitemaps) if found.sitemaps else None
    parsed = Parsed(standard, groups, rules, spellings, found.extras or None, sitemaps)
    parsed.truncated = reading.truncated
    if found.usage:
        _collect_usage(parsed, reading)
    for line, written in found.values_outside if found.agents else ():
        notes.add(line, Note.VALUE_OUTSIDE_GROUP, written)
    parsed.note_text = notes.text(parsed.truncated)
    return parsed


def _rules(
    rfc9309: bool, found: _Columns, spellings: int
) -> tuple[Rules, list[int], int]:
    """The rules' table, each group's first entry, and the number of entries
    (an allowed ``/dir/index.html`` adds an entry to its group)."""
    lines, kinds, values, starts = found.lines, found.kinds, found.values, found.starts
    joined = b"\n".join(values)
    patterns = values
    if not (joined.isascii() and joined.find(b"%") < 0):
        normalize = normalize_rfc9309 if rfc9309 else normalize_1994
        forms = {value: normalize(value) for value in set(values)}  # each value once
        patterns = list(map(forms.__getitem__, values))
    if rfc9309 and joined.find(b"/index.htm") >= 0:
        order, patterns, starts = _index_directories(patterns, kinds, starts)
        lines, kinds = [lines[at] for at in order], [kinds[at] for at in order]
        values = [values[at] for at in order]
    written: dict[int, bytes] = {}
    if patterns is not values:  # normalising returns a value it keeps as is
        changed = compress(count(), map(is_not, values, patterns))
        written = {at: values[at] for at in changed if values[at] != patterns[at]}
    rules = Rules(patterns, lines, kinds, written, rfc9309, spellings)
    return rules, starts, len(patterns)


def _collect_usage(parsed: Parsed, reading: Reading) -> None:
    events = zip(reading.numbers, reading.keys, reading.values, strict=True)
    shaping = _usage_rules.SHAPING_FIELDS
    entries = [
        _usage_rules.Entry(line, key.field, value)
        for line, key, value in events
        if key.field in shaping
    ]
    usage, notes = _usage_rules.collect(
        entries, every_record=parsed.standard != RFC9309
    )
    for line, detail in notes:
        reading.notes.add(line, Note.USAGE_INVALID, detail)
    parsed.usage = usage


def _index_directories(
    patterns: list[bytes], kinds: list[int], starts: list[int]
) -> tuple[list[int], list[bytes], list[int]]:
    """An allowed ``/dir/index.html`` also allows ``/dir/`` (as ``/dir/$``), an
    entry right after it (entries stay in file order): the entry each new entry
    copies, the new patterns, and each group's first entry."""
    order: list[int] = []
    found: list[bytes] = []
    moved: list[int] = []  # each entry's new place
    for at, pattern in enumerate(patterns):
        moved.append(len(order))
        order.append(at)
        found.append(pattern)
        directory = index_html_directory(pattern) if kind_allows(kinds[at]) else None
        if directory is not None:
            order.append(at)
            found.append(directory)
    moved.append(len(order))  # a last group without rules starts at the end
    return order, found, [moved[start] for start in starts]


def parse(body: bytes, standard: str) -> Parsed:
    """Read and build ``body`` under ``standard`` (``"rfc9309"`` or ``"1994"``)."""
    reading = read_rfc9309(body) if standard == RFC9309 else read_1994(body)
    return _build(standard, reading)
