"""The 1994 "Standard for Robot Exclusion" (``standard="1994"``).

Every case names its source in the ``source`` column:

* "1994 standard '<section>'" -- the original document (robotstxt.org/orig.html),
  quoted in English in seed 001;
* "seed 000" / "seed 003" -- notes on "HTTP: The Definitive Guide", chapter 9 (Korean);
* "seed 001" -- the 1994 standard (Thai translation + English original);
* "seed 002" -- a Spanish summary of the 1994 standard;
* "seed 004" -- Google's robots.txt guide (Korean translation);
* "SPEC 2.2" -- /work/shared/SPEC.md, section 2.2, which decides where sources disagree;
* "CONTRACT" -- a decision recorded in notes/CONTRACT.md.

Disagreements between sources are marked with a ``# CONFLICT:`` comment.
"""

from __future__ import annotations

import pytest

from scrapy_robots_std import Decision, RequestRate, RobotsTxt

STD_FORMAT = "1994 standard 'The Format'"
STD_UA = "1994 standard 'User-agent'"
STD_DISALLOW = "1994 standard 'Disallow'"
STD_EXAMPLES = "1994 standard 'Examples'"
SEED_000 = "seed 000 (HTTP: The Definitive Guide, Korean notes)"
SEED_001 = "seed 001 (1994 standard, Thai + English)"
SEED_002 = "seed 002 (Spanish summary of the 1994 standard)"
SEED_003 = "seed 003 (HTTP: The Definitive Guide ch. 9)"
SEED_004 = "seed 004 (Google robots.txt guide, Korean)"
SPEC = "SPEC 2.2"
CONTRACT = "CONTRACT (lead decision)"

HOST = "http://example.com"


def _body(body: str | bytes) -> bytes:
    return body if isinstance(body, bytes) else body.encode("utf-8")


def _decide(
    body: str | bytes, token: str, path: str, standard: str = "1994"
) -> Decision:
    rt = RobotsTxt.parse(_body(body), standard=standard)
    return rt.decide(HOST + path, token)


def _check(
    source: str, body: str | bytes, token: str, path: str, expected: bool
) -> None:
    rt = RobotsTxt.parse(_body(body), standard="1994")
    assert rt.standard == "1994"
    decision = rt.decide(HOST + path, token)
    assert decision.allowed is expected, f"[{source}] {decision.explain()}"
    # allowed() must give the same verdict as decide().
    assert rt.allowed(HOST + path, token) is expected, source


# --------------------------------------------------------------------------------------
# Line endings, byte-order mark, comments
# --------------------------------------------------------------------------------------

SYNTAX_CASES = [
    pytest.param(
        STD_FORMAT, "User-agent: *\nDisallow: /x\n", "FooBot", "/x/1", False, id="lf"
    ),
    pytest.param(
        STD_FORMAT,
        "User-agent: *\r\nDisallow: /x\r\n",
        "FooBot",
        "/x/1",
        False,
        id="crlf",
    ),
    pytest.param(
        STD_FORMAT, "User-agent: *\rDisallow: /x\r", "FooBot", "/x/1", False, id="cr"
    ),
    pytest.param(
        SEED_000,
        "User-agent: *\r\nDisallow: /a\rDisallow: /x\n",
        "FooBot",
        "/x/1",
        False,
        id="mixed-endings",
    ),
    # CR CR is two line ends: the empty line between them separates records, so the
    # Disallow below is outside any record.
    pytest.param(
        STD_FORMAT,
        "User-agent: *\r\rDisallow: /x\r",
        "FooBot",
        "/x/1",
        True,
        id="cr-cr-is-blank-line",
    ),
    # LF followed by CR is two line ends (only CR LF is one).
    pytest.param(
        SPEC,
        "User-agent: *\n\rDisallow: /x\n",
        "FooBot",
        "/x/1",
        True,
        id="lf-cr-is-blank-line",
    ),
    pytest.param(
        STD_FORMAT,
        "User-agent: *\r\n\r\nDisallow: /x\r\n",
        "FooBot",
        "/x/1",
        True,
        id="crlf-crlf-is-blank-line",
    ),
    # Form feed and U+2028 are not line ends: the whole body is one User-agent line
    # whose value is not "*", so nothing is restricted.
    pytest.param(
        SPEC,
        b"User-agent: *\x0cDisallow: /x\n",
        "FooBot",
        "/x/1",
        True,
        id="form-feed-not-eol",
    ),
    pytest.param(
        SPEC,
        "User-agent: *\u2028Disallow: /x\n",
        "FooBot",
        "/x/1",
        True,
        id="u2028-not-eol",
    ),
    pytest.param(
        SPEC,
        b"\xef\xbb\xbfUser-agent: *\nDisallow: /x\n",
        "FooBot",
        "/x/1",
        False,
        id="bom-skipped",
    ),
    pytest.param(
        STD_FORMAT,
        "User-agent: * # every robot\nDisallow: /x # private\n",
        "FooBot",
        "/x/1",
        False,
        id="trailing-comments",
    ),
    # '#' ends the value even without a space before it: the pattern is "/x".
    pytest.param(
        STD_FORMAT,
        "User-agent: *\nDisallow: /x#y\n",
        "FooBot",
        "/xz",
        False,
        id="comment-cuts-value",
    ),
    pytest.param(
        STD_FORMAT,
        "# User-agent: *\n# Disallow: /\n",
        "FooBot",
        "/x",
        True,
        id="commented-out-rules",
    ),
    pytest.param(
        STD_FORMAT,
        "User-agent:*\nDisallow:/x\n",
        "FooBot",
        "/x/1",
        False,
        id="no-optional-space",
    ),
    pytest.param(
        STD_FORMAT,
        "User-agent:   *   \nDisallow:    /x    # c\n",
        "FooBot",
        "/x/1",
        False,
        id="extra-optional-space",
    ),
]


