"""The work a check takes, as ``patterns.best_match`` charges it to its budget.

:func:`counted_work` records each charge in order: a wildcard pattern tried in
full (``patterns.TRY_WORK`` and the pieces and bytes it took, from
``patterns.wildcard_work``) or a best-first quick reject (one unit and a unit
per ``patterns.SCANNED_BYTES_PER_WORK`` bytes of the path it searched, when the
pattern's last piece is missing from the path).  The hostile-bounds tests
compare the sum with ``patterns.work_budget``.
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
    real_work = patterns.wildcard_work
    real_tail_missing = patterns.tail_missing

    def counting_work(path: bytes, pattern: bytes) -> int:
        done = real_work(path, pattern)
        charges.append(patterns.TRY_WORK + (~done if done < 0 else done))
        return done

    def counting_rejects(path: bytes, pattern: bytes) -> bool:
        missing = real_tail_missing(path, pattern)
        if missing:
            charges.append(1 + len(path) // patterns.SCANNED_BYTES_PER_WORK)
        return missing

    with (
        mock.patch.object(patterns, "wildcard_work", counting_work),
        mock.patch.object(patterns, "tail_missing", counting_rejects),
    ):
        yield charges


def work_of(parsed: RobotsTxt, target: str, token: str) -> tuple[int, str]:
    """The work a check of ``target`` for ``token`` takes, and its reason."""
    with counted_work() as charges:
        decision = parsed.decide(target, token)
    return sum(charges), decision.reason
