"""The parsed robots.txt: parse once, then ask who may fetch what and why."""

from __future__ import annotations

import sys
from dataclasses import dataclass
from typing import TYPE_CHECKING

from scrapy_robots_std.robotstxt import groups as _groups
from scrapy_robots_std.robotstxt import matcher as _matcher
from scrapy_robots_std.robotstxt import patterns as _patterns
from scrapy_robots_std.robotstxt import tokens as _tokens
from scrapy_robots_std.robotstxt import usage_query as _usage
from scrapy_robots_std.robotstxt.layout import (
    NO_MATCH,
    TOO_COMPLEX,
    candidate_allows,
    candidate_entry,
)
from scrapy_robots_std.robotstxt.parser import Parsed, RequestRate
from scrapy_robots_std.robotstxt.parser import parse as _parse
from scrapy_robots_std.robotstxt.reader import (
    RFC9309,
    STANDARDS,
    Diagnostic,
    decode_text,
    diagnostics,
)
from scrapy_robots_std.usage.preferences import REASON_NO_GROUP, REASON_TOO_COMPLEX

if TYPE_CHECKING:
    from scrapy_robots_std.robotstxt.matcher import Matcher
    from scrapy_robots_std.robotstxt.parser import Extras
    from scrapy_robots_std.robotstxt.usage_query import UsageSummary
    from scrapy_robots_std.usage.preferences import UsagePreferences

# Decision.reason: a rule decided, or why none did (REASON_NO_GROUP and
# REASON_TOO_COMPLEX are usage's words too, defined in usage.preferences).
REASON_RULE = "rule"
REASON_NO_MATCH = "no-matching-rule"
REASON_ROBOTS_TXT = "robots-txt"


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


_EXPLANATIONS = {
    REASON_ROBOTS_TXT: "/robots.txt is always allowed",
    REASON_NO_GROUP: "no group applies to this token",
    REASON_NO_MATCH: "no rule matched",
    REASON_TOO_COMPLEX: (
        "the file's wildcard rules take more work than one check may"
        " (a hostile file?); disallowed to be safe"
    ),
}


@dataclass(frozen=True)
class Decision:
    """The verdict for one URL and token, and what decided it."""

    allowed: bool
    rule: Rule | None
    reason: str

    def __bool__(self) -> bool:
        return self.allowed

    def explain(self) -> str:
        """One line for a person: the verdict and the deciding line, or the reason."""
        verdict = "ALLOWED" if self.allowed else "DISALLOWED"
        rule = self.rule
        if rule is not None:
            return (
                f'{verdict} by line {rule.line} "{rule.directive}: {rule.pattern}"'
                f" ({rule.group})"
            )
        return f"{verdict}: {_EXPLANATIONS.get(self.reason, self.reason)}"

    __str__ = explain


_ALLOWED_ROBOTS_TXT = Decision(True, None, REASON_ROBOTS_TXT)
_ALLOWED_NO_GROUP = Decision(True, None, REASON_NO_GROUP)
_ALLOWED_NO_MATCH = Decision(True, None, REASON_NO_MATCH)
_DISALLOWED_TOO_COMPLEX = Decision(False, None, REASON_TOO_COMPLEX)

_SMALL_SELECTIONS: dict[tuple[int, ...], tuple[int, ...]] = {
    (number,): (number,) for number in range(64)
}

#: Tokens whose group selection a parsed file remembers besides the last one.
TOKEN_MEMO_SIZE = 64


