"""TDMRep, the W3C TDM Reservation Protocol: a site's text and data mining opt-out.

The machine-readable form of the EU DSM Directive's Article 4 opt-out comes three
ways, each saying ``tdm-reservation`` (``1``: TDM rights are reserved; ``0``: not
reserved) and optionally ``tdm-policy`` (a URL where a licence may be sought):

- ``/.well-known/tdmrep.json``: a JSON array of rules, each with ``location`` (a
  path pattern with robots.txt ``*`` and ``$``), ``tdm-reservation`` and an optional
  ``tdm-policy``; the first rule in sequence whose location matches decides, and no
  match means unset (:func:`parse_file`, :meth:`TdmFile.statement`);
- the ``tdm-reservation`` / ``tdm-policy`` response headers, which supersede the
  file;
- ``<meta name="tdm-reservation">`` / ``<meta name="tdm-policy">`` in an HTML head,
  which supersede both (:func:`read` takes the headers, the meta tags and the file's
  answer, and keeps the one with precedence).

Any other value is a protocol error and means unset: here the technique that says
it is passed over (with a note), and the next one in precedence speaks. A decided
statement becomes a usage source (:meth:`TdmStatement.usage_source`): ``1`` is "no"
and ``0`` is "yes" for the AI categories (``train-ai``, ``ai-use`` and their
Content-Signal names); search is not affected. ``tdm-policy`` is kept as written and
never fetched. Every input is bounded (bytes of the file, rules, characters of a
location or a value, field lines and meta tags, the work of one match) and nothing
here raises on content. Pure: no Scrapy, no Twisted, no HTML parser.
"""

from __future__ import annotations

import json
import re
import sys
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

from scrapy_robots_std.pagerules import AI_STATES, META
from scrapy_robots_std.robotstxt import patterns as _patterns
from scrapy_robots_std.usage.preferences import HEADER, UsageSource
from scrapy_robots_std.usage.vocab import ALLOW

if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence

__all__ = [
    "EMPTY",
    "FILE",
    "META_NAMES",
    "POLICY",
    "RESERVATION",
    "WELL_KNOWN_PATH",
    "TdmFile",
    "TdmRep",
    "TdmRule",
    "TdmSource",
    "TdmStatement",
    "meta_filter",
    "parse_file",
    "read",
]

#: The two properties: header field names, meta tag names and rule keys alike.
RESERVATION: Final = "tdm-reservation"
POLICY: Final = "tdm-policy"
META_NAMES: Final = (RESERVATION, POLICY)
#: Where the origin's file lives, and the name a statement from it gives its origin.
WELL_KNOWN_PATH: Final = "/.well-known/tdmrep.json"
FILE: Final = "tdmrep.json"

#: Bounds: bytes of a file read (a larger one is not parsed: unset), rules kept,
#: characters of a location and of a policy URL, field lines or meta tags read per
#: property, notes kept (the rest counted).
MAX_FILE_BYTES: Final = 500 * 1024
MAX_RULES: Final = 1000
MAX_LOCATION: Final = 2048
MAX_POLICY: Final = 2048
MAX_LINES: Final = 16
MAX_NOTES: Final = 20
#: A TdmRule object and its small fields, before its strings (CPython, rounded up).
_RULE_OVERHEAD: Final = 160
#: Characters of a value as written that a note shows.
_SHOWN: Final = 60

_SPACE: Final = " \t\r\n\x0b\x0c"
_STARS: Final = re.compile(rb"\*{2,}")

#: What a reservation says as a usage source: 1 is no and 0 is yes, for every
#: category the AI purposes read (the ones ``noai`` speaks to); search is not one.
_STATES: Final = {
    1: AI_STATES,
    0: tuple((category, ALLOW) for category, _ in AI_STATES),
}


def _shown(value: object) -> str:
    text = value if isinstance(value, str) else json.dumps(value)[: _SHOWN + 1]
    if len(text) > _SHOWN:
        text = f"{text[: _SHOWN - 3]}..."
    return repr(text) if isinstance(value, str) else text


