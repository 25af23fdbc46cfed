"""``Content-Usage`` and ``Content-Signal`` lines of a robots.txt in their own
groups (docs/usage-preferences.md, "Grouping"), and the bytes queries keep."""

from __future__ import annotations

import sys
from array import array
from dataclasses import dataclass, field, fields
from typing import TYPE_CHECKING, NamedTuple

from scrapy_robots_std.robotstxt.patterns import normalize_rfc9309
from scrapy_robots_std.robotstxt.reader import Field
from scrapy_robots_std.usage import vocab as _vocab
from scrapy_robots_std.usage.preferences import ROBOTS_TXT, read_source

if TYPE_CHECKING:
    from collections.abc import Iterable

    from scrapy_robots_std.usage.preferences import UsageSource

#: The vocabulary of each usage line's field.
KIND_VOCABULARIES = {
    Field.CONTENT_USAGE: _vocab.AIPREF,
    Field.CONTENT_SIGNAL: _vocab.CONTENT_SIGNAL,
}
#: The fields that shape usage groups (docs/usage-preferences.md, "Grouping").
SHAPING_FIELDS = frozenset(
    (*KIND_VOCABULARIES, Field.USER_AGENT, Field.ALLOW, Field.DISALLOW, Field.BLANK)
)

#: More usage lines than this in one file, and every usage preference of the file is
#: unknown: real files hold a handful, and each line read for a query keeps about
#: 1 KiB and its value's length a few times, so a hostile file stays within bounds.
MAX_USAGE_LINES = 64


class Entry(NamedTuple):
    """A line the parser hands over; a usage line is kept as one, with its group."""

    line: int
    field: Field  # one of SHAPING_FIELDS; a usage line's kind
    value: bytes  # comment cut, whitespace stripped
    #: a usage line's group (its place in UsageRules.firsts), -1 when file-wide
    group: int = -1


class Line(NamedTuple):
    """One usage line, read for queries."""

    #: the path from :func:`split_value`, normalised as RFC 9309 patterns are
    pattern: bytes | None
    #: the first line with the same value: a repeat adds nothing to a
    #: most-restrictive combination
    first: int
    group: int  # as Entry.group
    source: UsageSource


def split_value(kind: Field, value: bytes) -> tuple[bytes | None, bytes]:
    """attach-05 3.2: a Content-Usage value that starts with ``/`` has a path up
    to the first SP or HTAB; the rest is the preference.  The path is None for
    Content-Signal, b"" for a Content-Usage line without one."""
    if kind is not Field.CONTENT_USAGE:
        return None, value
    if value[:1] != b"/":
        return b"", value
    path = value.split(b" ", 1)[0].split(b"\t", 1)[0]
    return path, value[len(path) :].lstrip(b" \t")


@dataclass(slots=True, eq=False)
class UsageRules:
    """A body's usage lines, in file order, and the usage groups that hold them.

    A kept group's user-agent lines are the file's user-agent values (in
    ``Groups.agent_text``, one per line) from ``firsts[g]`` to ``ends[g]``.
    rfc9309 keeps the groups that hold usage lines; 1994 every record with a
    rule, since the first record naming the robot wins even without any.
    """

    lines: tuple[Entry, ...] = ()
    firsts: array[int] = field(default_factory=lambda: array("I"))
    ends: array[int] = field(default_factory=lambda: array("I"))
    outside: int = 0  # file-wide lines
    invalid: int = 0
    #: every line read (the first query or measure does it), the bytes that keeps
    read: tuple[tuple[Line, ...], int] | None = None
    #: token -> the lines of its groups (tokens that choose the same lines
    #: share one tuple), or None when no group applies; filled by queries
    selections: dict[str, tuple[Line, ...] | None] = field(default_factory=dict)

    def size(self) -> int:
        """Bytes kept, and what queries keep (an estimate from above)."""
        # Each entry: a named tuple (one more slot than sys.getsizeof says), its
        # value, its line and group numbers (ints of at most 32 bytes each).
        entries = sum(
            sys.getsizeof(entry) + 8 + 64 + _own(entry.value) for entry in self.lines
        )
        tables = (self.lines, self.firsts, self.ends)
        return 240 + entries + sum(map(sys.getsizeof, tables)) + self.query_size()

    def read_once(self) -> tuple[tuple[Line, ...], int]:
        """Every usage line, read by the first query or measure, and the bytes
        that keeps."""
        read = self.read
        if read is None:
            firsts: dict[bytes, int] = {}
            lines = []
            for index, (number, kind, value, group) in enumerate(self.lines):
                path, preference = split_value(kind, value)
                vocabulary = KIND_VOCABULARIES[kind]
                source = read_source(
                    vocabulary, value, preference, ROBOTS_TXT, number, path
                )
                pattern = normalize_rfc9309(path) if path else path
                first = firsts.setdefault(value, index)
                lines.append(Line(pattern, first, group, source))
            # Set once, whole (88: the pair and its int): a thread measuring
            # meanwhile reads the lines too, and one reading stays.
            found = tuple(lines)
            measured = 88 + sys.getsizeof(found) + sum(map(_line_size, found))
            read = self.read = (found, measured)
        return read

    def query_size(self) -> int:
        """What queries keep: every line read (read now if no query has) and
        each token's selection; before any, a bound on one token's."""
        lines, measured = self.read_once()
        selections = self.selections  # a query may replace it meanwhile
        chosen = tuple(selections.items())
        kept = {id(found): found for _, found in chosen if found is not None}
        size = (
            measured
            + sys.getsizeof(selections)
            + sum(sys.getsizeof(token) for token, _ in chosen)
            + sum(map(sys.getsizeof, kept.values()))
        )
        if not chosen:
            # The dict of selections, a token, the tuple of its lines.
            size += 600 + 8 * len(lines)
        # What a measure cannot see: objects a query leaves in the interpreter's
        # free lists, attribute arrays whose layout changes between versions.
        return size + size // 64 + 128