@pytest.mark.parametrize(("source", "body", "token", "path", "expected"), SYNTAX_CASES)
def test_1994_syntax(source, body, token, path, expected):
    _check(source, body, token, path, expected)


# --------------------------------------------------------------------------------------
# Field names
# --------------------------------------------------------------------------------------

FIELD_CASES = [
    pytest.param(
        STD_FORMAT, "USER-AGENT: *\nDISALLOW: /x\n", "FooBot", "/x", False, id="upper"
    ),
    pytest.param(
        STD_FORMAT, "user-agent: *\ndisallow: /x\n", "FooBot", "/x", False, id="lower"
    ),
    pytest.param(
        STD_FORMAT,
        "uSeR-aGeNt: *\nAlLoW: /x\nDisallow: /\n",
        "FooBot",
        "/x",
        True,
        id="mixed-case-allow",
    ),
    pytest.param(
        STD_FORMAT,
        "uSeR-aGeNt: *\nAlLoW: /x\nDisallow: /\n",
        "FooBot",
        "/y",
        False,
        id="mixed-case-disallow",
    ),
    # CONFLICT: seed 002 says "El nombre del campo es sencible a mayúsculas" (field names
    # are case-sensitive); the English original (seed 001) and SPEC 2.2 say
    # case-insensitive. SPEC wins.
    pytest.param(
        SEED_002,
        "User-Agent: *\ndisALLOW: /x\n",
        "FooBot",
        "/x",
        False,
        id="seed002-case",
    ),
    # No misspellings in 1994 mode (rfc9309 accepts these, see the contrast table).
    pytest.param(
        SPEC, "User-agent: *\nDissallow: /x\n", "FooBot", "/x", True, id="dissallow"
    ),
    pytest.param(
        SPEC, "User-agent: *\nDisalow: /x\n", "FooBot", "/x", True, id="disalow"
    ),
    pytest.param(
        SPEC, "User-agent: *\nDisallowed: /x\n", "FooBot", "/x", True, id="disallowed"
    ),
    # A misspelt User-agent opens no record, so the Disallow is outside any record.
    pytest.param(
        SPEC, "Useragent: *\nDisallow: /x\n", "FooBot", "/x", True, id="useragent"
    ),
    pytest.param(
        SPEC,
        "User agent: *\nDisallow: /x\n",
        "FooBot",
        "/x",
        True,
        id="user-space-agent",
    ),
    # A line without ':' is ignored.
    pytest.param(
        SPEC,
        "User-agent: *\nDisallow /x\n",
        "FooBot",
        "/x",
        True,
        id="rule-without-colon",
    ),
    pytest.param(
        SPEC,
        "User-agent *\nDisallow: /x\n",
        "FooBot",
        "/x",
        True,
        id="ua-without-colon",
    ),
    # ... and does not end the record.
    pytest.param(
        SPEC,
        "User-agent: *\nDisallow /y\nDisallow: /x\n",
        "FooBot",
        "/x",
        False,
        id="colonless-line-keeps-record",
    ),
    # Unknown fields are ignored and do not end the record.
    pytest.param(
        STD_FORMAT,
        "User-agent: *\nCrawl-delay: 10\nX-Foo: bar\nDisallow: /x\n",
        "FooBot",
        "/x",
        False,
        id="unknown-fields-inside-record",
    ),
    pytest.param(
        STD_FORMAT,
        "User-agent: foo\nHost: example.com\nUser-agent: bar\nDisallow: /x\n",
        "bar",
        "/x",
        False,
        id="unknown-field-between-agents",
    ),
]


