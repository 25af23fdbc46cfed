"""The work a check takes, as ``matcher.best_match`` charges it to its budget.

:func:`counted_work` records each charge in order (each call of
``patterns.Budget.take``): a wildcard pattern tried in full (``patterns.TRY_WORK``
and the pieces and bytes it took, from ``patterns.wildcard_work``) or, in a
matcher past ``matcher.HOT_ENTRIES``, a quick reject (one unit and a unit per
``patterns.SCANNED_BYTES_PER_WORK`` bytes of the path it searched).  The
hostile-bounds tests compare the sum with ``patterns.work_budget``.
"""

from __future__ import annotations

from contextlib import contextmanager
from typing import TYPE_CHECKING
from unittest import mock

from scrapy_robots_std.robotstxt import patterns

if TYPE_CHECKING:
    from collections.abc import Iterator

    from scrapy_robots_std import RobotsTxt

__all__ = ["counted_work", "work_of"]


@contextmanager
def counted_work() -> Iterator[list[int]]:
    """Every charge the checks made inside the block, in order."""
    charges: list[int] = []
    real_take = patterns.Budget.take

    def counting_take(budget: patterns.Budget, work: int) -> bool:
        charges.append(work)
        return real_take(budget, work)

    with mock.patch.object(patterns.Budget, "take", counting_take):
        yield charges


def work_of(parsed: RobotsTxt, target: str, token: str) -> tuple[int, str]:
    """The work a check of ``target`` for ``token`` takes, and its reason."""
    with counted_work() as charges:
        decision = parsed.decide(target, token)
    return sum(charges), decision.reason
