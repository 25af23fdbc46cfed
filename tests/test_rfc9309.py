"""RFC 9309 mode (``standard="rfc9309"``): parametrised tables by SPEC 2.1 topic.

Every row names its source:

- ``RFC9309 <section>``: the RFC text or one of its figures/examples;
- ``google robots.cc <function>``: behaviour of Google's reference parser
  (github.com/google/robotstxt), which SPEC 2.1 makes the oracle for this mode;
- ``SPEC 2.1`` / ``CONTRACT``: our own documents (SPEC.md, notes/CONTRACT.md);
- ``seed NNN``: the example files in shared/seeds/ (several languages).

Tests named ``test_rfc9309_*`` check what the RFC asks for; ``test_lenient_*``
check the reference parser's leniencies beyond the RFC, which SPEC 2.1 adopts.
Where sources disagree the row carries a ``# CONFLICT:`` comment and OUR answer.

A URL that starts with "/" is relative to http://example.com.
"""

from __future__ import annotations

import pytest

from scrapy_robots_std import RobotsTxt

STD = "rfc9309"
BASE = "http://example.com"

# RFC 9309 2.5: parse at least 500 KiB; the contract fixes the cut at 512,000 bytes.
BODY_LIMIT = 512_000
# google robots.cc RobotsTxtParser::Parse: kMaxLineLen = 2083 * 8 = 16664 bytes of
# buffer, of which the last one holds the terminating NUL: 16663 bytes per line.
LINE_LIMIT = 16_663


def _body(body: bytes | str) -> bytes:
    return body.encode("utf-8") if isinstance(body, str) else body


def _url(url: str) -> str:
    return BASE + url if url.startswith("/") else url


def _ids(table: list[tuple]) -> list[str]:
    return [f"{i:03d} {row[0]}" for i, row in enumerate(table)]


def check(source: str, body: bytes | str, token: str, url: str, expected: bool):
    """Assert ``allowed()`` and ``decide().allowed`` both give ``expected``."""
    robots = RobotsTxt.parse(_body(body), standard=STD)
    full_url = _url(url)
    msg = f"[{source}] token={token!r} url={full_url[:200]!r}"
    assert robots.allowed(full_url, token) is expected, msg
    decision = robots.decide(full_url, token)
    assert decision.allowed is expected, msg
    return decision


# ---------------------------------------------------------------------------
# Input: line endings, comments, whitespace (RFC 9309 2.2: NL = CR / LF / CRLF)
# ---------------------------------------------------------------------------

INPUT_CASES = [
    ("RFC9309 2.2 NL=LF", b"User-agent: FooBot\nDisallow: /a\n", "FooBot", "/a", False),
    (
        "RFC9309 2.2 NL=CRLF",
        b"User-agent: FooBot\r\nDisallow: /a\r\n",
        "FooBot",
        "/a",
        False,
    ),
    ("RFC9309 2.2 NL=CR", b"User-agent: FooBot\rDisallow: /a\r", "FooBot", "/a", False),
    (
        "RFC9309 2.2 mixed NL",
        b"User-agent: FooBot\r\nDisallow: /a\rAllow: /a/b\n",
        "FooBot",
        "/a/b",
        True,
    ),
    (
        "RFC9309 2.2 mixed NL",
        b"User-agent: FooBot\r\nDisallow: /a\rAllow: /a/b\n",
        "FooBot",
        "/a/c",
        False,
    ),
    (
        "RFC9309 2.2 no final NL",
        b"User-agent: FooBot\nDisallow: /a",
        "FooBot",
        "/a",
        False,
    ),
    ("RFC9309 2.2.2 empty file", b"", "FooBot", "/a", True),
    ("RFC9309 2.2 only empty lines", b"\n\r\n\r  \t\n", "FooBot", "/a", True),
    # Control characters that str.splitlines() would treat as line breaks do not end
    # a line: "Disallow: /b" below is part of the first rule's value, not a rule.
    (
        "SPEC 2.1 LF is a line end",
        b"User-agent: FooBot\nDisallow: /a\nDisallow: /b\n",
        "FooBot",
        "/b",
        False,
    ),
    (
        "SPEC 2.1 VT is no line end",
        b"User-agent: FooBot\nDisallow: /a\x0bDisallow: /b\n",
        "FooBot",
        "/b",
        True,
    ),
    (
        "SPEC 2.1 FF is no line end",
        b"User-agent: FooBot\nDisallow: /a\x0cDisallow: /b\n",
        "FooBot",
        "/b",
        True,
    ),
    (
        "SPEC 2.1 FS is no line end",
        b"User-agent: FooBot\nDisallow: /a\x1cDisallow: /b\n",
        "FooBot",
        "/b",
        True,
    ),
    (
        "SPEC 2.1 GS is no line end",
        b"User-agent: FooBot\nDisallow: /a\x1dDisallow: /b\n",
        "FooBot",
        "/b",
        True,
    ),
    (
        "SPEC 2.1 RS is no line end",
        b"User-agent: FooBot\nDisallow: /a\x1eDisallow: /b\n",
        "FooBot",
        "/b",
        True,
    ),
    (
        "SPEC 2.1 NEL (UTF-8) is no line end",
        b"User-agent: FooBot\nDisallow: /a\xc2\x85Disallow: /b\n",
        "FooBot",
        "/b",
        True,
    ),
    (
        "SPEC 2.1 NEL (octet 0x85) is no line end",
        b"User-agent: FooBot\nDisallow: /a\x85Disallow: /b\n",
        "FooBot",
        "/b",
        True,
    ),
    (
        "SPEC 2.1 U+2028 is no line end",
        b"User-agent: FooBot\nDisallow: /a\xe2\x80\xa8Disallow: /b\n",
        "FooBot",
        "/b",
        True,
    ),
    (
        "SPEC 2.1 U+2029 is no line end",
        b"User-agent: FooBot\nDisallow: /a\xe2\x80\xa9Disallow: /b\n",
        "FooBot",
        "/b",
        True,
    ),
    # Comments (RFC 9309 2.2 comment = "#" ..., 2.2.3 "#" designates a comment).
    (
        "RFC9309 2.2.3 comment line",
        b"User-agent: FooBot\n# Disallow: /\nDisallow: /a\n",
        "FooBot",
        "/x",
        True,
    ),
    (
        "RFC9309 2.2.3 comment line, no space",
        b"User-agent: FooBot\n#Disallow: /\n",
        "FooBot",
        "/x",
        True,
    ),
    (
        "RFC9309 2.2.3 trailing comment",
        b"User-agent: FooBot\nDisallow: /a # private\n",
        "FooBot",
        "/a",
        False,
    ),
    (
        "RFC9309 2.2.3 trailing comment, no space",
        b"User-agent: FooBot\nDisallow: /a#private\n",
        "FooBot",
        "/a",
        False,
    ),
    (
        "RFC9309 2.2.3 comment ends a $ pattern",
        b"User-agent: FooBot\nDisallow: /a$#private\n",
        "FooBot",
        "/ab",
        True,
    ),
    (
        "RFC9309 2.2.3 comment leaves an empty value",
        b"User-agent: FooBot\nDisallow: #/a\n",
        "FooBot",
        "/a",
        True,
    ),
    (
        "RFC9309 2.2.3 comment on a user-agent line",
        b"User-agent: *# everybody\nDisallow: /\n",
        "BarBot",
        "/x",
        False,
    ),
    (
        "google robots.cc GetKeyAndValueFrom # anywhere",
        b"User-agent: FooBot\nDisal#low: /a\n",
        "FooBot",
        "/a",
        True,
    ),
    # Whitespace (RFC 9309 2.2: *WS around key, colon and value).
    (
        "RFC9309 2.2 leading WS",
        b"  User-agent: FooBot\n\tDisallow: /a\n",
        "FooBot",
        "/a",
        False,
    ),
    (
        "RFC9309 2.2 WS around colon",
        b"User-agent  :  FooBot\nDisallow \t:\t /a\n",
        "FooBot",
        "/a",
        False,
    ),
    (
        "RFC9309 2.2 trailing WS stripped",
        b"User-agent: FooBot\nDisallow: /a$ \t \n",
        "FooBot",
        "/ab",
        True,
    ),
    (
        "RFC9309 2.2 trailing WS stripped",
        b"User-agent: FooBot\nDisallow: /a$ \t \n",
        "FooBot",
        "/a",
        False,
    ),
    (
        "RFC9309 2.2 no WS after colon",
        b"User-agent:FooBot\nDisallow:/a\n",
        "FooBot",
        "/a",
        False,
    ),
    (
        "SPEC 2.1 invalid UTF-8 does not stop parsing",
        b"User-agent: FooBot\n\xff\xfe\xfd: \xc3\x28\nDisallow: /a\n",
        "FooBot",
        "/a",
        False,
    ),
    (
        "SPEC 5 HTML page as robots.txt",
        (
            b"<!DOCTYPE html>\n<html><head><title>404</title></head>\n"
            b"<body>Disallow: /a</body></html>\n"
        ),
        "FooBot",
        "/a",
        True,
    ),
]


@pytest.mark.parametrize(
    ("source", "body", "token", "url", "expected"), INPUT_CASES, ids=_ids(INPUT_CASES)
)
def test_rfc9309_input_lines_and_comments(source, body, token, url, expected):
    check(source, body, token, url, expected)


# A UTF-8 byte-order mark, even a partial one, is skipped (reference leniency).
BOM_CASES = [
    (
        "google robots_test.cc ID_UTF8ByteOrderMarkIsSkipped full",
        b"\xef\xbb\xbfUser-agent: FooBot\nDisallow: /a\n",
        "FooBot",
        "/a",
        False,
    ),
    (
        "google robots_test.cc ID_UTF8ByteOrderMarkIsSkipped partial 2",
        b"\xef\xbbUser-agent: FooBot\nDisallow: /a\n",
        "FooBot",
        "/a",
        False,
    ),
    (
        "google robots_test.cc ID_UTF8ByteOrderMarkIsSkipped partial 1",
        b"\xefUser-agent: FooBot\nDisallow: /a\n",
        "FooBot",
        "/a",
        False,
    ),
    (
        "google robots_test.cc ID_UTF8ByteOrderMarkIsSkipped broken",
        b"\xef\x11\xbfUser-agent: FooBot\nDisallow: /a\n",
        "FooBot",
        "/a",
        True,
    ),
    (
        "google robots_test.cc ID_UTF8ByteOrderMarkIsSkipped middle",
        b"User-agent: FooBot\n\xef\xbb\xbfDisallow: /a\n",
        "FooBot",
        "/a",
        True,
    ),
    (
        "google robots.cc Parse BOM then empty line",
        b"\xef\xbb\xbf\nUser-agent: FooBot\nDisallow: /a\n",
        "FooBot",
        "/a",
        False,
    ),
    (
        "google robots.cc Parse only one BOM",
        b"\xef\xbb\xbf\xef\xbb\xbfUser-agent: FooBot\nDisallow: /a\n",
        "FooBot",
        "/a",
        True,
    ),
    (
        "google robots.cc Parse UTF-16 BOM not skipped",
        b"\xff\xfeUser-agent: FooBot\nDisallow: /a\n",
        "FooBot",
        "/a",
        True,
    ),
    (
        "google robots.cc Parse BOM with CRLF",
        b"\xef\xbb\xbfUser-agent: FooBot\r\nDisallow: /a\r\n",
        "FooBot",
        "/a",
        False,
    ),
]


@pytest.mark.parametrize(
    ("source", "body", "token", "url", "expected"), BOM_CASES, ids=_ids(BOM_CASES)
)
def test_lenient_byte_order_mark(source, body, token, url, expected):
    check(source, body, token, url, expected)


# ---------------------------------------------------------------------------
# Field names: case-insensitive (RFC), by prefix and with typos (reference)
# ---------------------------------------------------------------------------

FIELD_NAME_CASES = [
    (
        "RFC9309 2.2 names case-insensitive upper",
        b"USER-AGENT: FooBot\nDISALLOW: /a\n",
        "FooBot",
        "/a",
        False,
    ),
    (
        "RFC9309 2.2 names case-insensitive lower",
        b"user-agent: FooBot\ndisallow: /a\n",
        "FooBot",
        "/a",
        False,
    ),
    (
        "RFC9309 2.2 names case-insensitive mixed",
        b"uSeR-aGeNt: FooBot\ndIsAlLoW: /a\n",
        "FooBot",
        "/a",
        False,
    ),
    (
        "RFC9309 2.2 names case-insensitive allow",
        b"User-agent: FooBot\nDisallow: /\nALLOW: /a\n",
        "FooBot",
        "/a",
        True,
    ),
    (
        "RFC9309 2.2.4 unknown record ignored",
        b"User-agent: FooBot\nFoo: bar\nDisallow: /a\n",
        "FooBot",
        "/a",
        False,
    ),
    (
        "RFC9309 2.2.4 Deny is unknown",
        b"User-agent: FooBot\nDeny: /a\n",
        "FooBot",
        "/a",
        True,
    ),
    (
        "RFC9309 2.2.4 Noindex is unknown",
        b"User-agent: FooBot\nNoindex: /a\n",
        "FooBot",
        "/a",
        True,
    ),
    (
        "RFC9309 2.2.4 Dis-allow is unknown",
        b"User-agent: FooBot\nDis-allow: /a\n",
        "FooBot",
        "/a",
        True,
    ),
    (
        "RFC9309 2.2.4 Dis allow is unknown",
        b"User-agent: FooBot\nDis allow: /a\n",
        "FooBot",
        "/a",
        True,
    ),
]