@pytest.mark.parametrize(("source", "body", "token", "path", "expected"), FIELD_CASES)
def test_1994_fields(source, body, token, path, expected):
    _check(source, body, token, path, expected)


def test_1994_fields_line_without_colon_is_diagnosed():
    rt = RobotsTxt.parse(b"User-agent: *\nDisallow /x\n", standard="1994")
    kinds = {(d.line, d.kind) for d in rt.diagnostics}
    assert (2, "no-colon") in kinds, rt.diagnostics


# --------------------------------------------------------------------------------------
# Records
# --------------------------------------------------------------------------------------

TWO_RECORDS = "User-agent: a\nDisallow: /x\nUser-agent: b\nDisallow: /y\n"
AFTER_BLANK = "User-agent: *\nDisallow: /y\n\nDisallow: /x\n"
EXAMPLE_1 = (
    "# robots.txt for http://www.example.com/\n"
    "\n"
    "User-agent: *\n"
    "Disallow: /cyberworld/map/ # This is an infinite virtual URL space\n"
    "Disallow: /tmp/ # these will soon disappear\n"
    "Disallow: /foo.html\n"
)
EXAMPLE_2 = (
    "# robots.txt for http://www.example.com/\n"
    "\n"
    "User-agent: *\n"
    "Disallow: /cyberworld/map/ # This is an infinite virtual URL space\n"
    "\n"
    "# Cybermapper knows where to go.\n"
    "User-agent: cybermapper\n"
    "Disallow:\n"
)
EXAMPLE_3 = "# go away\nUser-agent: *\nDisallow: /\n"

RECORD_CASES = [
    pytest.param(
        STD_FORMAT,
        "User-agent: *\n\nDisallow: /x\n",
        "FooBot",
        "/x",
        True,
        id="blank-after-agent",
    ),
    pytest.param(
        STD_FORMAT, AFTER_BLANK, "FooBot", "/x", True, id="rule-after-blank-ignored"
    ),
    pytest.param(
        STD_FORMAT, AFTER_BLANK, "FooBot", "/y", False, id="rule-before-blank-kept"
    ),
    # "Lines containing only a comment are discarded completely, and therefore do not
    # indicate a record boundary."
    pytest.param(
        STD_FORMAT,
        "User-agent: *\n# comment\nDisallow: /x\n",
        "FooBot",
        "/x",
        False,
        id="comment-line-after-agent",
    ),
    pytest.param(
        SEED_001,
        "User-agent: *\nDisallow: /y\n# comment\nDisallow: /x\n",
        "FooBot",
        "/x",
        False,
        id="comment-line-between-rules",
    ),
    # A User-agent line after rule lines starts a new record.
    pytest.param(SPEC, TWO_RECORDS, "a", "/x", False, id="ua-after-rules-a-x"),
    pytest.param(SPEC, TWO_RECORDS, "a", "/y", True, id="ua-after-rules-a-y"),
    pytest.param(SPEC, TWO_RECORDS, "b", "/x", True, id="ua-after-rules-b-x"),
    pytest.param(SPEC, TWO_RECORDS, "b", "/y", False, id="ua-after-rules-b-y"),
    pytest.param(
        STD_UA,
        "User-agent: a\nUser-agent: b\nDisallow: /x\n",
        "b",
        "/x",
        False,
        id="several-agents-one-record",
    ),
    pytest.param(
        SPEC,
        "Disallow: /x\n\nUser-agent: *\nDisallow: /y\n",
        "FooBot",
        "/x",
        True,
        id="rule-before-first-record",
    ),
    pytest.param(
        SPEC,
        "Disallow: /x\nUser-agent: *\nDisallow: /y\n",
        "FooBot",
        "/x",
        True,
        id="rule-before-first-agent",
    ),
    # "The record starts with one or more User-agent lines, followed by one or more
    # Disallow lines" and "At least one Disallow field needs to be present in a record"
    # (SPEC 2.2: "a record is one or more User-agent lines followed by Disallow/Allow
    # lines"). User-agent lines with no rule line after them form no record, so they
    # cannot be "the first record that names the robot": the "*" record applies.
    # (Python's urllib.robotparser also drops such blocks.)
    pytest.param(
        STD_FORMAT,
        "User-agent: foo\n\nUser-agent: *\nDisallow: /\n",
        "foo",
        "/x",
        False,
        id="agent-without-rules-then-blank",
    ),
    pytest.param(
        STD_DISALLOW,
        "User-agent: *\nDisallow: /\nUser-agent: foo\n",
        "foo",
        "/x",
        False,
        id="agent-without-rules-at-end",
    ),
    pytest.param(
        STD_EXAMPLES, EXAMPLE_1, "FooBot", "/cyberworld/map/x", False, id="example1-map"
    ),
    pytest.param(
        STD_EXAMPLES, EXAMPLE_1, "FooBot", "/tmp/x", False, id="example1-tmp-dir"
    ),
    pytest.param(
        STD_EXAMPLES, EXAMPLE_1, "FooBot", "/tmp", True, id="example1-tmp-not-dir"
    ),
    pytest.param(
        STD_EXAMPLES, EXAMPLE_1, "FooBot", "/foo.html", False, id="example1-foo"
    ),
    pytest.param(
        STD_EXAMPLES, EXAMPLE_1, "FooBot", "/bar.html", True, id="example1-bar"
    ),
    pytest.param(
        STD_EXAMPLES,
        EXAMPLE_2,
        "cybermapper",
        "/cyberworld/map/x",
        True,
        id="example2-cybermapper",
    ),
    pytest.param(
        STD_EXAMPLES,
        EXAMPLE_2,
        "FooBot",
        "/cyberworld/map/x",
        False,
        id="example2-other",
    ),
    pytest.param(
        STD_EXAMPLES, EXAMPLE_3, "FooBot", "/anything", False, id="example3-go-away"
    ),
]


