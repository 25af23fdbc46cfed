"""The parsed robots.txt: parse once, then ask who may fetch what and why."""

from __future__ import annotations

import sys
from dataclasses import dataclass
from itertools import compress
from typing import TYPE_CHECKING

from scrapy_robots_std.robotstxt import compile as _compile
from scrapy_robots_std.robotstxt import groups as _groups
from scrapy_robots_std.robotstxt import matcher as _matcher
from scrapy_robots_std.robotstxt import parser as _parser
from scrapy_robots_std.robotstxt import usage as _usage
from scrapy_robots_std.robotstxt.parser import (
    RFC9309,
    STANDARDS,
    Diagnostic,
    RequestRate,
)
from scrapy_robots_std.robotstxt.pattern_table import pattern_table
from scrapy_robots_std.robotstxt.wildcards import TOO_COMPLEX

if TYPE_CHECKING:
    from collections.abc import Sequence

    from scrapy_robots_std.robotstxt.usage import UsagePreferences, UsageSummary

REASON_RULE = "rule"
REASON_NO_MATCH = "no-matching-rule"
REASON_NO_GROUP = "no-group"
REASON_ROBOTS_TXT = "robots-txt"
#: The file's wildcard rules need more work than one check may take
#: (:func:`~scrapy_robots_std.robotstxt.wildcards.work_budget`): disallowed,
#: as the rule that would decide is not known.  Only hostile files get here.
#: (The middleware's drop reason of the same name, ``stats.DROP_TOO_COMPLEX``.)
REASON_TOO_COMPLEX = "too-complex"

_HTTP_URL_RE = _matcher.HTTP_URL_RE
_ALLOW_SHIFT = _matcher.ALLOW_SHIFT
_LINE_SHIFT = _parser.LINE_SHIFT


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
        """One line for a person: the verdict and the deciding line, or the reason."""
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
        if self.reason == REASON_TOO_COMPLEX:
            return (
                f"{verdict}: the file's wildcard rules take more work than one "
                "check may (a hostile file?); disallowed to be safe"
            )
        return f"{verdict}: {self.reason}"

    def __str__(self) -> str:
        return self.explain()


class _Compiled:
    """What a set of groups needs: the groups and their rules, ready to match.

    Tokens that select the same groups share one (rotating tokens that all
    fall back to ``*`` compile its rules once).
    """

    __slots__ = ("_size", "_table", "groups", "prefixes", "rules")

    def __init__(
        self,
        groups: tuple[int, ...] = (),
        rules: _matcher.RuleSet | None = None,
        prefixes: _matcher.PrefixIndex | None = None,
        table: _matcher.PatternTable | None = None,
    ) -> None:
        self.groups = groups  # group numbers
        self.rules = rules  # rfc9309
        # 1994: each pattern valued candidate(0, 0, line, rule index), so
        # the highest value among the patterns that start a path is the first line.
        self.prefixes = prefixes
        self._table = table
        self._size: int | None = None

    @property
    def size(self) -> int:
        """Bytes kept beyond the file's pattern table, counted once when first
        asked (a crawl that never asks pays nothing on the first check)."""
        size = self._size
        if size is None:
            size = sys.getsizeof(self) + sys.getsizeof(self.groups)
            if self.rules is not None:
                size += self.rules.size(self._table)
            if self.prefixes is not None:
                size += self.prefixes.size(self._table)
            self._size = size
        return size


_NOTHING = _Compiled()

#: Tokens remembered per parsed file (least recently used dropped first): each
#: one's groups and compiled rules, so rotating tokens compile once each.
TOKEN_MEMO_SIZE = 64
#: Bytes of compiled rules a parsed file keeps for tokens other than the last
#: one asked; past it, the least recently used are dropped (compiled again
#: when asked again).  With the file itself this keeps one hostile 500 KiB
#: file's footprint near its 1 MiB allowance.
COMPILED_MEMO_BYTES = 256 * 1024


