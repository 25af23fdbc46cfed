"""Page-level robots directives: the ``X-Robots-Tag`` header and robots meta tags.

A page says how it may be used by search engines and AI crawlers beside robots.txt:
``X-Robots-Tag: noindex, nofollow`` on any response, optionally for one crawler
(``X-Robots-Tag: testbot: noai``), and ``<meta name="robots" content="...">`` or
``<meta name="TESTBOT" content="...">`` in an HTML page's ``<head>``. Google and Bing
document the directives; ``noai`` and ``noimageai`` are the common opt-outs from AI
uses.

:func:`read` turns the header's field lines and the meta tags (name, content; read by
:mod:`scrapy_robots_std.pagehead`) into :class:`PageDirectives`: the statements that
apply to a crawler's product token, combined most restrictively (any ``noindex``
means noindex). Every input is bounded: field lines, meta tags, characters of a
value and directives of a statement are counted past their caps and noted, never
read. Pure: no Scrapy, no Twisted, no HTML parser.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, Final

from scrapy_robots_std.robotstxt.groups import agent_name_1994, agent_name_rfc9309
from scrapy_robots_std.usage.preferences import HEADER, UsageSource
from scrapy_robots_std.usage.vocab import DISALLOW, MAX_MEMBERS, PURPOSES

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Sequence

__all__ = [
    "DIRECTIVES",
    "EMPTY",
    "HEADER",
    "HEADER_FIELD",
    "META",
    "PageDirectives",
    "PageStatement",
    "meta_filter",
    "read",
]

#: The response header.
HEADER_FIELD: Final = "X-Robots-Tag"
#: Where a statement came from (``HEADER`` is the usage sources' own "header").
META: Final = "meta tag"

#: The directives with a meaning here (``index`` and ``follow`` are the defaults,
#: written out; ``all`` says "no restrictions"). Others are kept, with no effect.
DIRECTIVES: Final = (
    "all",
    "none",
    "noindex",
    "nofollow",
    "noarchive",
    "nosnippet",
    "noai",
    "noimageai",
    "unavailable_after",
    "index",
    "follow",
)
#: Directives that take a value after a colon (Google's): never a crawler's name.
_VALUED: Final = frozenset(
    ("unavailable_after", "max-snippet", "max-image-preview", "max-video-preview")
)
_NOT_A_SCOPE: Final = _VALUED.union(DIRECTIVES)
#: The AI opt-outs: "no" for every category the AI purposes read.
AI_DIRECTIVES: Final = ("noai", "noimageai")

#: Bounds: field lines and meta tags read per response, characters read of a value,
#: directives kept per statement, characters of a value a log line shows.
MAX_LINES: Final = 64
MAX_METAS: Final = 64
MAX_VALUE: Final = 4096
MAX_DIRECTIVES: Final = 32
_SHOWN: Final = 200

_SPACE: Final = " \t\r\n\x0b\x0c"


def _ai_categories() -> tuple[str, ...]:
    """The categories the AI purposes read (``train-ai``, ``ai-use`` where the
    vocabulary has it, ``ai-input``), in every vocabulary, each once."""
    purposes = ("train-ai", "ai-use", "ai-input")
    return tuple(
        dict.fromkeys(
            category
            for purpose in purposes
            for _, category in PURPOSES.get(purpose, ())
        )
    )


#: What ``noai`` / ``noimageai`` state, as a usage source: no, for each AI category.
AI_STATES: Final = tuple((category, DISALLOW) for category in _ai_categories())


@dataclass(frozen=True)
class PageStatement:
    """One ``X-Robots-Tag`` field line, or one robots meta tag, that applies.

    ``field`` is ``X-Robots-Tag`` or the meta tag's name as written (``robots``,
    ``TestBot``); ``value`` the line or ``content`` as written (at most
    ``MAX_VALUE`` characters); ``directives`` each directive's name
    (lower-cased) with its value as written, or ``None`` (at most
    ``MAX_DIRECTIVES``); ``scope`` the crawler the statement names (a
    ``token:`` header line, a meta tag named for it), ``None`` for every crawler.
    """

    origin: str  # "header" or "meta tag"
    field: str
    value: str
    directives: tuple[tuple[str, str | None], ...]
    scope: str | None = None

    def says(self, *names: str) -> bool:
        """Whether any of ``names`` is among its directives."""
        return any(name in names for name, _ in self.directives)

    def __str__(self) -> str:
        value = self.value
        if len(value) > _SHOWN:
            value = f"{value[: _SHOWN - 3]}..."
        return f'{self.origin} "{self.field}: {value}"'

    def usage_source(self) -> UsageSource:
        """This statement as a usage source that says no to the AI categories."""
        members = tuple((name, value or "") for name, value in self.directives)
        return UsageSource(
            self.origin,
            self.field,
            self.value,
            states=AI_STATES,
            members=members[:MAX_MEMBERS],
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "from": self.origin,
            "field": self.field,
            "value": self.value,
            "scope": self.scope,
            "directives": [
                name if value is None else f"{name}: {value}"
                for name, value in self.directives
            ],
        }


@dataclass(frozen=True)
class PageDirectives:
    """The page-level robots directives of one response, for one crawler.

    ``statements``: those that apply (header lines first, then meta tags, each in
    order); ``other_crawlers``: header lines scoped to another crawler (not
    applied); ``notes``: what was left unread (a bound reached, an HTML head that
    could not be read). Directives combine most restrictively: one ``noindex``
    anywhere means noindex; ``none`` means ``noindex`` and ``nofollow``.
    """

    statements: tuple[PageStatement, ...] = ()
    other_crawlers: int = 0
    notes: tuple[str, ...] = ()

    def says(self, *names: str) -> PageStatement | None:
        """The first statement that says any of ``names``, or ``None``."""
        for statement in self.statements:
            if statement.says(*names):
                return statement
        return None

    @property
    def noindex(self) -> bool:
        return self.says("noindex", "none") is not None

    @property
    def nofollow(self) -> bool:
        return self.says("nofollow", "none") is not None

    @property
    def noai(self) -> bool:
        """``noai`` or ``noimageai``: no to the AI purposes."""
        return self.says(*AI_DIRECTIVES) is not None

    @property
    def directives(self) -> tuple[str, ...]:
        """Every directive name said, each once, in order (unknown ones included)."""
        return tuple(
            dict.fromkeys(name for s in self.statements for name, _ in s.directives)
        )

    @property
    def unknown(self) -> tuple[str, ...]:
        """The directive names with no meaning here (kept, no effect)."""
        return tuple(name for name in self.directives if name not in DIRECTIVES)

    @property
    def unavailable_after(self) -> tuple[str, ...]:
        """Each ``unavailable_after`` value, as written (not interpreted)."""
        return tuple(
            value or ""
            for statement in self.statements
            for name, value in statement.directives
            if name == "unavailable_after"
        )

    def usage_sources(self) -> tuple[UsageSource, ...]:
        """The statements saying ``noai`` / ``noimageai``, as usage sources."""
        return tuple(
            s.usage_source() for s in self.statements if s.says(*AI_DIRECTIVES)
        )

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready form."""
        return {
            "directives": list(self.directives),
            "noindex": self.noindex,
            "nofollow": self.nofollow,
            "noai": self.noai,
            "unavailable_after": list(self.unavailable_after),
            "statements": [statement.to_dict() for statement in self.statements],
            "other_crawlers": self.other_crawlers,
            "notes": list(self.notes),
        }


