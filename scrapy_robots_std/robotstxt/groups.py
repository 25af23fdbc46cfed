"""Which groups of a file speak for a crawler, for access and usage alike: per
standard as docs/standards.md ("which group") says (RFC 9309 2.2.1)."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from scrapy_robots_std.robotstxt.reader import RFC9309

if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator, Sequence

# The whitespace bytes.isspace() and bytes.strip() know, as text.
_ASCII_SPACE = " \t\n\r\x0b\x0c"
_AGENT_NAME_RE = re.compile(r"[A-Za-z_-]*")


def agent_name_rfc9309(agent: str) -> str | None:
    """What the reference compares of a user-agent value: its leading
    ``[A-Za-z_-]+``, lower-cased.  None for ``*`` alone or followed by whitespace."""
    if agent[:1] == "*" and (len(agent) == 1 or agent[1] in _ASCII_SPACE):
        return None
    match = _AGENT_NAME_RE.match(agent)
    assert match is not None  # the pattern matches the empty string
    return match.group().lower()


def agent_name_1994(agent: str) -> str | None:
    """The value without version information (from ``/``); None for ``*``."""
    name = agent.split("/", 1)[0].strip(_ASCII_SPACE)
    return None if name == "*" else name.lower()


_NAME_BYTES = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz_-")
#: A line that is ``*``, alone or followed by whitespace (or the NUL that
#: ends a group's lines in :func:`select`: the reader ends a value at a NUL).
_STARS = re.compile(rb"(?m)^\*(?:[ \t\n\r\x0b\x0c\x00]|$)").finditer


def _named(text: bytes, name: bytes) -> Iterator[int]:
    """Where each line of ``text`` that has the rfc9309 agent name ``name`` (lower-
    case; :func:`agent_name_rfc9309`) starts.  ``bytes.lower`` changes ASCII only."""
    lines = b"\n" + text.lower()
    needle = b"\n" + name
    at = lines.find(needle)
    while at >= 0:
        end = at + len(needle)
        if end == len(lines) or lines[end] not in _NAME_BYTES:
            yield at
        at = lines.find(needle, end)


def _groups_of(joined: bytes, places: Iterable[int]) -> tuple[int, ...]:
    """The groups of ``places`` (ascending) in :func:`select`'s text, each once:
    a place's group is the number of NULs before it, counted from the last place
    (counting from the start each time would be quadratic in a file's groups)."""
    found: dict[int, None] = {}
    group = last = 0
    for at in places:
        group += joined.count(0, last, at)
        found[group] = None
        last = at
    return tuple(found)


def select(groups: Sequence[bytes], name: str, standard: str) -> tuple[int, ...]:
    """The numbers of the groups that apply to ``name`` (a token checked by
    :func:`tokens.check_token`).  ``groups``: each group's user-agent values, one
    per line, UTF-8; in 1994 a record without rule lines names nobody: give it
    none.  rfc9309 searches one text, every group's lines each ended by a NUL, not
    each group's (a file may have hundreds) nor each agent (a group may have
    thousands): a line's group is the number of NULs before it."""
    if standard == RFC9309:
        wanted, joined = name.lower().encode(), b"\x00\n".join(groups)
        named = _groups_of(joined, _named(joined, wanted))
        return named or _groups_of(joined, (star.start() for star in _STARS(joined)))
    agents = [text.decode().split("\n") if text else [] for text in groups]
    for number, values in enumerate(agents):
        if any(found and found in name for found in map(agent_name_1994, values)):
            return (number,)
    for number, values in enumerate(agents):
        if any(agent_name_1994(agent) is None for agent in values):
            return (number,)
    return ()