@pytest.mark.parametrize(
    ("source", "body", "token", "url", "expected"),
    FIELD_NAME_CASES,
    ids=_ids(FIELD_NAME_CASES),
)
def test_rfc9309_field_names(source, body, token, url, expected):
    check(source, body, token, url, expected)


LENIENT_FIELD_NAME_CASES = [
    # google robots.cc KeyIs*: absl::StartsWithIgnoreCase, i.e. recognised by prefix.
    (
        "google robots.cc KeyIsUserAgent prefix",
        b"User-agents: FooBot\nDisallow: /a\n",
        "FooBot",
        "/a",
        False,
    ),
    (
        "google robots.cc KeyIsUserAgent prefix",
        b"User-Agent-Name: FooBot\nDisallow: /a\n",
        "FooBot",
        "/a",
        False,
    ),
    (
        "google robots.cc KeyIsUserAgent typo useragent",
        b"Useragent: FooBot\nDisallow: /a\n",
        "FooBot",
        "/a",
        False,
    ),
    (
        "google robots.cc KeyIsUserAgent typo USERAGENT",
        b"USERAGENT: FooBot\nDisallow: /a\n",
        "FooBot",
        "/a",
        False,
    ),
    (
        "google robots.cc KeyIsUserAgent typo user agent",
        b"User agent: FooBot\nDisallow: /a\n",
        "FooBot",
        "/a",
        False,
    ),
    (
        "google robots.cc KeyIsUserAgent no typo user_agent",
        b"User_agent: FooBot\nDisallow: /a\n",
        "FooBot",
        "/a",
        True,
    ),
    (
        "google robots.cc KeyIsUserAgent no typo agent",
        b"Agent: FooBot\nDisallow: /a\n",
        "FooBot",
        "/a",
        True,
    ),
    (
        "google robots.cc KeyIsAllow prefix",
        b"User-agent: FooBot\nDisallow: /\nAllowed: /a\n",
        "FooBot",
        "/a",
        True,
    ),
    (
        "google robots.cc KeyIsAllow prefix",
        b"User-agent: FooBot\nDisallow: /\nallow-this: /a\n",
        "FooBot",
        "/a",
        True,
    ),
    (
        "google robots.cc KeyIsAllow no typos for allow",
        b"User-agent: FooBot\nDisallow: /\nAlow: /a\n",
        "FooBot",
        "/a",
        False,
    ),
    (
        "google robots.cc KeyIsDisallow prefix",
        b"User-agent: FooBot\nDisallowed: /a\n",
        "FooBot",
        "/a",
        False,
    ),
    (
        "google robots.cc KeyIsDisallow prefix",
        b"User-agent: FooBot\nDisallow-all: /a\n",
        "FooBot",
        "/a",
        False,
    ),
    (
        "google robots.cc KeyIsDisallow typo dissallow",
        b"User-agent: FooBot\nDissallow: /a\n",
        "FooBot",
        "/a",
        False,
    ),
    (
        "google robots.cc KeyIsDisallow typo dissalow",
        b"User-agent: FooBot\nDissalow: /a\n",
        "FooBot",
        "/a",
        False,
    ),
    (
        "google robots.cc KeyIsDisallow typo disalow",
        b"User-agent: FooBot\nDisalow: /a\n",
        "FooBot",
        "/a",
        False,
    ),
    (
        "google robots.cc KeyIsDisallow typo diasllow",
        b"User-agent: FooBot\nDiasllow: /a\n",
        "FooBot",
        "/a",
        False,
    ),
    (
        "google robots.cc KeyIsDisallow typo disallaw",
        b"User-agent: FooBot\nDisallaw: /a\n",
        "FooBot",
        "/a",
        False,
    ),
    (
        "google robots.cc KeyIsDisallow typo DISALOW",
        b"User-agent: FooBot\nDISALOW: /a\n",
        "FooBot",
        "/a",
        False,
    ),
    (
        "google robots.cc KeyIsDisallow typo prefix disalowed",
        b"User-agent: FooBot\ndisalowed: /a\n",
        "FooBot",
        "/a",
        False,
    ),
    (
        "google robots.cc KeyIsDisallow not a typo disalllow",
        b"User-agent: FooBot\nDisalllow: /a\n",
        "FooBot",
        "/a",
        True,
    ),
    (
        "google robots.cc KeyIsDisallow not a typo dsallow",
        b"User-agent: FooBot\nDsallow: /a\n",
        "FooBot",
        "/a",
        True,
    ),
    # The key is everything before the first colon, stripped; "Disallow /a" still
    # starts with "disallow", so the value is what follows the colon.
    (
        "google robots.cc GetKeyAndValueFrom first colon",
        b"User-agent: FooBot\nDisallow /a:/b\n",
        "FooBot",
        "/b",
        False,
    ),
    (
        "google robots.cc GetKeyAndValueFrom first colon",
        b"User-agent: FooBot\nDisallow /a:/b\n",
        "FooBot",
        "/a",
        True,
    ),
]


@pytest.mark.parametrize(
    ("source", "body", "token", "url", "expected"),
    LENIENT_FIELD_NAME_CASES,
    ids=_ids(LENIENT_FIELD_NAME_CASES),
)
def test_lenient_field_names(source, body, token, url, expected):
    check(source, body, token, url, expected)


SITEMAP_CASES = [
    (
        "RFC9309 2.2.4 sitemap",
        b"Sitemap: http://foo.bar/sitemap.xml\n",
        ("http://foo.bar/sitemap.xml",),
    ),
    (
        "RFC9309 2.2.4 sitemap in file order, anywhere",
        (
            b"Sitemap: http://foo.bar/a.xml\nUser-agent: *\nDisallow: /\n"
            b"sitemap: http://foo.bar/b.xml\n"
        ),
        ("http://foo.bar/a.xml", "http://foo.bar/b.xml"),
    ),
    (
        "google robots.cc KeyIsSitemap typo site-map",
        b"Site-map: http://foo.bar/a.xml\n",
        ("http://foo.bar/a.xml",),
    ),
    (
        "google robots.cc KeyIsSitemap prefix",
        b"SITEMAPS: http://foo.bar/a.xml\n",
        ("http://foo.bar/a.xml",),
    ),
    (
        "RFC9309 2.2.3 sitemap comment stripped",
        b"Sitemap: http://foo.bar/a.xml # the map\n",
        ("http://foo.bar/a.xml",),
    ),
    ("RFC9309 2.2.4 no sitemap", b"User-agent: *\nDisallow: /\n", ()),
]


@pytest.mark.parametrize(
    ("source", "body", "expected"), SITEMAP_CASES, ids=_ids(SITEMAP_CASES)
)
def test_rfc9309_sitemaps(source, body, expected):
    robots = RobotsTxt.parse(body, standard=STD)
    assert robots.sitemaps == expected, source


# ---------------------------------------------------------------------------
# Missing colon: accepted when the line is exactly "<key> <value>" (reference)
# ---------------------------------------------------------------------------

MISSING_COLON_CASES = [
    # The reference splits at the first space/tab, then strips the value with
    # absl::StripAsciiWhitespace, which also removes VT and FF.
    (
        "google robots.cc GetKeyAndValueFrom value stripped (VT)",
        b"User-agent: FooBot\nDisallow \x0b/a\n",
        "FooBot",
        "/a",
        False,
    ),
    (
        "google robots.cc GetKeyAndValueFrom value stripped (FF)",
        b"User-agent: FooBot\nDisallow \x0c/a\n",
        "FooBot",
        "/a",
        False,
    ),
    (
        "google robots.cc GetKeyAndValueFrom user-agent value stripped (FF)",
        b"User-agent \x0cFooBot\nDisallow: /a\n",
        "FooBot",
        "/a",
        False,
    ),
    (
        "google robots.cc GetKeyAndValueFrom key stripped (VT)",
        b"User-agent: FooBot\nDisallow\x0b /a\n",
        "FooBot",
        "/a",
        False,
    ),
    (
        "google robots.cc GetKeyAndValueFrom space",
        b"user-agent FooBot\ndisallow /a\n",
        "FooBot",
        "/a",
        False,
    ),
    (
        "google robots.cc GetKeyAndValueFrom tab",
        b"user-agent\tFooBot\ndisallow\t/a\n",
        "FooBot",
        "/a",
        False,
    ),
    (
        "google robots.cc GetKeyAndValueFrom several blanks",
        b"user-agent  \t FooBot\ndisallow    /a\n",
        "FooBot",
        "/a",
        False,
    ),
    (
        "google robots.cc GetKeyAndValueFrom allow",
        b"User-agent: FooBot\nallow /a/b\ndisallow: /a\n",
        "FooBot",
        "/a/b",
        True,
    ),
    (
        "google robots.cc GetKeyAndValueFrom three words rejected",
        b"User-agent: FooBot\nDisallow /a b\n",
        "FooBot",
        "/a",
        True,
    ),
    (
        "google robots.cc GetKeyAndValueFrom three words rejected (UA)",
        b"User-agent FooBot Bar\nDisallow: /a\n",
        "FooBot",
        "/a",
        True,
    ),
    (
        "google robots.cc GetKeyAndValueFrom comment stripped first",
        b"User-agent: FooBot\nDisallow /a # no colon here\n",
        "FooBot",
        "/a",
        False,
    ),
    (
        # A bare key is no rule, so it does not end the group: BarBot joins it.
        "google robots.cc GetKeyAndValueFrom key alone is no rule",
        b"User-agent: FooBot\nDisallow\nUser-agent: BarBot\nDisallow: /a\n",
        "FooBot",
        "/a",
        False,
    ),
    (
        "google reporting_robots_test.cc User-Agent bar # no",
        b"User-Agent: foo\nAllow: /x\nUser-Agent bar # no\nDisallow: /\n",
        "bar",
        "/x",
        False,
    ),
]


@pytest.mark.parametrize(
    ("source", "body", "token", "url", "expected"),
    MISSING_COLON_CASES,
    ids=_ids(MISSING_COLON_CASES),
)
def test_lenient_missing_colon(source, body, token, url, expected):
    check(source, body, token, url, expected)


def test_missing_colon_note_names_the_key_without_blanks():
    # A vertical tab ends no word of "key value" (only SP and HTAB do), but the
    # note shows the key as written, blanks cut, like every other key's note.
    robots = RobotsTxt.parse(b"User-agent: *\nDisallow\x0b /x\nAllow\x0c\t/y\n")
    messages = [str(note) for note in robots.diagnostics]
    assert messages == [
        "line 2: missing ':' after Disallow accepted",
        "line 3: missing ':' after Allow accepted",
    ]


# ---------------------------------------------------------------------------
# NUL octet ends the value (the reference works on C strings); lines still end
# only at CR/LF.
# ---------------------------------------------------------------------------

NUL_CASES = [
    (
        "google robots.cc C-string value cut at NUL",
        b"User-agent: FooBot\nDisallow: /ab\x00c$\n",
        "FooBot",
        "/abz",
        False,
    ),
    (
        "google robots.cc NUL is no line break",
        b"User-agent: FooBot\nDisallow: /a\x00Disallow: /b\n",
        "FooBot",
        "/b",
        True,
    ),
    (
        "google robots.cc NUL is no line break",
        b"User-agent: FooBot\nDisallow: /a\x00Disallow: /b\n",
        "FooBot",
        "/a",
        False,
    ),
    (
        "google robots.cc NUL in user-agent value",
        b"User-agent: Foo\x00Bot\nDisallow: /\n",
        "FooBot",
        "/x",
        True,
    ),
    (
        "google robots.cc NUL in user-agent value",
        b"User-agent: Foo\x00Bot\nDisallow: /\n",
        "Foo",
        "/x",
        False,
    ),
    (
        "google robots.cc NUL inside key",
        b"User-agent: FooBot\nDisa\x00llow: /a\n",
        "FooBot",
        "/a",
        True,
    ),
    (
        "google robots.cc NUL at line start",
        b"User-agent: FooBot\n\x00Disallow: /a\n",
        "FooBot",
        "/a",
        True,
    ),
    (
        "google robots.cc parsing goes on after NUL",
        b"User-agent: FooBot\nDisallow: /a\x00\nDisallow: /b\n",
        "FooBot",
        "/b",
        False,
    ),
]


