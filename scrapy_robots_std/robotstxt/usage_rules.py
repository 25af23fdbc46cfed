"""``Content-Usage`` and ``Content-Signal`` lines of a robots.txt, kept compactly.

The parser hands over the lines that shape groups only when a body holds a usage
line.  Usage gets its own partition of the user-agent lines, with usage lines as
rules; a usage line outside any group is file-wide (docs/usage-preferences.md,
"Grouping").  The first query reads the lines (``usage_query``) and measures them.
"""

from __future__ import annotations

import sys
from array import array
from dataclasses import dataclass, field, fields, is_dataclass
from typing import TYPE_CHECKING, NamedTuple

from scrapy_robots_std.usage import vocab as _vocab
from scrapy_robots_std.usage.vocab import AIPREF, MAX_MEMBERS, read_statement

if TYPE_CHECKING:
    from collections.abc import Collection, Iterable, Iterator

    from scrapy_robots_std.usage.preferences import UsageSource

# Roles of the lines handed over; the two usage kinds are also the stored kind bit.
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
    line: int
    role: int
    value: bytes  # comment cut, whitespace stripped


class Line(NamedTuple):
    """One usage line, read for queries."""

    #: the path from :func:`split_value`, normalised as RFC 9309 patterns are
    pattern: bytes | None
    #: the first line with the same value: a repeat adds nothing to a
    #: most-restrictive combination
    first: int
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
    """A body's usage lines and the usage groups that hold them.

    ``codes[i]`` is line ``i``'s number << 1 | its kind, its value the ``i``-th of
    ``values.split(b"\\n")``: the ``outside`` file-wide lines, then the groups'.
    ``groups`` holds three numbers per kept group: its first agent, the agent after
    its last (indexes into ``Parsed.all_agents()``) and the usage line after its
    last.  rfc9309 keeps the groups that hold usage lines; 1994 every record with a
    rule, since the first record naming the robot wins even without any.
    """

    codes: array[int] = field(default_factory=lambda: array("I"))
    groups: array[int] = field(default_factory=lambda: array("I"))
    values: bytes = b""
    outside: int = 0  # file-wide lines
    invalid: int = 0
    #: a bound on what the first query keeps (:func:`reserve`)
    reserve: int = 0
    #: every line read (the first query does it) and the bytes that keeps
    read: tuple[tuple[Line, ...], int] | None = None
    #: token -> the lines of its groups (tokens that choose the same lines
    #: share one tuple), or None when no group applies; filled by queries
    selections: dict[str, tuple[Line, ...] | None] = field(default_factory=dict)

    def lines(self) -> Iterator[tuple[int, int, bytes]]:
        """Each line's number, kind and value: file-wide lines, then groups'."""
        values = self.values.split(b"\n") if self.codes else []
        for code, value in zip(self.codes, values, strict=True):
            yield code >> 1, code & 1, value

    def count(self, kind: int) -> int:
        return sum(1 for code in self.codes if code & 1 == kind)

    def size(self) -> int:
        """Bytes kept, and what queries keep (an estimate from above)."""
        tables = (self.codes, self.groups, self.values)
        return 240 + sum(map(sys.getsizeof, tables)) + self.query_size()

    def query_size(self) -> int:
        """What queries keep: the lines read, as measured then, and each token's
        selection; before the first query, :attr:`reserve`."""
        read = self.read
        if read is None:
            size = self.reserve
        else:
            selections = self.selections  # a query may replace it meanwhile
            chosen = tuple(selections.items())
            kept = {id(lines): lines for _, lines in chosen if lines is not None}
            size = (
                read[1]
                + sys.getsizeof(selections)
                + sum(sys.getsizeof(token) for token, _ in chosen)
                + sum(map(sys.getsizeof, kept.values()))
            )
        # What a measure cannot see: objects a query leaves in the interpreter's
        # free lists, attribute arrays whose layout changes between versions.
        return size + size // 64 + 128


# -- bytes kept ----------------------------------------------------------------------

#: Beside ``sys.getsizeof``, what a dataclass instance keeps for its attributes:
#: from CPython 3.11, an array of values (this much and a pointer per field;
#: reading ``__dict__`` would make a dict); before, its ``__dict__``.
_INSTANCE_VALUES = 32
_INLINE_VALUES = sys.version_info >= (3, 11)