@dataclass(frozen=True)
class TdmSource(UsageSource):
    """A TDMRep statement among the usage sources: ``origin`` is ``header``,
    ``meta tag`` or ``tdmrep.json``; ``rule`` the index of the file's rule that
    decided (``path`` its location); ``policy`` the ``tdm-policy`` URL, if any."""

    rule: int | None = None
    policy: str | None = None

    def __str__(self) -> str:
        where = self.origin
        if self.rule is not None:
            where = f"{where} rule {self.rule} (location {_shown(self.path)})"
        return f'{where} "{self.field}: {self.value}"'

    def to_dict(self) -> dict[str, Any]:
        return {**super().to_dict(), "rule": self.rule, "policy": self.policy}


@dataclass(frozen=True)
class TdmStatement:
    """One technique's decided value: ``reservation`` is 0 or 1; ``origin`` says
    which technique (``header``, ``meta tag``, ``tdmrep.json``); a file's rule gives
    its ``rule`` index and ``location`` as written."""

    origin: str
    reservation: int
    policy: str | None = None
    rule: int | None = None
    location: str | None = None

    @property
    def reserved(self) -> bool:
        return self.reservation == 1

    def __str__(self) -> str:
        return str(self.usage_source())

    def usage_source(self) -> TdmSource:
        """This statement as a usage source: no (1) or yes (0) to the AI categories."""
        members = [(RESERVATION, str(self.reservation))]
        if self.policy is not None:
            members.append((POLICY, self.policy))
        if self.location is not None:
            members.append(("location", self.location))
        return TdmSource(
            self.origin,
            RESERVATION,
            str(self.reservation),
            path=self.location,
            states=_STATES[self.reservation],
            members=tuple(members),
            rule=self.rule,
            policy=self.policy,
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "from": self.origin,
            "tdm-reservation": self.reservation,
            "tdm-policy": self.policy,
            "rule": self.rule,
            "location": self.location,
        }


class _Notes:
    """Diagnostics, at most :data:`MAX_NOTES` kept; the rest counted."""

    def __init__(self, notes: Iterable[str] = ()) -> None:
        self.kept: list[str] = []
        self.more = 0
        for note in notes:
            self.add(note)

    def add(self, note: str) -> None:
        if len(self.kept) < MAX_NOTES:
            self.kept.append(note)
        else:
            self.more += 1

    def done(self) -> tuple[str, ...]:
        if self.more:
            return (*self.kept, f"and {self.more} more note(s)")
        return tuple(self.kept)


# -- the file on the origin -------------------------------------------------------------


@dataclass(frozen=True)
class TdmRule:
    """One usable rule of a file: ``index`` in the array, ``location`` as written
    and its ``pattern`` (compared as robots.txt paths are), ``reservation`` 0 or 1
    or ``None`` (a protocol error: unset where it matches), ``policy``."""

    index: int
    location: str
    pattern: bytes
    reservation: int | None
    policy: str | None = None


@dataclass(frozen=True)
class TdmFile:
    """A parsed ``tdmrep.json``: its usable rules in sequence, and notes on what was
    not used (the file, or a rule or a value in it). No rules: unset everywhere."""

    rules: tuple[TdmRule, ...] = ()
    notes: tuple[str, ...] = ()
    #: the body as a whole was not usable (over the limit, not JSON, not an array)
    malformed: bool = False

    def memory_bytes(self) -> int:
        """An upper bound of what this file keeps in memory (a cache's byte bound
        counts it): its rules' strings and objects, and its notes."""
        size = sys.getsizeof(self.rules) + sum(map(sys.getsizeof, self.notes))
        for rule in self.rules:
            size += _RULE_OVERHEAD + sys.getsizeof(rule.location)
            size += sys.getsizeof(rule.pattern)
            if rule.policy is not None:
                size += sys.getsizeof(rule.policy)
        return size

    def rule_for(self, url: str) -> tuple[TdmRule | None, str | None]:
        """The first rule whose location matches ``url``'s path, and a note when
        the answer is not known: a URL that is not absolute http(s), or a match
        that takes more work than one check may (then no rule, unset)."""
        try:
            path = _patterns.path_rfc9309(_patterns.split_url(url))
        except ValueError as exc:
            return None, f"{FILE}: {exc}"
        # Each rule tried costs a little; the wildcard work on top of that is
        # what one robots.txt check may take.
        left = _patterns.work_budget(len(path)) + _patterns.TRY_WORK * len(self.rules)
        for rule in self.rules:
            done = _patterns.wildcard_work(path, rule.pattern)
            if done < 0:
                return rule, None
            left -= _patterns.TRY_WORK + done
            if left < 0:
                return None, (
                    f"{FILE}: matching its locations took more work than one check "
                    f"may (at rule {rule.index}): unset"
                )
        return None, None

    def statement(self, url: str) -> tuple[TdmStatement | None, tuple[str, ...]]:
        """What the file says for ``url``: the first matching rule's statement
        (``None``: unset), with notes (an invalid value where it matched)."""
        rule, note = self.rule_for(url)
        if rule is None:
            return None, () if note is None else (note,)
        if rule.reservation is None:
            note = (
                f"{FILE} rule {rule.index} (location {_shown(rule.location)}) matches: "
                f"its {RESERVATION} is not 0 or 1: unset"
            )
            return None, (note,)
        statement = TdmStatement(
            FILE, rule.reservation, rule.policy, rule.index, rule.location
        )
        return statement, ()