class RobotsTxt:
    """A parsed robots.txt body.  Immutable once parsed; safe to share."""

    # A crawl asks with one token: the last token's rules have their own
    # slots; other tokens go to a small LRU memo made when a second one shows up.
    __slots__ = ("_last", "_last_token", "_memo", "_parsed", "standard")

    def __init__(self, parsed: _parser.Parsed, standard: str) -> None:
        self._parsed = parsed
        self.standard = standard
        self._last_token: str | None = None
        self._last: _Compiled = _NOTHING
        self._memo: dict[str, _Compiled] | None = None

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
        """The ``Sitemap:`` values, in file order, as written (not resolved)."""
        return self._parsed.sitemaps

    @property
    def diagnostics(self) -> tuple[Diagnostic, ...]:
        """What the parser noticed (misspellings, unknown fields, rules outside any
        group, a cut body), each with its line number."""
        return tuple(self._parsed.diagnostics())

    @property
    def truncated(self) -> bool:
        """Whether the body was longer than the 500 KiB the parser reads."""
        return self._parsed.truncated

    def without_diagnostics(self) -> RobotsTxt:
        """The same rules without the diagnostics, for a long-lived cache.

        Every answer is the same except ``diagnostics`` (empty).  The tables are
        shared, not copied; the per-token indexes are not (the copy builds its own).
        """
        return RobotsTxt(self._parsed.without_notes(), self.standard)

    def allowed(self, url: str, token: str) -> bool:
        """Whether the crawler named ``token`` may fetch ``url`` (an absolute http(s)
        URL). Raises ``ValueError`` for a token or URL the standard cannot read."""
        if self.standard != RFC9309:
            return self._decide(url, token, with_rule=False).allowed
        # The hot path of a crawl: _decide() inlined, without building a Decision.
        compiled = self._last if token == self._last_token else self._compile(token)
        try:
            match = _HTTP_URL_RE.match(url)
        except TypeError:
            match = None
        if match is None:
            return self._decide(
                url, token, with_rule=False
            ).allowed  # raises ValueError
        rules = compiled.rules
        if rules is None:
            return True
        path = match.group(1)
        if path[:1] != "/":
            path = "/" + path
        if "%" in path or not path.isascii():
            octets = _matcher.path_rfc9309(path)
            path = octets.decode("ascii")
        else:
            octets = path.encode()
        if path == "/robots.txt":  # _matcher.is_robots_txt(), inlined
            return True
        best = rules.best(octets, path)
        if best < 0:
            return best == -1  # no rule matched; TOO_COMPLEX disallows
        return best >> _ALLOW_SHIFT & 1 == 1

    def decide(self, url: str, token: str) -> Decision:
        """As :meth:`allowed`, with the deciding rule (line, directive, pattern,
        group) or the reason no rule decided."""
        return self._decide(url, token, with_rule=True)

    def usage(self, url: str, token: str) -> UsagePreferences:
        """The usage preferences (``Content-Usage``, ``Content-Signal``) this file
        states for ``url`` and ``token``: use preferences, not access rules.
        Raises ``ValueError`` as :meth:`allowed` does."""
        allowed = self.allowed(url, token)
        return _usage.for_url(self._parsed, self.standard, url, token, allowed=allowed)

    @property
    def has_usage_rules(self) -> bool:
        """Whether the file holds any ``Content-Usage`` or ``Content-Signal`` line
        (a quick test before :meth:`usage`)."""
        return self._parsed.usage is not None

    def usage_summary(self) -> UsageSummary:
        """How many usage lines the file holds (and how many were unusable)."""
        return _usage.summary(self._parsed)

    def crawl_delay(self, token: str) -> float | None:
        """Seconds between requests asked of ``token``; None when not set (or 1994)."""
        extras = self._parsed.extras
        delays = [extras(group)[0] for group in self._groups_with_extras(token)]
        return next((delay for delay in delays if delay is not None), None)

    def request_rate(self, token: str) -> RequestRate | None:
        """``Request-rate: N/T[smh]`` of the group for ``token``; None when not set."""
        extras = self._parsed.extras
        rates = [extras(group)[1] for group in self._groups_with_extras(token)]
        return next((rate for rate in rates if rate is not None), None)

    def _groups_with_extras(self, token: str) -> tuple[int, ...]:
        """The groups whose Crawl-delay / Request-rate apply: none in 1994 mode.

        Only the groups are chosen: no rule is compiled for these questions.
        """
        groups = self._select(token)  # validates the token in both modes
        return groups if self.standard == RFC9309 else ()

    def groups_for(self, token: str) -> tuple[tuple[str, ...], ...]:
        """The user-agent lines of every group that applies to ``token``."""
        return tuple(self._parsed.agents(group) for group in self._select(token))

    def memory_bytes(self) -> int:
        """About how many bytes this object keeps now: the parsed tables, the
        rules compiled for the tokens asked so far, and what usage queries keep
        (before the first one, a bound on what it will keep).

        An estimate from above (``sys.getsizeof`` of what it holds, plus a
        margin for the allocator), cheap enough to call on every cache store:
        it adds sizes counted when each table was built.  Tables shared with a
        copy from :meth:`without_diagnostics` are counted in both.
        """
        parsed = self._parsed
        values = parsed.rule_values
        size = sys.getsizeof(self) + parsed.size()
        if isinstance(values, _matcher.PatternTable):
            size += values.size()
        else:
            size += sys.getsizeof(values)
        compiled = {id(self._last): self._last}
        if self._memo is not None:
            size += sys.getsizeof(self._memo) + 120 * len(self._memo)
            # A snapshot: a store's worker thread may measure while the reactor
            # compiles another token into the memo.
            compiled.update((id(found), found) for found in tuple(self._memo.values()))
        size += sum(found.size for found in compiled.values() if found is not _NOTHING)
        # Allocator rounding and the objects too small to count one by one.
        size += size // 8 + 256
        usage = parsed.usage
        if usage is not None:
            # Usage lines: what queries keep, object by object once built (a
            # bound worked out from the lines before), so no margin on top.
            size += usage.size()
        return size

    def __repr__(self) -> str:
        groups = self._parsed.group_count
        return f"<RobotsTxt standard={self.standard} groups={groups}>"

    # -- machinery ------------------------------------------------------------

    def _decide(self, url: str, token: str, with_rule: bool) -> Decision:
        compiled = self._last if token == self._last_token else self._compile(token)
        path = _matcher.split_url(url)
        if self.standard == RFC9309:
            octets = _matcher.path_rfc9309(path)
            text = octets.decode("ascii")
            if _matcher.is_robots_txt(text):
                return _ALLOWED_ROBOTS_TXT
            if compiled.rules is None:
                return _ALLOWED_NO_GROUP
            best = compiled.rules.best(octets, text)
            if best == TOO_COMPLEX:
                return _DISALLOWED_TOO_COMPLEX
            if best < 0:
                return _ALLOWED_NO_MATCH
            allowed = _matcher.candidate_allows(best)
            index = _matcher.candidate_index(best)
        else:
            octets = _matcher.path_1994(path)
            if octets == b"/robots.txt":
                return _ALLOWED_ROBOTS_TXT
            if not compiled.groups:
                return _ALLOWED_NO_GROUP
            first = compiled.prefixes.highest(octets) if compiled.prefixes else -1
            if first < 0:
                return _ALLOWED_NO_MATCH
            index = _matcher.candidate_index(first)
            allowed = self._parsed.code(index) & 1 == _parser.ALLOW
        if not with_rule:
            return _ALLOWED_RULE if allowed else _DISALLOWED_RULE
        return Decision(allowed, self._rule(index), REASON_RULE)

    def _rule(self, index: int) -> Rule:
        parsed = self._parsed
        code = parsed.code(index)
        return Rule(
            line=parsed.line(index),
            directive=parsed.directive(index),
            pattern=_parser.decode_text(self._table().value(index)),
            allow=code & 1 == _parser.ALLOW,
            agents=parsed.agents(parsed.group_of(index)),
        )

    def _compile(self, token: str) -> _Compiled:
        """``token``'s compiled rules: from the memo, or built (and remembered)."""
        memo = self._memo
        found = None if memo is None else memo.pop(token, None)
        if found is None:
            groups = self._select(token)
            found = self._compiled_for(groups)
        if self._last_token is not None and self._last_token != token:
            if memo is None:
                memo = self._memo = {}
            memo[self._last_token] = self._last  # the most recent, at the end
            self._trim(memo)
        self._last_token, self._last = token, found
        return found

    def _select(self, token: str) -> tuple[int, ...]:
        """The numbers of the groups that apply to ``token`` (checks the token)."""
        if token == self._last_token:
            return self._last.groups
        memo = self._memo
        if memo is not None and token in memo:
            return memo[token].groups
        if self.standard == RFC9309:
            return self._select_rfc9309(_groups.check_token(token, RFC9309))
        return self._select_1994(_groups.check_token(token, self.standard))

    def _compiled_for(self, groups: tuple[int, ...]) -> _Compiled:
        if not groups:
            return _NOTHING
        for known in (self._last, *(self._memo or {}).values()):
            if known.groups == groups:
                return known
        if self.standard == RFC9309:
            return self._compile_rfc9309(groups)
        return self._compile_1994(groups)

    def _trim(self, memo: dict[str, _Compiled]) -> None:
        """Drop the least recently used tokens past the memo's bounds."""
        while len(memo) > TOKEN_MEMO_SIZE:
            del memo[next(iter(memo))]
        sizes: dict[int, int] = {}
        for found in memo.values():
            if found is not self._last:
                sizes[id(found)] = found.size
        total = sum(sizes.values())
        while memo and total > COMPILED_MEMO_BYTES:
            oldest = next(iter(memo))
            found = memo.pop(oldest)
            if id(found) in sizes and all(f is not found for f in memo.values()):
                total -= sizes.pop(id(found))

    def _table(self) -> _matcher.PatternTable:
        return self._table_and_patterns()[0]

    def _table_and_patterns(
        self,
    ) -> tuple[_matcher.PatternTable, list[bytes] | None]:
        """The rules' patterns, normalized for matching; built on the first query.

        The bytes of all values are replaced by the table (one attribute, so a
        thread that reads the bytes meanwhile still builds an equal table).
        When the table is built now, also every rule's pattern in rule order:
        the first compile slices them instead of looking each one up.
        """
        values = self._parsed.rule_values
        if isinstance(values, _matcher.PatternTable):
            return values, None
        rfc9309 = self.standard == RFC9309
        table, patterns = pattern_table(
            values.split(b"\n") if self._parsed.rules else [],
            unchanged=values.isascii() and values.find(b"%") < 0,
            normalize=_matcher.normalize_rfc9309
            if rfc9309
            else _matcher.normalize_1994,
            # 1994 has no special characters: every pattern is a prefix.
            special=rfc9309 and (values.find(b"*") >= 0 or values.find(b"$") >= 0),
        )
        self._parsed.rule_values = table
        return table, patterns

    def _select_rfc9309(self, name: str) -> tuple[int, ...]:
        parsed = self._parsed
        text = parsed.agent_text
        bounds = parsed.group_bounds
        name_of = _groups.agent_name_rfc9309
        # Each group's agent text, read straight from the packed text.
        texts = [
            text[bounds[i] : bounds[i + 3] - 1] for i in range(0, len(bounds) - 1, 3)
        ]
        # An agent's name is a lower-cased ASCII prefix of its value, so a name
        # absent from the lower-cased text is nobody's: only the global groups
        # (an agent "*") are looked for, and only in groups that hold a "*".
        # The same test per group first: only the groups that hold the name's
        # letters are read agent by agent.
        if name in text.lower():
            chosen = tuple(
                number
                for number, found in enumerate(texts)
                if name in found.lower()
                and name in set(map(name_of, found.split("\n")))
            )
            if chosen:
                return chosen
        return tuple(
            number
            for number, found in enumerate(texts)
            if "*" in found and None in set(map(name_of, found.split("\n")))
        )

    def _compile_rfc9309(self, numbers: tuple[int, ...]) -> _Compiled:
        parsed = self._parsed
        values = parsed.rule_values
        if isinstance(values, bytes):
            # Before the file's table exists: small groups need none.
            small = _compile.small_ruleset(parsed, numbers, values)
            if small is not None:
                return _Compiled(numbers, small)
        bounds = parsed.group_bounds
        table, every = self._table_and_patterns()
        rules = parsed.rules
        indexes: Sequence[int]
        codes: Sequence[int]
        if len(numbers) == 1:
            # One group (most files): its rules are one run, sliced.
            start, end = bounds[3 * numbers[0] + 1], bounds[3 * numbers[0] + 2]
            indexes, codes = range(start, end), rules[start:end]
            mine = every[start:end] if every is not None else None
        else:
            indexes = [
                index
                for number in numbers
                for index in range(bounds[3 * number + 1], bounds[3 * number + 2])
            ]
            codes = [rules[index] for index in indexes]
            mine = [every[index] for index in indexes] if every is not None else None
        if mine is None:
            mine = table.patterns_at(list(indexes))
        mine, indexes, candidates = _compile.rule_candidates(mine, codes, indexes)
        # The table knows which patterns are plain prefixes: the first ones.
        other_table = table.other
        if not other_table or (len(other_table) == 1 and other_table[0] == b""):
            # No pattern of the file has "*" or "$": all plain.
            plain = _matcher.best_of(mine, candidates)
            other, other_candidates = [], []
        else:
            ids = table.ids
            count = len(table.plain)
            is_plain = [ids[index] < count for index in indexes]
            plain = _matcher.best_of(
                list(compress(mine, is_plain)), list(compress(candidates, is_plain))
            )
            is_other = [not flag for flag in is_plain]
            other = list(compress(mine, is_other))
            other_candidates = list(compress(candidates, is_other))
        special = _matcher.best_of(other, other_candidates)
        if b"\n".join(mine).find(b"/index.htm") >= 0:
            _compile.add_index_directories(mine, candidates, special)
        ruleset = _matcher.RuleSet(plain, special, table, parsed.rules)
        return _Compiled(numbers, ruleset, None, table)

    def _select_1994(self, robot: str) -> tuple[int, ...]:
        # A record is user-agent lines *followed by rule lines*: a block of
        # user-agent lines alone names nobody.
        parsed = self._parsed
        text = parsed.agent_text
        bounds = parsed.group_bounds
        name_of = _groups.agent_name_1994
        records = [
            (i // 3, set(map(name_of, text[bounds[i] : bounds[i + 3] - 1].split("\n"))))
            for i in range(0, len(bounds) - 1, 3)
            if bounds[i + 2] > bounds[i + 1]
        ]
        for number, found in records:
            if any(name and name in robot for name in found):
                return (number,)
        for number, found in records:
            if None in found:
                return (number,)
        return ()

    def _compile_1994(self, numbers: tuple[int, ...]) -> _Compiled:
        bounds = self._parsed.group_bounds
        (number,) = numbers
        # An empty value matches nothing (an empty Disallow allows all).
        table = self._table()
        span = list(range(bounds[3 * number + 1], bounds[3 * number + 2]))
        found = table.patterns_at(span)
        indexes = [index for index, pattern in zip(span, found, strict=True) if pattern]
        mine = [pattern for pattern in found if pattern]
        # Priority 0 and no allow bit: the earliest line is the highest value.
        rules = self._parsed.rules
        firsts = [
            _matcher.candidate(0, 0, rules[index] >> _LINE_SHIFT, index)
            for index in indexes
        ]
        prefixes = _matcher.PrefixIndex(_matcher.best_of(mine, firsts), table)
        return _Compiled(numbers, None, prefixes, table)


_ALLOWED_ROBOTS_TXT = Decision(True, None, REASON_ROBOTS_TXT)
_ALLOWED_NO_GROUP = Decision(True, None, REASON_NO_GROUP)
_ALLOWED_NO_MATCH = Decision(True, None, REASON_NO_MATCH)
_ALLOWED_RULE = Decision(True, None, REASON_RULE)
_DISALLOWED_RULE = Decision(False, None, REASON_RULE)
_DISALLOWED_TOO_COMPLEX = Decision(False, None, REASON_TOO_COMPLEX)


def parse(body: bytes | bytearray | memoryview, standard: str = RFC9309) -> RobotsTxt:
    """Shortcut for :meth:`RobotsTxt.parse`."""
    return RobotsTxt.parse(body, standard)
