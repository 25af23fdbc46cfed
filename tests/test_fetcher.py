"""Pure parts of the fetch cycle (scrapy_robots_std.scrapy.fetcher)."""

from __future__ import annotations

from scrapy_robots_std.scrapy.fetcher import stale_detail


def test_a_stale_copy_detail_keeps_only_the_latest_failure() -> None:
    detail = "HTTP 200"
    for n in range(50):
        detail = stale_detail(detail, f"unreachable (HTTP 503, try {n})")
    assert detail == "HTTP 200 (stale copy; now unreachable (HTTP 503, try 49))"


def test_a_stale_copy_detail_of_a_first_failure() -> None:
    assert stale_detail("HTTP 200", "unreachable (timeout)") == (
        "HTTP 200 (stale copy; now unreachable (timeout))"
    )
