"""Real robots.txt files: the 4,231 bodies of ../shared/corpus (copied from scrapy/protego's
test data; see its README.md) with 30 URLs per site in urls.txt, or, where that corpus
is absent, the 400 of them in tests/data/corpus_subset.tar.xz (tests/helpers/corpus.py
says how they are chosen and how to regenerate them).  Nothing here is skipped.

* the corpus read is complete, and the subset is exactly its selection from the corpus;
* every body parses in both standards and gives stable answers;
* a dozen hand-checked answers on real files, each with the reasoning.
"""

from __future__ import annotations

import json

import pytest

from scrapy_robots_std import RobotsTxt
from tests.helpers.corpus import (
    FULL_CORPUS_FILES,
    NAMED,
    SUBSET,
    SUBSET_MAX_BYTES,
    URLS_PER_SITE,
    checksum,
    full_corpus_present,
    load,
    read_full,
    read_subset,
    subset_members,
)

TOKEN = "Googlebot"
FULL_CORPUS_SHA256 = "dd209752adc85018ee7bd3e30a876dca8e5fce52c9374b38cb0eda80104abf93"


def _urls_by_site() -> dict[str, tuple[str, ...]]:
    return dict(load().urls)


def _bodies() -> tuple[tuple[str, bytes], ...]:
    return load().bodies


def _body(site: str) -> bytes:
    return load().body(site)


def test_corpus_is_complete():
    corpus = load()
    bodies = corpus.bodies
    urls = corpus.urls
    if corpus.full:
        assert len(bodies) == FULL_CORPUS_FILES, (
            f"{len(bodies)} files in {corpus.where}"
        )
        assert checksum(bodies) == FULL_CORPUS_SHA256  # the corpus README's
    else:
        _, selection = read_subset()
        assert len(bodies) == len(selection["files"]) >= 300, corpus.where
        assert [name for name, _ in bodies] == sorted(selection["files"])
        assert checksum(bodies) == selection["sha256"]
        assert selection["files_in_full_corpus"] == FULL_CORPUS_FILES
    missing = [name for name, _ in bodies if len(urls.get(name, ())) != URLS_PER_SITE]
    assert not missing, f"sites without 30 URLs in urls.txt: {missing[:10]}"
    assert set(urls) == {name for name, _ in bodies}
    absent = [site for site in NAMED if site not in dict(bodies)]
    assert not absent, f"named sites missing from {corpus.where}: {absent}"


def test_corpus_subset_is_small_and_faithful():
    # The committed subset, whichever corpus the other tests read: at most 2 MB, and,
    # where ../shared/corpus is present, exactly what --write-subset makes of it.
    assert SUBSET.stat().st_size <= SUBSET_MAX_BYTES
    subset, selection = read_subset()
    assert selection["sha256"] == checksum(subset.bodies)
    assert selection["urls"] == sum(len(urls) for urls in subset.urls.values())
    if not full_corpus_present():
        return
    members = subset_members(read_full())
    assert json.loads(members.pop("selection.json")) == selection
    assert members.pop("urls.txt").decode() == "".join(
        f"{site}\t{url}\n" for site, urls in subset.urls.items() for url in urls
    )
    assert members == {f"robots/{name}": body for name, body in subset.bodies}


