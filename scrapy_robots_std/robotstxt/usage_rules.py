"""``Content-Usage`` and ``Content-Signal`` lines of a robots.txt in their own
groups (docs/usage-preferences.md, "Grouping"), and the bytes queries keep."""

from __future__ import annotations

import sys
from array import array
from dataclasses import dataclass, field, fields, is_dataclass
from typing import TYPE_CHECKING, Final, NamedTuple

from scrapy_robots_std.robotstxt.patterns import normalize_rfc9309
from scrapy_robots_std.usage import vocab as _vocab
from scrapy_robots_std.usage.preferences import HEADER, ROBOTS_TXT, read_source

if TYPE_CHECKING:
    from collections.abc import Collection, Iterable

    from scrapy_robots_std.usage.preferences import UsageSource

#: Constants every source refers to: not counted in what a query keeps.
_SHARED: Final = frozenset(
    map(id, (ROBOTS_TXT, HEADER, _vocab.ALLOW, _vocab.DISALLOW, _vocab.UNKNOWN))
).union(
    id(name)
    for vocabulary in _vocab.VOCABULARIES
    for name in (vocabulary.field, *vocabulary.categories)
)

# Roles of the lines handed over; the two usage kinds are also a stored line's kind.
CONTENT_USAGE = 0
CONTENT_SIGNAL = 1
AGENT = 2
ACCESS = 3  # Allow or Disallow
BLANK = 4  # 1994: ends a record

#: The vocabulary of each usage kind (CONTENT_USAGE, CONTENT_SIGNAL).
KIND_VOCABULARIES = (_vocab.AIPREF, _vocab.CONTENT_SIGNAL)

#: More usage lines than this in one file, and every usage preference of the file is
#: unknown: real files hold a handful, and each line read for a query keeps about
#: 1 KiB and its value's length a few times, so a hostile file stays within bounds.
MAX_USAGE_LINES = 64


class Entry(NamedTuple):
    """A line the parser hands over; a usage line is kept as one, with its group."""

    line: int
    role: int  # a usage line's kind: CONTENT_USAGE or CONTENT_SIGNAL
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


def split_value(kind: int, value: bytes) -> tuple[bytes | None, bytes]:
    """attach-05 3.2: a Content-Usage value that starts with ``/`` has a path up
    to the first SP or HTAB; the rest is the preference.  The path is None for
    Content-Signal, b"" for a Content-Usage line without one."""
    if kind != CONTENT_USAGE:
        return None, value
    if value[:1] != b"/":
        return b"", value
    path = value.split(b" ", 1)[0].split(b"\t", 1)[0]
    return path, value[len(path) :].lstrip(b" \t")


@dataclass(slots=True, eq=False)
class UsageRules:
    """A body's usage lines, in file order, and the usage groups that hold them.

    A kept group's user-agent lines are ``Parsed.all_agents()[firsts[g]:ends[g]]``.
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
        tables = (self.lines, self.firsts, self.ends)
        return 240 + deep_size(tables, _SHARED) + self.query_size()

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
            read = self.read = (found, 88 + deep_size([found], _SHARED))
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


#: Beside ``sys.getsizeof``, what a dataclass instance keeps for its attributes:
#: from CPython 3.11, an array of values (this much and a pointer per field;
#: reading ``__dict__`` would make a dict); before, its ``__dict__``.
_INSTANCE_VALUES = 32
_INLINE_VALUES = sys.version_info >= (3, 11)


def deep_size(roots: Iterable[object], counted: Collection[int] = ()) -> int:
    """The bytes ``roots`` keep with all they hold, each object once, following
    tuples and dataclass instances (what a usage line holds); nothing for
    ``counted`` (ids of module constants) and what the interpreter shares.  Run
    per measure and once per file read (up to 64 lines), never per query."""
    seen = set(counted)
    stack = list(roots)
    total = 0
    while stack:
        item = stack.pop()
        if id(item) in seen or _interned(item):
            continue
        seen.add(id(item))
        total += sys.getsizeof(item)
        if isinstance(item, tuple):
            if type(item) is not tuple:
                total += 8  # a named tuple is allocated with one more slot
            stack.extend(item)
        elif is_dataclass(item):
            names = [field.name for field in fields(item)]
            if _INLINE_VALUES:
                total += _INSTANCE_VALUES + 8 * len(names)
            else:
                total += sys.getsizeof(item.__dict__)
            stack.extend(getattr(item, name) for name in names)
    return total


def _interned(item: object) -> bool:
    """Whether the interpreter shares ``item`` (not anyone's to count)."""
    if item is None or isinstance(item, bool):
        return True
    if type(item) is int:
        return -5 <= item <= 256
    if type(item) is tuple:
        return not item
    if type(item) is bytes:
        return len(item) <= 1
    if type(item) is str:
        return not item or (len(item) == 1 and ord(item) < 256)
    return False


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
        role = entry.role
        if role == BLANK:
            start = None
        elif role == AGENT:
            if start is None or ruled:
                start, group, ruled = agents, -1, False
            agents += 1
        elif start is None:
            if role <= CONTENT_SIGNAL:
                lines.append(entry)
        else:
            # A group's agents end at its first rule: kept then, they are all known.
            ruled = True
            if group < 0 and (every_record or role <= CONTENT_SIGNAL):
                group = len(firsts)
                firsts.append(start)
                ends.append(agents)
            if role <= CONTENT_SIGNAL:
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
