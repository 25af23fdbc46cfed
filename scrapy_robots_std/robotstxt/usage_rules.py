"""``Content-Usage`` and ``Content-Signal`` lines of a robots.txt, kept compactly.

The parser hands over the lines that shape groups (user-agent, rules, blank
lines in 1994 mode) only when a body holds a usage line; most bodies hold none
and pay nothing.  What is kept is three arrays and one bytes object; patterns
are normalised and values read only when a query asks (see ``usage.py``).

Grouping.  attach-05 makes both lines group rules, so a user-agent line after
one starts a new group.  Google's reference parser (whose groups decide access
here) treats them as unknown lines that never end a group, and access must not
change when usage lines are added.  So access keeps its groups and usage gets
its own partition of the same user-agent lines, with usage lines as rules.
The two differ only where a user-agent line directly follows a usage line.
"""

from __future__ import annotations

import sys
from array import array
from typing import TYPE_CHECKING, Any, NamedTuple

from scrapy_robots_std.robotstxt.sfdict import StructuredFieldError, parse_dictionary

if TYPE_CHECKING:
    from collections.abc import Iterable

# Roles of the lines handed over; the two usage kinds are also the stored kind bit.
CONTENT_USAGE = 0
CONTENT_SIGNAL = 1
AGENT = 2
ACCESS = 3  # Allow or Disallow
BLANK = 4  # 1994: ends a record

FIELDS = ("Content-Usage", "Content-Signal")

#: More usage lines than this in one file, and every usage preference of the file is
#: unknown: real files hold a handful, and each line read for a query keeps about
#: 1 KiB (its value parsed, its sources), so a hostile file stays within bounds.
MAX_USAGE_LINES = 64
#: What a query may keep per usage line (the line split, its statement parsed, its
#: sources), counted from above in :meth:`UsageRules.size` before any query.
_QUERY_BYTES_PER_LINE = 2048

_1994_ROLES = {
    b"user-agent": AGENT,
    b"allow": ACCESS,
    b"disallow": ACCESS,
    b"content-usage": CONTENT_USAGE,
    b"content-signal": CONTENT_SIGNAL,
}


class Entry(NamedTuple):
    line: int
    role: int
    value: bytes  # comment cut, whitespace stripped


class Note(NamedTuple):
    line: int
    outside: bool  # True: outside any group; False: an invalid value
    detail: str


class Line(NamedTuple):
    """One usage line, ready for a query."""

    number: int
    kind: int
    value: bytes  # as written (comment cut, whitespace stripped)
    path: bytes | None  # Content-Usage only: the path as written, b"" for none
    pattern: bytes  # the path normalised as rfc9309 patterns are (b"" for none)
    preference: bytes


def split_value(kind: int, value: bytes) -> tuple[bytes | None, bytes]:
    """attach-05 3.2: a Content-Usage value that starts with ``/`` has a path up
    to the first SP or HTAB; the rest is the preference."""
    if kind != CONTENT_USAGE:
        return None, value
    if value[:1] != b"/":
        return b"", value
    end = len(value)
    for separator in (b" ", b"\t"):
        found = value.find(separator)
        if 0 <= found < end:
            end = found
    return value[:end], value[end:].lstrip(b" \t")


class UsageRules:
    """A body's usage lines and the usage groups that hold them.

    ``codes[i]`` is line ``i``'s number << 1 | its kind; its value is the
    ``i``-th item of ``values.split(b"\\n")``.  ``groups`` holds three numbers
    per group (first agent, the agent after its last, its first usage line)
    and then the number of lines; agents index :attr:`Parsed.agents`, which
    lists every user-agent line in file order in both standards.  rfc9309
    keeps only the groups that hold usage lines; 1994 keeps every record with
    a rule, because the first record naming the robot wins even without any.
    """

    __slots__ = (
        "_lines",
        "codes",
        "groups",
        "invalid",
        "outside",
        "selections",
        "sources",
        "values",
    )

    def __init__(self) -> None:
        self.codes = array("I")
        self.groups = array("I")
        self.values = b""
        self.outside = 0
        self.invalid = 0
        self._lines: tuple[Line, ...] | None = None
        #: token -> its compiled usage lines (usage_query.Compiled), filled by
        #: queries and bounded there
        self.selections: dict[str, Any] = {}
        #: line index -> its UsageSource, built by the first query that needs it
        self.sources: dict[int, Any] = {}

    @property
    def group_count(self) -> int:
        return len(self.groups) // 3

    def agent_range(self, group: int) -> tuple[int, int]:
        return self.groups[3 * group], self.groups[3 * group + 1]

    def line_range(self, group: int) -> range:
        # A group's lines start where the previous kept group's end: a group
        # that is not kept holds none.
        start = self.groups[3 * group - 1] if group else 0
        return range(start, self.groups[3 * group + 2])

    def size(self) -> int:
        """Bytes kept, and what queries may add (an estimate from above)."""
        tables = (self.codes, self.groups, self.values)
        return (
            240
            + sum(map(sys.getsizeof, tables))
            + _QUERY_BYTES_PER_LINE * len(self.codes)
        )

    def count(self, kind: int) -> int:
        return sum(1 for code in self.codes if code & 1 == kind)

    def lines(self) -> tuple[Line, ...]:
        """Every usage line, split and normalised on the first query."""
        if self._lines is None:
            # Imported here: the matcher is only needed once a query comes.
            from scrapy_robots_std.robotstxt.matcher import normalize_rfc9309

            found: list[Line] = []
            values = self.values.split(b"\n") if self.codes else []
            for code, value in zip(self.codes, values, strict=True):
                path, preference = split_value(code & 1, value)
                pattern = normalize_rfc9309(path) if path else b""
                found.append(
                    Line(code >> 1, code & 1, value, path, pattern, preference)
                )
            self._lines = tuple(found)
        return self._lines


