"""Property tests for the parser (both standards), plus a seeded stdlib-random fuzz test.

The bodies are either structured (User-agent / Allow / Disallow / other lines built from
small alphabets that include ``*``, ``$``, ``%`` and non-ASCII) or raw bytes.
"""

from __future__ import annotations

import os
import random
import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from scrapy_robots_std import Decision, RobotsTxt

STANDARDS = ("rfc9309", "1994")
TOKENS = ("FooBot", "foobot", "bot", "Googlebot", "x", "Bottom-Feeder", "a_b")
FIXED_URLS = (
    "http://example.com/",
    "http://example.com/a/b",
    "http://example.com",
    "https://example.com/a/b?c=d",
    "http://example.com/robots.txt",
    "http://example.com/%7Efoo/%2F%zz",
    "http://example.com/caf%C3%A9/*$",
    "https://example.com/x;p=1?q#frag",
    "http://example.com/é/ü?ß=1",
)
RULE_DIRECTIVES_RFC = (
    "allow",
    "disallow",
    "dissallow",
    "dissalow",
    "disalow",
    "diasllow",
    "disallaw",
)

PROPERTY_SETTINGS = settings(
    # ROBOTS_STD_HYPOTHESIS_EXAMPLES=5000 for a longer local run.
    max_examples=int(os.environ.get("ROBOTS_STD_HYPOTHESIS_EXAMPLES", "200")),
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)

_EOL = re.compile(rb"\r\n|\r|\n")


def split_lines(body: bytes) -> list[bytes]:
    """Lines as the contract numbers them: CR, LF and CRLF each end one line."""
    return _EOL.split(body)


# --------------------------------------------------------------------------------------
# Strategies
# --------------------------------------------------------------------------------------

PATH_ALPHABET = "abcAB/*$%?=&;._~-é ü09"
_pct = st.sampled_from(
    ["%2F", "%2f", "%41", "%61", "%7E", "%7e", "%C3%A9", "%zz", "%", "%3F", "%20"]
)
_path_piece = st.one_of(st.text(alphabet=PATH_ALPHABET, min_size=1, max_size=3), _pct)
_common_patterns = st.sampled_from(
    [
        "/",
        "/a",
        "/a*",
        "*",
        "/*a",
        "/a$",
        "/a/",
        "/a/b",
        "/%61",
        "/é",
        "/caf%C3%A9",
        "$",
        "/*$",
        "/?",
        "/a?b=*",
        "/robots.txt",
        "/a/index.html",
        "/*.b$",
        "/A",
        "/a%2Fb",
        "",
    ]
)
patterns = st.one_of(
    _common_patterns,
    st.lists(_path_piece, max_size=4).map(lambda ps: "/" + "".join(ps)),
    st.lists(_path_piece, max_size=4).map("".join),
)

_agent_values = st.sampled_from(
    [
        "*",
        "FooBot",
        "foobot/1.0",
        "bot",
        "Foo",
        "BarBot",
        "foo bot",
        "",
        "Googlebot",
        "* x",
        "x",
    ]
)
# Valid spellings are listed several times so that they are drawn more often.
_ua_keys = st.sampled_from(
    ["User-agent"] * 4 + ["user-agent", "USER-AGENT", "useragent", "User agent"]
)
_rule_keys = st.sampled_from(
    ["Disallow"] * 4
    + ["Allow"] * 3
    + ["disallow", "ALLOW", "Dissallow", "Disallowed", "disalow"]
)
_seps = st.sampled_from([": "] * 5 + [":", " : ", ":\t", " "])
_other_lines = st.sampled_from(
    [
        "",
        "   ",
        "# comment",
        "Crawl-delay: 1",
        "crawl-delay: 0.5",
        "Request-rate: 1/5",
        "Sitemap: http://example.com/s.xml",
        "Site-map: http://example.com/t.xml",
        "junk without colon",
        "Host: example.com",
        "Noindex: /x",
    ]
)
_ua_lines = st.builds(lambda k, s, v: f"{k}{s}{v}", _ua_keys, _seps, _agent_values)
_rule_lines = st.builds(lambda k, s, v: f"{k}{s}{v}", _rule_keys, _seps, patterns)
_lines = st.one_of(_ua_lines, _rule_lines, _rule_lines, _other_lines)
structured_lines = st.lists(_lines, max_size=25)
structured_bodies = structured_lines.map(lambda ls: "\n".join(ls).encode("utf-8"))