def _line_size(line: Line) -> int:
    """The bytes a read line keeps of its own: not the vocabularies' names,
    nor its entry's ints (its line and group numbers; ``first`` is below 64)."""
    source = line.source
    pairs = (*source.states, *source.members)
    texts = (line.pattern, source.value, source.path, source.error)
    return (
        sys.getsizeof(line)
        + 8  # a named tuple is allocated with one more slot
        + _instance_size(source)
        + sum(sys.getsizeof(held) for held in (source.states, source.members) if held)
        + sum(map(sys.getsizeof, pairs))
        + sum(map(_own, texts))
        + sum(_own(key) + _own(text) for key, text in source.members)
    )


def _instance_size(source: UsageSource) -> int:
    """``source`` with its attributes' values, an array (this much and a
    pointer per field once a process has made a few dozen, its first get spare
    slots; reading ``__dict__`` would make a dict)."""
    return sys.getsizeof(source) + 32 + 8 * len(fields(source))


def _own(text: str | bytes | None) -> int:
    """The bytes ``text`` keeps, or 0 when the interpreter shares it: None, an
    empty text, one byte, one character up to U+00FF."""
    if not text or (len(text) == 1 and (isinstance(text, bytes) or text <= "\xff")):
        return 0
    return sys.getsizeof(text)


def collect(
    entries: Iterable[Entry], *, every_record: bool
) -> tuple[UsageRules, list[tuple[int, str]]]:
    """The usage table of a body from its group-shaping lines, in file order, and
    a (line, detail) note for each invalid value.  A usage line outside any group
    is file-wide."""
    lines: list[Entry] = []
    firsts: list[int] = []
    ends: list[int] = []
    agents = 0  # user-agent lines so far
    start: int | None = None  # the open group's first agent; None: no group open
    group = -1  # the open group's place among the kept, once kept
    ruled = False  # whether the open group has a rule line
    for entry in entries:
        field = entry.field
        usage = field in KIND_VOCABULARIES
        if field is Field.BLANK:
            start = None
        elif field is Field.USER_AGENT:
            if start is None or ruled:
                start, group, ruled = agents, -1, False
            agents += 1
        elif start is None:
            if usage:
                lines.append(entry)
        else:
            # A group's agents end at its first rule: kept then, they are all known.
            ruled = True
            if group < 0 and (every_record or usage):
                group = len(firsts)
                firsts.append(start)
                ends.append(agents)
            if usage:
                lines.append(entry._replace(group=group))
    outside = sum(1 for entry in lines if entry.group < 0)
    if len(lines) > MAX_USAGE_LINES:
        # Kept as counts only: every preference of the file is unknown.
        detail = (
            f"more than {MAX_USAGE_LINES} Content-Usage / Content-Signal lines "
            f"({len(lines)}): every usage preference of this file is unknown"
        )
        rules = UsageRules(outside=outside, invalid=len(lines))
        return rules, [(lines[MAX_USAGE_LINES].line, detail)]
    notes = _invalid_values(lines)
    rules = UsageRules(
        tuple(lines),
        array("I", firsts),
        array("I", ends),
        outside=outside,
        invalid=len(notes),
    )
    return rules, notes


def _invalid_values(lines: list[Entry]) -> list[tuple[int, str]]:
    """A note for each line whose preference does not read (each distinct
    preference read once)."""
    errors: dict[bytes, str | None] = {}
    notes = []
    for line, kind, value, _ in lines:
        preference = split_value(kind, value)[1]
        if preference not in errors:
            errors[preference] = _vocab.read_statement(_vocab.AIPREF, preference)[2]
        error = errors[preference]
        if error is not None:
            shown = value.decode("utf-8", "replace")
            detail = (
                f"{KIND_VOCABULARIES[kind].field} value {shown!r} is not a"
                f" structured-field Dictionary ({error}): every category unknown"
            )
            notes.append((line, detail))
    return notes