def parse_file(body: bytes) -> TdmFile:
    """A ``/.well-known/tdmrep.json`` body. Never raises: a body over
    :data:`MAX_FILE_BYTES`, one that is not JSON or not an array gives no rules (unset
    everywhere); a rule that is not an object, or has no usable ``location``, is
    skipped; a ``tdm-reservation`` other than 0 or 1 makes its rule say unset; each
    with a note."""
    if len(body) > MAX_FILE_BYTES:
        note = (
            f"{FILE}: {len(body):,} bytes, over the {MAX_FILE_BYTES:,}-byte limit: "
            "not read (unset)"
        )
        return TdmFile(notes=(note,), malformed=True)
    try:
        data = json.loads(body)
    except (ValueError, RecursionError) as exc:  # UnicodeDecodeError is a ValueError
        error = f"{type(exc).__name__}: {exc}"[:200]
        return TdmFile(notes=(f"{FILE}: not JSON ({error}): unset",), malformed=True)
    if not isinstance(data, list):
        kind = type(data).__name__.replace("dict", "object")
        note = f"{FILE}: not a JSON array (a {kind}): unset"
        return TdmFile(notes=(note,), malformed=True)
    notes = _Notes()
    rules = [
        rule
        for index, item in enumerate(data[:MAX_RULES])
        if (rule := _rule(index, item, notes)) is not None
    ]
    if len(data) > MAX_RULES:
        notes.add(
            f"{FILE}: {len(data) - MAX_RULES} rule(s) past the first "
            f"{MAX_RULES} not read"
        )
    return TdmFile(tuple(rules), notes.done())


def _rule(index: int, item: object, notes: _Notes) -> TdmRule | None:
    where = f"{FILE} rule {index}"
    if not isinstance(item, dict):
        notes.add(f"{where}: not an object: skipped")
        return None
    location = item.get("location")
    if not isinstance(location, str) or not location.strip(_SPACE):
        notes.add(f"{where}: no location: skipped")
        return None
    location = location.strip(_SPACE)
    if len(location) > MAX_LOCATION:
        notes.add(f"{where}: location over {MAX_LOCATION:,} characters: skipped")
        return None
    if location[0] not in "/*":
        notes.add(
            f"{where}: location {_shown(location)} does not start with / or *: "
            "skipped (it matches no path)"
        )
        return None
    raw = _STARS.sub(b"*", location.encode("utf-8", "surrogatepass"))
    reservation = item.get(RESERVATION)
    if type(reservation) is not int or reservation not in (0, 1):
        said = "missing" if RESERVATION not in item else _shown(reservation)
        notes.add(
            f"{where}: {RESERVATION} {said} is not 0 or 1: unset where it matches"
        )
        reservation = None
    policy = item.get(POLICY)
    if policy is not None and (not isinstance(policy, str) or len(policy) > MAX_POLICY):
        notes.add(
            f"{where}: {POLICY} is not a URL of at most {MAX_POLICY:,} "
            "characters: not kept"
        )
        policy = None
    return TdmRule(
        index, location, _patterns.normalize_rfc9309(raw), reservation, policy
    )


# -- one response: headers, meta tags, and the file's answer ------------------------------


