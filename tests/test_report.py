"""The end-of-crawl summary, stat keys and drop wording (SPEC 4, "What the user sees")."""

from __future__ import annotations

import re

import pytest

from scrapy_robots_std import RobotsTxt
from scrapy_robots_std.scrapy import report as _report
from scrapy_robots_std.scrapy.report import Report, rule_text
from scrapy_robots_std.stats import (
    DROP_RULE,
    DROP_STATUS,
    DROP_UNREACHABLE,
    PREFIX,
    stat,
)

RULE_A = 'http://a.example/robots.txt line 2 "Disallow: /x" (User-agent: *)'
RULE_C = 'http://c.example/robots.txt line 3 "Disallow: /" (User-agent: bot)'


def _lines(report: Report) -> list[str]:
    return report.summary().splitlines()


def _busy_report(top: int = 5) -> Report:
    report = Report(top)
    for _ in range(3):
        report.dropped("http://a.example:80", DROP_RULE, RULE_A)
    report.dropped("http://b.example:80", DROP_UNREACHABLE, None)
    report.dropped("http://c.example:80", DROP_RULE, RULE_C)
    report.dropped("http://d.example:80", DROP_STATUS, None)
    return report


# -- stat keys ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("parts", "key"),
    [
        (("dropped", "rule"), "robots_std/dropped/rule"),
        (("cache", "hit"), "robots_std/cache/hit"),
        (("verdict", "unreachable"), "robots_std/verdict/unreachable"),
        (("wait",), "robots_std/wait"),
        (
            ("dropped_by_origin", "http://a.example:80"),
            "robots_std/dropped_by_origin/http://a.example:80",
        ),
    ],
)
def test_stat_keys_live_under_the_package_prefix(
    parts: tuple[str, ...], key: str
) -> None:
    assert stat(*parts) == key
    assert key.startswith(PREFIX)
    assert not key.startswith("robotstxt/")


# -- summary ------------------------------------------------------------------------


def test_summary_with_no_drops() -> None:
    assert Report(5).summary() == "robots.txt: 0 request(s) dropped"


def test_summary_counts_drops_by_reason_and_origin() -> None:
    lines = _lines(_busy_report())
    assert lines[0] == (
        "robots.txt: 6 request(s) dropped "
        "(rule: 4, http-status: 1, unreachable: 1) from 4 origin(s)"
    )


def test_summary_lists_top_origins_then_top_rules_by_count() -> None:
    assert _lines(_busy_report()) == [
        (
            "robots.txt: 6 request(s) dropped "
            "(rule: 4, http-status: 1, unreachable: 1) from 4 origin(s)"
        ),
        "  top origins by drops:",
        "          3  http://a.example:80",
        "          1  http://b.example:80",
        "          1  http://c.example:80",
        "          1  http://d.example:80",
        "  top deciding rules:",
        f"          3  {RULE_A}",
        f"          1  {RULE_C}",
    ]


def test_summary_dry_run_wording() -> None:
    report = _busy_report()
    report.dry_run = True
    first = _lines(report)[0]
    assert first == (
        "robots.txt: 6 request(s) would have been dropped "
        "(rule: 4, http-status: 1, unreachable: 1) from 4 origin(s); "
        "dry run: nothing was dropped"
    )


def test_summary_dry_run_with_no_drops() -> None:
    report = Report(5)
    report.dry_run = True
    assert report.summary() == (
        "robots.txt: 0 request(s) would have been dropped; dry run: nothing was dropped"
    )


@pytest.mark.parametrize("top", [1, 2, 3])
def test_summary_top_n_bounds_both_lists(top: int) -> None:
    report = Report(top)
    for i in range(10):
        for _ in range(10 - i):  # origin 0 has the most drops, then 1, ...
            report.dropped(f"http://o{i}.example:80", DROP_RULE, f"rule {i}")
    lines = _lines(report)
    origins = [line.split()[-1] for line in lines if "http://o" in line]
    rules = [line for line in lines if re.fullmatch(r" +\d+  rule \d", line)]
    assert origins == [f"http://o{i}.example:80" for i in range(top)]
    assert len(rules) == top
    assert lines[0].endswith("from 10 origin(s)")
    assert report.top_origins() == [
        (f"http://o{i}.example:80", 10 - i) for i in range(top)
    ]


def test_summary_top_zero_lists_nothing_but_the_totals() -> None:
    lines = _lines(_busy_report(top=0))
    assert len(lines) == 1
    assert lines[0].startswith("robots.txt: 6 request(s) dropped")
    assert _busy_report(top=0).top_origins() == []


def test_summary_does_not_depend_on_the_order_of_drops() -> None:
    drops = [
        ("http://a.example:80", DROP_RULE, RULE_A),
        ("http://b.example:80", DROP_UNREACHABLE, None),
        ("http://c.example:80", DROP_RULE, RULE_C),
        ("http://b.example:80", DROP_UNREACHABLE, None),
    ]
    forward, backward = Report(5), Report(5)
    for drop in drops:
        forward.dropped(*drop)
    for drop in reversed(drops):
        backward.dropped(*drop)
    assert forward.summary() == backward.summary()


