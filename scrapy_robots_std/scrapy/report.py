"""Stat keys, drop log lines and the end-of-crawl summary.

Everything the user reads about what the middleware did is worded here, so the
README's stats and log tables have one place to match.
"""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING, Final

from scrapy_robots_std import stats as _stats
from scrapy_robots_std.safetext import safe

if TYPE_CHECKING:
    from scrapy.statscollectors import StatsCollector

    from scrapy_robots_std.robotstxt.robots import Rule

#: How many origins and rules the bounded counters track before folding the rest.
#: Most characters of one part of a rule label taken from a robots.txt or a URL.
LABEL_PART_MAX: Final = 200
_TRACKED: Final = 10_000
_OTHER: Final = "(other)"


class _BoundedCounter(Counter[str]):
    """A Counter that stops adding new keys at ``_TRACKED`` and folds the rest."""

    def add(self, key: str, count: int = 1) -> None:
        if key not in self and len(self) >= _TRACKED:
            key = _OTHER
        self[key] += count

    def top(self, n: int | None = None) -> list[tuple[str, int]]:
        """Highest counts first; ties in name order, so the output is stable."""
        ranked = sorted(self.items(), key=lambda item: (-item[1], item[0]))
        return ranked if n is None else ranked[:n]

    def distinct(self) -> str:
        """How many keys were counted: ``"12"``, or ``"10000+"`` once folding began."""
        if _OTHER in self:
            return f"{len(self) - 1}+"
        return str(len(self))


def record_wait(stats: StatsCollector, seconds: float) -> None:
    """Count one request's wait for a robots.txt verdict."""
    seconds = max(seconds, 0.0)
    stats.inc_value(_stats.WAIT_REQUESTS)
    total = stats.get_value(_stats.WAIT_SECONDS, 0.0)
    stats.set_value(_stats.WAIT_SECONDS, round(total + seconds, 3))
    stats.max_value(_stats.WAIT_MAX_SECONDS, round(seconds, 3))


def rule_text(robots_url: str, rule: Rule) -> str:
    """``http://a/robots.txt line 4 "Disallow: /x" (User-agent: bot)``.

    Each part from the site (the URL, the pattern, the group's agents) is cut to
    :data:`LABEL_PART_MAX` characters: the label names a drop in log lines and in
    the report's keys, and a hostile file must not make it large.
    """
    return (
        f"{clip(robots_url)} line {rule.line} "
        f'"{rule.directive}: {clip(rule.pattern)}" ({clip(rule.group)})'
    )


def clip(text: str, limit: int | None = None) -> str:
    """``text``, or its start and ``...`` when it is longer than ``limit``."""
    limit = LABEL_PART_MAX if limit is None else limit
    return text if len(text) <= limit else f"{text[: limit - 3]}..."


class Report:
    """What was dropped, where and why; summarised when the spider closes."""

    def __init__(self, top: int) -> None:
        self.top = top
        self.by_origin = _BoundedCounter()
        self.by_rule = _BoundedCounter()
        self.by_reason = _BoundedCounter()
        #: drops per origin and reason (the audit file's closing records); origins
        #: past ``_TRACKED`` are folded into ``"(other)"``
        self.by_origin_reason: dict[str, Counter[str]] = {}
        self.unreachable: dict[str, str] = {}
        self.unreachable_untracked = 0
        self.dry_run = False
        #: origins whose robots.txt states usage preferences (the first few named)
        self.usage_origins: dict[str, None] = {}
        self.usage_origin_count = 0

    def dropped(self, origin: str, reason: str, rule_label: str | None) -> None:
        self.by_reason.add(reason)
        self.by_origin.add(origin)
        counts = self.by_origin_reason.get(origin)
        if counts is None:
            key = origin if len(self.by_origin_reason) < _TRACKED else _OTHER
            counts = self.by_origin_reason.setdefault(key, Counter())
        counts[reason] += 1
        if rule_label is not None:
            self.by_rule.add(rule_label)

    def usage_stated(self, origin: str) -> None:
        if origin in self.usage_origins:
            return
        self.usage_origin_count += 1
        if len(self.usage_origins) < _TRACKED:
            self.usage_origins[origin] = None

    def origin_unreachable(self, origin: str, detail: str) -> None:
        if origin in self.unreachable or len(self.unreachable) < _TRACKED:
            self.unreachable[origin] = detail
        else:
            self.unreachable_untracked += 1

    def origin_recovered(self, origin: str) -> None:
        self.unreachable.pop(origin, None)

    def close(self, stats: StatsCollector) -> str:
        """Set the per-origin drop stats (not in a dry run); return the summary."""
        for origin, count in [] if self.dry_run else self.top_origins():
            stats.set_value(_stats.dropped_by_origin(origin), count)
        return self.summary(left_at_close=stats.get_value(_stats.WAIT_LEFT_AT_CLOSE, 0))

    def top_origins(self) -> list[tuple[str, int]]:
        return self.by_origin.top(self.top)

    def summary(self, left_at_close: int = 0) -> str:
        """The end-of-crawl lines. ``left_at_close``: requests still waiting in the
        scheduler's queue when the spider closed (not sent, and not dropped)."""
        verb = "would have been dropped" if self.dry_run else "dropped"
        total = sum(self.by_reason.values())
        reasons = ", ".join(f"{r}: {n}" for r, n in self.by_reason.top())
        head = f"robots.txt: {total} request(s) {verb}"
        if total:
            head += f" ({reasons}) from {self.by_origin.distinct()} origin(s)"
        if self.dry_run:
            head += "; dry run: nothing was dropped"
        if left_at_close:
            head += (
                f"; {left_at_close} request(s) not sent: still waiting for a "
                "robots.txt when the spider closed"
            )
        lines = [head]
        if self.top and self.by_origin:
            drops = "would-be drops" if self.dry_run else "drops"
            lines.append(f"  top origins by {drops}:")
            lines.extend(f"    {n:>7}  {safe(o)}" for o, n in self.top_origins())
        if self.top and self.by_rule:
            lines.append("  top deciding rules:")
            lines.extend(f"    {n:>7}  {r}" for r, n in self.by_rule.top(self.top))
        if self.unreachable:
            shown = list(self.unreachable.items())[: max(self.top, 1)]
            count = len(self.unreachable) + self.unreachable_untracked
            more = count - len(shown)
            lines.append(f"  origins whose robots.txt was unreachable: {count}")
            lines.extend(f"    {safe(o)}: {safe(d)}" for o, d in shown)
            if more > 0:
                lines.append(f"    ... and {more} more")
        if self.usage_origin_count:
            named = list(self.usage_origins)[: max(self.top, 1)]
            lines.append(
                "  origins whose robots.txt states AI usage preferences "
                f"(Content-Usage, Content-Signal): {self.usage_origin_count}"
            )
            lines.extend(f"    {safe(o)}" for o in named)
            if self.usage_origin_count > len(named):
                lines.append(f"    ... and {self.usage_origin_count - len(named)} more")
        return "\n".join(lines)