def entries_1994(lines: list[bytes]) -> list[Entry]:
    """The group-shaping lines of a 1994 body, read as ``parse_1994`` reads them."""
    found = []
    for number, raw in enumerate(lines, 1):
        content = raw.split(b"\x00", 1)[0]
        if not content.strip():
            found.append(Entry(number, BLANK, b""))
            continue
        raw_key, colon, value = content.split(b"#", 1)[0].strip().partition(b":")
        role = _1994_ROLES.get(raw_key.strip().lower()) if colon else None
        if role is not None:
            found.append(Entry(number, role, value.strip()))
    return found


def collect(
    entries: Iterable[Entry], *, every_record: bool
) -> tuple[UsageRules, list[Note]]:
    """The usage table of a body from its group-shaping lines, in file order,
    and the notes to report (lines outside any group, invalid values)."""
    rules = UsageRules()
    notes: list[Note] = []
    values: list[bytes] = []
    codes: list[int] = []
    # Each group: [first agent, agent after last, has a rule, first usage line].
    groups: list[list[int]] = []
    group: list[int] | None = None
    agents = 0
    for line, role, value in entries:
        if role == BLANK:
            group = None
        elif role == AGENT:
            if group is None or group[2]:
                group = [agents, agents, 0, len(codes)]
                groups.append(group)
            agents += 1
            group[1] = agents
        elif group is None:
            if role <= CONTENT_SIGNAL:
                notes.append(Note(line, True, FIELDS[role]))
        else:
            group[2] = 1
            if role <= CONTENT_SIGNAL:
                codes.append(line << 1 | role)
                values.append(value)
    rules.outside = len(notes)
    bounds: list[int] = []
    ends = [g[3] for g in groups[1:]] + [len(codes)] if groups else []
    for (first, last, has_rule, start), end in zip(groups, ends, strict=True):
        if has_rule if every_record else end > start:
            bounds += (first, last, end)
    if len(codes) > MAX_USAGE_LINES:
        # Kept as counts only: every preference of the file is unknown.
        rules.invalid = len(codes)
        notes.append(
            Note(
                codes[MAX_USAGE_LINES] >> 1,
                False,
                f"more than {MAX_USAGE_LINES} Content-Usage / Content-Signal lines "
                f"({len(codes)}): every usage preference of this file is unknown",
            )
        )
        return rules, notes
    rules.groups = array("I", bounds)
    rules.codes = array("I", codes)
    rules.values = b"\n".join(values)
    _check_values(rules, notes)
    return rules, notes


def _check_values(rules: UsageRules, notes: list[Note]) -> None:
    """Read each distinct preference once, to report the invalid ones now."""
    errors: dict[bytes, str | None] = {}
    values = rules.values.split(b"\n") if rules.codes else []
    for code, value in zip(rules.codes, values, strict=True):
        preference = split_value(code & 1, value)[1]
        if preference not in errors:
            try:
                parse_dictionary(preference)
            except StructuredFieldError as exc:
                errors[preference] = str(exc)
            else:
                errors[preference] = None
        error = errors[preference]
        if error is not None:
            rules.invalid += 1
            shown = value.decode("utf-8", "replace")
            detail = (
                f"{FIELDS[code & 1]} value {shown!r} is not a structured-field"
                f" Dictionary ({error}): every category unknown"
            )
            notes.append(Note(code >> 1, False, detail))