# -- unreachable origins ------------------------------------------------------------


def test_summary_lists_unreachable_origins_with_and_n_more() -> None:
    report = Report(2)
    for name in "abcde":
        report.origin_unreachable(
            f"http://{name}.example/robots.txt", f"HTTP 503 {name}"
        )
    lines = _lines(report)
    assert lines[1:] == [
        "  origins whose robots.txt was unreachable: 5",
        "    http://a.example/robots.txt: HTTP 503 a",
        "    http://b.example/robots.txt: HTTP 503 b",
        "    ... and 3 more",
    ]


def test_summary_unreachable_without_more_line_when_all_fit() -> None:
    report = Report(5)
    report.origin_unreachable("http://a.example/robots.txt", "timeout")
    lines = _lines(report)
    assert lines[-1] == "    http://a.example/robots.txt: timeout"
    assert not any("more" in line for line in lines)


def test_summary_shows_one_unreachable_origin_even_with_top_zero() -> None:
    report = Report(0)
    report.origin_unreachable("http://a.example/robots.txt", "timeout")
    report.origin_unreachable("http://b.example/robots.txt", "timeout")
    assert _lines(report)[1:] == [
        "  origins whose robots.txt was unreachable: 2",
        "    http://a.example/robots.txt: timeout",
        "    ... and 1 more",
    ]


def test_recovered_origin_leaves_the_unreachable_list() -> None:
    report = Report(5)
    report.origin_unreachable("http://a.example/robots.txt", "timeout")
    report.origin_unreachable("http://b.example/robots.txt", "timeout")
    report.origin_recovered("http://a.example/robots.txt")
    report.origin_recovered("http://never.example/robots.txt")
    assert report.unreachable == {"http://b.example/robots.txt": "timeout"}
    assert "http://a.example" not in report.summary()


def test_unreachable_detail_is_updated() -> None:
    report = Report(5)
    report.origin_unreachable("http://a.example/robots.txt", "timeout")
    report.origin_unreachable("http://a.example/robots.txt", "HTTP 503")
    assert report.unreachable == {"http://a.example/robots.txt": "HTTP 503"}


# -- bounded counters ---------------------------------------------------------------


def test_bounded_counters_fold_new_keys_into_other(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(_report, "_TRACKED", 2)
    report = Report(10)
    for name in "abcde":
        report.dropped(f"http://{name}.example:80", DROP_RULE, f"rule {name}")
    report.dropped("http://a.example:80", DROP_RULE, "rule a")
    assert dict(report.by_origin) == {
        "http://a.example:80": 2,
        "http://b.example:80": 1,
        "(other)": 3,
    }
    assert dict(report.by_rule) == {"rule a": 2, "rule b": 1, "(other)": 3}
    # reasons are a fixed, small set: never folded
    assert report.by_reason == {DROP_RULE: 6}
    summary = report.summary()
    assert "          3  (other)" in summary
    assert "http://e.example" not in summary


def test_unreachable_list_stops_growing_at_its_bound(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(_report, "_TRACKED", 2)
    report = Report(10)
    for name in "abcd":
        report.origin_unreachable(f"http://{name}.example/robots.txt", "timeout")
    report.origin_unreachable("http://a.example/robots.txt", "HTTP 503")
    assert report.unreachable == {
        "http://a.example/robots.txt": "HTTP 503",
        "http://b.example/robots.txt": "timeout",
    }


def test_summary_origin_count_does_not_count_other_as_an_origin(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(_report, "_TRACKED", 2)
    report = Report(10)
    for name in "abcde":
        report.dropped(f"http://{name}.example:80", DROP_RULE, None)
    first = _lines(report)[0]
    assert "from 3 origin(s)" not in first


# -- rule wording -------------------------------------------------------------------


def test_rule_text_names_file_line_directive_pattern_and_group() -> None:
    robots = RobotsTxt.parse(
        b"User-agent: other\nDisallow: /\n\nUser-agent: MyBot\nDisallow: /private*\n"
    )
    decision = robots.decide("http://a.example/private/x", "MyBot")
    assert decision.rule is not None
    assert rule_text("http://a.example/robots.txt", decision.rule) == (
        'http://a.example/robots.txt line 5 "Disallow: /private*" (User-agent: MyBot)'
    )


def test_rule_text_stays_short_for_a_hostile_group() -> None:
    """6,000 long User-agent lines in one group and a long pattern (issue 27, point
    3): the label keeps the line number and a few hundred characters of each."""
    agents = b"".join(b"User-agent: %s%d\n" % (b"A" * 40, n) for n in range(6000))
    body = agents + b"User-agent: MyBot\nDisallow: /" + b"p" * 5000 + b"\n"
    robots = RobotsTxt.parse(body)
    decision = robots.decide("http://a.example/" + "p" * 5000, "MyBot")
    assert decision.rule is not None
    assert len(decision.rule.group) > 250_000
    label = rule_text("http://a.example/robots.txt", decision.rule)
    assert len(label) < 700
    assert label.startswith('http://a.example/robots.txt line 6002 "Disallow: /ppp')
    assert label.endswith("...)")
    assert '..." (User-agent: AAAA' in label