@pytest.mark.parametrize(("source", "body", "token", "path", "expected"), RECORD_CASES)
def test_1994_records(source, body, token, path, expected):
    _check(source, body, token, path, expected)


# --------------------------------------------------------------------------------------
# User-agent matching
# --------------------------------------------------------------------------------------

BOT = "User-agent: bot\nDisallow: /\n"
FIRST_RECORD = "User-agent: foo\nDisallow: /a\n\nUser-agent: foobot\nDisallow: /b\n"
STAR_FIRST = "User-agent: *\nDisallow: /\n\nUser-agent: foobot\nDisallow: /private\n"
TWO_STARS = "User-agent: *\nDisallow: /a\n\nUser-agent: *\nDisallow: /b\n"
SLURP = (
    "User-Agent: slurp\n"
    "User-Agent: webcrawler\n"
    "Disallow: /private\n"
    "\n"
    "User-Agent: *\n"
    "Disallow: /\n"
)
GOOGLE_FOLDERS = (
    "User-agent: *\nDisallow: /folder1/\n\nUser-Agent: Googlebot\nDisallow: /folder2/\n"
)
MEDIAPARTNERS = (
    "User-agent: *\nDisallow: /\n\nUser-agent: Mediapartners-Google\nAllow: /\n"
)

AGENT_CASES = [
    # "User-Agent: bot matches Robot, Bottom-Feeder, Spambot, Dont-Bother-Me" (seed 000).
    pytest.param(SEED_000, BOT, "Robot", "/x", False, id="bot-in-Robot"),
    pytest.param(SEED_000, BOT, "Spambot", "/x", False, id="bot-in-Spambot"),
    pytest.param(
        SEED_000, BOT, "Bottom-Feeder", "/x", False, id="bot-in-Bottom-Feeder"
    ),
    pytest.param(
        SEED_000, BOT, "Dont-Bother-Me", "/x", False, id="bot-in-Dont-Bother-Me"
    ),
    pytest.param(SEED_000, BOT, "Crawler", "/x", True, id="bot-not-in-Crawler"),
    # "A case insensitive substring match of the name without version information".
    pytest.param(
        STD_UA,
        "User-agent: FooBot/1.0\nDisallow: /\n",
        "foobot",
        "/x",
        False,
        id="version-dropped",
    ),
    pytest.param(
        STD_UA,
        "User-agent: FOOBOT\nDisallow: /\n",
        "foobot",
        "/x",
        False,
        id="case-insensitive",
    ),
    # CONFLICT: seed 002 says the substring match is case-sensitive ("sensible a
    # mayúsculas"); the original says case-insensitive. SPEC wins.
    pytest.param(
        SEED_002,
        "User-agent: fooBOT\nDisallow: /\n",
        "FooBot",
        "/x",
        False,
        id="seed002",
    ),
    # The record's value must be a substring of the robot's name, not the reverse.
    pytest.param(
        STD_UA,
        "User-agent: googlebot-news\nDisallow: /\n",
        "googlebot",
        "/x",
        True,
        id="longer-value-not-substring",
    ),
    # Googlebot-Image follows the Googlebot rules (seed 004); in 1994 mode by substring.
    pytest.param(
        SEED_004,
        GOOGLE_FOLDERS,
        "Googlebot-Image",
        "/folder2/x",
        False,
        id="googlebot-image-f2",
    ),
    pytest.param(
        SEED_004, GOOGLE_FOLDERS, "Googlebot", "/folder1/x", True, id="googlebot-f1"
    ),
    pytest.param(
        SEED_004, GOOGLE_FOLDERS, "Googlebot", "/folder2/x", False, id="googlebot-f2"
    ),
    pytest.param(
        SEED_004, GOOGLE_FOLDERS, "OtherBot", "/folder1/x", False, id="other-f1"
    ),
    pytest.param(
        SEED_004, MEDIAPARTNERS, "Mediapartners-Google", "/x", True, id="mediapartners"
    ),
    pytest.param(
        SEED_004, MEDIAPARTNERS, "Googlebot", "/x", False, id="mediapartners-other"
    ),
    # The robot obeys the first record that names it (records are not merged).
    pytest.param(
        SEED_000, FIRST_RECORD, "foobot", "/a", False, id="first-record-wins-a"
    ),
    pytest.param(
        SEED_000, FIRST_RECORD, "foobot", "/b", True, id="first-record-wins-b"
    ),
    # A record naming the robot beats an earlier "*" record.
    pytest.param(SPEC, STAR_FIRST, "foobot", "/x", True, id="named-beats-star"),
    pytest.param(
        SPEC, STAR_FIRST, "foobot", "/private/x", False, id="named-record-rules"
    ),
    pytest.param(SPEC, STAR_FIRST, "OtherBot", "/x", False, id="star-for-others"),
    # Otherwise the first "*" record.
    pytest.param(SEED_000, TWO_STARS, "FooBot", "/a", False, id="first-star-a"),
    pytest.param(SEED_000, TWO_STARS, "FooBot", "/b", True, id="second-star-ignored"),
    pytest.param(
        STD_UA,
        "User-agent: foo\nUser-agent: *\nDisallow: /x\n",
        "bar",
        "/x",
        False,
        id="star-shares-record",
    ),
    # HTTP: The Definitive Guide's Slurp/WebCrawler example (seed 000).
    pytest.param(SEED_000, SLURP, "Slurp", "/private/x", False, id="slurp-private"),
    pytest.param(SEED_000, SLURP, "Slurp", "/index.html", True, id="slurp-index"),
    pytest.param(
        SEED_000, SLURP, "WebCrawler", "/private/x", False, id="webcrawler-private"
    ),
    pytest.param(
        SEED_000, SLURP, "Googlebot", "/index.html", False, id="others-shut-out"
    ),
    # No record applies and there is no "*" record: nothing restricts the robot.
    pytest.param(
        SEED_000, "User-agent: foo\nDisallow: /\n", "bar", "/x", True, id="no-record"
    ),
    pytest.param(
        CONTRACT, "User-agent:\nDisallow: /\n", "foo", "/x", True, id="empty-agent"
    ),
    pytest.param(
        CONTRACT,
        "User-agent: *bot\nDisallow: /\n",
        "foobot",
        "/x",
        True,
        id="star-only-exact",
    ),
    # seed 002 prints its example on one line: the User-agent value is then
    # "* Disallow: ..." which names no robot, so nothing is restricted.
    pytest.param(
        SEED_002,
        "User-agent: * Disallow: /cyberworld/map/ # Es un espacio virtual infinito\n",
        "FooBot",
        "/cyberworld/map/x",
        True,
        id="seed002-one-line-record",
    ),
]


