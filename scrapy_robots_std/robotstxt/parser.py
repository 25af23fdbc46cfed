"""Events -> :class:`Parsed`: one builder per standard, complete when parse returns.

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
from bisect import bisect_left, bisect_right
from itertools import accumulate, compress, count, repeat
from operator import and_, is_, itemgetter
from typing import TYPE_CHECKING, NamedTuple

from scrapy_robots_std.robotstxt import usage_rules as _usage_rules
from scrapy_robots_std.robotstxt.layout import (
    MAX_SPELLINGS,
    Groups,
    Rules,
    rule_code,
    with_line,
    with_lines,
)
from scrapy_robots_std.robotstxt.patterns import (
    index_html_directory,
    normalize_1994,
    normalize_rfc9309,
)
from scrapy_robots_std.robotstxt.reader import (
    MAX_BODY_BYTES,
    MAX_READ_BYTES,
    RFC9309,
    STANDARDS,
    STD1994,
    USAGE_STAGE,
    VALUE_STAGE,
    Diagnostic,
    Field,
    Key,
    Note,
    Reading,
    decode_text,
    read_1994,
    read_rfc9309,
)

if TYPE_CHECKING:
    from scrapy_robots_std.robotstxt.usage_rules import UsageRules

__all__ = [
    "MAX_BODY_BYTES",
    "MAX_READ_BYTES",
    "RFC9309",
    "STANDARDS",
    "STD1994",
    "Diagnostic",
    "Parsed",
    "RequestRate",
    "parse",
]


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


class Parsed:
    """Everything read from one body.  Immutable: built by :func:`parse`."""

    __slots__ = (
        "extras",
        "groups",
        "note_text",
        "rules",
        "sitemap_text",
        "spellings",
        "standard",
        "truncated",
        "usage",
    )

    def __init__(
        self, standard: str, groups: Groups, rules: Rules, spellings: tuple[str, ...]
    ) -> None:
        self.standard = standard
        self.groups = groups
        self.rules = rules
        self.spellings = spellings  # Allow/Disallow keys as written, by id
        self.extras: dict[int, Extras] | None = None  # Crawl-delay, Request-rate
        self.sitemap_text: str | None = None  # one URL per line
        self.note_text: str | None = None  # see reader.Notes.text
        self.truncated = False
        self.usage: UsageRules | None = None  # Content-Usage / Content-Signal

    @property
    def sitemaps(self) -> tuple[str, ...]:
        text = self.sitemap_text
        return () if text is None else tuple(text.split("\n"))

    def all_agents(self) -> tuple[str, ...]:
        """Every user-agent value in file order, decoded."""
        return tuple(self.groups.agent_text.split("\n")[:-1])

    def extras_of(self, group: int) -> Extras:
        extras = self.extras
        return (None, None) if extras is None else extras.get(group, (None, None))

    def without_notes(self) -> Parsed:
        """A copy sharing every table but the diagnostics."""
        copy = Parsed.__new__(Parsed)
        for name in Parsed.__slots__:
            setattr(copy, name, getattr(self, name))
        copy.note_text = None
        return copy

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


_CANONICAL_SPELLINGS = ("Disallow", "Allow")


class _Group:
    """A group while its lines are read."""

    __slots__ = ("agents", "crawl_delay", "has_rules", "request_rate", "start")

    def __init__(self, start: int) -> None:
        self.agents: list[bytes] = []
        self.start = start  # its first rule in the builder's columns
        self.has_rules = False
        self.crawl_delay: float | None = None
        self.request_rate: RequestRate | None = None


class _Builder:
    """Turns one standard's events into a :class:`Parsed` (1994: line by line)."""

    def __init__(self, reading: Reading, standard: str) -> None:
        self.reading = reading
        self.standard = standard
        self.notes = reading.notes
        self.groups: list[_Group] = []
        self.group: _Group | None = None
        self.sitemaps: list[str] = []
        self.spellings = {"Disallow": 0, "Allow": 1}
        self.usage = False
        self.values_outside: list[tuple[int, str]] = []
        # Every group's rules, group after group: a group's are one run.
        self.rule_codes: list[int] = []
        self.rule_values: list[bytes] = []

    def build(self) -> Parsed:
        codes: dict[Key, int] = {}  # each distinct rule key's code, line 0
        reading = self.reading
        for line, key, value in zip(
            reading.numbers, reading.keys, reading.values, strict=True
        ):
            field = key.field
            if field <= Field.ALLOW:
                group = self.group
                if group is None:
                    self.outside_group(line, key)
                    continue
                group.has_rules = True
                if value:  # an empty pattern never decides
                    code = codes.get(key)
                    if code is None:
                        code = codes[key] = self.code(key)
                    self.rule_codes.append(with_line(code, line))
                    self.rule_values.append(value)
            elif field is Field.USER_AGENT:
                self.user_agent(value)
            elif field is Field.SITEMAP:
                self.sitemap(value)
            elif field is Field.BLANK:
                self.group = None
            elif field is Field.CONTENT_USAGE or field is Field.CONTENT_SIGNAL:
                self.usage = True
        return self.finish()

    def user_agent(self, value: bytes) -> None:
        group = self.group
        if group is None or group.has_rules:  # a user-agent line after a rule
            group = self.group = _Group(len(self.rule_codes))
            self.groups.append(group)
        group.agents.append(value)

    def outside_group(self, line: int, key: Key) -> None:
        stage = None if self.standard == RFC9309 else 1  # 1994: in line order
        self.notes.add(line, Note.OUTSIDE_GROUP, key.written, stage)

    def sitemap(self, value: bytes) -> None:
        if value:
            self.sitemaps.append(decode_text(value))

    def code(self, key: Key) -> int:
        """A rule key's code at line 0: its spelling in this file, its kind."""
        spelling = self.spellings.get(key.written)
        if spelling is None:
            if len(self.spellings) < MAX_SPELLINGS:
                spelling = self.spellings[key.written] = len(self.spellings)
            else:
                spelling = int(key.field)  # reported in its canonical form
        return rule_code(0, spelling, key.field is Field.ALLOW)

    def group_value(self, line: int, key: Key, value: bytes) -> None:
        group = self.group
        if group is None:
            # Noted at the end, and only when the file has groups at all.
            self.values_outside.append((line, key.written))
            return
        if key.field is Field.CRAWL_DELAY:
            delay = parse_delay(value)
            if delay is not None and group.crawl_delay is None:
                group.crawl_delay = delay  # the first usable value counts
            found: object = delay
        else:
            rate = parse_rate(value)
            if rate is not None and group.request_rate is None:
                group.request_rate = rate
            found = rate
        if found is None:
            detail = f"{key.written} value {decode_text(value)!r}"
            self.notes.add(line, Note.INVALID_VALUE, detail, VALUE_STAGE)

    def finish(self) -> Parsed:
        tables, spans = self.tables()
        agents = [
            [decode_text(value) for value in group.agents] for group in self.groups
        ]
        groups = Groups(
            agents,
            [
                (*span, group.has_rules)
                for span, group in zip(spans, self.groups, strict=True)
            ],
        )
        spellings = tuple(self.spellings)
        if spellings == _CANONICAL_SPELLINGS:
            spellings = _CANONICAL_SPELLINGS
        parsed = Parsed(self.standard, groups, tables.rules(len(spellings)), spellings)
        extras = {
            number: (group.crawl_delay, group.request_rate)
            for number, group in enumerate(self.groups)
            if group.crawl_delay is not None or group.request_rate is not None
        }
        parsed.extras = extras or None
        parsed.sitemap_text = "\n".join(self.sitemaps) if self.sitemaps else None
        parsed.truncated = self.reading.truncated
        if self.usage:
            self.collect_usage(parsed)
        for line, written in self.values_outside if self.groups else ():
            self.notes.add(line, Note.OUTSIDE_GROUP, written, VALUE_STAGE)
        if parsed.truncated:
            self.notes.add(0, Note.BODY_CUT)
        parsed.note_text = self.notes.text()
        return parsed

    def tables(self) -> tuple[_Tables, list[tuple[int, int]]]:
        """The rules' tables, and each group's first entry and the entry after
        its last."""
        rfc9309 = self.standard == RFC9309
        tables = _Tables(rfc9309)
        starts = [group.start for group in self.groups]
        ends = [*starts[1:], len(self.rule_codes)] if starts else []
        codes, values = self.rule_codes, self.rule_values
        if not (rfc9309 and b"/index.htm" in b"\n".join(values)):
            tables.add(codes, values)  # no group gains entries: one pass
            return tables, list(zip(starts, ends, strict=True))
        spans = [
            tables.add(codes[start:end], values[start:end])
            for start, end in zip(starts, ends, strict=True)
        ]
        return tables, spans

    def collect_usage(self, parsed: Parsed) -> None:
        if self.standard == RFC9309:
            entries = [
                _usage_rules.Entry(line, _USAGE_ROLES[key.field], value)
                for line, key, value in zip(
                    self.reading.numbers,
                    self.reading.keys,
                    self.reading.values,
                    strict=True,
                )
                if key.field in _USAGE_ROLES
            ]
        else:
            entries = _usage_rules.entries_1994(self.reading.lines)
        usage, notes = _usage_rules.collect(
            entries, every_record=self.standard != RFC9309
        )
        for line, outside, detail in notes:
            kind = Note.OUTSIDE_GROUP if outside else Note.USAGE_INVALID
            self.notes.add(line, kind, detail, USAGE_STAGE)
        parsed.usage = usage