@pytest.mark.parametrize(
    ("source", "body", "token", "url", "expected"), NUL_CASES, ids=_ids(NUL_CASES)
)
def test_lenient_nul_ends_value(source, body, token, url, expected):
    check(source, body, token, url, expected)


# ---------------------------------------------------------------------------
# Groups (RFC 9309 2.1, 2.2.1, 2.2.4)
# ---------------------------------------------------------------------------

GROUP_CASES = [
    (
        "RFC9309 2.1 consecutive user-agent lines",
        b"User-agent: BarBot\nUser-agent: FooBot\nDisallow: /a\n",
        "FooBot",
        "/a",
        False,
    ),
    (
        "RFC9309 2.1 consecutive user-agent lines",
        b"User-agent: BarBot\nUser-agent: FooBot\nDisallow: /a\n",
        "BarBot",
        "/a",
        False,
    ),
    (
        "RFC9309 2.2 empty lines inside a group",
        b"User-agent: FooBot\n\nUser-agent: BarBot\n\nDisallow: /a\n",
        "FooBot",
        "/a",
        False,
    ),
    (
        "RFC9309 2.2 comment lines inside a group",
        b"User-agent: FooBot\n# and\nUser-agent: BarBot\nDisallow: /a\n",
        "FooBot",
        "/a",
        False,
    ),
    (
        "RFC9309 2.1 user-agent after a rule ends the group",
        b"User-agent: FooBot\nDisallow: /a\nUser-agent: BarBot\nDisallow: /b\n",
        "FooBot",
        "/b",
        True,
    ),
    (
        "RFC9309 2.1 user-agent after a rule ends the group",
        b"User-agent: FooBot\nDisallow: /a\nUser-agent: BarBot\nDisallow: /b\n",
        "BarBot",
        "/a",
        True,
    ),
    (
        "RFC9309 2.1 an empty rule is a rule",
        b"User-agent: FooBot\nDisallow:\nUser-agent: BarBot\nDisallow: /\n",
        "FooBot",
        "/a",
        True,
    ),
    (
        "RFC9309 2.1 an empty rule is a rule",
        b"User-agent: FooBot\nDisallow:\nUser-agent: BarBot\nDisallow: /\n",
        "BarBot",
        "/a",
        False,
    ),
    (
        "RFC9309 2.2.4 sitemap does not end a group",
        (
            b"User-agent: FooBot\nSitemap: http://example.com/s.xml\nUser-agent: BarBot\n"
            b"Disallow: /\n"
        ),
        "FooBot",
        "/a",
        False,
    ),
    (
        "SPEC 2.1 crawl-delay does not end a group",
        b"User-agent: FooBot\nCrawl-delay: 5\nUser-agent: BarBot\nDisallow: /\n",
        "FooBot",
        "/a",
        False,
    ),
    (
        "RFC9309 2.2.4 unknown line does not end a group",
        b"User-agent: FooBot\nNoindex: /x\nUser-agent: BarBot\nDisallow: /\n",
        "FooBot",
        "/a",
        False,
    ),
    (
        "RFC9309 2.2.2 rules before the first user-agent ignored",
        b"Disallow: /\nUser-agent: FooBot\nDisallow: /a\n",
        "FooBot",
        "/b",
        True,
    ),
    (
        "RFC9309 2.2.2 rules before the first user-agent ignored",
        b"Disallow: /\nAllow: /b\n",
        "FooBot",
        "/a",
        True,
    ),
    (
        "RFC9309 2.2.1 groups for the same agent are merged",
        (
            b"User-agent: FooBot\nDisallow: /a\nUser-agent: BarBot\nDisallow: /b\n"
            b"User-agent: FooBot\nDisallow: /c\n"
        ),
        "FooBot",
        "/c",
        False,
    ),
    (
        "RFC9309 2.2.1 groups for the same agent are merged",
        (
            b"User-agent: FooBot\nDisallow: /a\nUser-agent: BarBot\nDisallow: /b\n"
            b"User-agent: FooBot\nDisallow: /c\n"
        ),
        "FooBot",
        "/a",
        False,
    ),
    (
        "RFC9309 2.2.1 groups for the same agent are merged",
        (
            b"User-agent: FooBot\nDisallow: /a\nUser-agent: BarBot\nDisallow: /b\n"
            b"User-agent: FooBot\nDisallow: /c\n"
        ),
        "FooBot",
        "/b",
        True,
    ),
    (
        "RFC9309 2.2.2 longest match across merged groups",
        (
            b"User-agent: FooBot\nAllow: /a/b\nUser-agent: BarBot\nDisallow: /\n"
            b"User-agent: FooBot\nDisallow: /a\n"
        ),
        "FooBot",
        "/a/b/c",
        True,
    ),
    (
        "RFC9309 2.2.2 longest match across merged groups",
        (
            b"User-agent: FooBot\nAllow: /a/b\nUser-agent: BarBot\nDisallow: /\n"
            b"User-agent: FooBot\nDisallow: /a\n"
        ),
        "FooBot",
        "/a/x",
        False,
    ),
    (
        "RFC9309 2.2.1 * groups are merged",
        (
            b"User-agent: *\nDisallow: /a\nUser-agent: FooBot\nDisallow: /f\n"
            b"User-agent: *\nDisallow: /b\n"
        ),
        "BarBot",
        "/b",
        False,
    ),
    (
        "RFC9309 2.2.1 * groups are merged",
        (
            b"User-agent: *\nDisallow: /a\nUser-agent: FooBot\nDisallow: /f\n"
            b"User-agent: *\nDisallow: /b\n"
        ),
        "BarBot",
        "/a",
        False,
    ),
    (
        "RFC9309 2.2.1 * only when no group names the token",
        b"User-agent: *\nDisallow: /\nUser-agent: FooBot\nDisallow: /a\n",
        "FooBot",
        "/b",
        True,
    ),
    (
        "RFC9309 2.1 named group without rules allows all",
        b"User-agent: *\nDisallow: /\nUser-agent: FooBot\n",
        "FooBot",
        "/b",
        True,
    ),
    (
        "RFC9309 2.2.2 named group with only empty rules allows all",
        b"User-agent: *\nDisallow: /\nUser-agent: FooBot\nDisallow:\nAllow:\n",
        "FooBot",
        "/b",
        True,
    ),
    (
        "RFC9309 2.2.1 group naming * and a product token",
        (
            b"User-agent: *\nUser-agent: FooBot\nDisallow: /a\nUser-agent: BarBot\n"
            b"Disallow: /b\n"
        ),
        "FooBot",
        "/a",
        False,
    ),
    (
        "RFC9309 2.2.1 group naming * and a product token",
        (
            b"User-agent: *\nUser-agent: FooBot\nDisallow: /a\nUser-agent: BarBot\n"
            b"Disallow: /b\n"
        ),
        "BazBot",
        "/a",
        False,
    ),
    (
        "RFC9309 2.2.1 group naming * and a product token",
        (
            b"User-agent: *\nUser-agent: FooBot\nDisallow: /a\nUser-agent: BarBot\n"
            b"Disallow: /b\n"
        ),
        "BarBot",
        "/a",
        True,
    ),
    (
        "RFC9309 2.2.1 specific group ignores other * groups",
        b"User-agent: *\nDisallow: /a\nUser-agent: FooBot\nUser-agent: *\nDisallow: /b\n",
        "FooBot",
        "/a",
        True,
    ),
    (
        "RFC9309 2.2.1 specific group ignores other * groups",
        b"User-agent: *\nDisallow: /a\nUser-agent: FooBot\nUser-agent: *\nDisallow: /b\n",
        "BazBot",
        "/a",
        False,
    ),
    (
        "RFC9309 2.2.1 no matching group and no * group",
        b"User-agent: BarBot\nDisallow: /\n",
        "FooBot",
        "/a",
        True,
    ),
    (
        "RFC9309 2.2.1 empty user-agent value names nobody",
        b"User-agent:\nDisallow: /\n",
        "FooBot",
        "/a",
        True,
    ),
    (
        "RFC9309 2.2.1 empty user-agent line inside a group",
        b"User-agent: FooBot\nUser-agent:\nDisallow: /\n",
        "FooBot",
        "/a",
        False,
    ),
]


@pytest.mark.parametrize(
    ("source", "body", "token", "url", "expected"), GROUP_CASES, ids=_ids(GROUP_CASES)
)
def test_rfc9309_groups(source, body, token, url, expected):
    check(source, body, token, url, expected)


# ---------------------------------------------------------------------------
# User-agent values: leading [A-Za-z_-]+, case-insensitive equality
# ---------------------------------------------------------------------------

USER_AGENT_CASES = [
    (
        "RFC9309 2.2.1 case-insensitive",
        b"User-agent: foobot\nDisallow: /\n",
        "FooBot",
        "/a",
        False,
    ),
    (
        "RFC9309 2.2.1 case-insensitive",
        b"User-agent: FOOBOT\nDisallow: /\n",
        "foobot",
        "/a",
        False,
    ),
    (
        "RFC9309 2.2.1 equality, not prefix",
        b"User-agent: Foo\nDisallow: /\n",
        "FooBot",
        "/a",
        True,
    ),
    (
        "RFC9309 2.2.1 equality, not prefix",
        b"User-agent: FooBot\nDisallow: /\n",
        "Foo",
        "/a",
        True,
    ),
    (
        "RFC9309 2.2.1 hyphen and underscore",
        b"User-agent: Foo_Bot-News\nDisallow: /\n",
        "Foo_Bot-News",
        "/a",
        False,
    ),
    (
        "RFC9309 2.2.1 hyphen and underscore",
        b"User-agent: Foo_Bot-News\nDisallow: /\n",
        "Foo_Bot",
        "/a",
        True,
    ),
    (
        "SPEC 2.1 version dropped FooBot/1.2",
        b"User-agent: FooBot/1.2\nDisallow: /\n",
        "FooBot",
        "/a",
        False,
    ),
    (
        "SPEC 2.1 first word FooBot News",
        b"User-agent: FooBot News\nDisallow: /\n",
        "FooBot",
        "/a",
        False,
    ),
    (
        "SPEC 2.1 first word FooBot News",
        b"User-agent: FooBot News\nDisallow: /\n",
        "News",
        "/a",
        True,
    ),
    (
        "SPEC 2.1 digits end the name FooBot2000",
        b"User-agent: FooBot2000\nDisallow: /\n",
        "FooBot",
        "/a",
        False,
    ),
    (
        "google robots.cc ExtractUserAgent FooBot*",
        b"User-agent: FooBot*\nDisallow: /\n",
        "FooBot",
        "/a",
        False,
    ),
    (
        "google robots.cc ExtractUserAgent dot ends the name",
        b"User-agent: Foo.Bot\nDisallow: /\n",
        "Foo",
        "/a",
        False,
    ),
    (
        "google robots.cc ExtractUserAgent leading digit",
        b"User-agent: 1FooBot\nDisallow: /\n",
        "FooBot",
        "/a",
        True,
    ),
    (
        "google robots.cc ExtractUserAgent non-ASCII ends the name",
        "User-agent: FooBöt\nDisallow: /\n",
        "FooBot",
        "/a",
        True,
    ),
    (
        "google robots.cc ExtractUserAgent Googlebot-Image/1.0",
        b"User-agent: Googlebot-Image/1.0\nDisallow: /\n",
        "Googlebot-Image",
        "/a",
        False,
    ),
    (
        "google robots.cc ExtractUserAgent Googlebot-Image/1.0",
        b"User-agent: Googlebot-Image/1.0\nDisallow: /\n",
        "Googlebot",
        "/a",
        True,
    ),
    ("RFC9309 2.2.1 * group", b"User-agent: *\nDisallow: /\n", "AnyBot", "/a", False),
    (
        "RFC9309 2.2 * with whitespace",
        b"User-agent:   *   \nDisallow: /\n",
        "AnyBot",
        "/a",
        False,
    ),
]


@pytest.mark.parametrize(
    ("source", "body", "token", "url", "expected"),
    USER_AGENT_CASES,
    ids=_ids(USER_AGENT_CASES),
)
def test_rfc9309_user_agent_matching(source, body, token, url, expected):
    check(source, body, token, url, expected)