class RobotsTxt:
    """A parsed robots.txt body.  Immutable once parsed; safe to share."""

    # A crawl asks with one token: the last token's selection and its compiled
    # matcher have their own slots; other tokens' selections go to a small memo
    # made when a second one shows up.  The matcher may be dropped at any time
    # (matcher.RING): it is compiled again when next needed.
    __slots__ = (
        "__weakref__",
        "_last_groups",
        "_last_token",
        "_matcher",
        "_memo",
        "_parsed",
        "standard",
    )

    def __init__(self, parsed: Parsed, standard: str) -> None:
        self._parsed = parsed
        self.standard = standard
        self._last_token: str | None = None
        self._last_groups: tuple[int, ...] = ()
        self._matcher: Matcher | None = None
        self._memo: dict[str, tuple[int, ...]] | None = None

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
        return cls(_parse(body, standard), standard)

    @property
    def sitemaps(self) -> tuple[str, ...]:
        """The ``Sitemap:`` values, in file order, as written (not resolved)."""
        return self._parsed.sitemaps

    @property
    def diagnostics(self) -> tuple[Diagnostic, ...]:
        """What the parser noticed (misspellings, unknown fields, rules outside any
        group, a cut body), each with its line number."""
        return tuple(diagnostics(self._parsed.note_text))

    @property
    def truncated(self) -> bool:
        """Whether the body was longer than the 500 KiB the parser reads."""
        return self._parsed.truncated

    def without_diagnostics(self) -> RobotsTxt:
        """The same rules without the diagnostics, for a long-lived cache.
        The tables are shared, not copied."""
        return RobotsTxt(self._parsed.without_notes(), self.standard)

    def allowed(self, url: str, token: str) -> bool:
        """Whether the crawler named ``token`` may fetch ``url`` (an absolute http(s)
        URL). Raises ``ValueError`` for a token or URL the standard cannot read."""
        if self.standard != RFC9309:
            return self.decide(url, token).allowed
        # The hot path of a crawl: decide() without building a Decision, and
        # without a call while the last token's matcher is held.
        matcher = self._matcher
        if matcher is None or token != self._last_token:
            matcher = self._matcher_for(token)
        octets = _patterns.path_rfc9309(_patterns.split_url(url))
        if not matcher.groups or octets == b"/robots.txt":
            return True
        best = _matcher.best_match(matcher, octets)
        return best == NO_MATCH or (best >= 0 and candidate_allows(best))

    def decide(self, url: str, token: str) -> Decision:
        """As :meth:`allowed`, with the deciding rule (line, directive, pattern,
        group) or the reason no rule decided."""
        matcher = self._matcher_for(token)
        path = _patterns.split_url(url)
        rfc9309 = self.standard == RFC9309
        octets = _patterns.path_rfc9309(path) if rfc9309 else _patterns.path_1994(path)
        if octets == b"/robots.txt":
            return _ALLOWED_ROBOTS_TXT
        if not matcher.groups:
            return _ALLOWED_NO_GROUP
        best = _matcher.best_match(matcher, octets)
        if best == TOO_COMPLEX:
            return _DISALLOWED_TOO_COMPLEX
        if best == NO_MATCH:
            return _ALLOWED_NO_MATCH
        rule = self._rule(candidate_entry(best))
        return Decision(rule.allow, rule, REASON_RULE)

    def crawl_delay(self, token: str) -> float | None:
        """Seconds between requests asked of ``token``; None when not set (or 1994)."""
        return next((d for d, _ in self._extras(token) if d is not None), None)

    def request_rate(self, token: str) -> RequestRate | None:
        """``Request-rate: N/T[smh]`` of the group for ``token``; None when not set."""
        return next((r for _, r in self._extras(token) if r is not None), None)

    def groups_for(self, token: str) -> tuple[tuple[str, ...], ...]:
        """The user-agent lines of every group that applies to ``token``."""
        return tuple(self._parsed.groups.agents(group) for group in self._select(token))

    def usage(self, url: str, token: str) -> UsagePreferences:
        """The usage preferences (``Content-Usage``, ``Content-Signal``) this file
        states for ``url`` and ``token``: use preferences, not access rules.
        Raises ``ValueError`` as :meth:`allowed` does."""
        allowed = self.allowed(url, token)
        return _usage.for_url(self._parsed, self.standard, url, token, allowed=allowed)

    @property
    def has_usage_rules(self) -> bool:
        """Whether the file holds any ``Content-Usage`` or ``Content-Signal`` line."""
        return self._parsed.usage is not None

    def usage_summary(self) -> UsageSummary:
        """How many usage lines the file holds (and how many were unusable)."""
        return _usage.summary(self._parsed)

    def memory_bytes(self) -> int:
        """About how many bytes this object keeps now, from above: the parsed
        tables, the last token's matcher (while held), the remembered selections
        and what usage queries keep (before the first, a bound).  Cheap enough to
        call on every cache store."""
        parsed = self._parsed
        size = sys.getsizeof(self) + parsed.size() + sys.getsizeof(self._last_groups)
        size += getattr(self._matcher, "size", 0)  # one read: the ring may drop it
        memo = self._memo
        if memo is not None:
            # A snapshot: a store's thread may measure while a token is added.
            selections = tuple(memo.values())
            size += sys.getsizeof(memo) + sum(8 * len(s) + 120 for s in selections)
        size += size // 8 + 256  # allocator rounding, objects too small to count
        if parsed.usage is not None:
            size += parsed.usage.size()
        return size

    def __reduce__(self) -> tuple[type[RobotsTxt], tuple[Parsed, str]]:
        # Pickled as the parsed tables: the matcher is compiled again when asked.
        return RobotsTxt, (self._parsed, self.standard)

    def __repr__(self) -> str:
        groups = self._parsed.groups.number
        return f"<RobotsTxt standard={self.standard} groups={groups}>"

    def _rule(self, entry: int) -> Rule:
        parsed, rules = self._parsed, self._parsed.rules.opened()
        line, spelling, allow = rules.fields(entry)
        groups = parsed.groups  # each group's entries are one run
        group = next(g for g in range(groups.number) if entry in groups.entries(g))
        pattern, agents = decode_text(rules.value(entry)), groups.agents(group)
        return Rule(line, parsed.spellings[spelling], pattern, allow, agents)

    def _matcher_for(self, token: str) -> Matcher:
        """``token``'s matcher, its groups remembered as the last token's;
        compiled unless the matcher held is for the same groups."""
        matcher = self._matcher
        if matcher is not None and token == self._last_token:
            return matcher
        numbers = self._select(token)
        if self._last_token is not None and self._last_token != token:
            memo = self._memo
            if memo is None:
                memo = self._memo = {}
            memo.pop(token, None)
            memo[self._last_token] = self._last_groups
            while len(memo) > TOKEN_MEMO_SIZE:
                del memo[next(iter(memo))]  # the least recently used
        self._last_token, self._last_groups = token, numbers
        if matcher is None or matcher.groups != numbers:
            groups = self._parsed.groups
            matcher = _matcher.compile_rules(
                self._parsed.rules.opened(), numbers, map(groups.entries, numbers)
            )
            self._matcher = matcher
            if matcher.size:
                _matcher.RING.hold(self, matcher)
        return matcher

    def drop_matcher(self, ident: int) -> None:
        """Let the compiled matcher go, if it is still the one of ``id`` ``ident``
        (the process-wide bound, ``matcher.RING``, asks it)."""
        if id(self._matcher) == ident:  # None's id is no matcher's
            self._matcher = None

    def _select(self, token: str) -> tuple[int, ...]:
        """The numbers of the groups that apply to ``token`` (checks the token)."""
        if token == self._last_token:
            return self._last_groups
        memo = self._memo
        if memo is not None and token in memo:
            return memo[token]
        name = _tokens.check_token(token, self.standard)
        groups = self._parsed.groups
        rfc9309 = self.standard == RFC9309
        texts = [
            groups.agent_lines(number) if rfc9309 or groups.has_rules(number) else b""
            for number in range(groups.number)
        ]
        found = _groups.select(texts, name, self.standard)
        # Most selections are one of the first groups: one shared tuple each,
        # not one per cached origin.
        return _SMALL_SELECTIONS.get(found, found)

    def _extras(self, token: str) -> list[Extras]:
        """Crawl-delay and Request-rate of each group for ``token``: none in 1994."""
        groups = self._select(token)  # validates the token in both modes
        if self.standard != RFC9309:
            return []
        extras = self._parsed.extras or {}
        return [extras.get(group, (None, None)) for group in groups]


def parse(body: bytes | bytearray | memoryview, standard: str = RFC9309) -> RobotsTxt:
    """Shortcut for :meth:`RobotsTxt.parse`."""
    return RobotsTxt.parse(body, standard)