@dataclass(frozen=True)
class TdmRep:
    """What TDMRep says about one response.

    ``statement``: the one that decides (meta tag over header over file), ``None``
    when none does (unset); ``said``: each technique's decided statement, highest
    precedence first; ``notes``: protocol errors and what was left unread.
    """

    statement: TdmStatement | None = None
    said: tuple[TdmStatement, ...] = ()
    notes: tuple[str, ...] = ()

    @property
    def reservation(self) -> int | None:
        """1 (reserved), 0 (not reserved), or ``None`` (unset)."""
        return None if self.statement is None else self.statement.reservation

    @property
    def policy(self) -> str | None:
        """The deciding statement's ``tdm-policy`` URL (never fetched)."""
        return None if self.statement is None else self.statement.policy

    def usage_sources(self) -> tuple[UsageSource, ...]:
        """The deciding statement as a usage source (none when unset)."""
        return () if self.statement is None else (self.statement.usage_source(),)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready form."""
        return {
            "tdm-reservation": self.reservation,
            "tdm-policy": self.policy,
            "from": None if self.statement is None else self.statement.origin,
            "said": [statement.to_dict() for statement in self.said],
            "notes": list(self.notes),
        }


#: Nothing said: shared by every response without TDMRep.
EMPTY: Final = TdmRep()


def meta_filter(name: str) -> bool:
    """Which meta tag names to read: ``tdm-reservation`` and ``tdm-policy``
    (compared as HTML compares names: case-insensitively)."""
    return name.strip(_SPACE).lower() in META_NAMES


def _values(raw: Sequence[bytes | str]) -> list[str]:
    return [
        (value.decode("utf-8", "replace") if isinstance(value, bytes) else value).strip(
            _SPACE
        )
        for value in raw[:MAX_LINES]
    ]


def _one(
    origin: str, name: str, raw: Sequence[bytes | str], notes: _Notes
) -> str | None:
    """The value of a property said once (or the same way each time), else None."""
    if not raw:
        return None
    if len(raw) > MAX_LINES:
        notes.add(f"{origin} {name}: {len(raw)} values, more than {MAX_LINES}: unset")
        return None
    values = set(_values(raw))
    if len(values) > 1:
        said = ", ".join(sorted(map(_shown, values))[:4])
        notes.add(f"{origin} {name}: differing values ({said}): unset")
        return None
    return values.pop()


def _technique(
    origin: str,
    reservation: Sequence[bytes | str],
    policy: Sequence[bytes | str],
    notes: _Notes,
) -> TdmStatement | None:
    """One technique's statement (a response's headers, or its meta tags)."""
    value = _one(origin, RESERVATION, reservation, notes)
    if value is None:
        return None
    if value not in ("0", "1"):
        notes.add(
            f'{origin} "{RESERVATION}: {_shown(value)[1:-1]}": not 0 or 1 '
            "(a protocol error): unset"
        )
        return None
    url = _one(origin, POLICY, policy, notes)
    if url is not None and (len(url) > MAX_POLICY or not url):
        notes.add(
            f"{origin} {POLICY}: empty or over {MAX_POLICY:,} characters: not kept"
        )
        url = None
    return TdmStatement(origin, int(value), url)


def read(
    reservation: Sequence[bytes | str] = (),
    policy: Sequence[bytes | str] = (),
    metas: Sequence[tuple[str, str]] = (),
    *,
    file: TdmStatement | None = None,
    notes: Iterable[str] = (),
) -> TdmRep:
    """TDMRep for one response: its ``tdm-reservation`` and ``tdm-policy`` field
    lines, its meta tags (``(name, content)`` pairs, as :func:`meta_filter` chose
    them), and ``file``, the origin's ``tdmrep.json`` answer for its URL
    (:meth:`TdmFile.statement`). Meta tags take precedence over the headers, the
    headers over the file. ``notes``: what the caller left unread."""
    kept = _Notes(notes)
    by_name: dict[str, list[str]] = {RESERVATION: [], POLICY: []}
    for name, content in metas:
        values = by_name.get(name.strip(_SPACE).lower())
        if values is not None:  # another meta tag: not TDMRep's
            values.append(content)
    said = [
        statement
        for statement in (
            _technique(META, by_name[RESERVATION], by_name[POLICY], kept),
            _technique(HEADER, reservation, policy, kept),
            file,
        )
        if statement is not None
    ]
    found = kept.done()
    if not (said or found):
        return EMPTY
    return TdmRep(said[0] if said else None, tuple(said), found)