LENIENT_USER_AGENT_CASES = [
    (
        "google robots.cc HandleUserAgent '* foo' is global",
        b"User-agent: * foo\nDisallow: /\n",
        "BarBot",
        "/a",
        False,
    ),
    (
        "google robots.cc HandleUserAgent '*<TAB>foo' is global",
        b"User-agent: *\tfoo\nDisallow: /\n",
        "BarBot",
        "/a",
        False,
    ),
    (
        # "* foo" is the * group, not a group for foo: foo gets both * groups.
        "google robots.cc HandleUserAgent '* foo' does not name foo",
        b"User-agent: * foo\nDisallow: /a\nUser-agent: *\nDisallow: /b\n",
        "foo",
        "/b",
        False,
    ),
    (
        "google robots.cc HandleUserAgent '*foo' is not global",
        b"User-agent: *foo\nDisallow: /\n",
        "BarBot",
        "/a",
        True,
    ),
    (
        "google robots.cc HandleUserAgent '*/1.0' is not global",
        b"User-agent: */1.0\nDisallow: /\n",
        "BarBot",
        "/a",
        True,
    ),
]


@pytest.mark.parametrize(
    ("source", "body", "token", "url", "expected"),
    LENIENT_USER_AGENT_CASES,
    ids=_ids(LENIENT_USER_AGENT_CASES),
)
def test_lenient_user_agent_star(source, body, token, url, expected):
    check(source, body, token, url, expected)


# ---------------------------------------------------------------------------
# Path extraction: path + ;params + ?query, no fragment, empty path = "/"
# ---------------------------------------------------------------------------

PATH_CASES = [
    (
        "RFC9309 2.2.2 query is matched",
        b"User-agent: *\nDisallow: /a?b\n",
        "FooBot",
        "/a?b=1",
        False,
    ),
    (
        "RFC9309 2.2.2 query is matched",
        b"User-agent: *\nDisallow: /a?b\n",
        "FooBot",
        "/a",
        True,
    ),
    (
        "google robots.cc GetPathParamsQuery params",
        b"User-agent: *\nDisallow: /a;b\n",
        "FooBot",
        "/a;b=c",
        False,
    ),
    (
        "google robots.cc GetPathParamsQuery no fragment",
        b"User-agent: *\nDisallow: /a$\n",
        "FooBot",
        "/a#frag",
        False,
    ),
    (
        "google robots.cc GetPathParamsQuery no fragment",
        b"User-agent: *\nDisallow: /a?q$\n",
        "FooBot",
        "/a?q#frag",
        False,
    ),
    (
        "google robots.cc GetPathParamsQuery empty path is /",
        b"User-agent: *\nAllow: /$\nDisallow: /\n",
        "FooBot",
        "http://example.com",
        True,
    ),
    (
        "google robots.cc GetPathParamsQuery query without path",
        b"User-agent: *\nAllow: /$\nDisallow: /\n",
        "FooBot",
        "http://example.com?x=1",
        False,
    ),
    (
        "google robots.cc GetPathParamsQuery query without path",
        b"User-agent: *\nDisallow: /?x\n",
        "FooBot",
        "http://example.com?x=1",
        False,
    ),
    (
        "google robots.cc GetPathParamsQuery host, port, userinfo dropped",
        b"User-agent: *\nDisallow: /a$\n",
        "FooBot",
        "http://user:pw@example.com:8080/a",
        False,
    ),
    (
        "google robots.cc GetPathParamsQuery https",
        b"User-agent: *\nDisallow: /a$\n",
        "FooBot",
        "https://example.com/a",
        False,
    ),
    (
        "google robots.cc GetPathParamsQuery URL in query",
        b"User-agent: *\nDisallow: /a/b?c=http://d.e/$\n",
        "FooBot",
        "/a/b?c=http://d.e/",
        False,
    ),
    (
        "google robots.cc GetPathParamsQuery empty query kept",
        b"User-agent: *\nDisallow: /a?$\n",
        "FooBot",
        "/a?",
        False,
    ),
    (
        "google robots.cc GetPathParamsQuery empty fragment dropped",
        b"User-agent: *\nDisallow: /a$\n",
        "FooBot",
        "/a#",
        False,
    ),
    (
        "RFC9309 2.2.2 matching is case-sensitive",
        b"User-agent: *\nDisallow: /a\n",
        "FooBot",
        "/A",
        True,
    ),
    (
        "RFC9309 2.2.2 matching starts at the first octet of the path",
        b"User-agent: *\nDisallow: /b\n",
        "FooBot",
        "/a/b",
        True,
    ),
    (
        "google robots.cc Matches pattern without leading slash never matches",
        b"User-agent: *\nDisallow: a\n",
        "FooBot",
        "/a",
        True,
    ),
]


@pytest.mark.parametrize(
    ("source", "body", "token", "url", "expected"), PATH_CASES, ids=_ids(PATH_CASES)
)
def test_rfc9309_path_extraction(source, body, token, url, expected):
    check(source, body, token, url, expected)


# ---------------------------------------------------------------------------
# Special characters * and $ (RFC 9309 2.2.3)
# ---------------------------------------------------------------------------

WILDCARD_CASES = [
    ("RFC9309 2.2.3 *", b"User-agent: *\nDisallow: /a*c\n", "FooBot", "/abbbc", False),
    (
        "RFC9309 2.2.3 * zero chars",
        b"User-agent: *\nDisallow: /a*c\n",
        "FooBot",
        "/ac",
        False,
    ),
    (
        "RFC9309 2.2.3 * matches /",
        b"User-agent: *\nDisallow: /a*c\n",
        "FooBot",
        "/a/b/c",
        False,
    ),
    (
        "RFC9309 2.2.3 * prefix",
        b"User-agent: *\nDisallow: /a*c\n",
        "FooBot",
        "/ab",
        True,
    ),
    (
        "RFC9309 2.2.3 * leading",
        b"User-agent: *\nDisallow: *.gif\n",
        "FooBot",
        "/x/y.gif",
        False,
    ),
    ("RFC9309 2.2.3 /*", b"User-agent: *\nDisallow: /*\n", "FooBot", "/", False),
    ("RFC9309 2.2.3 **", b"User-agent: *\nDisallow: /a**c\n", "FooBot", "/abc", False),
    ("RFC9309 2.2.3 $ end", b"User-agent: *\nDisallow: /a$\n", "FooBot", "/a", False),
    ("RFC9309 2.2.3 $ end", b"User-agent: *\nDisallow: /a$\n", "FooBot", "/ab", True),
    ("RFC9309 2.2.3 $ end", b"User-agent: *\nDisallow: /a$\n", "FooBot", "/a?x", True),
    (
        "RFC9309 2.2.3 *.ext$",
        b"User-agent: *\nDisallow: /*.php$\n",
        "FooBot",
        "/x.php?y=1",
        True,
    ),
    (
        "RFC9309 2.2.3 *.ext$",
        b"User-agent: *\nDisallow: /*.php$\n",
        "FooBot",
        "/a/x.php",
        False,
    ),
    ("RFC9309 2.2.3 *$", b"User-agent: *\nDisallow: /a*$\n", "FooBot", "/abc", False),
    (
        "google robots.cc Matches $ in the middle is literal",
        b"User-agent: *\nDisallow: /a$b\n",
        "FooBot",
        "/a$b",
        False,
    ),
    (
        "google robots.cc Matches $ in the middle is literal",
        b"User-agent: *\nDisallow: /a$b\n",
        "FooBot",
        "/ab",
        True,
    ),
    (
        "google robots.cc Matches $ in the middle is literal",
        b"User-agent: *\nDisallow: /a$b\n",
        "FooBot",
        "/a",
        True,
    ),
    (
        "google robots.cc Matches $$: literal then anchor",
        b"User-agent: *\nDisallow: /a$$\n",
        "FooBot",
        "/a$",
        False,
    ),
    (
        "google robots.cc Matches $$: literal then anchor",
        b"User-agent: *\nDisallow: /a$$\n",
        "FooBot",
        "/a$x",
        True,
    ),
    (
        "google robots.cc Matches lone $ never matches",
        b"User-agent: *\nDisallow: $\n",
        "FooBot",
        "/",
        True,
    ),
    (
        "google robots.cc Matches * then $",
        b"User-agent: *\nDisallow: /*b$\n",
        "FooBot",
        "/abab",
        False,
    ),
    (
        "google robots.cc Matches * then $",
        b"User-agent: *\nDisallow: /*b$\n",
        "FooBot",
        "/aba",
        True,
    ),
    (
        "google robots.cc Matches several *",
        b"User-agent: *\nDisallow: /*a*b*c\n",
        "FooBot",
        "/xxaxxbxxcxx",
        False,
    ),
    (
        "google robots.cc Matches several *",
        b"User-agent: *\nDisallow: /*a*b*c\n",
        "FooBot",
        "/xxcxxbxxaxx",
        True,
    ),
]


@pytest.mark.parametrize(
    ("source", "body", "token", "url", "expected"),
    WILDCARD_CASES,
    ids=_ids(WILDCARD_CASES),
)
def test_rfc9309_wildcards(source, body, token, url, expected):
    check(source, body, token, url, expected)


def test_rfc9309_wildcards_pathological_pattern():
    # SPEC 5: "/*a*a*a*a*a*a*a*a*b" against a 10,000-character URL.  Its speed is
    # measured in benchmarks/parsers.py (pathological cases), not here.
    body = b"User-agent: *\nDisallow: /*a*a*a*a*a*a*a*a*b\n"
    robots = RobotsTxt.parse(body, standard=STD)
    url = BASE + "/" + "a" * 10_000
    assert robots.allowed(url, "FooBot") is True
    assert robots.allowed(url + "b", "FooBot") is False


# ---------------------------------------------------------------------------
# Longest match, allow wins ties, empty values ignored (RFC 9309 2.2.2)
# ---------------------------------------------------------------------------

LONGEST_MATCH_CASES = [
    (
        "RFC9309 2.2.2 longest match",
        b"User-agent: *\nDisallow: /a\nAllow: /a/b\n",
        "FooBot",
        "/a/b/c",
        True,
    ),
    (
        "RFC9309 2.2.2 longest match",
        b"User-agent: *\nAllow: /a\nDisallow: /a/b\n",
        "FooBot",
        "/a/b/c",
        False,
    ),
    (
        "RFC9309 2.2.2 order does not matter",
        b"User-agent: *\nAllow: /a/b\nDisallow: /a\n",
        "FooBot",
        "/a/b/c",
        True,
    ),
    (
        "RFC9309 2.2.2 allow wins ties",
        b"User-agent: *\nDisallow: /a\nAllow: /a\n",
        "FooBot",
        "/a",
        True,
    ),
    (
        "RFC9309 2.2.2 allow wins ties",
        b"User-agent: *\nAllow: /a\nDisallow: /a\n",
        "FooBot",
        "/a",
        True,
    ),
    (
        "RFC9309 2.2.2 allow wins ties, different patterns",
        b"User-agent: *\nDisallow: /ab\nAllow: /a*\n",
        "FooBot",
        "/abc",
        True,
    ),
    (
        "google robots.cc MatchAllow priority counts * and $",
        b"User-agent: *\nAllow: /*.html\nDisallow: /a/b\n",
        "FooBot",
        "/a/b.html",
        True,
    ),
    (
        "google robots.cc MatchDisallow priority counts * and $",
        b"User-agent: *\nAllow: /a/b\nDisallow: /a/*.h$\n",
        "FooBot",
        "/a/b.h",
        False,
    ),
    (
        "RFC9309 2.2.2 no match is allowed",
        b"User-agent: *\nDisallow: /a\n",
        "FooBot",
        "/b",
        True,
    ),
    (
        "RFC9309 2.2.2 empty disallow ignored",
        b"User-agent: *\nDisallow:\n",
        "FooBot",
        "/b",
        True,
    ),
    (
        "google robots.cc disallow() empty allow does not beat a disallow",
        b"User-agent: *\nAllow:\nDisallow: /\n",
        "FooBot",
        "/b",
        False,
    ),
    (
        "google robots.cc disallow() whitespace-only value is empty",
        b"User-agent: *\nAllow:   \t\nDisallow: /\n",
        "FooBot",
        "/b",
        False,
    ),
    (
        "RFC9309 2.2.2 duplicate rules",
        b"User-agent: *\nDisallow: /a\nDisallow: /a\n",
        "FooBot",
        "/a",
        False,
    ),
]


@pytest.mark.parametrize(
    ("source", "body", "token", "url", "expected"),
    LONGEST_MATCH_CASES,
    ids=_ids(LONGEST_MATCH_CASES),
)
def test_rfc9309_longest_match(source, body, token, url, expected):
    check(source, body, token, url, expected)


# ---------------------------------------------------------------------------
# Allow: .../index.html (or .htm) also allows the directory (reference only)
# ---------------------------------------------------------------------------

