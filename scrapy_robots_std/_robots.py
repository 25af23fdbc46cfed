"""The parsed robots.txt: parse once, then ask who may fetch what and why."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, NamedTuple

from scrapy_robots_std import _matcher, _parser
from scrapy_robots_std._parser import (
    RFC9309,
    STANDARDS,
    Diagnostic,
    RequestRate,
)

if TYPE_CHECKING:
    from collections.abc import Iterable

REASON_RULE = "rule"
REASON_NO_MATCH = "no-matching-rule"
REASON_NO_GROUP = "no-group"
REASON_ROBOTS_TXT = "robots-txt"

_HTTP_URL_RE = _matcher.HTTP_URL_RE
_ALLOW_SHIFT = _matcher.ALLOW_SHIFT
_RFC9309_TOKEN_RE = re.compile(r"[A-Za-z_-]+")
_TOKEN_CACHE_LIMIT = 32


@dataclass(frozen=True)
class Rule:
    """One Allow or Disallow line, as written."""

    line: int
    directive: str
    pattern: str
    allow: bool
    agents: tuple[str, ...]

    def __str__(self) -> str:
        return f"line {self.line} {self.directive}: {self.pattern}"

    @property
    def group(self) -> str:
        """The group's user-agent lines, joined: ``User-agent: a, b``."""
        return "User-agent: " + ", ".join(self.agents)


@dataclass(frozen=True)
class Decision:
    """The verdict for one URL and token, and what decided it."""

    allowed: bool
    rule: Rule | None
    reason: str

    def __bool__(self) -> bool:
        return self.allowed

    def explain(self) -> str:
        verdict = "ALLOWED" if self.allowed else "DISALLOWED"
        if self.rule is not None:
            rule = self.rule
            return (
                f'{verdict} by line {rule.line} "{rule.directive}: {rule.pattern}"'
                f" ({rule.group})"
            )
        if self.reason == REASON_ROBOTS_TXT:
            return f"{verdict}: /robots.txt is always allowed"
        if self.reason == REASON_NO_GROUP:
            return f"{verdict}: no group applies to this token"
        if self.reason == REASON_NO_MATCH:
            return f"{verdict}: no rule matched"
        return f"{verdict}: {self.reason}"

    def __str__(self) -> str:
        return self.explain()


class _Compiled(NamedTuple):
    """What one token needs: its groups and their rules, ready to match."""

    groups: tuple[_parser.Group, ...]
    rules: _matcher.RuleSet | None = None  # rfc9309
    # 1994: each pattern valued candidate(0, 0, line, rule index), so
    # the highest value among the patterns that start a path is the first line.
    prefixes: _matcher.PrefixIndex | None = None


_NO_GROUP = _Compiled(())