@pytest.mark.parametrize("standard", ["rfc9309", "1994"])
def test_corpus_parses_and_answers_are_stable(standard):
    urls = _urls_by_site()
    problems: list[str] = []
    for name, body in _bodies():
        first = RobotsTxt.parse(body, standard=standard)
        second = RobotsTxt.parse(body, standard=standard)
        assert first.standard == standard
        if first.sitemaps != second.sitemaps:
            problems.append(f"{name}: sitemaps differ between two parses")
        if first.crawl_delay(TOKEN) != second.crawl_delay(TOKEN):
            problems.append(f"{name}: crawl_delay differs between two parses")
        if first.truncated is not (len(body) > 512_000):
            problems.append(
                f"{name}: truncated={first.truncated} for {len(body)} bytes"
            )
        for url in urls.get(name, ()):
            d1 = first.decide(url, TOKEN)
            d2 = second.decide(url, TOKEN)
            if d1 != d2:
                problems.append(f"{name} {url}: {d1!r} != {d2!r}")
            if first.allowed(url, TOKEN) is not d1.allowed:
                problems.append(
                    f"{name} {url}: allowed() disagrees with decide(): {d1.explain()}"
                )
            if (d1.rule is None) is (d1.reason == "rule"):
                problems.append(
                    f"{name} {url}: reason {d1.reason!r} with rule {d1.rule!r}"
                )
            if d1.rule is not None and d1.allowed is not d1.rule.allow:
                problems.append(
                    f"{name} {url}: verdict differs from its rule {d1.rule!r}"
                )
    assert not problems, f"{len(problems)} problems, first ones:\n" + "\n".join(
        problems[:20]
    )


def test_corpus_rfc9309_sees_rules():
    # Not vacuous: across the corpus, Googlebot is disallowed on a good share of the
    # rule-derived URLs, and allowed on others.
    urls = _urls_by_site()
    verdicts = {True: 0, False: 0}
    for name, body in _bodies()[:500]:
        rt = RobotsTxt.parse(body)
        for url in urls.get(name, ()):
            verdicts[rt.allowed(url, TOKEN)] += 1
    assert verdicts[False] > 1000, verdicts
    assert verdicts[True] > 1000, verdicts


# --------------------------------------------------------------------------------------
# Hand-checked answers
# --------------------------------------------------------------------------------------