INDEX_HTML_CASES = [
    (
        "google robots.cc HandleAllow index.html",
        b"User-agent: *\nAllow: /dir/index.html\nDisallow: /\n",
        "FooBot",
        "/dir/",
        True,
    ),
    (
        "google robots.cc HandleAllow index.htm",
        b"User-agent: *\nAllow: /dir/index.htm\nDisallow: /\n",
        "FooBot",
        "/dir/",
        True,
    ),
    (
        "google robots.cc HandleAllow index.htm is also a prefix of index.html",
        b"User-agent: *\nAllow: /dir/index.htm\nDisallow: /\n",
        "FooBot",
        "/dir/index.html",
        True,
    ),
    (
        "google robots.cc HandleAllow only the directory itself ($)",
        b"User-agent: *\nAllow: /dir/index.html\nDisallow: /\n",
        "FooBot",
        "/dir/x",
        False,
    ),
    (
        "google robots.cc HandleAllow only the directory itself ($)",
        b"User-agent: *\nAllow: /dir/index.html\nDisallow: /\n",
        "FooBot",
        "/dir/?q=1",
        False,
    ),
    (
        "google robots.cc HandleAllow not the name without slash",
        b"User-agent: *\nAllow: /dir/index.html\nDisallow: /\n",
        "FooBot",
        "/dir",
        False,
    ),
    (
        "google robots.cc HandleAllow root index.html",
        b"User-agent: *\nAllow: /index.html\nDisallow: /\n",
        "FooBot",
        "/",
        True,
    ),
    (
        "google robots.cc HandleAllow index.php is not special",
        b"User-agent: *\nAllow: /dir/index.php\nDisallow: /\n",
        "FooBot",
        "/dir/",
        False,
    ),
    (
        "google robots.cc HandleAllow case-sensitive",
        b"User-agent: *\nAllow: /dir/INDEX.HTML\nDisallow: /\n",
        "FooBot",
        "/dir/",
        False,
    ),
    (
        "google robots.cc HandleAllow starts with /index.htm",
        b"User-agent: *\nAllow: /dir/index.html5\nDisallow: /\n",
        "FooBot",
        "/dir/",
        True,
    ),
    (
        "google robots.cc HandleDisallow has no index.html rule",
        b"User-agent: *\nDisallow: /dir/index.html\n",
        "FooBot",
        "/dir/",
        True,
    ),
    # The derived pattern "/dir/$" has priority len("/dir/$") = 6.
    (
        "google robots.cc HandleAllow derived priority beats /dir/",
        b"User-agent: *\nAllow: /dir/index.html\nDisallow: /dir/\n",
        "FooBot",
        "/dir/",
        True,
    ),
    (
        "google robots.cc HandleAllow derived priority loses to a longer rule",
        b"User-agent: *\nAllow: /dir/index.html\nDisallow: /d**r/$\n",
        "FooBot",
        "/dir/",
        False,
    ),
]


@pytest.mark.parametrize(
    ("source", "body", "token", "url", "expected"),
    INDEX_HTML_CASES,
    ids=_ids(INDEX_HTML_CASES),
)
def test_lenient_index_html_allows_directory(source, body, token, url, expected):
    check(source, body, token, url, expected)


# ---------------------------------------------------------------------------
# Percent-encoding (RFC 9309 2.2.2). Deliberate difference from the reference
# (SPEC 2.1 #2): both sides are normalised: %XX of an unreserved character is
# decoded, other %xx get upper-case hex, non-ASCII octets are %-encoded as
# UTF-8; %2F never equals "/". The reference normalises only the pattern (and
# does not decode unreserved escapes); each row where it answers differently has
# a CONFLICT comment.
# ---------------------------------------------------------------------------

PERCENT_CASES = [
    (
        "RFC9309 2.2.2 non-ASCII rule vs encoded URL",
        "User-agent: *\nDisallow: /foo/bar/ツ\n",
        "FooBot",
        "/foo/bar/%E3%83%84",
        False,
    ),
    # CONFLICT: google robots.cc leaves the URL as given, so a raw "ツ" in the URL
    # does not match (allowed); SPEC 2.1 #2 encodes it on both sides.
    (
        "RFC9309 2.2.2 non-ASCII rule vs raw URL",
        "User-agent: *\nDisallow: /foo/bar/ツ\n",
        "FooBot",
        "/foo/bar/ツ",
        False,
    ),
    # CONFLICT: the reference does not normalise the URL; allowed there.
    (
        "RFC9309 2.2.2 encoded rule vs raw URL",
        b"User-agent: *\nDisallow: /foo/bar/%E3%83%84\n",
        "FooBot",
        "/foo/bar/ツ",
        False,
    ),
    (
        "google robots.cc MaybeEscapePattern lower-case hex in rule",
        b"User-agent: *\nDisallow: /foo/bar/%e3%83%84\n",
        "FooBot",
        "/foo/bar/%E3%83%84",
        False,
    ),
    # CONFLICT: the reference does not upper-case the URL's escapes; allowed there.
    (
        "SPEC 2.1 lower-case hex in URL",
        b"User-agent: *\nDisallow: /foo/bar/%E3%83%84\n",
        "FooBot",
        "/foo/bar/%e3%83%84",
        False,
    ),
    # CONFLICT: the reference keeps "%62%61%7A" in the rule and does not match
    # "baz" (allowed there); RFC 9309 2.2.2 figure 4 and SPEC 2.1 #2 decode it.
    (
        "RFC9309 2.2.2 figure 4 unreserved escapes decoded",
        b"User-agent: *\nDisallow: /foo/bar/%62%61%7A\n",
        "FooBot",
        "/foo/bar/baz",
        False,
    ),
    # CONFLICT: the reference compares "/foo/bar/baz" to a raw "%62%61%7A" URL
    # (allowed there).
    (
        "SPEC 2.1 unreserved escapes decoded in URL",
        b"User-agent: *\nDisallow: /foo/bar/baz\n",
        "FooBot",
        "/foo/bar/%62%61%7A",
        False,
    ),
    (
        "RFC9309 2.2.2 figure 4 same escapes both sides",
        b"User-agent: *\nDisallow: /foo/bar/%62%61%7A\n",
        "FooBot",
        "/foo/bar/%62%61%7A",
        False,
    ),
    # CONFLICT: reference allows ("%7E" is not "~" there).
    (
        "SPEC 2.1 %7E is ~",
        b"User-agent: *\nDisallow: /%7Euser\n",
        "FooBot",
        "/~user",
        False,
    ),
    # CONFLICT: reference allows.
    (
        "SPEC 2.1 ~ is %7e",
        b"User-agent: *\nDisallow: /~user\n",
        "FooBot",
        "/%7euser",
        False,
    ),
    # CONFLICT: reference allows.
    ("SPEC 2.1 %41 is A", b"User-agent: *\nDisallow: /%41\n", "FooBot", "/A", False),
    # CONFLICT: reference allows.
    (
        "SPEC 2.1 unreserved - . _ 0 decoded",
        b"User-agent: *\nDisallow: /a%2Db%2Ec%5Fd%30\n",
        "FooBot",
        "/a-b.c_d0",
        False,
    ),
    (
        "SPEC 2.1 %2F never equals /",
        b"User-agent: *\nDisallow: /a%2Fb\n",
        "FooBot",
        "/a/b",
        True,
    ),
    (
        "SPEC 2.1 / never equals %2F",
        b"User-agent: *\nDisallow: /a/b\n",
        "FooBot",
        "/a%2Fb",
        True,
    ),
    (
        "google robots.cc MaybeEscapePattern %2f is %2F",
        b"User-agent: *\nDisallow: /a%2fb\n",
        "FooBot",
        "/a%2Fb",
        False,
    ),
    # CONFLICT: reference allows (URL escapes are not upper-cased).
    (
        "SPEC 2.1 %2F is %2f in URL",
        b"User-agent: *\nDisallow: /a%2Fb\n",
        "FooBot",
        "/a%2fb",
        False,
    ),
    (
        "SPEC 2.1 %3F is not ?",
        b"User-agent: *\nDisallow: /a%3Fb\n",
        "FooBot",
        "/a?b",
        True,
    ),
    (
        "SPEC 2.1 %20 kept",
        b"User-agent: *\nDisallow: /a%20b\n",
        "FooBot",
        "/a%20b",
        False,
    ),
    (
        "RFC9309 2.2.2 non-ASCII in query",
        "User-agent: *\nDisallow: /search?q=é\n",
        "FooBot",
        "/search?q=%C3%A9",
        False,
    ),
    (
        "RFC9309 2.2.2 non-ASCII after *",
        "User-agent: *\nDisallow: /*ツ$\n",
        "FooBot",
        "/x/%E3%83%84",
        False,
    ),
    (
        "google robots.cc MaybeEscapePattern invalid escape kept",
        b"User-agent: *\nDisallow: /a%zz\n",
        "FooBot",
        "/a%zz",
        False,
    ),
    (
        "google robots.cc MaybeEscapePattern lone % kept",
        b"User-agent: *\nDisallow: /100%\n",
        "FooBot",
        "/100%",
        False,
    ),
    (
        "SPEC 2.1 %2A is a literal, not a wildcard",
        b"User-agent: *\nDisallow: /a%2Ab\n",
        "FooBot",
        "/axxb",
        True,
    ),
    (
        "SPEC 2.1 %2A is a literal, not a wildcard",
        b"User-agent: *\nDisallow: /a%2Ab\n",
        "FooBot",
        "/a%2Ab",
        False,
    ),
    (
        "SPEC 2.1 %24 is not an anchor",
        b"User-agent: *\nDisallow: /a%24\n",
        "FooBot",
        "/a%24/x",
        False,
    ),
    # Priority is the length of the normalised pattern (CONTRACT): "/%41%42%43" is
    # "/ABC" (4 octets) and loses to "/ABCDE" (6 octets). Raw lengths would say 10.
    (
        "CONTRACT priority = normalised length",
        b"User-agent: *\nAllow: /ABCDE\nDisallow: /%41%42%43\n",
        "FooBot",
        "/ABCDEF",
        True,
    ),
    # "/ü" normalises to "/%C3%BC" (7 octets) and beats "/*bung" (6).
    (
        "CONTRACT priority counts encoded octets",
        "User-agent: *\nAllow: /*bung\nDisallow: /ü\n",
        "FooBot",
        "/%C3%BCbung",
        False,
    ),
]


@pytest.mark.parametrize(
    ("source", "body", "token", "url", "expected"),
    PERCENT_CASES,
    ids=_ids(PERCENT_CASES),
)
def test_rfc9309_percent_encoding(source, body, token, url, expected):
    check(source, body, token, url, expected)


# ---------------------------------------------------------------------------
# /robots.txt is always allowed (RFC 9309 2.2.2; deliberate difference #1: the
# reference applies the rules to it like any other path).
# ---------------------------------------------------------------------------

ROBOTS_TXT_CASES = [
    # CONFLICT: google robots.cc disallows /robots.txt under "Disallow: /".
    (
        "RFC9309 2.2.2 /robots.txt",
        b"User-agent: *\nDisallow: /\n",
        "FooBot",
        "/robots.txt",
        True,
    ),
    # CONFLICT: reference disallows.
    (
        "RFC9309 2.2.2 /robots.txt, explicit rule",
        b"User-agent: FooBot\nDisallow: /robots.txt\n",
        "FooBot",
        "/robots.txt",
        True,
    ),
    # CONFLICT: reference disallows.
    (
        "RFC9309 2.2.2 /robots.txt, wildcard rule",
        b"User-agent: *\nDisallow: /*.txt$\n",
        "FooBot",
        "https://example.com:8443/robots.txt",
        True,
    ),
    (
        "RFC9309 2.2.2 only /robots.txt itself",
        b"User-agent: *\nDisallow: /\n",
        "FooBot",
        "/robots.txt.bak",
        False,
    ),
    (
        "RFC9309 2.2.2 only the top-level /robots.txt",
        b"User-agent: *\nDisallow: /\n",
        "FooBot",
        "/dir/robots.txt",
        False,
    ),
    (
        "RFC9309 2.3 the name is lower-case",
        b"User-agent: *\nDisallow: /\n",
        "FooBot",
        "/ROBOTS.TXT",
        False,
    ),
    # SPEC 2.1 #1: the exemption is the /robots.txt URI itself, so a query makes
    # an ordinary URL.
    (
        "SPEC 2.1 /robots.txt with a query is an ordinary URL",
        b"User-agent: *\nDisallow: /\n",
        "FooBot",
        "/robots.txt?5=7498",
        False,
    ),
    (
        "SPEC 2.1 /robots.txt with an empty query is an ordinary URL",
        b"User-agent: *\nDisallow: /\n",
        "FooBot",
        "/robots.txt?",
        False,
    ),
    (
        "SPEC 2.1 /robots.txt with a query, allowed by no rule",
        b"User-agent: *\nDisallow: /private/\n",
        "FooBot",
        "/robots.txt?x=1",
        True,
    ),
]