_fragments = st.sampled_from(
    [
        b"User-agent:",
        b"user-agent: *",
        b"Disallow:",
        b"Allow: /",
        b" /a*b$",
        b"\r",
        b"\n",
        b"\r\n",
        b"\x00",
        b"#",
        b"*",
        b"$",
        b"%",
        b"%2F",
        b"\xef\xbb\xbf",
        b"\xef\xbb",
        b"\xff\xfe",
        b"\xc3\xa9",
        b"\xe2\x82",
        b" ",
        b"\t",
        b"Crawl-delay: 1e9",
        b"Sitemap: ",
        b"\nUser-agent: *\n",
        b"\nUser-agent: FooBot\n",
        b"\nDisallow: /",
        b"\nAllow: /a",
        b"\nDisallow: /a*",
        b"\ndisallow: /",
        b"\n\n",
        b"\nUser-agent: *\nDisallow: /a\n",
        b"\nUser-agent: foobot\nAllow: /a/\nDisallow: /\n",
    ]
)
robotsish_bytes = st.lists(
    st.one_of(_fragments, _fragments, _fragments, st.binary(max_size=6)), max_size=40
).map(b"".join)
raw_bodies = st.one_of(st.binary(max_size=400), robotsish_bytes)
any_bodies = st.one_of(structured_bodies, raw_bodies)

urls = st.one_of(
    st.sampled_from(FIXED_URLS),
    st.builds(
        lambda scheme, path, query: f"{scheme}://example.com/{path}{query}",
        st.sampled_from(["http", "https"]),
        st.one_of(
            st.text(alphabet="abcAB/*$%._~-é;09", max_size=15),
            st.sampled_from(
                [
                    "a",
                    "a/",
                    "a/b",
                    "a$",
                    "a/index.html",
                    "%61",
                    "caf%C3%A9",
                    "café",
                    "A",
                ]
            ),
        ),
        st.sampled_from(["", "?", "?a=1", "?x=*&y=$", "#f"]),
    ),
)
tokens = st.sampled_from(TOKENS)
standards = st.sampled_from(STANDARDS)


def _answers(rt: RobotsTxt, probe_urls, token: str) -> list[Decision]:
    return [rt.decide(url, token) for url in probe_urls]


def _allowed(rt: RobotsTxt, probe_urls, token: str) -> list[bool]:
    return [rt.allowed(url, token) for url in probe_urls]


def _exercise(rt: RobotsTxt, token: str, probe_urls) -> None:
    for url in probe_urls:
        decision = rt.decide(url, token)
        assert isinstance(decision.allowed, bool)
        assert isinstance(rt.allowed(url, token), bool)
        assert isinstance(decision.explain(), str)
    delay = rt.crawl_delay(token)
    assert delay is None or isinstance(delay, float)
    rt.request_rate(token)
    assert all(isinstance(s, str) for s in rt.sitemaps)
    assert all(isinstance(d.line, int) for d in rt.diagnostics)
    assert isinstance(rt.truncated, bool)


# --------------------------------------------------------------------------------------
# Never raises
# --------------------------------------------------------------------------------------


@PROPERTY_SETTINGS
@given(body=any_bodies, standard=standards, token=tokens, url=urls)
def test_property_never_raises(body, standard, token, url):
    rt = RobotsTxt.parse(body, standard=standard)
    assert rt.standard == standard
    _exercise(rt, token, (url, *FIXED_URLS[:3]))


# --------------------------------------------------------------------------------------
# Invariances
# --------------------------------------------------------------------------------------


@PROPERTY_SETTINGS
@given(body=any_bodies, standard=standards, token=tokens, url=urls)
def test_property_line_endings_do_not_matter(body, standard, token, url):
    lines = split_lines(body)
    probe = (url, *FIXED_URLS)
    variants = [
        RobotsTxt.parse(sep.join(lines), standard=standard)
        for sep in (b"\n", b"\r\n", b"\r")
    ]
    first = variants[0]
    for other in variants[1:]:
        assert _answers(other, probe, token) == _answers(first, probe, token)
        assert other.crawl_delay(token) == first.crawl_delay(token)
        assert other.sitemaps == first.sitemaps
        assert [(d.line, d.kind) for d in other.diagnostics] == [
            (d.line, d.kind) for d in first.diagnostics
        ]


@PROPERTY_SETTINGS
@given(
    body=any_bodies,
    token=tokens,
    url=urls,
    inserts=st.lists(
        st.tuples(
            st.integers(min_value=1, max_value=40),
            st.sampled_from([b"", b"# c", b"  #x"]),
        ),
        min_size=1,
        max_size=5,
    ),
)
def test_property_rfc9309_comment_and_blank_lines_do_not_matter(
    body, token, url, inserts
):
    # Blank lines separate records in 1994 mode, so this holds for rfc9309 only.
    lines = split_lines(body)
    changed = list(lines)
    for pos, extra in inserts:
        changed.insert(min(pos, len(changed)), extra)
    base = RobotsTxt.parse(b"\n".join(lines), standard="rfc9309")
    other = RobotsTxt.parse(b"\n".join(changed), standard="rfc9309")
    probe = (url, *FIXED_URLS)
    assert _allowed(other, probe, token) == _allowed(base, probe, token)
    for a, b in zip(
        _answers(base, probe, token), _answers(other, probe, token), strict=True
    ):
        assert a.reason == b.reason
        if a.rule is not None:
            assert b.rule is not None
            assert (b.rule.directive, b.rule.pattern, b.rule.allow, b.rule.agents) == (
                a.rule.directive,
                a.rule.pattern,
                a.rule.allow,
                a.rule.agents,
            )
    assert other.crawl_delay(token) == base.crawl_delay(token)
    assert other.sitemaps == base.sitemaps


