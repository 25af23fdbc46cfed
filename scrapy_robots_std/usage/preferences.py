"""Usage preferences for one URL: what the site says its content may be used for.

These are *use* preferences (IETF AIPREF ``Content-Usage``, Cloudflare
``Content-Signal``), not access rules: they never change what may be fetched.
Pure: no Scrapy, no Twisted.

A crawl asks twice per URL: :meth:`RobotsTxt.usage` before the fetch (the
robots.txt part; a disallow there is final, since headers can only add
restrictions), then :meth:`UsagePreferences.with_headers` on the response.
:meth:`UsagePreferences.decide` turns either into a decision for a declared
purpose.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final

from scrapy_robots_std.usage.vocab import (
    AIPREF,
    ALLOW,
    CONTENT_SIGNAL,
    DISALLOW,
    PURPOSES,
    UNKNOWN,
    VOCABULARIES,
    Vocabulary,
    check_purpose,
    most_restrictive,
    read_statement,
)

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping

#: Most characters of a statement's value that its text (a drop line) shows.
_SHOWN_VALUE: Final = 200

# Why usage preferences are what they are.  "no-group" and "too-complex" are
# also the access verdict's (robotstxt.robots.Decision.reason): defined once, here.
REASON_RULES = "rules"  # at least one statement applies
REASON_NO_STATEMENT = "no-statement"  # the group states nothing for this URL
REASON_NO_GROUP = "no-group"  # no group applies to the token, no file-wide line
REASON_DISALLOWED = "disallowed"  # a URL that may not be crawled carries none
REASON_NO_ROBOTS_TXT = "no-robots-txt"  # no usable robots.txt (4xx, 5xx, exempt)
#: The file's Content-Usage paths take more work for this URL than one check may
#: (``patterns.work_budget``, the access rules' budget): every category unknown.
#: Only hostile files get here.
REASON_TOO_COMPLEX = "too-complex"

ROBOTS_TXT = "robots.txt"
HEADER = "header"

_BY_FIELD = {vocabulary.field: vocabulary for vocabulary in VOCABULARIES}
_BY_NAME = {vocabulary.name: vocabulary for vocabulary in VOCABULARIES}


@dataclass(frozen=True)
class UsageSource:
    """One statement: a robots.txt line or a response header (``pagerules`` and
    ``tdmrep`` make theirs too: a page directive, a TDMRep statement).

    ``members`` holds every key with its value as written, labels that no
    vocabulary knows (``use``, the legacy ``bots``) included, with no effect;
    ``states`` only the categories it allows or disallows.  ``error`` says why
    the value is not a Dictionary: then it states nothing.
    """

    origin: str  # "robots.txt" or "header" (others' own: "meta tag", ...)
    field: str  # "Content-Usage" or "Content-Signal" (others' own: "X-Robots-Tag")
    value: str  # as written (undecodable bytes shown as U+FFFD)
    line: int | None = None
    path: str | None = None  # Content-Usage in robots.txt: "" when none
    states: tuple[tuple[str, str], ...] = ()
    members: tuple[tuple[str, str], ...] = ()
    error: str | None = None

    def __str__(self) -> str:
        value = self.value
        if len(value) > _SHOWN_VALUE:  # a header may be kilobytes long
            value = f"{value[: _SHOWN_VALUE - 3]}..."
        return f'{_where(self)} "{self.field}: {value}"'

    def to_dict(self) -> dict[str, Any]:
        return {
            "from": self.origin,
            "field": self.field,
            "line": self.line,
            "path": self.path,
            "value": self.value,
            "members": dict(self.members),
            "error": self.error,
        }


@dataclass(frozen=True)
class UsagePreference:
    """One category's value, and the statements that gave it."""

    value: str = UNKNOWN  # "allow", "disallow" or "unknown"
    sources: tuple[UsageSource, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {
            "value": self.value,
            "sources": [source.to_dict() for source in self.sources],
        }


@dataclass(frozen=True)
class PurposeDecision:
    """What the statements say about one declared purpose.

    ``value`` is the most restrictive of every mapped category; ``conflict``
    is True when one vocabulary allows and the other disallows (the decision
    is then disallow).  ``unknown`` is left for the caller's policy.
    """

    purpose: str
    value: str
    conflict: bool
    categories: tuple[tuple[str, str, str], ...]  # (vocabulary, category, value)
    sources: tuple[UsageSource, ...]

    def __str__(self) -> str:
        text = f"{self.value} for {self.purpose}"
        if self.conflict:
            said = ", ".join(
                f"{_BY_NAME[v].field} {c}={value}" for v, c, value in self.categories
            )
            text += f" (conflict: {said})"
        if self.sources and self.value != UNKNOWN:
            text += " by " + "; ".join(map(str, self.sources))
        return text


@dataclass(frozen=True)
class UsagePreferences:
    """Every category of both vocabularies for one URL, with its sources.

    ``aipref`` maps ``train-ai``, ``ai-use`` and ``search``; ``content_signal`` maps
    ``search``, ``ai-input`` and ``ai-train``.  ``sources`` lists every
    statement taken into account, invalid ones included; ``reason`` says why
    robots.txt gave what it gave (see the ``REASON_*`` constants).
    """

    reason: str
    sources: tuple[UsageSource, ...] = ()
    aipref: Mapping[str, UsagePreference] = field(default_factory=dict, hash=False)
    content_signal: Mapping[str, UsagePreference] = field(
        default_factory=dict, hash=False
    )

    @classmethod
    def combine(cls, reason: str, sources: Iterable[UsageSource]) -> UsagePreferences:
        """Per category the most restrictive value of ``sources`` (vocab-08 5.1)."""
        sources = tuple(sources)
        aipref = _folded(AIPREF, sources)
        return cls(reason, sources, aipref, _folded(CONTENT_SIGNAL, sources))

    @classmethod
    def unknown(cls, reason: str = REASON_NO_ROBOTS_TXT) -> UsagePreferences:
        """Every category unknown: no usable robots.txt, or a request exempt from it."""
        return cls.combine(reason, ())

    def with_headers(
        self,
        content_usage: Iterable[bytes | str] = (),
        content_signal: Iterable[bytes | str] = (),
    ) -> UsagePreferences:
        """These preferences with a response's header field lines folded in.

        Each header's field lines are joined with ``", "`` and parsed once
        (RFC 9651 4.2), so a key repeated across lines takes its last value.
        A header can only make a category stricter.  Pass
        ``response.headers.getlist("Content-Usage")`` and the same for
        ``Content-Signal``; empty field lines are skipped.
        """
        added = [
            source
            for vocabulary, lines in (
                (AIPREF, content_usage),
                (CONTENT_SIGNAL, content_signal),
            )
            if (source := _header_source(vocabulary, lines)) is not None
        ]
        return self.with_sources(added)

    def with_sources(self, added: Iterable[UsageSource]) -> UsagePreferences:
        """These preferences with other statements folded in most restrictively.

        A statement whose ``field`` is not a vocabulary's (a page-level robots
        directive: ``X-Robots-Tag``, a robots meta tag) states categories of every
        vocabulary, by name; like a header, it can only make a category stricter.
        """
        added = tuple(added)
        if not added:
            return self
        return UsagePreferences(
            self.reason,
            (*self.sources, *added),
            _folded(AIPREF, added, self.aipref),
            _folded(CONTENT_SIGNAL, added, self.content_signal),
        )

    def table(self, vocabulary: str) -> Mapping[str, UsagePreference]:
        """The categories of a vocabulary by its name (``aipref``, ``content-signal``)."""
        return self.aipref if vocabulary == AIPREF.name else self.content_signal

    @property
    def stated(self) -> bool:
        """Whether any category is allowed or disallowed."""
        tables = (self.aipref, self.content_signal)
        return any(p.value != UNKNOWN for table in tables for p in table.values())

    def decide(self, purpose: str) -> PurposeDecision:
        """The decision for a declared purpose (``train-ai``, ``search``, ``ai-use``;
        ``ai-input`` is ``ai-use``)."""
        purpose = check_purpose(purpose)
        said = [
            (name, category, self.table(name)[category])
            for name, category in PURPOSES[purpose]
        ]
        value = most_restrictive(p.value for _, _, p in said)
        stated = {
            most_restrictive(p.value for n, _, p in said if n == name)
            for name, _, _ in said
        }
        conflict = ALLOW in stated and DISALLOW in stated
        sources = tuple(
            dict.fromkeys(s for _, _, p in said if p.value == value for s in p.sources)
        )
        categories = tuple((n, c, p.value) for n, c, p in said)
        return PurposeDecision(purpose, value, conflict, categories, sources)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready form (for logs, audit records and ``--json``)."""
        return {
            "reason": self.reason,
            "aipref": {c: p.to_dict() for c, p in self.aipref.items()},
            "content_signal": {c: p.to_dict() for c, p in self.content_signal.items()},
            "sources": [source.to_dict() for source in self.sources],
        }

    def explain_lines(self) -> list[str]:
        """A few lines for a person: each vocabulary's values, then each source."""
        if self.reason == REASON_DISALLOWED and not self.sources:
            return [
                "usage: none (a URL that may not be crawled carries no preferences)"
            ]
        lines = []
        for vocabulary in VOCABULARIES:
            table = self.table(vocabulary.name).items()
            said = ", ".join(_said(category, value) for category, value in table)
            lines.append(f"usage ({vocabulary.field}): {said}")
        if self.reason == REASON_TOO_COMPLEX:
            lines.append(
                "  unknown: the file's Content-Usage paths take more work than one"
                " check may (a hostile file?)"
            )
        elif not self.sources:
            lines.append(f"  no statement ({self.reason})")
        for source in self.sources:
            error = source.error
            note = f" (invalid: {error}; every category unknown)" if error else ""
            lines.append(f"  {source}{note}")
        return lines


def _folded(
    vocabulary: Vocabulary,
    sources: Iterable[UsageSource],
    table: Mapping[str, UsagePreference] | None = None,
) -> Mapping[str, UsagePreference]:
    """``table`` (every category unknown when None) with the statements of
    ``sources`` in ``vocabulary`` folded in: per category the most restrictive
    value stays (vocab-08 5.1), with the sources that gave it."""
    if table is None:
        table = {category: UsagePreference() for category in vocabulary.categories}
    for source in sources:
        if source.field != vocabulary.field and source.field in _BY_FIELD:
            continue  # another vocabulary's (a page directive's speaks to all)
        states = dict(source.states)
        folded = {}
        for category, old in table.items():
            said = states.get(category, UNKNOWN)
            value = most_restrictive((old.value, said))
            given = old.sources if old.value == value else ()
            if said == value != UNKNOWN:
                given = (*given, source)
            folded[category] = UsagePreference(value, given)
        table = folded
    return table


def _said(category: str, preference: UsagePreference) -> str:
    where = ", ".join(map(_where, preference.sources))
    return f"{category}={preference.value}" + (f" ({where})" if where else "")


def _where(source: UsageSource) -> str:
    return f"line {source.line}" if source.line is not None else source.origin


def _header_source(
    vocabulary: Vocabulary, lines: Iterable[bytes | str]
) -> UsageSource | None:
    """One header's field lines as one statement; None when there are none."""
    values = [
        line.encode("latin-1", "replace") if isinstance(line, str) else bytes(line)
        for line in lines
    ]
    values = [value.strip(b" \t") for value in values]
    joined = b", ".join(value for value in values if value)
    if not joined:
        return None
    return read_source(vocabulary, joined, joined, HEADER)


def read_source(
    vocabulary: Vocabulary,
    value: bytes,
    preference: bytes,
    origin: str,
    line: int | None = None,
    path: bytes | None = None,
) -> UsageSource:
    """A statement in ``vocabulary``: ``value`` as written (shown), ``preference``
    the part of it read as a Dictionary (a robots.txt line's value without its
    path, a header's whole value), where it came from."""
    states, members, error = read_statement(vocabulary, preference)
    return UsageSource(
        origin,
        vocabulary.field,
        value.decode("utf-8", "replace"),
        line,
        None if path is None else path.decode("utf-8", "replace"),
        states,
        members,
        error,
    )
