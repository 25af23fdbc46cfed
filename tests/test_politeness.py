"""The pure politeness functions: asked delay, cap, and slot timing."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from scrapy_robots_std.robotstxt.parser import RequestRate
from scrapy_robots_std.scrapy.politeness import (
    CRAWL_DELAY,
    REQUEST_RATE,
    AskedDelay,
    asked_delay,
    plan_delay,
    slot_timing,
)


@pytest.mark.parametrize(
    ("crawl_delay", "rate", "expected"),
    [
        (None, None, None),
        (0.0, None, None),  # a zero delay asks nothing
        (2.0, None, AskedDelay(2.0, CRAWL_DELAY, "2")),
        (0.5, None, AskedDelay(0.5, CRAWL_DELAY, "0.5")),
        (None, RequestRate(1, 5.0), AskedDelay(5.0, REQUEST_RATE, "1/5s")),
        (None, RequestRate(10, 60.0), AskedDelay(6.0, REQUEST_RATE, "10/60s")),
        # the stricter one decides; a tie keeps Crawl-delay
        (2.0, RequestRate(1, 5.0), AskedDelay(5.0, REQUEST_RATE, "1/5s")),
        (10.0, RequestRate(1, 5.0), AskedDelay(10.0, CRAWL_DELAY, "10")),
        (5.0, RequestRate(2, 10.0), AskedDelay(5.0, CRAWL_DELAY, "5")),
        (0.0, RequestRate(4, 1.0), AskedDelay(0.25, REQUEST_RATE, "4/1s")),
    ],
)
def test_asked_delay(
    crawl_delay: float | None, rate: RequestRate | None, expected: AskedDelay | None
) -> None:
    assert asked_delay(crawl_delay, rate) == expected


def test_plan_delay_caps_and_says_so() -> None:
    asked = AskedDelay(3600.0, CRAWL_DELAY, "3600")
    plan = plan_delay(asked, 60.0)
    assert (plan.seconds, plan.capped, plan.asked) == (60.0, True, asked)
    plan = plan_delay(AskedDelay(60.0, CRAWL_DELAY, "60"), 60.0)
    assert (plan.seconds, plan.capped) == (60.0, False)
    plan = plan_delay(AskedDelay(2.0, CRAWL_DELAY, "2"), 60.0)
    assert (plan.seconds, plan.capped) == (2.0, False)


@pytest.mark.parametrize(
    ("delay", "jitter", "floor", "expected"),
    [
        (0.0, 0.5, 2.0, (2.0, 0.0)),  # no delay of the user's: the floor, exactly
        (1.0, 0.0, 2.0, (2.0, 0.0)),  # a lower DOWNLOAD_DELAY is raised
        (3.0, 0.0, 2.0, (3.0, 0.0)),  # a higher one is kept
        (5.0, 0.5, 2.0, (5.0, 0.5)),  # 2.5..7.5 s is already >= 2 s
        (3.0, 0.5, 2.0, (3.0, 1.0 - 2.0 / 3.0)),  # mean kept, jitter narrowed
        (2.0, 0.5, 2.0, (2.0, 0.0)),
        (4.0, 1.5, 2.0, (4.0, 0.5)),  # a jitter above 1 is narrowed too
    ],
)
def test_slot_timing(
    delay: float, jitter: float, floor: float, expected: tuple[float, float]
) -> None:
    new_delay, new_jitter = slot_timing(delay, jitter, floor)
    assert new_delay == pytest.approx(expected[0])
    assert new_jitter == pytest.approx(expected[1])


_seconds = st.floats(min_value=0.0, max_value=1e4, allow_nan=False)


@given(delay=_seconds, jitter=st.floats(0.0, 3.0), floor=_seconds)
def test_slot_timing_never_goes_below_the_floor_nor_lowers_the_user(
    delay: float, jitter: float, floor: float
) -> None:
    new_delay, new_jitter = slot_timing(delay, jitter, floor)
    # The shortest wait Scrapy can pick is not below the floor...
    assert new_delay * (1.0 - new_jitter) >= floor
    # ...the mean wait is never lowered, and jitter never grows.
    assert new_delay >= delay
    assert 0.0 <= new_jitter <= max(jitter, 0.0)
    # A slot that already honours the floor is left exactly as it was.
    if delay * (1.0 - jitter) >= floor:
        assert (new_delay, new_jitter) == (delay, jitter)