def deep_size(roots: Iterable[object], counted: Collection[int] = ()) -> int:
    """The bytes ``roots`` keep with all they hold, each object once, following
    tuples and dataclass instances (what a read line holds); nothing for
    ``counted`` (ids of module constants) and what the interpreter shares.  Run
    once per file read (a few hundred objects), never per query."""
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


# What :func:`reserve` counts per line read (CPython 3.11, from above): the line (a
# tuple of 3) and its source (a dataclass of 8) with the headers of its pattern,
# value and path (bytes and str), its states (three pairs), the tuple of its members,
# an error message, and its place in a selection.
_LINE_BYTES = 1_008
#: Each member of a statement kept (a pair of str and its place in the tuple).
_MEMBER_BYTES = 170
#: One token's selection (the dict of selections, the token, the tuple of lines).
_SELECTION_BYTES = 600


def reserve(values: Iterable[bytes]) -> int:
    """A bound on what the first query keeps: every line read, and one token's
    selection.  A value counts twice (as text and in its members) and its path
    twice more (as text and as a pattern); outside ASCII, 4 bytes an octet as text
    (a str with one character beyond U+FFFF keeps every one in 4 bytes) and 3 in a
    pattern (``%XX``)."""
    return _SELECTION_BYTES + sum(
        _LINE_BYTES
        + _MEMBER_BYTES * min(MAX_MEMBERS, value.count(b",") + 1)
        + (4 if value.isascii() else 14) * len(value)
        for value in values
    )


# -- the lines, from the parser ----------------------------------------------------


def collect(
    entries: Iterable[Entry], *, every_record: bool
) -> tuple[UsageRules, list[tuple[int, str]]]:
    """The usage table of a body from its group-shaping lines, in file order, and
    a (line, detail) note for each invalid value.  A usage line outside any group
    is file-wide: kept first, before the groups' lines."""
    codes: list[int] = []
    values: list[bytes] = []
    wide: list[tuple[int, bytes]] = []
    # Each group: [first agent, agent after last, has a rule, first usage line].
    groups: list[list[int]] = []
    group: list[int] | None = None
    for line, role, value in entries:
        if role == BLANK:
            group = None
        elif role == AGENT:
            agents = groups[-1][1] if groups else 0
            if group is None or group[2]:
                group = [agents, agents, 0, len(codes)]
                groups.append(group)
            group[1] = agents + 1
        elif group is None:
            if role <= CONTENT_SIGNAL:
                wide.append((line << 1 | role, value))
        else:
            group[2] = 1
            if role <= CONTENT_SIGNAL:
                codes.append(line << 1 | role)
                values.append(value)
    codes[:0] = [code for code, _ in wide]
    values[:0] = [value for _, value in wide]
    if len(codes) > MAX_USAGE_LINES:
        # Kept as counts only: every preference of the file is unknown.
        detail = (
            f"more than {MAX_USAGE_LINES} Content-Usage / Content-Signal lines "
            f"({len(codes)}): every usage preference of this file is unknown"
        )
        rules = UsageRules(outside=len(wide), invalid=len(codes))
        return rules, [(sorted(codes)[MAX_USAGE_LINES] >> 1, detail)]
    bounds: list[int] = []
    ends = [found[3] for found in groups[1:]] + [len(codes) - len(wide)]
    for (first, last, has_rule, start), end in zip(groups, ends, strict=False):
        if has_rule if every_record else end > start:
            bounds += (first, last, end + len(wide))
    notes = _invalid_values(codes, values)
    rules = UsageRules(
        array("I", codes),
        array("I", bounds),
        b"\n".join(values),
        outside=len(wide),
        invalid=len(notes),
        reserve=reserve(values),
    )
    return rules, notes


def _invalid_values(codes: list[int], values: list[bytes]) -> list[tuple[int, str]]:
    """A note for each line whose preference does not read (each distinct
    preference read once)."""
    errors: dict[bytes, str | None] = {}
    notes = []
    for code, value in zip(codes, values, strict=True):
        preference = split_value(code & 1, value)[1]
        if preference not in errors:
            errors[preference] = read_statement(AIPREF, preference)[2]
        error = errors[preference]
        if error is not None:
            shown = value.decode("utf-8", "replace")
            detail = (
                f"{KIND_VOCABULARIES[code & 1].field} value {shown!r} is not a"
                f" structured-field Dictionary ({error}): every category unknown"
            )
            notes.append((code >> 1, detail))
    return notes
