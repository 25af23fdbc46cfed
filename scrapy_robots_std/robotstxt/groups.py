"""Which groups of a file speak for a crawler, for access and usage alike: per
standard as docs/standards.md ("which group") says (RFC 9309 2.2.1)."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from scrapy_robots_std.robotstxt.reader import RFC9309

if TYPE_CHECKING:
    from collections.abc import Sequence

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


def select(
    groups: Sequence[Sequence[str]], name: str, standard: str
) -> tuple[int, ...]:
    """The numbers of the groups that apply to ``name`` (a token checked by
    :func:`tokens.check_token`).  ``groups``: each group's user-agent values; in
    1994 a record without rule lines names nobody: give it no values."""
    if standard == RFC9309:
        names = [{agent_name_rfc9309(agent) for agent in agents} for agents in groups]
        named = tuple(number for number, found in enumerate(names) if name in found)
        return named or tuple(
            number for number, found in enumerate(names) if None in found
        )
    for number, agents in enumerate(groups):
        if any(found and found in name for found in map(agent_name_1994, agents)):
            return (number,)
    for number, agents in enumerate(groups):
        if any(agent_name_1994(agent) is None for agent in agents):
            return (number,)
    return ()