class RobotsTxt:
    """A parsed robots.txt body.  Immutable once parsed; safe to share."""

    __slots__ = ("_compiled", "_parsed", "standard")

    def __init__(self, parsed: _parser.Parsed, standard: str) -> None:
        self._parsed = parsed
        self.standard = standard
        self._compiled: dict[str, _Compiled] = {}

    @classmethod
    def parse(
        cls, body: bytes | bytearray | memoryview, standard: str = RFC9309
    ) -> RobotsTxt:
        """Parse a robots.txt body (bytes) under ``"rfc9309"`` or ``"1994"``."""
        if standard not in STANDARDS:
            raise ValueError(
                f"unknown standard {standard!r}: expected one of {', '.join(STANDARDS)}"
            )
        if isinstance(body, (bytearray, memoryview)):
            body = bytes(body)
        elif not isinstance(body, bytes):
            raise TypeError(f"robots.txt body must be bytes, not {type(body).__name__}")
        if standard == RFC9309:
            return cls(_parser.parse_rfc9309(body), standard)
        return cls(_parser.parse_1994(body), standard)

    # -- public queries -------------------------------------------------------

    @property
    def sitemaps(self) -> tuple[str, ...]:
        return tuple(self._parsed.sitemaps)

    @property
    def diagnostics(self) -> tuple[Diagnostic, ...]:
        return tuple(self._parsed.diagnostics())

    @property
    def truncated(self) -> bool:
        return self._parsed.truncated

    def allowed(self, url: str, token: str) -> bool:
        if self.standard != RFC9309:
            return self._decide(url, token, with_rule=False).allowed
        # The hot path of a crawl: _decide() inlined, without building a Decision.
        compiled = self._compiled.get(token) or self._compile(token)
        try:
            match = _HTTP_URL_RE.match(url)
        except TypeError:
            match = None
        if match is None:
            return self._decide(
                url, token, with_rule=False
            ).allowed  # raises ValueError
        path = match.group(1)
        if path[:1] != "/":
            path = "/" + path
        if "%" in path or not path.isascii():
            path = _matcher.path_rfc9309(path)
        rules = compiled.rules
        if rules is None or (
            path.startswith("/robots.txt") and _matcher.is_robots_txt(path)
        ):
            return True
        best = rules.best(path)
        return best < 0 or bool(best >> _ALLOW_SHIFT & 1)

    def decide(self, url: str, token: str) -> Decision:
        return self._decide(url, token, with_rule=True)

    def crawl_delay(self, token: str) -> float | None:
        """Seconds between requests asked of ``token``; None when not set (or 1994)."""
        delays = [group.crawl_delay for group in self._groups_with_extras(token)]
        return next((delay for delay in delays if delay is not None), None)

    def request_rate(self, token: str) -> RequestRate | None:
        """``Request-rate: N/T[smh]`` of the group for ``token``; None when not set."""
        rates = [group.request_rate for group in self._groups_with_extras(token)]
        return next((rate for rate in rates if rate is not None), None)

    def _groups_with_extras(self, token: str) -> tuple[_parser.Group, ...]:
        """The groups whose Crawl-delay / Request-rate apply: none in 1994 mode."""
        groups = self._compile(token).groups  # validates the token in both modes
        return groups if self.standard == RFC9309 else ()

    def groups_for(self, token: str) -> tuple[tuple[str, ...], ...]:
        """The user-agent lines of every group that applies to ``token``."""
        return tuple(tuple(group.agents) for group in self._compile(token).groups)

    def __repr__(self) -> str:
        groups = len(self._parsed.groups)
        return f"<RobotsTxt standard={self.standard} groups={groups}>"

    # -- machinery ------------------------------------------------------------

    def _decide(self, url: str, token: str, with_rule: bool) -> Decision:
        compiled = self._compiled.get(token) or self._compile(token)
        path = _matcher.split_url(url)
        if self.standard == RFC9309:
            path = _matcher.path_rfc9309(path)
            if _matcher.is_robots_txt(path):
                return _ALLOWED_ROBOTS_TXT
            if compiled.rules is None:
                return _ALLOWED_NO_GROUP
            best = compiled.rules.best(path)
            if best < 0:
                return _ALLOWED_NO_MATCH
            allowed = _matcher.candidate_allows(best)
            index = _matcher.candidate_index(best)
        else:
            path = _matcher.path_1994(path)
            if _matcher.is_robots_txt(path):
                return _ALLOWED_ROBOTS_TXT
            if not compiled.groups:
                return _ALLOWED_NO_GROUP
            first = compiled.prefixes.highest(path) if compiled.prefixes else -1
            if first < 0:
                return _ALLOWED_NO_MATCH
            index = _matcher.candidate_index(first)
            allowed = self._parsed.rule_codes[index] & 1 == _parser.ALLOW
        if not with_rule:
            return _ALLOWED_RULE if allowed else _DISALLOWED_RULE
        return Decision(allowed, self._rule(index), REASON_RULE)

    def _rule(self, index: int) -> Rule:
        parsed = self._parsed
        group = next(g for g in parsed.groups if g.start <= index < g.end)
        code = parsed.rule_codes[index]
        return Rule(
            line=parsed.rule_lines[index],
            directive=parsed.directive(index),
            pattern=_parser.decode_text(parsed.value(index)),
            allow=code & 1 == _parser.ALLOW,
            agents=tuple(group.agents),
        )

    def _compile(self, token: str) -> _Compiled:
        compiled = self._compiled.get(token)
        if compiled is not None:
            return compiled
        if self.standard == RFC9309:
            compiled = self._compile_rfc9309(_check_token_rfc9309(token))
        else:
            compiled = self._compile_1994(_check_token_1994(token))
        if len(self._compiled) >= _TOKEN_CACHE_LIMIT:
            self._compiled.clear()
        self._compiled[token] = compiled
        return compiled

    def _rules_of(
        self, groups: tuple[_parser.Group, ...]
    ) -> list[tuple[int, int, bytes]]:
        """(rule index, code, pattern bytes) of the groups' rules, in file order."""
        parsed = self._parsed
        values = parsed.values()
        codes = parsed.rule_codes
        return [
            (index, codes[index], values[index])
            for g in groups
            for index in range(g.start, g.end)
        ]

    def _compile_rfc9309(self, name: str) -> _Compiled:
        parsed = self._parsed
        chosen = tuple(group for group in parsed.groups if name in group.names)
        if not chosen:
            chosen = tuple(group for group in parsed.groups if group.is_global)
        if not chosen:
            return _NO_GROUP
        patterns = _normalized_patterns(parsed)
        lines = parsed.rule_lines
        codes = parsed.rule_codes
        if len(chosen) == 1:
            indexes: Iterable[int] = range(chosen[0].start, chosen[0].end)
        else:
            indexes = [
                index for group in chosen for index in range(group.start, group.end)
            ]
        # An empty pattern matches with priority 0: it never decides.
        indexes = [index for index in indexes if patterns[index]]
        mine = [patterns[index] for index in indexes]
        candidate = _matcher.candidate
        candidates = [
            candidate(len(pattern), codes[index] & 1, lines[index], index)
            for pattern, index in zip(mine, indexes, strict=True)
        ]
        if "/index.htm" in "\n".join(mine):
            for pattern, value in zip(list(mine), list(candidates), strict=True):
                directory = _index_html_directory(pattern)
                if directory is not None and _matcher.candidate_allows(value):
                    index = _matcher.candidate_index(value)
                    mine.append(directory)
                    candidates.append(
                        _matcher.candidate(len(directory), 1, lines[index], index)
                    )
        return _Compiled(chosen, _matcher.RuleSet(mine, candidates))

    def _compile_1994(self, robot: str) -> _Compiled:
        # A record is user-agent lines *followed by rule lines*: a block of
        # user-agent lines alone names nobody.
        groups = [group for group in self._parsed.groups if group.end > group.start]
        for group in groups:
            if any(name and name in robot for name in group.names):
                chosen: tuple[_parser.Group, ...] = (group,)
                break
        else:
            chosen = next(((group,) for group in groups if group.is_global), ())
        if not chosen:
            return _NO_GROUP
        # An empty value matches nothing (an empty Disallow allows all).
        parsed = self._parsed
        values = parsed.values()
        indexes = [
            i for group in chosen for i in range(group.start, group.end) if values[i]
        ]
        patterns = [_matcher.normalize_1994(values[index]) for index in indexes]
        # Priority 0 and no allow bit: the earliest line is the highest value.
        lines = parsed.rule_lines
        firsts = [_matcher.candidate(0, 0, lines[index], index) for index in indexes]
        prefixes = _matcher.PrefixIndex(_matcher.best_of(patterns, firsts))
        return _Compiled(chosen, None, prefixes)


