"""Stat keys, drop log lines and the end-of-crawl summary.

Everything the user reads about what the middleware did is worded here, so the
README's stats and log tables have one place to match.
"""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING, Final

if TYPE_CHECKING:
    from scrapy_robots_std._robots import Rule

#: Prefix of every stat key this package adds (Scrapy's ``robotstxt/*`` keys are
#: kept with their built-in meaning).
PREFIX: Final = "robots_std/"

# Why a request was dropped (the ``robots_std/dropped/<reason>`` keys).
DROP_RULE: Final = "rule"  # a Disallow rule of the robots.txt decided
DROP_UNREACHABLE: Final = "unreachable"  # robots.txt could not be fetched
DROP_STATUS: Final = "http-status"  # 1994 mode: robots.txt answered 401 or 403
DROP_SHUTDOWN: Final = "shutdown"  # still waiting for robots.txt when the spider closed

#: How many origins and rules the bounded counters track before folding the rest.
_TRACKED: Final = 10_000
_OTHER: Final = "(other)"


def stat(*parts: str) -> str:
    return PREFIX + "/".join(parts)


class _BoundedCounter(Counter[str]):
    """A Counter that stops adding new keys at ``_TRACKED`` and folds the rest."""

    def add(self, key: str, count: int = 1) -> None:
        if key not in self and len(self) >= _TRACKED:
            key = _OTHER
        self[key] += count


def rule_text(robots_url: str, rule: Rule) -> str:
    """``http://a/robots.txt line 4 "Disallow: /x" (User-agent: bot)``."""
    return f'{robots_url} line {rule.line} "{rule.directive}: {rule.pattern}" ({rule.group})'


class Report:
    """What was dropped, where and why; summarised when the spider closes."""

    def __init__(self, top: int) -> None:
        self.top = top
        self.by_origin = _BoundedCounter()
        self.by_rule = _BoundedCounter()
        self.by_reason: Counter[str] = Counter()
        self.unreachable: dict[str, str] = {}
        self.dry_run = False

    def dropped(self, origin: str, reason: str, rule_label: str | None) -> None:
        self.by_reason[reason] += 1
        self.by_origin.add(origin)
        if rule_label is not None:
            self.by_rule.add(rule_label)

    def origin_unreachable(self, origin: str, detail: str) -> None:
        if origin in self.unreachable or len(self.unreachable) < _TRACKED:
            self.unreachable[origin] = detail

    def origin_recovered(self, origin: str) -> None:
        self.unreachable.pop(origin, None)

    def top_origins(self) -> list[tuple[str, int]]:
        return self.by_origin.most_common(self.top)

    def summary(self) -> str:
        verb = "would have been dropped (dry run)" if self.dry_run else "dropped"
        total = sum(self.by_reason.values())
        reasons = ", ".join(f"{r}: {n}" for r, n in self.by_reason.most_common())
        lines = [
            f"robots.txt: {total} request(s) {verb}"
            + (f" ({reasons}) from {len(self.by_origin)} origin(s)" if total else "")
        ]
        if self.top and self.by_origin:
            lines.append("  top origins by drops:")
            lines.extend(f"    {n:>7}  {o}" for o, n in self.top_origins())
        if self.top and self.by_rule:
            lines.append("  top deciding rules:")
            lines.extend(
                f"    {n:>7}  {r}" for r, n in self.by_rule.most_common(self.top)
            )
        if self.unreachable:
            shown = list(self.unreachable.items())[: max(self.top, 1)]
            more = len(self.unreachable) - len(shown)
            lines.append(
                f"  origins whose robots.txt was unreachable: {len(self.unreachable)}"
            )
            lines.extend(f"    {o}: {d}" for o, d in shown)
            if more > 0:
                lines.append(f"    ... and {more} more")
        return "\n".join(lines)