@pytest.mark.parametrize(
    ("source", "body", "token", "url", "expected"),
    ROBOTS_TXT_CASES,
    ids=_ids(ROBOTS_TXT_CASES),
)
def test_rfc9309_robots_txt_always_allowed(source, body, token, url, expected):
    check(source, body, token, url, expected)


def test_rfc9309_robots_txt_decision_reason():
    robots = RobotsTxt.parse(b"User-agent: *\nDisallow: /\n", standard=STD)
    decision = robots.decide(BASE + "/robots.txt", "FooBot")
    assert decision.allowed is True
    assert decision.reason == "robots-txt"
    assert decision.rule is None


# ---------------------------------------------------------------------------
# Size limits: body cut at 512,000 bytes (RFC 9309 2.5, CONTRACT) and lines cut
# at 16,663 bytes (google robots.cc RobotsTxtParser::Parse).
# ---------------------------------------------------------------------------


def _padding(size: int) -> bytes:
    """Comment (or empty) lines totalling exactly ``size`` bytes."""
    line = b"#" + b"x" * 98 + b"\n"
    full, rest = divmod(size, len(line))
    tail = b"#" + b"y" * (rest - 2) + b"\n" if rest >= 2 else b"\n" * rest
    return line * full + tail


def _body_with_rule_ending_at(rule: bytes, end: int, tail: bytes = b"") -> bytes:
    head = b"User-agent: *\n"
    body = head + _padding(end - len(head) - len(rule)) + rule
    assert len(body) == end
    return body + tail


BODY_LIMIT_CASES = [
    (
        "RFC9309 2.5 rule ending exactly at 512,000 bytes is kept",
        _body_with_rule_ending_at(b"Disallow: /x\n", BODY_LIMIT, b"Disallow: /y\n"),
        "/x",
        False,
        True,
    ),
    (
        "RFC9309 2.5 rule after 512,000 bytes is dropped",
        _body_with_rule_ending_at(b"Disallow: /x\n", BODY_LIMIT, b"Disallow: /y\n"),
        "/y",
        True,
        True,
    ),
    (
        "SPEC 2.1 a line crossing the 512,000-byte limit is completed",
        _body_with_rule_ending_at(b"Disallow: /x", BODY_LIMIT, b"yz\n"),
        "/xyz",
        False,
        False,
    ),
    (
        "SPEC 2.1 a completed line is read whole, not cut at the limit",
        _body_with_rule_ending_at(b"Disallow: /x", BODY_LIMIT, b"yz\n"),
        "/x",
        True,
        False,
    ),
    (
        "SPEC 2.1 nothing after the completed line is read",
        _body_with_rule_ending_at(b"Disallow: /x", BODY_LIMIT, b"yz\nDisallow: /w\n"),
        "/w",
        True,
        True,
    ),
    (
        "SPEC 2.1 a line ending in CRLF across the limit is completed",
        _body_with_rule_ending_at(b"Disallow: /x", BODY_LIMIT, b"yz\r\n"),
        "/xyz",
        False,
        False,
    ),
    (
        "SPEC 2.1 the last line of a body of 500 KiB + 1 byte is kept",
        _body_with_rule_ending_at(b"Disallow: /x", BODY_LIMIT, b"z"),
        "/xz",
        False,
        False,
    ),
    (
        "SPEC 2.1 a line longer than 2048 bytes past the limit is dropped",
        _body_with_rule_ending_at(b"Disallow: /x", BODY_LIMIT, b"y" * 2048 + b"\n"),
        "/x",
        True,
        True,
    ),
    (
        "SPEC 2.1 a line ending 2047 bytes past the limit is completed",
        _body_with_rule_ending_at(b"Disallow: /x", BODY_LIMIT, b"y" * 2046 + b"\n"),
        "/x" + "y" * 2046,
        False,
        False,
    ),
    (
        "CONTRACT body of exactly 512,000 bytes is not cut",
        _body_with_rule_ending_at(b"Disallow: /x", BODY_LIMIT),
        "/x",
        False,
        False,
    ),
    (
        "CONTRACT body of 512,001 bytes: its last line is completed, not cut",
        _body_with_rule_ending_at(b"Disallow: /x", BODY_LIMIT, b"z"),
        "/x",
        True,
        False,
    ),
    (
        "RFC9309 2.5 short body is not cut",
        b"User-agent: *\nDisallow: /x\n",
        "/x",
        False,
        False,
    ),
]


@pytest.mark.parametrize(
    ("source", "body", "url", "expected", "truncated"),
    BODY_LIMIT_CASES,
    ids=_ids(BODY_LIMIT_CASES),
)
def test_rfc9309_body_limit_512000(source, body, url, expected, truncated):
    check(source, body, "FooBot", url, expected)
    assert RobotsTxt.parse(body, standard=STD).truncated is truncated, source


_A = "a" * (LINE_LIMIT - 12)  # "Disallow: /" + _A + "$" is exactly LINE_LIMIT bytes

LINE_LIMIT_CASES = [
    (
        "google robots.cc Parse line of 16,663 bytes kept whole",
        f"User-agent: *\nDisallow: /{_A}$\n",
        f"/{_A}b",
        True,
    ),
    (
        "google robots.cc Parse line of 16,663 bytes kept whole",
        f"User-agent: *\nDisallow: /{_A}$\n",
        f"/{_A}",
        False,
    ),
    (
        "google robots.cc Parse line of 16,664 bytes loses its last byte",
        f"User-agent: *\nDisallow: /{_A}a$\n",
        f"/{_A}ab",
        False,
    ),
    (
        "google robots.cc Parse rest of an over-long line is skipped",
        f"User-agent: *\nDisallow: /{_A}aDisallow: /b\nDisallow: /c\n",
        "/b",
        True,
    ),
    (
        "google robots.cc Parse next line after an over-long line is read",
        f"User-agent: *\nDisallow: /{_A}aDisallow: /b\nDisallow: /c\n",
        "/c",
        False,
    ),
    (
        "google robots.cc Parse over-long comment line",
        "User-agent: *\n#" + "x" * 20_000 + "\nDisallow: /y\n",
        "/y",
        False,
    ),
]


@pytest.mark.parametrize(
    ("source", "body", "url", "expected"), LINE_LIMIT_CASES, ids=_ids(LINE_LIMIT_CASES)
)
def test_lenient_line_cut_at_16663_bytes(source, body, url, expected):
    check(source, body, "FooBot", url, expected)


# ---------------------------------------------------------------------------
# decide(): the deciding rule (line, directive and pattern as written, group
# agents as written) and the reason.
# ---------------------------------------------------------------------------

DECIDE_CASES = [
    # source, body, token, url, allowed, reason, line, directive, pattern, agents
    (
        "CONTRACT rule decides",
        b"User-agent: FooBot\nDisallow: /private\n",
        "FooBot",
        "/private/x",
        False,
        "rule",
        2,
        "Disallow",
        "/private",
        ("FooBot",),
    ),
    (
        "CONTRACT directive as written (typo)",
        b"User-agent: FooBot\n\ndissallow: /private\n",
        "FooBot",
        "/private/x",
        False,
        "rule",
        3,
        "dissallow",
        "/private",
        ("FooBot",),
    ),
    (
        "CONTRACT directive as written (prefix)",
        b"User-agent: FooBot\nDisallowed: /a\n",
        "FooBot",
        "/a",
        False,
        "rule",
        2,
        "Disallowed",
        "/a",
        ("FooBot",),
    ),
    (
        "CONTRACT directive as written (upper-case allow)",
        b"User-agent: FooBot\nDisallow: /\nALLOW: /a\n",
        "FooBot",
        "/a",
        True,
        "rule",
        3,
        "ALLOW",
        "/a",
        ("FooBot",),
    ),
    (
        "CONTRACT agents of the group, as written",
        b"User-agent: FooBot\nUser-agent: *\nDisallow: /x\n",
        "FooBot",
        "/x",
        False,
        "rule",
        3,
        "Disallow",
        "/x",
        ("FooBot", "*"),
    ),
    (
        "CONTRACT agents as written (version kept)",
        b"User-agent: FooBot/1.2\nDisallow: /x\n",
        "FooBot",
        "/x",
        False,
        "rule",
        2,
        "Disallow",
        "/x",
        ("FooBot/1.2",),
    ),
    (
        "CONTRACT agents of the * group",
        b"User-agent: BarBot\nDisallow: /\nUser-agent: *\nDisallow: /x\n",
        "FooBot",
        "/x",
        False,
        "rule",
        4,
        "Disallow",
        "/x",
        ("*",),
    ),
    (
        "CONTRACT merged groups: the rule's own group",
        (
            b"User-agent: FooBot\nDisallow: /a\nUser-agent: BarBot\nUser-agent: FooBot\n"
            b"Disallow: /b\n"
        ),
        "FooBot",
        "/b",
        False,
        "rule",
        5,
        "Disallow",
        "/b",
        ("BarBot", "FooBot"),
    ),
    (
        "RFC9309 2.2.2 allow wins ties: the allow line",
        b"User-agent: FooBot\nDisallow: /a\nAllow: /a\n",
        "FooBot",
        "/a",
        True,
        "rule",
        3,
        "Allow",
        "/a",
        ("FooBot",),
    ),
    (
        "google robots.cc HandleDisallow first of equal rules",
        b"User-agent: FooBot\nDisallow: /a\nDisallow: /a\n",
        "FooBot",
        "/a",
        False,
        "rule",
        2,
        "Disallow",
        "/a",
        ("FooBot",),
    ),
    (
        "RFC9309 2.2.2 longest match: the longer line",
        b"User-agent: FooBot\nAllow: /a/b\nDisallow: /a\n",
        "FooBot",
        "/a/b",
        True,
        "rule",
        2,
        "Allow",
        "/a/b",
        ("FooBot",),
    ),
    (
        "CONTRACT pattern as written, comment stripped",
        b"User-agent: FooBot\nDisallow: /a   # why\n",
        "FooBot",
        "/a",
        False,
        "rule",
        2,
        "Disallow",
        "/a",
        ("FooBot",),
    ),
    # CONFLICT: the reference does not decode "%7e" (allowed there, SPEC 2.1 #2).
    (
        "CONTRACT pattern as written, not normalised",
        b"User-agent: FooBot\nDisallow: /%7euser\n",
        "FooBot",
        "/~user",
        False,
        "rule",
        2,
        "Disallow",
        "/%7euser",
        ("FooBot",),
    ),
    (
        "CONTRACT pattern decoded as UTF-8",
        "User-agent: FooBot\nDisallow: /café\n",
        "FooBot",
        "/caf%C3%A9",
        False,
        "rule",
        2,
        "Disallow",
        "/café",
        ("FooBot",),
    ),
    (
        "CONTRACT missing colon",
        b"user-agent FooBot\ndisallow /a\n",
        "FooBot",
        "/a",
        False,
        "rule",
        2,
        "disallow",
        "/a",
        ("FooBot",),
    ),
    (
        "CONTRACT index.html rule is the deciding rule",
        b"User-agent: FooBot\nAllow: /dir/index.html\nDisallow: /\n",
        "FooBot",
        "/dir/",
        True,
        "rule",
        2,
        "Allow",
        "/dir/index.html",
        ("FooBot",),
    ),
    (
        "CONTRACT line numbers: CRLF counts once",
        b"User-agent: FooBot\r\n\r\nDisallow: /a\r\n",
        "FooBot",
        "/a",
        False,
        "rule",
        3,
        "Disallow",
        "/a",
        ("FooBot",),
    ),
    (
        "CONTRACT line numbers: CR alone",
        b"User-agent: FooBot\r\rDisallow: /a\r",
        "FooBot",
        "/a",
        False,
        "rule",
        3,
        "Disallow",
        "/a",
        ("FooBot",),
    ),
    (
        "google robots.cc Parse LF CR is two line ends",
        b"User-agent: FooBot\n\rDisallow: /a\n",
        "FooBot",
        "/a",
        False,
        "rule",
        3,
        "Disallow",
        "/a",
        ("FooBot",),
    ),
    (
        "google robots.cc Parse CR CR LF is two line ends",
        b"User-agent: FooBot\r\r\nDisallow: /a\n",
        "FooBot",
        "/a",
        False,
        "rule",
        3,
        "Disallow",
        "/a",
        ("FooBot",),
    ),
    (
        "CONTRACT line numbers: BOM adds no line",
        b"\xef\xbb\xbfUser-agent: FooBot\nDisallow: /a\n",
        "FooBot",
        "/a",
        False,
        "rule",
        2,
        "Disallow",
        "/a",
        ("FooBot",),
    ),
    (
        "CONTRACT line numbers: NUL adds no line",
        b"User-agent: FooBot\x00x\nDisallow: /a\x00\nDisallow: /b\n",
        "FooBot",
        "/b",
        False,
        "rule",
        3,
        "Disallow",
        "/b",
        ("FooBot",),
    ),
    (
        "CONTRACT line numbers: over-long line is one line",
        "User-agent: FooBot\n#" + "x" * 20_000 + "\nDisallow: /y\n",
        "FooBot",
        "/y",
        False,
        "rule",
        3,
        "Disallow",
        "/y",
        ("FooBot",),
    ),
    (
        "CONTRACT no-matching-rule",
        b"User-agent: FooBot\nDisallow: /a\n",
        "FooBot",
        "/b",
        True,
        "no-matching-rule",
        None,
        None,
        None,
        None,
    ),
    # CONFLICT: same verdict as the reference, but its matching_line() reports line
    # 4: the empty "Disallow:" matches with priority 0 without deciding. SPEC 2.1
    # ("an empty value is ignored") and CONTRACT: no rule decides.
    (
        "CONTRACT no-matching-rule: empty values are ignored",
        b"User-agent: *\nDisallow: /\nUser-agent: FooBot\nDisallow:\n",
        "FooBot",
        "/b",
        True,
        "no-matching-rule",
        None,
        None,
        None,
        None,
    ),
    (
        "CONTRACT no-matching-rule: named group without rules",
        b"User-agent: *\nDisallow: /\n\nUser-agent: FooBot\n",
        "FooBot",
        "/b",
        True,
        "no-matching-rule",
        None,
        None,
        None,
        None,
    ),
    (
        "CONTRACT no-group",
        b"User-agent: BarBot\nDisallow: /\n",
        "FooBot",
        "/b",
        True,
        "no-group",
        None,
        None,
        None,
        None,
    ),
    (
        "CONTRACT no-group: empty file",
        b"",
        "FooBot",
        "/b",
        True,
        "no-group",
        None,
        None,
        None,
        None,
    ),
    (
        "CONTRACT no-group: rules outside any group",
        b"Disallow: /\n",
        "FooBot",
        "/b",
        True,
        "no-group",
        None,
        None,
        None,
        None,
    ),
]