def _normalized_patterns(parsed: _parser.Parsed) -> list[str]:
    """Every rule's pattern in the form paths are compared in."""
    values = parsed.rule_values
    if b"%" not in values and values.isascii():
        return values.decode("ascii").split("\n") if parsed.rule_lines else []
    return [_matcher.normalize_rfc9309(value) for value in parsed.values()]


def _index_html_directory(pattern: str) -> str | None:
    """``/dir/index.html`` also allows ``/dir/`` (the reference's HandleAllow)."""
    slash = pattern.rfind("/")
    if slash < 0 or not pattern.startswith("/index.htm", slash):
        return None
    return pattern[: slash + 1] + "$"


def _check_token_rfc9309(token: str) -> str:
    _check_token_common(token)
    if not _RFC9309_TOKEN_RE.fullmatch(token):
        raise ValueError(
            f"invalid product token {token!r}: RFC 9309 tokens may contain only"
            " letters, '_' and '-'"
        )
    return token.lower()


def _check_token_1994(token: str) -> str:
    _check_token_common(token)
    return token.lower()


def _check_token_common(token: object) -> None:
    if not isinstance(token, str):
        raise ValueError(f"token must be a str, not {type(token).__name__}")  # noqa: TRY004
    if not token:
        raise ValueError("token must not be empty")
    if any(char.isspace() for char in token) or "/" in token:
        raise ValueError(
            f"invalid token {token!r}: give the product token only"
            " (no spaces, no '/version')"
        )


_ALLOWED_ROBOTS_TXT = Decision(True, None, REASON_ROBOTS_TXT)
_ALLOWED_NO_GROUP = Decision(True, None, REASON_NO_GROUP)
_ALLOWED_NO_MATCH = Decision(True, None, REASON_NO_MATCH)
_ALLOWED_RULE = Decision(True, None, REASON_RULE)
_DISALLOWED_RULE = Decision(False, None, REASON_RULE)


def parse(body: bytes | bytearray | memoryview, standard: str = RFC9309) -> RobotsTxt:
    """Shortcut for :meth:`RobotsTxt.parse`."""
    return RobotsTxt.parse(body, standard)