@pytest.mark.parametrize(("source", "body", "token", "path", "expected"), AGENT_CASES)
def test_1994_agents(source, body, token, path, expected):
    _check(source, body, token, path, expected)


def test_1994_agents_no_record_reason():
    decision = _decide("User-agent: foo\nDisallow: /\n", "bar", "/x")
    assert decision.reason == "no-group"
    assert decision.rule is None


def test_1994_agents_first_record_decides_and_is_reported():
    decision = _decide(FIRST_RECORD, "foobot", "/a")
    assert decision.reason == "rule"
    assert decision.rule is not None
    assert decision.rule.line == 2
    assert decision.rule.agents == ("foo",)


# --------------------------------------------------------------------------------------
# Disallow / Allow matching
# --------------------------------------------------------------------------------------

DIS_ALLOW = "User-agent: *\nDisallow: /a\nAllow: /a/b\n"
ALLOW_DIS = "User-agent: *\nAllow: /a\nDisallow: /a/b\n"
HELP = "User-agent: *\nDisallow: /help\n"
HELP_DIR = "User-agent: *\nDisallow: /help/\n"
TMP = "User-agent: *\nDisallow: /tmp\n"
TMP_DIR = "User-agent: *\nDisallow: /tmp/\n"
JUNK = "User-agent: *\nDisallow: /junk_file.asp\n"
SEARCH = "User-agent: *\nDisallow: /search?q=\n"