@pytest.mark.parametrize(
    (
        "source",
        "body",
        "token",
        "url",
        "allowed",
        "reason",
        "line",
        "directive",
        "pattern",
        "agents",
    ),
    DECIDE_CASES,
    ids=_ids(DECIDE_CASES),
)
def test_rfc9309_decide(
    source, body, token, url, allowed, reason, line, directive, pattern, agents
):
    decision = check(source, body, token, url, allowed)
    assert decision.reason == reason, source
    if line is None:
        assert decision.rule is None, source
        return
    rule = decision.rule
    assert rule is not None, source
    assert (rule.line, rule.directive, rule.pattern, rule.agents) == (
        line,
        directive,
        pattern,
        agents,
    ), source
    assert rule.allow is allowed, source


# ---------------------------------------------------------------------------
# RFC 9309's own examples
# ---------------------------------------------------------------------------

RFC_5_1 = b"""User-Agent: *
Disallow: *.gif$
Disallow: /example/
Allow: /publications/

User-Agent: foobot
Disallow:/
Allow:/example/page.html
Allow:/example/allowed.gif

User-Agent: barbot
User-Agent: bazbot
Disallow: /example/page.html

User-Agent: quxbot

EOF
"""

RFC_5_2 = b"""User-Agent: foobot
Allow: /example/page/
Disallow: /example/page/disallowed.gif
"""

RFC_EXAMPLE_CASES = [
    # 5.1 "*": /publications/ allowed, /example/ and *.gif restricted.
    ("RFC9309 5.1 *", RFC_5_1, "otherbot", "/publications/a.html", True),
    ("RFC9309 5.1 *", RFC_5_1, "otherbot", "/example/page.html", False),
    ("RFC9309 5.1 *", RFC_5_1, "otherbot", "/images/logo.gif", False),
    ("RFC9309 5.1 *", RFC_5_1, "otherbot", "/images/logo.gif?v=2", True),
    (
        "RFC9309 5.1 * (longer allow beats *.gif$)",
        RFC_5_1,
        "otherbot",
        "/publications/a.gif",
        True,
    ),
    ("RFC9309 5.1 *", RFC_5_1, "otherbot", "/", True),
    # 5.1 foobot: only /example/page.html and /example/allowed.gif.
    ("RFC9309 5.1 foobot", RFC_5_1, "foobot", "/example/page.html", True),
    ("RFC9309 5.1 foobot", RFC_5_1, "foobot", "/example/allowed.gif", True),
    ("RFC9309 5.1 foobot", RFC_5_1, "foobot", "/example/other.html", False),
    ("RFC9309 5.1 foobot", RFC_5_1, "foobot", "/publications/", False),
    ("RFC9309 5.1 foobot", RFC_5_1, "FooBot", "/", False),
    # 5.1 barbot and bazbot: /example/page.html restricted, the rest open.
    ("RFC9309 5.1 barbot", RFC_5_1, "barbot", "/example/page.html", False),
    ("RFC9309 5.1 bazbot", RFC_5_1, "bazbot", "/example/page.html", False),
    ("RFC9309 5.1 barbot", RFC_5_1, "barbot", "/example/other.html", True),
    ("RFC9309 5.1 bazbot", RFC_5_1, "bazbot", "/images/logo.gif", True),
    # 5.1 quxbot: an empty group at the end of the file, unrestricted.
    ("RFC9309 5.1 quxbot", RFC_5_1, "quxbot", "/example/page.html", True),
    ("RFC9309 5.1 quxbot", RFC_5_1, "quxbot", "/images/logo.gif", True),
    # 5.2: the longest rule is used.
    ("RFC9309 5.2", RFC_5_2, "foobot", "/example/page/disallowed.gif", False),
    ("RFC9309 5.2", RFC_5_2, "foobot", "/example/page/allowed.gif", True),
    ("RFC9309 5.2", RFC_5_2, "foobot", "/example/page/", True),
    ("RFC9309 5.2 (no rule)", RFC_5_2, "foobot", "/example/", True),
    # 2.2.2 figure 4: the percent-encoding table (see PERCENT_CASES for the rest).
    (
        "RFC9309 2.2.2 figure 4 row 1",
        b"User-agent: *\nDisallow: /foo/bar?baz=quz\n",
        "FooBot",
        "/foo/bar?baz=quz",
        False,
    ),
    (
        "RFC9309 2.2.2 figure 4 row 2 (encoded on both sides)",
        b"User-agent: *\nDisallow: /foo/bar?baz=https%3A%2F%2Ffoo.bar\n",
        "FooBot",
        "/foo/bar?baz=https%3A%2F%2Ffoo.bar",
        False,
    ),
    (
        "RFC9309 2.2.2 figure 4 row 3",
        "User-agent: *\nDisallow: /foo/bar/ツ\n",
        "FooBot",
        "/foo/bar/%E3%83%84",
        False,
    ),
    (
        "RFC9309 2.2.2 figure 4 row 4",
        b"User-agent: *\nDisallow: /foo/bar/%E3%83%84\n",
        "FooBot",
        "/foo/bar/%E3%83%84",
        False,
    ),
    # 2.2.3 figure 5: the special characters.
    (
        "RFC9309 2.2.3 figure 5 # comment",
        b"User-agent: *\nDisallow: /\nallow: / # comment in line\n\n# comment line\n",
        "FooBot",
        "/x",
        True,
    ),
    (
        "RFC9309 2.2.3 figure 5 $",
        b"User-agent: *\nDisallow: /\nallow: /this/path/exactly$\n",
        "FooBot",
        "/this/path/exactly",
        True,
    ),
    (
        "RFC9309 2.2.3 figure 5 $",
        b"User-agent: *\nDisallow: /\nallow: /this/path/exactly$\n",
        "FooBot",
        "/this/path/exactly/more",
        False,
    ),
    (
        "RFC9309 2.2.3 figure 5 *",
        b"User-agent: *\nDisallow: /\nallow: /this/*/exactly\n",
        "FooBot",
        "/this/a/b/exactly",
        True,
    ),
    (
        "RFC9309 2.2.3 figure 5 *",
        b"User-agent: *\nDisallow: /\nallow: /this/*/exactly\n",
        "FooBot",
        "/this/exactly",
        False,
    ),
    # 2.2.3 figure 6: percent-encoded special characters match them literally.
    (
        "RFC9309 2.2.3 figure 6 %2A (URL encoded too)",
        b"User-agent: *\nDisallow: /path/file-with-a-%2A.html\n",
        "FooBot",
        "https://www.example.com/path/file-with-a-%2A.html",
        False,
    ),
    # CONFLICT: RFC 9309 figure 6 pairs this pattern with the URI
    # ".../file-with-a-*.html" (a match). google robots.cc compares "%2A" with a raw
    # "*" octet and finds no match; SPEC 2.1 follows the reference here ("*" is
    # not unreserved, so the normalisation of SPEC 2.1 #2 leaves both sides as
    # they are). Our answer: not matched, allowed.
    (
        "RFC9309 2.2.3 figure 6 %2A vs raw *",
        b"User-agent: *\nDisallow: /path/file-with-a-%2A.html\n",
        "FooBot",
        "https://www.example.com/path/file-with-a-*.html",
        True,
    ),
    (
        "RFC9309 2.2.3 figure 6 %24 (URL encoded too)",
        b"User-agent: *\nDisallow: /path/foo-%24\n",
        "FooBot",
        "https://www.example.com/path/foo-%24",
        False,
    ),
    # CONFLICT: as above, RFC figure 6 says "/path/foo-%24" matches ".../foo-$";
    # the reference (and so SPEC 2.1) does not. Our answer: allowed.
    (
        "RFC9309 2.2.3 figure 6 %24 vs raw $",
        b"User-agent: *\nDisallow: /path/foo-%24\n",
        "FooBot",
        "https://www.example.com/path/foo-$",
        True,
    ),
    # 2.1: "The last group may have no rules, which means it implicitly allows
    # everything."
    (
        "RFC9309 2.1 last group without rules",
        b"User-agent: *\nDisallow: /\n\nUser-agent: FooBot\n",
        "FooBot",
        "/x",
        True,
    ),
]


@pytest.mark.parametrize(
    ("source", "body", "token", "url", "expected"),
    RFC_EXAMPLE_CASES,
    ids=_ids(RFC_EXAMPLE_CASES),
)
def test_rfc9309_examples(source, body, token, url, expected):
    check(source, body, token, url, expected)


# ---------------------------------------------------------------------------
# Seeds (shared/seeds/): robots.txt examples quoted in articles, several
# languages, including the ways translation and copy-paste mangle them.
# ---------------------------------------------------------------------------

# seed 001 (Thai translation of the 1994 standard), the English example.
SEED_001_EN = b"""# robots.txt for http://www.example.com/

User-agent: *
Disallow: /cyberworld/map/ # This is an infinite virtual URL space
Disallow: /tmp/ # these will soon disappear
Disallow: /foo.html
"""

SEED_001_EN_2 = b"""# robots.txt for http://www.example.com/

User-agent: *
Disallow: /cyberworld/map/ # This is an infinite virtual URL space

# Cybermapper knows where to go.
User-agent: cybermapper
Disallow:
"""

# seed 001, the machine-translated example: spaces inside the paths and a Thai
# "Disallow" key ("ไม่อนุญาต") that no parser knows.
SEED_001_TH = """# robots.txt สำหรับ http://www.example.com/

User-agent: *
Disallow: / cyberworld / แผนที่ / # นี้พื้นที่ URL อนันต์เสมือนเป็น
Disallow: / tmp / # เหล่านี้จะหายไปเร็ว ๆ นี้
Disallow: / foo.html
"""

SEED_001_TH_2 = """# robots.txt สำหรับ http://www.example.com/

User-agent: *
Disallow: /cyberworld/map/ # นี้พื้นที่ URL อนันต์เสมือนเป็น

Cybermapper # รู้ที่จะไป
User-agent: cybermapper
ไม่อนุญาต: /
"""

# seed 002 (Spanish translation): each record flattened onto one line.
SEED_002 = """# robots.txt para http://www.ejemplo.com/

User-agent: * Disallow: /cyberworld/map/ # Es un espacio virtual infinito

# Cybermapper sabe a donde ir.

User-agent: cybermapper Disallow:
"""

SEED_002_ALL = """# déjenme en paz
User-agent: *
Disallow: /
"""

# seed 003 (Korean notes on "HTTP: The Definitive Guide"): one-line examples and an
# HTTP request pasted where a robots.txt was expected.
SEED_003_ONE_LINE = b"User-agent: * Disallow: / Allow: /public/\n"
SEED_003_REQUEST = b"""GET /robots.txt HTTP/1.0
Host: www.joes-hardware.com
User-Agent: Slurp/2.0
Date: Wed Oct 3 20:22:48 EST 2001
"""