HAND_CHECKED = [
    # www.nytimes.com: one "*" group, then omgilibot / omgili groups.
    pytest.param(
        "www.nytimes.com",
        "rfc9309",
        "Googlebot",
        "https://www.nytimes.com/ads/public/x.html",
        True,
        id="nytimes-allow-longer-than-disallow",  # Allow /ads/public/ (12) beats Disallow /ads/ (5)
    ),
    pytest.param(
        "www.nytimes.com",
        "rfc9309",
        "Googlebot",
        "https://www.nytimes.com/ads/x",
        False,
        id="nytimes-ads",  # Disallow: /ads/
    ),
    pytest.param(
        "www.nytimes.com",
        "rfc9309",
        "Googlebot",
        "https://www.nytimes.com/reports/a.pdf",
        False,
        id="nytimes-pdf",  # Disallow: /*.pdf$
    ),
    pytest.param(
        "www.nytimes.com",
        "rfc9309",
        "Googlebot",
        "https://www.nytimes.com/reports/a.pdf?x=1",
        True,
        id="nytimes-pdf-query",  # "$" anchors: "/reports/a.pdf?x=1" does not end in .pdf
    ),
    pytest.param(
        "www.nytimes.com",
        "1994",
        "Googlebot",
        "https://www.nytimes.com/reports/a.pdf",
        True,
        id="nytimes-pdf-1994",  # "/*.pdf$" is a literal prefix in 1994 mode
    ),
    pytest.param(
        "www.nytimes.com",
        "rfc9309",
        "omgili",
        "https://www.nytimes.com/x",
        False,
        id="nytimes-omgili",  # User-Agent: omgili / Disallow: /
    ),
    pytest.param(
        "www.nytimes.com",
        "1994",
        "omgilibot",
        "https://www.nytimes.com/x",
        False,
        id="nytimes-omgilibot-1994",
    ),
    # www.reddit.com: bots first, then "*" with many Disallow lines and "Allow: /".
    pytest.param(
        "www.reddit.com",
        "rfc9309",
        "Googlebot",
        "https://www.reddit.com/r/python/about.json",
        False,
        id="reddit-json",  # Disallow: /*.json
    ),
    pytest.param(
        "www.reddit.com",
        "1994",
        "Googlebot",
        "https://www.reddit.com/r/python/about.json",
        True,
        id="reddit-json-1994",  # no literal prefix matches before "Allow: /"
    ),
    pytest.param(
        "www.reddit.com",
        "1994",
        "Googlebot",
        "https://www.reddit.com/login",
        False,
        id="reddit-login-1994",  # "Disallow: /login" comes before "Allow: /"
    ),
    pytest.param(
        "www.reddit.com",
        "rfc9309",
        "bender",
        "https://www.reddit.com/my_shiny_metal_ass/1",
        False,
        id="reddit-bender",
    ),
    pytest.param(
        "www.reddit.com",
        "rfc9309",
        "bender",
        "https://www.reddit.com/r/python/about.json",
        True,
        id="reddit-bender-own-group-only",  # the "*" group does not apply to bender
    ),
    pytest.param(
        "www.reddit.com",
        "1994",
        "PiplBot-Ext",
        "https://www.reddit.com/r/python/",
        False,
        id="reddit-substring-1994",  # "PiplBot" is a substring of "PiplBot-Ext"
    ),
    pytest.param(
        "www.reddit.com",
        "rfc9309",
        "PiplBot-Ext",
        "https://www.reddit.com/r/python/",
        True,
        id="reddit-no-substring-rfc9309",  # "*" group: Allow: /
    ),
    # stackoverflow.com
    pytest.param(
        "stackoverflow.com",
        "rfc9309",
        "Googlebot",
        "https://stackoverflow.com/questions/1/x",
        True,
        id="so-question",
    ),
    pytest.param(
        "stackoverflow.com",
        "rfc9309",
        "Googlebot",
        "https://stackoverflow.com/search?q=x",
        False,
        id="so-search",  # Disallow: /search?
    ),
    pytest.param(
        "stackoverflow.com",
        "rfc9309",
        "Googlebot",
        "https://stackoverflow.com/api/v1",
        False,
        id="so-api",  # Disallow: /api/*
    ),
    pytest.param(
        "stackoverflow.com",
        "1994",
        "Googlebot",
        "https://stackoverflow.com/api/v1",
        True,
        id="so-api-1994",  # "/api/*" is literal; "Allow: /" is the first match
    ),
    pytest.param(
        "stackoverflow.com",
        "rfc9309",
        "Googlebot-Image",
        "https://stackoverflow.com/search?q=x",
        True,
        id="so-image-own-group",
    ),
    pytest.param(
        "stackoverflow.com",
        "rfc9309",
        "Googlebot-Image",
        "https://stackoverflow.com/users/flair/1",
        False,
        id="so-image-flair",
    ),
    # twitter.com: per-bot groups with blank lines inside them.
    pytest.param(
        "twitter.com",
        "rfc9309",
        "Googlebot",
        "https://twitter.com/jack?lang=en",
        True,
        id="twitter-lang",  # Allow /*?lang= (8) beats Disallow /*? (3)
    ),
    pytest.param(
        "twitter.com",
        "rfc9309",
        "Googlebot",
        "https://twitter.com/jack?x=1",
        False,
        id="twitter-query",
    ),
    pytest.param(
        "twitter.com",
        "rfc9309",
        "Googlebot",
        "https://twitter.com/jack/followers",
        False,
        id="twitter-followers",
    ),
    pytest.param(
        "twitter.com",
        "1994",
        "Googlebot",
        "https://twitter.com/search/realtime",
        True,
        id="twitter-blank-line-ends-record-1994",
    ),
    # www.google.com
    pytest.param(
        "www.google.com",
        "rfc9309",
        "Googlebot",
        "https://www.google.com/search/about",
        True,
        id="google-search-about",
    ),
    pytest.param(
        "www.google.com",
        "rfc9309",
        "Googlebot",
        "https://www.google.com/search?q=robots",
        False,
        id="google-search",
    ),
    pytest.param(
        "www.google.com",
        "rfc9309",
        "Googlebot",
        "https://www.google.com/?hl=en",
        True,
        id="google-hl",  # Allow /?hl= (5) beats Disallow /? (2)
    ),
    pytest.param(
        "www.google.com",
        "rfc9309",
        "Googlebot",
        "https://www.google.com/?hl=en&x=1",
        False,
        id="google-hl-amp",  # Disallow /?hl=*& (7) beats Allow /?hl= (5)
    ),
    pytest.param(
        "www.google.com",
        "1994",
        "Googlebot",
        "https://www.google.com/search/about",
        False,
        id="google-search-about-1994",  # "Disallow: /search" is the first match
    ),
    pytest.param(
        "www.google.com",
        "rfc9309",
        "AdsBot-Google",
        "https://www.google.com/search",
        True,
        id="google-adsbot-own-group",
    ),
    # en.wikipedia.org: BOM; the "*" group continues after a blank line (rfc9309 only).
    pytest.param(
        "en.wikipedia.org",
        "rfc9309",
        "Googlebot",
        "https://en.wikipedia.org/wiki/Wikipedia:Checkuser/x",
        False,
        id="wikipedia-after-blank",
    ),
    pytest.param(
        "en.wikipedia.org",
        "1994",
        "Googlebot",
        "https://en.wikipedia.org/wiki/Wikipedia:Checkuser/x",
        True,
        id="wikipedia-after-blank-1994",
    ),
    pytest.param(
        "en.wikipedia.org",
        "rfc9309",
        "Googlebot",
        "https://en.wikipedia.org/wiki/Special%3ASearch",
        False,
        id="wikipedia-special-3A",  # Disallow: /wiki/Special%3A
    ),
    pytest.param(
        "en.wikipedia.org",
        "1994",
        "Googlebot",
        "https://en.wikipedia.org/wiki/Special%3ASearch",
        False,
        id="wikipedia-special-3A-1994",  # %3A decoded: Disallow: /wiki/Special:
    ),
    pytest.param(
        "en.wikipedia.org",
        "rfc9309",
        "Googlebot",
        "https://en.wikipedia.org/wiki/Wikipedia:L%C3%B6schkandidaten/x",
        False,
        id="wikipedia-umlaut",
    ),
    pytest.param(
        "en.wikipedia.org",
        "rfc9309",
        "Googlebot",
        "https://en.wikipedia.org/wiki/Main_Page",
        True,
        id="wikipedia-main",
    ),
    pytest.param(
        "en.wikipedia.org",
        "rfc9309",
        "Mediapartners-Google",
        "https://en.wikipedia.org/wiki/Main_Page",
        False,
        id="wikipedia-mediapartners-star-cut",  # "Mediapartners-Google*" names Mediapartners-Google
    ),
    pytest.param(
        "en.wikipedia.org",
        "1994",
        "Mediapartners-Google",
        "https://en.wikipedia.org/wiki/Main_Page",
        True,
        id="wikipedia-mediapartners-1994",  # "...Google*" is not a substring of the name
    ),
    pytest.param(
        "en.wikipedia.org",
        "1994",
        "Fastbot",
        "https://en.wikipedia.org/wiki/Main_Page",
        False,
        id="wikipedia-fast-substring-1994",  # User-agent: fast / Disallow: /
    ),
    pytest.param(
        "en.wikipedia.org",
        "rfc9309",
        "Fastbot",
        "https://en.wikipedia.org/wiki/Main_Page",
        True,
        id="wikipedia-fast-rfc9309",
    ),
    # cdbaby.com: CR-only line endings; "User-agent: *" followed by an empty line.
    pytest.param(
        "cdbaby.com",
        "rfc9309",
        "Googlebot",
        "https://cdbaby.com/Cart/checkout",
        False,
        id="cdbaby-cr",
    ),
    pytest.param(
        "cdbaby.com",
        "rfc9309",
        "Googlebot",
        "https://cdbaby.com/about",
        True,
        id="cdbaby-about",
    ),
    pytest.param(
        "cdbaby.com",
        "1994",
        "Googlebot",
        "https://cdbaby.com/Cart/checkout",
        True,
        id="cdbaby-cr-blank-1994",  # the rules follow an empty line: outside any record
    ),
    # www.abr.business.gov.au: BOM, CRLF, a $-anchored rule, "Allow: /" after a blank line.
    pytest.param(
        "www.abr.business.gov.au",
        "rfc9309",
        "Googlebot",
        "https://www.abr.business.gov.au/Downloads/lookup.xlsm",
        False,
        id="abr-dollar",
    ),
    pytest.param(
        "www.abr.business.gov.au",
        "rfc9309",
        "Googlebot",
        "https://www.abr.business.gov.au/Downloads/lookup.xlsmx",
        True,
        id="abr-dollar-miss",
    ),
    pytest.param(
        "www.abr.business.gov.au",
        "1994",
        "Googlebot",
        "https://www.abr.business.gov.au/AbnRefresh.aspx",
        False,
        id="abr-bom-1994",
    ),
    pytest.param(
        "www.abr.business.gov.au",
        "1994",
        "Googlebot",
        "https://www.abr.business.gov.au/Downloads/lookup.xlsm",
        True,
        id="abr-literal-1994",
    ),
    # www.cma-cgm.com: BOM, CRLF, no final line end.
    pytest.param(
        "www.cma-cgm.com",
        "rfc9309",
        "Googlebot",
        "https://www.cma-cgm.com/api/v1",
        False,
        id="cma-api",
    ),
    pytest.param(
        "www.cma-cgm.com",
        "rfc9309",
        "Googlebot",
        "https://www.cma-cgm.com/health-monitoring",
        False,
        id="cma-last-line",
    ),
    pytest.param(
        "www.cma-cgm.com",
        "1994",
        "Googlebot",
        "https://www.cma-cgm.com/api/v1",
        True,
        id="cma-api-1994",
    ),
    # store.usps.com is UTF-16: no line is readable, nothing is restricted.
    pytest.param(
        "store.usps.com",
        "rfc9309",
        "Googlebot",
        "https://store.usps.com/store/cart/",
        True,
        id="usps-utf16",
    ),
    pytest.param(
        "store.usps.com",
        "1994",
        "Googlebot",
        "https://store.usps.com/store/cart/",
        True,
        id="usps-utf16-1994",
    ),
]