MATCH_CASES = [
    # The first matching line in file order decides, not the longest.
    pytest.param(
        SEED_000, DIS_ALLOW, "FooBot", "/a/b/c", False, id="first-match-disallow"
    ),
    pytest.param(SEED_000, ALLOW_DIS, "FooBot", "/a/b", True, id="first-match-allow"),
    pytest.param(
        SEED_003,
        "User-agent: *\nDisallow: /\nAllow: /public/\n",
        "FooBot",
        "/public/x",
        False,
        id="seed003-ex2",
    ),
    # "Disallow: /help disallows both /help.html and /help/index.html, whereas
    # Disallow: /help/ would disallow /help/index.html but allow /help.html."
    pytest.param(STD_DISALLOW, HELP, "FooBot", "/help.html", False, id="help-html"),
    pytest.param(
        STD_DISALLOW, HELP, "FooBot", "/help/index.html", False, id="help-index"
    ),
    pytest.param(
        STD_DISALLOW, HELP_DIR, "FooBot", "/help/index.html", False, id="help-dir-index"
    ),
    pytest.param(
        STD_DISALLOW, HELP_DIR, "FooBot", "/help.html", True, id="help-dir-html"
    ),
    # HTTP: The Definitive Guide's prefix-matching table (seed 000).
    pytest.param(SEED_000, TMP, "FooBot", "/tmp", False, id="tmp-equal"),
    pytest.param(SEED_000, TMP, "FooBot", "/tmpfile.html", False, id="tmp-prefix"),
    pytest.param(SEED_000, TMP, "FooBot", "/tmp/a.html", False, id="tmp-dir-prefix"),
    pytest.param(SEED_000, TMP_DIR, "FooBot", "/tmp", True, id="tmp-dir-not-prefix"),
    pytest.param(SEED_000, TMP, "FooBot", "/TMP", True, id="case-sensitive-path"),
    pytest.param(SEED_004, JUNK, "FooBot", "/junk_file.asp", False, id="junk-file"),
    pytest.param(SEED_004, JUNK, "FooBot", "/Junk_file.asp", True, id="junk-file-case"),
    # Path + ?query.
    pytest.param(SPEC, SEARCH, "FooBot", "/search?q=robots", False, id="query-prefix"),
    pytest.param(SPEC, SEARCH, "FooBot", "/search", True, id="query-missing"),
    pytest.param(SPEC, SEARCH, "FooBot", "/search?x=1", True, id="query-other"),
    pytest.param(
        SPEC, "User-agent: *\nDisallow: /?\n", "FooBot", "/?a=1", False, id="root-query"
    ),
    pytest.param(
        SPEC, "User-agent: *\nDisallow: /?\n", "FooBot", "/", True, id="root-no-query"
    ),
    # Empty path is "/".
    pytest.param(
        SPEC, "User-agent: *\nDisallow: /\n", "FooBot", "", False, id="empty-path"
    ),
    # An empty value matches nothing: "Any empty value, indicates that all URLs can be
    # retrieved."
    pytest.param(
        STD_DISALLOW,
        "User-agent: *\nDisallow:\n",
        "FooBot",
        "/x",
        True,
        id="empty-disallow",
    ),
    # CONFLICT: HTTP: The Definitive Guide (seed 000) says an empty rule path matches
    # every path, so "Allow:" first would allow everything; SPEC 2.2 says an empty value
    # matches nothing. SPEC wins.
    pytest.param(
        SPEC,
        "User-agent: *\nAllow:\nDisallow: /\n",
        "FooBot",
        "/x",
        False,
        id="empty-allow",
    ),
    pytest.param(
        SPEC,
        "User-agent: *\nDisallow:\nDisallow: /x\n",
        "FooBot",
        "/x",
        False,
        id="empty-then-rule",
    ),
    # "*" and "$" are ordinary characters.
    pytest.param(
        SPEC,
        "User-agent: *\nDisallow: /*.gif$\n",
        "FooBot",
        "/a.gif",
        True,
        id="star-lit",
    ),
    pytest.param(
        SPEC,
        "User-agent: *\nDisallow: /*.gif$\n",
        "FooBot",
        "/*.gif$",
        False,
        id="star-lit-match",
    ),
    pytest.param(
        SPEC,
        "User-agent: *\nDisallow: /a*\n",
        "FooBot",
        "/a*b",
        False,
        id="star-prefix",
    ),
    pytest.param(
        SPEC, "User-agent: *\nDisallow: /a*\n", "FooBot", "/ab", True, id="star-no-wild"
    ),
    pytest.param(
        SPEC,
        "User-agent: *\nDisallow: /a$\n",
        "FooBot",
        "/a",
        True,
        id="dollar-no-anchor",
    ),
    pytest.param(
        SPEC, "User-agent: *\nDisallow: /a$\n", "FooBot", "/a$b", False, id="dollar-lit"
    ),
    pytest.param(
        SEED_004,
        "User-agent: *\nAllow: /*?$\nDisallow: /*?\n",
        "FooBot",
        "/a?b",
        True,
        id="seed004-wildcards-literal",
    ),
    pytest.param(
        SPEC,
        "User-agent: *\nAllow: /public\nDisallow: /\n",
        "FooBot",
        "/public/x",
        True,
        id="allow-line",
    ),
]


