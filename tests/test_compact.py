"""The compact layout of a parsed file answers like a fresh parse, whatever the order.

A parsed file keeps the first token's index in a slot and other tokens' in a
small dict, and can hand a long-lived cache a copy without diagnostics.  The corpus-wide guard is
test_corpus_behaviour.py; these are the corners it may not reach.
"""

from __future__ import annotations

import pytest

from scrapy_robots_std import RobotsTxt

BODY = (
    b"User-agent: FooBot\n"
    b"Disallow: /shared\n"
    b"Disallow: /%7Efoo/%e2%82%ac\n"
    b"Allow: /caf\xc3\xa9\n"
    b"User-agent: *\n"
    b"Disallow: /shared\n"
    b"Disallow: /only-star\n"
    b"Disallow: /*.pdf$\n"
    b"Allow: /dir/index.html\n"
    b"Disallow: /dir/\n"
    b"Crawl-delay: 3\n"
    b"Host: example.com\n"
    b"Sitemap: https://example.com/a.xml\n"
    b"Sitemap: https://example.com/b.xml\n"
)
URLS = [
    "https://example.com/shared/x",
    "https://example.com/~foo/%E2%82%AC",
    "https://example.com/caf%C3%A9",
    "https://example.com/only-star",
    "https://example.com/a/b.pdf",
    "https://example.com/dir/",
    "https://example.com/dir/x",
    "https://example.com/robots.txt",
]


def _answers(robots: RobotsTxt, token: str) -> list[object]:
    found: list[object] = [
        robots.groups_for(token),
        robots.crawl_delay(token),
        robots.request_rate(token),
    ]
    for url in URLS:
        found += [robots.allowed(url, token), robots.decide(url, token)]
    return found


@pytest.mark.parametrize("standard", ["rfc9309", "1994"])
def test_many_tokens_in_any_order_answer_like_fresh_parses(standard: str) -> None:
    # Letters only (valid in both standards), more than the per-object cache
    # keeps (the first token's slot and 32 others).
    tokens = ["FooBot", "BarBot"]
    tokens += [f"Bot{chr(97 + i % 26)}{chr(97 + i // 26)}" for i in range(40)]
    assert len(set(tokens)) == 42
    expected = {
        token: _answers(RobotsTxt.parse(BODY, standard), token) for token in tokens
    }
    shared = RobotsTxt.parse(BODY, standard)
    for _ in range(2):  # past the per-object limit of cached tokens, twice
        for token in [*tokens, *reversed(tokens)]:
            assert _answers(shared, token) == expected[token], token


@pytest.mark.parametrize("standard", ["rfc9309", "1994"])
def test_patterns_are_reported_as_written(standard: str) -> None:
    robots = RobotsTxt.parse(BODY, standard)
    euro = robots.decide("https://example.com/~foo/%E2%82%AC", "FooBot")
    assert euro.rule is not None
    assert euro.rule.pattern == "/%7Efoo/%e2%82%ac"
    cafe = robots.decide("https://example.com/caf%C3%A9", "FooBot")
    assert cafe.rule is not None
    assert cafe.rule.pattern == "/café"
    assert cafe.allowed


def test_diagnostics_and_sitemaps_survive_queries() -> None:
    robots = RobotsTxt.parse(BODY)
    before = robots.diagnostics
    assert [d.kind for d in before] == ["unknown-field"]
    _answers(robots, "FooBot")
    assert robots.diagnostics == before
    assert robots.sitemaps == ("https://example.com/a.xml", "https://example.com/b.xml")
    assert RobotsTxt.parse(b"User-agent: *\n").sitemaps == ()


def test_copy_without_diagnostics() -> None:
    robots = RobotsTxt.parse(BODY)
    copy = robots.without_diagnostics()
    assert copy.diagnostics == ()
    assert robots.diagnostics != ()
    assert copy.sitemaps == robots.sitemaps
    assert copy.truncated is robots.truncated
    for token in ("FooBot", "Other"):
        assert _answers(copy, token) == _answers(robots, token)


def test_hundreds_of_groups_and_patterns() -> None:
    # Past 255 distinct patterns and group bounds: wider tables.
    lines = []
    for i in range(300):
        lines += [
            f"User-agent: bot{chr(97 + i % 26)}{chr(97 + i // 26)}",
            f"Disallow: /p{i}/",
        ]
    lines += ["User-agent: *", "Disallow: /p7/", "Allow: /p299/x"]
    robots = RobotsTxt.parse("\n".join(lines).encode())
    assert not robots.allowed("https://e.com/p5/", "botfa")  # i = 5: "bot" + "f" + "a"
    assert robots.allowed("https://e.com/p6/", "botfa")
    assert not robots.allowed("https://e.com/p7/", "nobody")
    decision = robots.decide("https://e.com/p299/x", "nobody")
    assert decision.allowed
    assert decision.rule is not None
    assert decision.rule.line == 603
    assert robots.groups_for("botnl") == (("botnl",),)  # i = 299: "n", "l"