def _is_blankish(line: bytes) -> bool:
    return not line.decode("utf-8", "replace").strip()


@PROPERTY_SETTINGS
@given(body=any_bodies, standard=standards, token=tokens, url=urls)
def test_property_trailing_comments_do_not_matter(body, standard, token, url):
    lines = split_lines(body)
    commented = [line if _is_blankish(line) else line + b" # x" for line in lines]
    base = RobotsTxt.parse(b"\n".join(lines), standard=standard)
    other = RobotsTxt.parse(b"\n".join(commented), standard=standard)
    probe = (url, *FIXED_URLS)
    # Same lines, same numbers: the whole decision (deciding rule included) is unchanged.
    assert _answers(other, probe, token) == _answers(base, probe, token)
    assert other.crawl_delay(token) == base.crawl_delay(token)
    assert other.sitemaps == base.sitemaps


@PROPERTY_SETTINGS
@given(body=any_bodies, standard=standards, token=tokens, url=urls)
def test_property_leading_bom_does_not_matter(body, standard, token, url):
    if body.startswith(b"\xef"):
        body = b" " + body  # a second (partial) BOM would not be skipped
    base = RobotsTxt.parse(body, standard=standard)
    other = RobotsTxt.parse(b"\xef\xbb\xbf" + body, standard=standard)
    probe = (url, *FIXED_URLS)
    assert _answers(other, probe, token) == _answers(base, probe, token)
    assert other.crawl_delay(token) == base.crawl_delay(token)
    assert other.sitemaps == base.sitemaps


# --------------------------------------------------------------------------------------
# decide() is consistent with allowed() and with the body
# --------------------------------------------------------------------------------------


def _check_decision(
    rt: RobotsTxt, body: bytes, url: str, token: str, *, structured: bool
) -> None:
    decision = rt.decide(url, token)
    assert rt.allowed(url, token) is decision.allowed
    assert decision.reason in {"rule", "no-matching-rule", "no-group", "robots-txt"}
    if decision.reason != "rule":
        assert decision.rule is None
        assert decision.allowed is True
        return
    rule = decision.rule
    assert rule is not None
    assert decision.allowed is rule.allow
    lines = split_lines(body)
    assert 1 <= rule.line <= len(lines)
    text = lines[rule.line - 1].decode("utf-8", "replace")
    assert rule.directive, rule
    assert rule.directive in text, (rule, text)
    key = rule.directive.strip().lower()
    if rt.standard == "1994":
        assert key in {"allow", "disallow"}, rule
    else:
        assert key.startswith(RULE_DIRECTIVES_RFC), rule
    assert rule.pattern, rule  # an empty value never decides
    assert rule.agents, rule
    if structured:
        assert rule.pattern in text, (rule, text)


@PROPERTY_SETTINGS
@given(lines=structured_lines, standard=standards, token=tokens, url=urls)
def test_property_decision_matches_body_structured(lines, standard, token, url):
    body = "\n".join(lines).encode("utf-8")
    rt = RobotsTxt.parse(body, standard=standard)
    for probe in (url, *FIXED_URLS):
        _check_decision(rt, body, probe, token, structured=True)


@PROPERTY_SETTINGS
@given(body=raw_bodies, standard=standards, token=tokens, url=urls)
def test_property_decision_matches_body_raw(body, standard, token, url):
    rt = RobotsTxt.parse(body, standard=standard)
    for probe in (url, *FIXED_URLS):
        _check_decision(rt, body, probe, token, structured=False)