@pytest.mark.parametrize(("site", "standard", "token", "url", "expected"), HAND_CHECKED)
def test_corpus_hand_checked(site, standard, token, url, expected):
    rt = RobotsTxt.parse(_body(site), standard=standard)
    decision = rt.decide(url, token)
    assert decision.allowed is expected, decision.explain()


def test_corpus_twitter_crawl_delay():
    rt = RobotsTxt.parse(_body("twitter.com"))
    assert rt.crawl_delay("FooBot") == 1.0  # "*" group: Crawl-delay: 1
    assert rt.crawl_delay("Googlebot") is None  # its own group has none
    assert rt.sitemaps == ("https://twitter.com/sitemap.xml",)
    assert (
        RobotsTxt.parse(_body("twitter.com"), standard="1994").crawl_delay("FooBot")
        is None
    )


def test_corpus_utf16_and_empty_have_no_group():
    for site in ("store.usps.com", "www.keio.ac.jp"):
        for standard in ("rfc9309", "1994"):
            rt = RobotsTxt.parse(_body(site), standard=standard)
            decision = rt.decide(f"https://{site}/x", TOKEN)
            assert decision.reason == "no-group", (site, standard, decision)


def test_corpus_largest_file_is_truncated():
    body = _body("www.hermes.com")
    assert len(body) > 512_000
    rt = RobotsTxt.parse(body)
    assert rt.truncated is True
    assert any(d.kind == "body-cut" for d in rt.diagnostics)