@pytest.mark.parametrize(("source", "body", "token", "path", "expected"), MATCH_CASES)
def test_1994_matching(source, body, token, path, expected):
    _check(source, body, token, path, expected)


def test_1994_matching_reports_first_matching_line():
    decision = _decide(DIS_ALLOW, "FooBot", "/a/b/c")
    assert decision.reason == "rule"
    assert decision.rule is not None
    assert (decision.rule.line, decision.rule.directive, decision.rule.pattern) == (
        2,
        "Disallow",
        "/a",
    )
    assert decision.rule.allow is False
    assert decision.rule.agents == ("*",)


def test_1994_matching_empty_disallow_is_no_matching_rule():
    decision = _decide("User-agent: *\nDisallow:\n", "FooBot", "/x")
    assert decision.allowed is True
    assert decision.reason == "no-matching-rule"
    assert decision.rule is None


# --------------------------------------------------------------------------------------
# %XX decoding
# --------------------------------------------------------------------------------------

PERCENT_CASES = [
    # HTTP: The Definitive Guide's table (seed 000).
    pytest.param(
        SEED_000, "/~fred/hi.html", "/%7Efred/hi.html", False, id="tilde-vs-7E"
    ),
    pytest.param(
        SEED_000, "/%7Efred/hi.html", "/~fred/hi.html", False, id="7E-vs-tilde"
    ),
    pytest.param(
        SEED_000, "/%7efred/hi.html", "/%7Efred/hi.html", False, id="hex-case"
    ),
    pytest.param(
        SEED_000, "/~fred/hi.html", "/~fred%2Fhi.html", True, id="2F-is-not-slash"
    ),
    pytest.param(SPEC, "/a%2Fb", "/a/b", True, id="rule-2F-vs-slash"),
    pytest.param(SPEC, "/a%2Fb", "/a%2Fb", False, id="2F-vs-2F"),
    pytest.param(SEED_000, "/a%2fb", "/a%2Fb", False, id="2F-hex-case"),
    pytest.param(SPEC, "/caf%C3%A9", "/café", False, id="utf8-rule-encoded"),
    pytest.param(SPEC, "/café", "/caf%c3%a9", False, id="utf8-url-encoded"),
    pytest.param(SPEC, "/%41", "/A", False, id="rule-decoded"),
    pytest.param(SPEC, "/a", "/%61", False, id="url-decoded"),
    # Every %XX except %2F is decoded, reserved characters too (rfc9309 differs).
    pytest.param(SPEC, "/a%3Fb", "/a?b", False, id="3F-decoded"),
]


@pytest.mark.parametrize(("source", "pattern", "path", "expected"), PERCENT_CASES)
def test_1994_percent(source, pattern, path, expected):
    _check(source, f"User-agent: *\nDisallow: {pattern}\n", "FooBot", path, expected)


# --------------------------------------------------------------------------------------
# /robots.txt, crawl-delay, request-rate, sitemaps
# --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("source", "body", "path", "expected", "reason"),
    [
        pytest.param(
            SEED_001, EXAMPLE_3, "/robots.txt", True, "robots-txt", id="disallow-all"
        ),
        pytest.param(
            SPEC,
            "User-agent: *\nDisallow: /robots\n",
            "/robots.txt",
            True,
            "robots-txt",
            id="prefix",
        ),
        pytest.param(
            SPEC,
            "User-agent: *\nDisallow: /robots.txt\n",
            "/robots.txt",
            True,
            "robots-txt",
            id="exact",
        ),
        pytest.param(
            SPEC, EXAMPLE_3, "/robots.txt.bak", False, "rule", id="other-file"
        ),
        # SPEC 2.2: "/robots.txt is always allowed": the file, not other URLs
        # that start with its path.
        pytest.param(
            SPEC, EXAMPLE_3, "/robots.txt?x=1", False, "rule", id="with-a-query"
        ),
    ],
)
def test_1994_robots_txt(source, body, path, expected, reason):
    decision = _decide(body, "FooBot", path)
    assert decision.allowed is expected, source
    assert decision.reason == reason, source


DELAY_BODY = (
    "User-agent: *\nCrawl-delay: 5\nRequest-rate: 1/5\nDisallow: /x\n"
    "\n"
    "User-agent: FooBot\nCrawl-delay: 2\nDisallow: /y\n"
    "\n"
    "Sitemap: http://example.com/s.xml\n"
)