@PROPERTY_SETTINGS
@given(
    agent=st.sampled_from(["FooBot", "*"]),
    rules=st.lists(st.tuples(st.booleans(), patterns), min_size=1, max_size=8),
    seed=st.integers(min_value=0, max_value=2**32),
    url=urls,
)
def test_property_rfc9309_rule_order_does_not_matter(agent, rules, seed, url):
    # rfc9309: the longest match wins and allow wins ties, so the order of the rules in a
    # group cannot change the verdict (it does in 1994 mode: first match wins).
    def body(rs):
        lines = [
            f"{'Allow' if allow else 'Disallow'}: {pattern}\n" for allow, pattern in rs
        ]
        return ("User-agent: " + agent + "\n" + "".join(lines)).encode()

    shuffled = list(rules)
    random.Random(seed).shuffle(shuffled)
    base = RobotsTxt.parse(body(rules), standard="rfc9309")
    other = RobotsTxt.parse(body(shuffled), standard="rfc9309")
    for probe in (url, *FIXED_URLS):
        assert other.allowed(probe, "FooBot") is base.allowed(probe, "FooBot")


_plain_patterns = st.text(alphabet="ab/.=?&", max_size=5).map(lambda p: "/" + p)
_plain_paths = st.text(alphabet="ab/.=?&", max_size=7)


@PROPERTY_SETTINGS
@given(
    rules=st.lists(st.tuples(st.booleans(), _plain_patterns), min_size=1, max_size=8),
    path=_plain_paths,
    token=tokens,
)
def test_property_1994_agrees_with_rfc9309_on_common_ground(rules, path, token):
    # One "*" record, no blank lines, no wildcards, no %-escapes, rules listed longest
    # first (Allow before Disallow on equal length): here "first match" (1994) and
    # "longest match, allow wins ties" (rfc9309) must give the same verdict.
    rules = [(allow, p) for allow, p in rules if "index.htm" not in p]
    rules.sort(key=lambda r: (-len(r[1]), not r[0]))
    body = "User-agent: *\n" + "".join(
        f"{'Allow' if allow else 'Disallow'}: {pattern}\n" for allow, pattern in rules
    )
    url = "http://example.com/" + path
    r1994 = RobotsTxt.parse(body.encode(), standard="1994").decide(url, token)
    rrfc = RobotsTxt.parse(body.encode(), standard="rfc9309").decide(url, token)
    assert r1994.allowed is rrfc.allowed, (body, url, r1994.explain(), rrfc.explain())
    assert r1994.reason == rrfc.reason


# --------------------------------------------------------------------------------------
# Seeded stdlib-random fuzz: never raises
# --------------------------------------------------------------------------------------

FUZZ_FRAGMENTS = [
    b"User-agent: ",
    b"user-agent:*",
    b"Disallow: ",
    b"Allow: ",
    b"dissallow ",
    b"Crawl-delay: ",
    b"Request-rate: ",
    b"Sitemap: ",
    b"*",
    b"$",
    b"%",
    b"%2F",
    b"%e9",
    b"/",
    b"/a",
    b"?q=",
    b"#",
    b"\r",
    b"\n",
    b"\r\n",
    b"\x00",
    b"\xef\xbb\xbf",
    b"\xff",
    b"\xc3\xa9",
    b"FooBot",
    b"1/0",
    b"nan",
    b"-1",
    b"1e400",
    b" ",
    b"\t",
]


def _fuzz_body(rng: random.Random) -> bytes:
    parts = []
    for _ in range(rng.randrange(0, 60)):
        if rng.random() < 0.15:
            parts.append(rng.randbytes(rng.randrange(1, 8)))
        else:
            parts.append(rng.choice(FUZZ_FRAGMENTS))
    body = bytearray(b"".join(parts))
    for _ in range(rng.randrange(0, 4)):  # a few byte flips
        if body:
            body[rng.randrange(len(body))] = rng.randrange(256)
    return bytes(body)


def _fuzz_url(rng: random.Random) -> str:
    alphabet = "abc/*$%?=&;#._~-é09"
    path = "".join(rng.choice(alphabet) for _ in range(rng.randrange(0, 25)))
    return rng.choice(["http", "https"]) + "://example.com/" + path


@pytest.mark.parametrize("seed", [9309, 1994])
def test_fuzz_never_raises(seed):
    rng = random.Random(seed)
    for _ in range(1500):
        body = _fuzz_body(rng)
        standard = rng.choice(STANDARDS)
        rt = RobotsTxt.parse(body, standard=standard)
        token = rng.choice(TOKENS)
        _exercise(rt, token, [_fuzz_url(rng) for _ in range(3)])


def test_fuzz_pathological_wildcards_finish():
    # SPEC 5: no backtracking blow-up on /*a*a*a*...*b against a long URL.
    pattern = "/" + "*a" * 30 + "*b"
    body = f"User-agent: *\nDisallow: {pattern}\n".encode()
    url = "http://example.com/" + "a" * 10_000
    for standard in STANDARDS:
        rt = RobotsTxt.parse(body, standard=standard)
        assert rt.allowed(url, "FooBot") is True
    rt = RobotsTxt.parse(body, standard="rfc9309")
    assert rt.allowed(url + "b", "FooBot") is False
