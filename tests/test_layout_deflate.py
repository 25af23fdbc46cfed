"""The cache's copy of an ordinary file's rules is deflated (``Rules.once``) and read
through ``Rules.opened``; a larger table is kept as it is."""

from __future__ import annotations

import pickle

from scrapy_robots_std.robotstxt.robots import RobotsTxt

URL = "https://example.com/"


def _body(rules: int, groups: int = 1) -> bytes:
    lines = []
    for group in range(groups):
        lines.append(b"User-agent: bot" + b"ab"[group : group + 1])
        lines += [b"Disallow: /private/section-%d/*.php$" % n for n in range(rules)]
    return b"\n".join(lines) + b"\n"


def test_an_ordinary_table_is_deflated_and_answers_alike() -> None:
    robots = RobotsTxt.parse(_body(40))
    copy = robots.without_diagnostics()
    table, kept = robots._parsed.rules, copy._parsed.rules
    assert len(kept) < len(table) // 2
    assert kept.opened() == table
    assert table.opened() is table
    assert kept.rfc9309
    assert kept.once() is kept
    for path in ("private/section-7/a.php", "private/section-7/a.php?x", "other"):
        assert copy.decide(URL + path, "bota") == robots.decide(URL + path, "bota")
    again = pickle.loads(pickle.dumps(copy))
    assert again.decide(URL + "private/section-3/b.php", "bota").rule is not None


def test_a_large_table_is_kept_as_it_is() -> None:
    robots = RobotsTxt.parse(_body(150, groups=2))  # 300 rules: past 256
    copy = robots.without_diagnostics()
    kept = copy._parsed.rules
    assert kept is robots._parsed.rules
    assert kept.opened() is kept
    assert kept.once() is kept
    assert copy.decide(URL + "private/section-9/a.php", "botb") == robots.decide(
        URL + "private/section-9/a.php", "botb"
    )