@pytest.mark.parametrize("token", ["FooBot", "OtherBot"])
def test_1994_crawl_delay_and_request_rate_are_none(token):
    rt = RobotsTxt.parse(DELAY_BODY.encode(), standard="1994")
    assert rt.crawl_delay(token) is None
    assert rt.request_rate(token) is None
    # The unknown Crawl-delay / Request-rate lines do not break the record.
    assert rt.allowed(HOST + "/x", "OtherBot") is False
    assert rt.allowed(HOST + "/y", "FooBot") is False


def test_1994_crawl_delay_rfc9309_reads_the_same_body():
    # The same body in rfc9309 mode does give a delay: the None above is the 1994 mode.
    rt = RobotsTxt.parse(DELAY_BODY.encode(), standard="rfc9309")
    assert rt.crawl_delay("OtherBot") == 5.0
    assert rt.request_rate("OtherBot") == RequestRate(1, 5.0)
    assert rt.crawl_delay("FooBot") == 2.0


def test_1994_sitemaps_collected():
    rt = RobotsTxt.parse(DELAY_BODY.encode(), standard="1994")
    assert rt.sitemaps == ("http://example.com/s.xml",)


# --------------------------------------------------------------------------------------
# The same body, two standards, two answers
# --------------------------------------------------------------------------------------

CONTRAST_CASES = [
    pytest.param(
        STD_FORMAT,
        "User-agent: *\n\nDisallow: /x\n",
        "FooBot",
        "/x",
        True,
        False,
        id="blank-line",
    ),
    pytest.param(
        STD_FORMAT, AFTER_BLANK, "FooBot", "/x", True, False, id="rule-after-blank"
    ),
    pytest.param(
        SEED_000, DIS_ALLOW, "FooBot", "/a/b/c", False, True, id="first-vs-longest"
    ),
    pytest.param(
        SEED_000, ALLOW_DIS, "FooBot", "/a/b", True, False, id="first-vs-longest-2"
    ),
    pytest.param(
        SEED_003,
        "User-agent: *\nDisallow: /\nAllow: /public/\n",
        "FooBot",
        "/public/x",
        False,
        True,
        id="seed003-ex2",
    ),
    pytest.param(
        SPEC,
        "User-agent: *\nDisallow: /*.gif$\n",
        "FooBot",
        "/a.gif",
        True,
        False,
        id="wildcards",
    ),
    pytest.param(
        SPEC,
        "User-agent: *\nDissallow: /x\n",
        "FooBot",
        "/x",
        True,
        False,
        id="misspelling",
    ),
    pytest.param(
        SPEC,
        "User-agent: *\nDisallowed: /x\n",
        "FooBot",
        "/x",
        True,
        False,
        id="key-prefix",
    ),
    pytest.param(
        SPEC, "User-agent: *\nDisallow /x\n", "FooBot", "/x", True, False, id="no-colon"
    ),
    pytest.param(SEED_000, BOT, "Spambot", "/x", False, True, id="substring-agent"),
    pytest.param(
        SEED_000, FIRST_RECORD, "foobot", "/a", False, True, id="first-record-vs-exact"
    ),
    pytest.param(
        SEED_000, TWO_STARS, "FooBot", "/b", True, False, id="star-records-merged"
    ),
    pytest.param(
        SEED_004,
        GOOGLE_FOLDERS,
        "Googlebot-Image",
        "/folder2/x",
        False,
        True,
        id="googlebot-image",
    ),
    pytest.param(
        SPEC,
        "User-agent: FooBot2000\nDisallow: /\n",
        "FooBot",
        "/x",
        True,
        False,
        id="agent-suffix",
    ),
    pytest.param(
        SPEC,
        "User-agent: *\nDisallow: /a%3Fb\n",
        "FooBot",
        "/a?b",
        False,
        True,
        id="3F-decoding",
    ),
    pytest.param(
        SPEC,
        "User-agent: *\nDisallow: /dir/\nAllow: /dir/index.html\n",
        "FooBot",
        "/dir/",
        False,
        True,
        id="index-html",
    ),
    pytest.param(
        SPEC,
        "User-agent: a\n\nUser-agent: b\nDisallow: /\n",
        "a",
        "/x",
        True,
        False,
        id="blank-between-agents",
    ),
]


@pytest.mark.parametrize(
    ("source", "body", "token", "path", "expected_1994", "expected_rfc9309"),
    CONTRAST_CASES,
)
def test_1994_vs_rfc9309(source, body, token, path, expected_1994, expected_rfc9309):
    assert (
        expected_1994 is not expected_rfc9309
    )  # the table only lists differing answers
    d1994 = _decide(body, token, path, standard="1994")
    drfc = _decide(body, token, path, standard="rfc9309")
    assert d1994.allowed is expected_1994, f"[{source}] 1994: {d1994.explain()}"
    assert drfc.allowed is expected_rfc9309, f"[{source}] rfc9309: {drfc.explain()}"