#: Nothing said: shared by every response without directives.
EMPTY: Final = PageDirectives()


def names_token(name: str, token: str) -> bool:
    """Whether a header line's ``name:`` or a meta tag's name names the crawler,
    as a robots.txt user-agent line would (RFC 9309: its leading letters, ``_``
    and ``-``; 1994: up to a ``/``), case-insensitively."""
    wanted = token.lower()
    return agent_name_rfc9309(name) == wanted or agent_name_1994(name) == wanted


def meta_filter(token: str) -> Callable[[str], bool]:
    """Which meta tag names to read: ``robots`` and the crawler's token."""

    def wanted(name: str) -> bool:
        name = name.strip(_SPACE)
        return name.lower() == "robots" or names_token(name, token)

    return wanted


class _Reading:
    """What one response's reading found, and what it left out."""

    def __init__(self, token: str) -> None:
        self.token = token
        self.statements: list[PageStatement] = []
        self.other = 0
        self.cut_values = 0
        self.cut_directives = 0

    def header(self, raw: bytes | str) -> None:
        text = self._text(raw)
        body, scope = text, None
        name, colon, rest = text.partition(":")
        name = name.strip(_SPACE)
        if colon and _is_scope(name):
            if not names_token(name, self.token):
                self.other += 1
                return
            body, scope = rest, name
        self._add(PageStatement(HEADER, HEADER_FIELD, text, (), scope), body)

    def meta(self, name: str, content: str) -> None:
        name = name.strip(_SPACE)
        scope = None if name.lower() == "robots" else name
        text = self._text(content)
        self._add(PageStatement(META, name, text, (), scope), text)

    def _text(self, raw: bytes | str) -> str:
        if len(raw) > MAX_VALUE:
            raw = raw[:MAX_VALUE]
            self.cut_values += 1
        text = raw.decode("utf-8", "replace") if isinstance(raw, bytes) else raw
        return text.strip(_SPACE)

    def _add(self, statement: PageStatement, body: str) -> None:
        directives, cut = _directives(body)
        self.cut_directives += cut
        if directives:
            self.statements.append(replace(statement, directives=directives))

    def notes(self, lines_left: int, metas_left: int) -> list[str]:
        notes = []
        if lines_left:
            notes.append(
                f"{HEADER_FIELD}: {lines_left} field line(s) past the first "
                f"{MAX_LINES} not read"
            )
        if metas_left:
            notes.append(
                f"{metas_left} robots meta tag(s) past the first {MAX_METAS} not read"
            )
        if self.cut_values:
            notes.append(f"{self.cut_values} value(s) cut at {MAX_VALUE:,} characters")
        if self.cut_directives:
            notes.append(
                f"{self.cut_directives} statement(s) of more than {MAX_DIRECTIVES} "
                "directives: the rest not read"
            )
        return notes