class _Rfc9309Builder(_Builder):
    """rfc9309's builder: whole-list passes over the event columns (a Python
    step per line is most of a parse); only user-agent lines and the rare
    other fields are visited one by one."""

    def build(self) -> Parsed:
        reading = self.reading
        fields: list[Field] = list(map(_FIELD, reading.keys))
        is_rule = list(map(_RULE_AT_MOST.__ge__, fields))
        agents = list(compress(count(), map(is_, fields, repeat(Field.USER_AGENT))))
        first = agents[0] if agents else len(fields)
        for at in compress(range(first), is_rule):
            self.outside_group(reading.numbers[at], reading.keys[at])
        starts = self.open_groups(agents, is_rule)
        self.file_rules(first, is_rule, starts)
        self.other_fields(first, fields, starts)
        return self.finish()

    def open_groups(self, agents: list[int], is_rule: list[bool]) -> list[int]:
        """The groups, from their user-agent lines (a user-agent line after a
        rule opens the next); where each group starts among the events."""
        values = self.reading.values
        seen = list(accumulate(is_rule, initial=0))  # rule lines before each event
        starts: list[int] = []
        group = None
        for at in agents:
            if group is None or seen[at] != seen[starts[-1]]:
                group = _Group(0)
                self.groups.append(group)
                starts.append(at)
            group.agents.append(values[at])
        ends = [*starts[1:], len(is_rule)] if starts else []
        for group, start, end in zip(self.groups, starts, ends, strict=True):
            group.has_rules = seen[end] > seen[start]
        return starts

    def file_rules(self, first: int, is_rule: list[bool], starts: list[int]) -> None:
        """Every rule line in a group with a pattern, in file order (C-level
        passes: a file may have thousands)."""
        numbers, keys, values = (
            self.reading.numbers,
            self.reading.keys,
            self.reading.values,
        )
        with_value = map(and_, is_rule[first:], map(bool, values[first:]))
        rules = list(compress(range(first, len(is_rule)), with_value))
        rule_keys = list(map(keys.__getitem__, rules))
        distinct = dict(zip(map(id, rule_keys), rule_keys, strict=True))
        codes = {ident: self.code(key) for ident, key in distinct.items()}
        self.rule_codes = with_lines(
            list(map(codes.__getitem__, map(id, rule_keys))),
            list(map(numbers.__getitem__, rules)),
        )
        self.rule_values = list(map(values.__getitem__, rules))
        for group, start in zip(self.groups, starts, strict=True):
            group.start = bisect_left(rules, start)

    def other_fields(self, first: int, fields: list[Field], starts: list[int]) -> None:
        """Sitemaps, usage lines, and each group's Crawl-delay / Request-rate."""
        reading = self.reading
        others = map(
            and_,
            map(int(Field.SITEMAP).__le__, fields),
            map(int(Field.CONTENT_SIGNAL).__ge__, fields),
        )
        for at in list(compress(count(), others)):
            field, value = fields[at], reading.values[at]
            if field is Field.SITEMAP:
                self.sitemap(value)
            elif field is Field.CONTENT_USAGE or field is Field.CONTENT_SIGNAL:
                self.usage = True
            else:
                owner = bisect_right(starts, at) - 1 if at >= first else -1
                self.group = self.groups[owner] if owner >= 0 else None
                self.group_value(reading.numbers[at], reading.keys[at], value)