# seed 004 (Korean translation of Google's robots.txt documentation).
SEED_004_FOLDERS = b"""User-agent: *
Disallow: /folder1/

User-Agent: Googlebot
Disallow: /folder2/
"""

SEED_004_MEDIAPARTNERS = b"""    User-agent: *
    Disallow: /

    User-agent: Mediapartners-Google
    Allow: /
"""

SEED_004_QUERY = b"""    User-agent: *
    Allow: /*?$
    Disallow: /*?
"""

SEED_004_GROUPS = b"""      user-agent: a
      disallow: /c

      user-agent: b
      disallow: /d

      user-agent: e
      user-agent: f
      disallow: /g
"""

# The precedence example, with "(group N)" placeholders replaced by one rule each.
SEED_004_PRECEDENCE = b"""user-agent: googlebot-news
disallow: /1

user-agent: *
disallow: /2

user-agent: googlebot
disallow: /3
"""

SEED_CASES = [
    ("seed 001", SEED_001_EN, "AnyBot", "/cyberworld/map/index.html", False),
    ("seed 001", SEED_001_EN, "AnyBot", "/tmp/x", False),
    ("seed 001", SEED_001_EN, "AnyBot", "/foo.html", False),
    ("seed 001", SEED_001_EN, "AnyBot", "/foo.htm", True),
    ("seed 001", SEED_001_EN, "AnyBot", "/cyberworld/", True),
    ("seed 001", SEED_001_EN_2, "cybermapper", "/cyberworld/map/x", True),
    ("seed 001", SEED_001_EN_2, "AnyBot", "/cyberworld/map/x", False),
    # The translated rules contain spaces: "/ foo.html" does not match "/foo.html".
    ("seed 001 (th)", SEED_001_TH, "AnyBot", "/foo.html", True),
    ("seed 001 (th)", SEED_001_TH, "AnyBot", "/tmp/x", True),
    # "Cybermapper" alone is ignored; the Thai key is unknown: cybermapper's group is
    # empty, so it may go anywhere, and the * group does not apply to it.
    ("seed 001 (th)", SEED_001_TH_2, "cybermapper", "/cyberworld/map/x", True),
    ("seed 001 (th)", SEED_001_TH_2, "cybermapper", "/x", True),
    ("seed 001 (th)", SEED_001_TH_2, "AnyBot", "/cyberworld/map/x", False),
    # "User-agent: * Disallow: ..." is a "*" user-agent line (google: "* foo" is the
    # * group) with no rules; "User-agent: cybermapper Disallow:" names cybermapper.
    ("seed 002", SEED_002, "AnyBot", "/cyberworld/map/x", True),
    ("seed 002", SEED_002, "cybermapper", "/cyberworld/map/x", True),
    # Both user-agent lines then form one group with the rules that follow.
    ("seed 002", SEED_002 + SEED_002_ALL, "cybermapper", "/x", False),
    ("seed 002", SEED_002 + SEED_002_ALL, "AnyBot", "/x", False),
    ("seed 002", SEED_002_ALL, "AnyBot", "/", False),
    ("seed 003", SEED_003_ONE_LINE, "AnyBot", "/private", True),
    ("seed 003", b"User-agent: * Disallow: /*.gif$\n", "AnyBot", "/a.gif", True),
    (
        "seed 003",
        b"User-agent: *\nDisallow: /\nAllow: /public/\n",
        "AnyBot",
        "/public/x",
        True,
    ),
    (
        "seed 003",
        b"User-agent: *\nDisallow: /\nAllow: /public/\n",
        "AnyBot",
        "/private",
        False,
    ),
    ("seed 003", SEED_003_REQUEST, "Slurp", "/x", True),
    ("seed 004", SEED_004_FOLDERS, "Googlebot", "/folder2/x", False),
    ("seed 004", SEED_004_FOLDERS, "Googlebot", "/folder1/x", True),
    ("seed 004", SEED_004_FOLDERS, "OtherBot", "/folder1/x", False),
    ("seed 004", SEED_004_FOLDERS, "OtherBot", "/folder2/x", True),
    ("seed 004", SEED_004_MEDIAPARTNERS, "Mediapartners-Google", "/x", True),
    ("seed 004", SEED_004_MEDIAPARTNERS, "Googlebot", "/x", False),
    ("seed 004", SEED_004_QUERY, "Googlebot", "/a?", True),
    ("seed 004", SEED_004_QUERY, "Googlebot", "/a?b=1", False),
    ("seed 004", SEED_004_QUERY, "Googlebot", "/a", True),
    (
        "seed 004",
        b"User-agent: Googlebot\nDisallow: /private*/\n",
        "Googlebot",
        "/private1/x",
        False,
    ),
    (
        "seed 004",
        b"User-agent: Googlebot\nDisallow: /private*/\n",
        "Googlebot",
        "/private",
        True,
    ),
    (
        "seed 004",
        b"User-agent: Googlebot\nDisallow: /*.xls$\n",
        "Googlebot",
        "/a/b.xls",
        False,
    ),
    (
        "seed 004",
        b"User-agent: Googlebot\nDisallow: /*.xls$\n",
        "Googlebot",
        "/a/b.xlsx",
        True,
    ),
    (
        "seed 004",
        b"User-agent: *\nDisallow: /junk_file.asp\n",
        "AnyBot",
        "/junk_file.asp",
        False,
    ),
    (
        "seed 004",
        b"User-agent: *\nDisallow: /junk_file.asp\n",
        "AnyBot",
        "/Junk_file.asp",
        True,
    ),
    (
        "seed 004",
        b"User-agent: Googlebot-Image\nDisallow: /images/dogs.jpg \n",
        "Googlebot-Image",
        "/images/dogs.jpg",
        False,
    ),
    ("seed 004", SEED_004_GROUPS, "a", "/c", False),
    ("seed 004", SEED_004_GROUPS, "a", "/d", True),
    ("seed 004", SEED_004_GROUPS, "b", "/d", False),
    ("seed 004", SEED_004_GROUPS, "e", "/g", False),
    ("seed 004", SEED_004_GROUPS, "f", "/g", False),
    ("seed 004", SEED_004_PRECEDENCE, "googlebot-news", "/1", False),
    ("seed 004", SEED_004_PRECEDENCE, "googlebot-news", "/3", True),
    ("seed 004", SEED_004_PRECEDENCE, "Googlebot", "/3", False),
    ("seed 004", SEED_004_PRECEDENCE, "Googlebot", "/1", True),
    ("seed 004", SEED_004_PRECEDENCE, "OtherBot", "/2", False),
    # CONFLICT: the documentation says Googlebot-Image follows the googlebot group
    # (group 3), because Google's crawler falls back from one of its own tokens to
    # another. With the single product token "Googlebot-Image" the reference parser
    # finds no group naming it and uses the * group (group 2), as RFC 9309 2.2.1
    # says. Our answer: the * group.
    ("seed 004", SEED_004_PRECEDENCE, "Googlebot-Image", "/2", False),
    ("seed 004", SEED_004_PRECEDENCE, "Googlebot-Image", "/3", True),
    # CONFLICT: the documentation says "fish/" is the same as "/fish/"; google
    # robots.cc matches patterns from the first octet of the path, so a pattern
    # without the leading "/" never matches. Our answer (the reference's): allowed.
    ("seed 004", b"User-agent: *\nDisallow: fish/\n", "AnyBot", "/fish/salmon", True),
    # The 1994 substring rule ("User-agent: bot" names Robot, Spambot) is not RFC 9309.
    ("seed 000", b"User-agent: bot\nDisallow: /\n", "Robot", "/x", True),
    ("seed 000", b"User-agent: bot\nDisallow: /\n", "Spambot", "/x", True),
    ("seed 000", b"User-agent: bot\nDisallow: /\n", "Bot", "/x", False),
    ("seed 000", b"User-agent: *\nDisallow: /tmp\n", "AnyBot", "/tmp", False),
    ("seed 000", b"User-agent: *\nDisallow: /tmp\n", "AnyBot", "/tmp.html", False),
    ("seed 000", b"User-agent: *\nDisallow: /tmp\n", "AnyBot", "/tmp/README", False),
    ("seed 000", b"User-agent: *\nDisallow: /tmp\n", "AnyBot", "/TMP", True),
    ("seed 000", b"User-agent: *\nDisallow: /tmp\n", "AnyBot", "/temp", True),
]


@pytest.mark.parametrize(
    ("source", "body", "token", "url", "expected"), SEED_CASES, ids=_ids(SEED_CASES)
)
def test_rfc9309_seed_examples(source, body, token, url, expected):
    check(source, body, token, url, expected)


# ---------------------------------------------------------------------------
# Invalid arguments (CONTRACT)
# ---------------------------------------------------------------------------

BAD_TOKEN_CASES = [
    ("RFC9309 2.2.1 product token: empty", ""),
    ("RFC9309 2.2.1 product token: space", "Foo Bot"),
    ("RFC9309 2.2.1 product token: version", "FooBot/1.0"),
    ("RFC9309 2.2.1 product token: digit", "FooBot2"),
    ("RFC9309 2.2.1 product token: *", "*"),
    ("RFC9309 2.2.1 product token: non-ASCII", "FööBot"),
    ("RFC9309 2.2.1 product token: tab", "Foo\tBot"),
]


@pytest.mark.parametrize(
    ("source", "token"), BAD_TOKEN_CASES, ids=_ids(BAD_TOKEN_CASES)
)
def test_rfc9309_invalid_token_rejected(source, token):
    robots = RobotsTxt.parse(b"User-agent: *\nDisallow: /\n", standard=STD)
    with pytest.raises(ValueError):  # noqa: PT011
        robots.allowed(BASE + "/x", token)
    with pytest.raises(ValueError):  # noqa: PT011
        robots.decide(BASE + "/x", token)


BAD_URL_CASES = [
    ("CONTRACT url: empty", ""),
    ("CONTRACT url: path only", "/a/b"),
    ("CONTRACT url: no scheme", "example.com/a"),
    ("CONTRACT url: ftp", "ftp://example.com/a"),
    ("CONTRACT url: no host", "http:///a"),
]


@pytest.mark.parametrize(("source", "url"), BAD_URL_CASES, ids=_ids(BAD_URL_CASES))
def test_rfc9309_invalid_url_rejected(source, url):
    robots = RobotsTxt.parse(b"User-agent: *\nDisallow: /\n", standard=STD)
    with pytest.raises(ValueError):  # noqa: PT011
        robots.allowed(url, "FooBot")


def test_rfc9309_unknown_standard_rejected():
    with pytest.raises(ValueError, match="standard"):
        RobotsTxt.parse(b"", standard="rfc9310")


@pytest.mark.parametrize(
    "body", ["User-agent: *\n", None, 42], ids=["str", "None", "int"]
)
def test_rfc9309_body_must_be_bytes(body):
    with pytest.raises(TypeError):
        RobotsTxt.parse(body, standard=STD)


def test_rfc9309_is_the_default_standard():
    robots = RobotsTxt.parse(b"User-agent: *\nDisallow: /*.gif$\n")
    assert robots.standard == "rfc9309"
    # "*" is a wildcard only in rfc9309 mode.
    assert robots.allowed(BASE + "/a/b.gif", "FooBot") is False


def test_lenient_diagnostics_are_capped_but_counted() -> None:
    """SPEC 5: hostile input must not grow memory without bound; 1000 notes are kept."""
    body = b"User-agent: *\n" + b"this is not a rule\n" * 5000 + b"x" * 600_000
    robots = RobotsTxt.parse(body)
    kinds = [note.kind for note in robots.diagnostics]
    assert kinds.count("ignored-line") == 1000
    assert "body-cut" in kinds  # never dropped by the cap
    cut = [note for note in robots.diagnostics if note.kind == "notes-cut"]
    assert len(cut) == 1
    assert cut[0].message.startswith("4000 more notes")


@pytest.mark.parametrize(
    "ends",
    [[b"\n"] * 4, [b"\r\n"] * 4, [b"\r"] * 4, [b"\r\n", b"\r", b"\n", b"\r\n"]],
    ids=["lf", "crlf", "cr", "mixed"],
)
def test_a_comment_ends_where_its_line_ends(ends: list[bytes]) -> None:
    """A comment is cut up to its line's end, whichever of CR, LF or CRLF ends it."""
    lines = [b"User-agent: * # all", b"Disallow: /a # not /b", b"Disallow: /b#", b"x"]
    robots = RobotsTxt.parse(b"".join(a + b for a, b in zip(lines, ends, strict=True)))
    assert robots.allowed(BASE + "/a", "FooBot") is False
    decision = robots.decide(BASE + "/b", "FooBot")
    assert decision.allowed is False
    assert decision.rule is not None
    assert decision.rule.line == 3
    assert robots.allowed(BASE + "/c", "FooBot") is True
    assert [note.line for note in robots.diagnostics] == [4]