def _is_scope(name: str) -> bool:
    """``name`` (before a header line's first colon) names a crawler, not a
    directive with a value (``unavailable_after: ...``)."""
    if not name or name.lower() in _NOT_A_SCOPE:
        return False
    return not any(char in name for char in ", \t;=")


def _directives(text: str) -> tuple[tuple[tuple[str, str | None], ...], bool]:
    """A comma-separated list as (name, value) pairs; ``True`` if some were left."""
    found: list[tuple[str, str | None]] = []
    for piece in text.split(","):
        piece = piece.strip(_SPACE)
        if not piece:
            continue
        if found and _weekday_only(*found[-1]):
            # "unavailable_after: Friday, 25-Jun-10 15:00:00 PST" (RFC 850 and
            # RFC 822 dates hold a comma): the rest of the date, not a directive.
            name, value = found[-1]
            found[-1] = (name, f"{value}, {piece}")
            continue
        if len(found) >= MAX_DIRECTIVES:
            return tuple(found), True
        name, colon, value = piece.partition(":")
        found.append(
            (name.strip(_SPACE).lower(), value.strip(_SPACE) if colon else None)
        )
    return tuple(found), False


def _weekday_only(name: str, value: str | None) -> bool:
    return name == "unavailable_after" and value is not None and value.isalpha()


def read(
    header_lines: Sequence[bytes | str],
    metas: Sequence[tuple[str, str]],
    token: str,
    *,
    notes: Iterable[str] = (),
) -> PageDirectives:
    """The directives for ``token`` in a response's ``X-Robots-Tag`` field lines and
    its robots meta tags (``(name, content)`` pairs, as :func:`meta_filter` chose
    them). ``notes``: what the caller left unread (of the HTML head)."""
    reading = _Reading(token)
    for raw in header_lines[:MAX_LINES]:
        reading.header(raw)
    for name, content in metas[:MAX_METAS]:
        reading.meta(name, content)
    found = reading.notes(
        max(len(header_lines) - MAX_LINES, 0), max(len(metas) - MAX_METAS, 0)
    )
    found.extend(notes)
    if not (reading.statements or reading.other or found):
        return EMPTY
    return PageDirectives(tuple(reading.statements), reading.other, tuple(found))