_FIELD = itemgetter(0)  # a Key's field
_RULE_AT_MOST = int(Field.ALLOW)  # Disallow and Allow: the fields at or below

_USAGE_ROLES = {
    Field.USER_AGENT: _usage_rules.AGENT,
    Field.ALLOW: _usage_rules.ACCESS,
    Field.DISALLOW: _usage_rules.ACCESS,
    Field.CONTENT_USAGE: _usage_rules.CONTENT_USAGE,
    Field.CONTENT_SIGNAL: _usage_rules.CONTENT_SIGNAL,
}


class _Tables:
    """Every group's entries, group after group, for one :class:`Rules`."""

    def __init__(self, rfc9309: bool) -> None:
        self.rfc9309 = rfc9309
        self.patterns: list[bytes] = []
        self.codes: list[int] = []
        self.written: dict[int, bytes] = {}

    def add(self, codes: list[int], values: list[bytes]) -> tuple[int, int]:
        """File one group's rules; its first entry and the entry after its last."""
        start = len(self.patterns)
        patterns, codes, values = self.columns(codes, values)
        self.patterns += patterns
        self.codes += codes
        if patterns is not values:
            for entry, (value, pattern) in enumerate(
                zip(values, patterns, strict=True), start
            ):
                if value is not pattern and value != pattern:
                    self.written[entry] = value
        return start, len(self.patterns)

    def columns(
        self, codes: list[int], values: list[bytes]
    ) -> tuple[list[bytes], list[int], list[bytes]]:
        """The group's patterns (normalised), codes and values as written."""
        joined = b"\n".join(values)
        if joined.isascii() and joined.find(b"%") < 0:
            patterns = values
        else:
            normalize = normalize_rfc9309 if self.rfc9309 else normalize_1994
            patterns = list(map(normalize, values))
        if self.rfc9309 and joined.find(b"/index.htm") >= 0:
            extra = _index_directories(patterns, codes, values)
            if extra[0]:
                return patterns + extra[0], codes + extra[1], values + extra[2]
        return patterns, codes, values

    def rules(self, spellings: int) -> Rules:
        return Rules(self.patterns, self.codes, self.written, self.rfc9309, spellings)


def _index_directories(
    patterns: list[bytes], codes: list[int], values: list[bytes]
) -> tuple[list[bytes], list[int], list[bytes]]:
    """An allowed ``/dir/index.html`` also allows ``/dir/`` (as ``/dir/$``)."""
    found: tuple[list[bytes], list[int], list[bytes]] = ([], [], [])
    for pattern, code, value in zip(patterns, codes, values, strict=True):
        directory = index_html_directory(pattern) if code & 1 else None
        if directory is not None:
            found[0].append(directory)
            found[1].append(code)
            found[2].append(value)
    return found


def parse(body: bytes, standard: str) -> Parsed:
    """Read and build ``body`` under ``standard`` (``"rfc9309"`` or ``"1994"``)."""
    if standard == RFC9309:
        return _Rfc9309Builder(read_rfc9309(body), standard).build()
    return _Builder(read_1994(body), standard).build()
