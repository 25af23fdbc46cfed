"""TDMRep, pure: tdmrep.py (the file, the headers, the meta tags, precedence, the usage
source) and the TDMRep meta tags read by pagehead.py. Issue 25, point 4.

Source: the W3C TDM Reservation Protocol Community Group report
(w3c/tdm-reservation-protocol, spec/index.html): ``tdm-reservation`` is 1 (reserved)
or 0 (not reserved), any other value is a protocol error and means unset;
``tdm-policy`` is a URL; ``/.well-known/tdmrep.json`` is a JSON array of rules
(``location`` with robots.txt ``*`` and ``$``, ``tdm-reservation``, optional
``tdm-policy``), the first matching rule in sequence is used and no match means
unset; header values supersede the file's, meta tag values supersede both.
"""

from __future__ import annotations

import json
import os
import time

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from scrapy_robots_std import RobotsTxt, UsagePreferences
from scrapy_robots_std.pagehead import read_head
from scrapy_robots_std.tdmrep import (
    EMPTY,
    MAX_FILE_BYTES,
    MAX_NOTES,
    MAX_RULES,
    TdmFile,
    TdmRep,
    TdmStatement,
    meta_filter,
    parse_file,
    read,
)

SETTINGS = settings(
    max_examples=int(os.environ.get("ROBOTS_STD_HYPOTHESIS_EXAMPLES", "200")),
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow],
)
TOKEN = "TestBot"

#: The spec's example: three groups of files.
SPEC_EXAMPLE = b"""[
  {"location": "/directory-a/", "tdm-reservation": 1},
  {"location": "/directory-b/html/", "tdm-reservation": 1,
   "tdm-policy": "https://provider.com/policies/policy.json"},
  {"location": "/directory-b/images/*.jpg", "tdm-reservation": 0}
]"""


def file_says(body: bytes, path: str) -> TdmStatement | None:
    return parse_file(body).statement(f"http://example.com{path}")[0]


def decide(said: TdmRep, purpose: str) -> str:
    return (
        UsagePreferences.unknown()
        .with_sources(said.usage_sources())
        .decide(purpose)
        .value
    )


# -- the file ------------------------------------------------------------------------------


def test_spec_the_first_matching_rule_in_sequence_decides() -> None:
    parsed = parse_file(SPEC_EXAMPLE)
    assert parsed.notes == ()
    assert len(parsed.rules) == 3
    said = file_says(SPEC_EXAMPLE, "/directory-a/report.pdf")
    assert said == TdmStatement("tdmrep.json", 1, None, 0, "/directory-a/")
    html = file_says(SPEC_EXAMPLE, "/directory-b/html/page.html")
    assert html is not None
    assert (html.reservation, html.rule) == (1, 1)
    assert html.policy == "https://provider.com/policies/policy.json"
    jpg = file_says(SPEC_EXAMPLE, "/directory-b/images/2024/cat.jpg")
    assert jpg is not None
    assert (jpg.reservation, jpg.rule) == (0, 2)


def test_spec_no_matching_rule_means_unset() -> None:
    assert file_says(SPEC_EXAMPLE, "/elsewhere") is None
    assert file_says(SPEC_EXAMPLE, "/directory-b/images/cat.png") is None
    assert parse_file(SPEC_EXAMPLE).statement("http://example.com/x") == (None, ())


def test_first_in_sequence_not_longest() -> None:
    body = json.dumps(
        [
            {"location": "/", "tdm-reservation": 0},
            {"location": "/private/", "tdm-reservation": 1},
        ]
    ).encode()
    said = file_says(body, "/private/x")
    assert said is not None
    assert (said.reservation, said.rule) == (0, 0)


@pytest.mark.parametrize(
    ("location", "path", "matches"),
    [
        ("/a$", "/a", True),
        ("/a$", "/ab", False),
        ("/*.pdf$", "/x/y.pdf", True),
        ("/*.pdf$", "/x/y.pdf?z", False),
        ("*", "/anything", True),
        ("/A", "/a", False),  # case-sensitive
        ("/%7Ea", "/~a", True),  # %-escapes of unreserved characters decoded
        ("/~a", "/%7Ea", True),
        ("/path/foo-%24", "/path/foo-%24", True),  # the spec's "$" in a path
        ("/caf\xe9", "/caf%C3%A9", True),  # non-ASCII in UTF-8, escaped
        ("/a?q=1", "/a?q=1&r", True),  # the query is part of the path
        ("/**/x", "/b/x", True),  # runs of "*" are one
    ],
)
def test_locations_match_like_rfc9309_paths(
    location: str, path: str, matches: bool
) -> None:
    body = json.dumps([{"location": location, "tdm-reservation": 1}]).encode()
    assert (file_says(body, path) is not None) is matches


@pytest.mark.parametrize(
    ("body", "note"),
    [
        (b"{not json", "tdmrep.json: not JSON (JSONDecodeError: "),
        (b"\xff\xfe\x00", "tdmrep.json: not JSON ("),
        (b"", "tdmrep.json: not JSON ("),
        (b'{"location": "/", "tdm-reservation": 1}', "tdmrep.json: not a JSON array"),
        (b'"[]"', "tdmrep.json: not a JSON array (a str)"),
        (b"[" * 100_000, "tdmrep.json: not JSON (RecursionError"),
        (
            b'[{"location": "/", "tdm-reservation": 1' + b"1" * 5000 + b"}]",
            "tdmrep.json: not JSON (ValueError",
        ),
    ],
)
def test_a_file_that_cannot_be_read_says_unset_with_a_note(
    body: bytes, note: str
) -> None:
    parsed = parse_file(body)
    assert parsed.rules == ()
    assert len(parsed.notes) == 1
    assert parsed.notes[0].startswith(note)
    assert parsed.statement("http://example.com/") == (None, ())


def test_a_body_over_500_kib_is_not_parsed() -> None:
    rule = b'{"location": "/", "tdm-reservation": 1},'
    body = b"[" + rule * (MAX_FILE_BYTES // len(rule)) + rule[:-1] + b"]"
    assert len(body) > MAX_FILE_BYTES
    started = time.perf_counter()
    parsed = parse_file(body)
    assert time.perf_counter() - started < 0.01
    assert parsed.rules == ()
    assert parsed.notes == (
        (
            f"tdmrep.json: {len(body):,} bytes, over the 512,000-byte limit: not read "
            "(unset)"
        ),
    )
    # Just under the limit: read (the first MAX_RULES rules).
    body = b"[" + rule * 1000 + rule[:-1] + b"]"
    assert len(parse_file(body).rules) == MAX_RULES


def test_bad_rules_are_skipped_and_bad_values_say_unset_where_they_match() -> None:
    body = json.dumps(
        [
            "not an object",
            {"tdm-reservation": 1},
            {"location": 7, "tdm-reservation": 1},
            {"location": "   ", "tdm-reservation": 1},
            {"location": "dir/", "tdm-reservation": 1},
            {"location": "/yes", "tdm-reservation": "1"},
            {"location": "/bool", "tdm-reservation": True},
            {"location": "/two", "tdm-reservation": 2},
            {"location": "/float", "tdm-reservation": 1.0},
            {"location": "/none"},
            {"location": "/policy", "tdm-reservation": 1, "tdm-policy": ["x"]},
            {"location": "/", "tdm-reservation": 0},
        ]
    ).encode()
    parsed = parse_file(body)
    assert [rule.index for rule in parsed.rules] == [5, 6, 7, 8, 9, 10, 11]
    assert parsed.notes == (
        "tdmrep.json rule 0: not an object: skipped",
        "tdmrep.json rule 1: no location: skipped",
        "tdmrep.json rule 2: no location: skipped",
        "tdmrep.json rule 3: no location: skipped",
        (
            "tdmrep.json rule 4: location 'dir/' does not start with / or *: skipped "
            "(it matches no path)"
        ),
        "tdmrep.json rule 5: tdm-reservation '1' is not 0 or 1: unset where it matches",
        (
            "tdmrep.json rule 6: tdm-reservation true is not 0 or 1: unset where it "
            "matches"
        ),
        "tdmrep.json rule 7: tdm-reservation 2 is not 0 or 1: unset where it matches",
        "tdmrep.json rule 8: tdm-reservation 1.0 is not 0 or 1: unset where it matches",
        (
            "tdmrep.json rule 9: tdm-reservation missing is not 0 or 1: unset where it "
            "matches"
        ),
        (
            "tdmrep.json rule 10: tdm-policy is not a URL of at most 2,048 characters: "
            "not kept"
        ),
    )
    # A rule with a bad value still covers its location: unset there, not the
    # next rule's 0.
    said, notes = parsed.statement("http://example.com/two/x")
    assert said is None
    assert notes == (
        (
            "tdmrep.json rule 7 (location '/two') matches: its tdm-reservation is not 0 "
            "or 1: unset"
        ),
    )
    policy = parsed.statement("http://example.com/policy")[0]
    assert policy is not None
    assert (policy.reservation, policy.policy) == (1, None)
    other = parsed.statement("http://example.com/other")[0]
    assert other is not None
    assert (other.reservation, other.rule) == (0, 11)


def test_notes_are_bounded() -> None:
    body = json.dumps([3] * 5000).encode()
    parsed = parse_file(body)
    assert len(parsed.notes) == MAX_NOTES + 1
    assert parsed.notes[-1] == f"and {MAX_RULES - MAX_NOTES + 1} more note(s)"


def test_rules_past_the_cap_are_not_read() -> None:
    rules = [{"location": f"/d{i}/", "tdm-reservation": 1} for i in range(MAX_RULES)]
    rules.append({"location": "/", "tdm-reservation": 1})
    parsed = parse_file(json.dumps(rules).encode())
    assert len(parsed.rules) == MAX_RULES
    assert parsed.notes == (
        f"tdmrep.json: 1 rule(s) past the first {MAX_RULES} not read",
    )
    assert parsed.statement("http://example.com/elsewhere")[0] is None
    said = parsed.statement(f"http://example.com/d{MAX_RULES - 1}/x")[0]
    assert said is not None
    assert said.rule == MAX_RULES - 1


def test_a_match_that_takes_too_much_work_is_unset_with_a_note() -> None:
    # Each location holds many pieces the path holds too, but not its tail.
    location = "/" + "a*" * 1000 + "b"
    rules = [{"location": location, "tdm-reservation": 1}] * 200
    parsed = parse_file(json.dumps(rules).encode())
    assert len(parsed.rules) == 200
    url = "http://example.com/" + "a" * 100_000
    started = time.perf_counter()
    said, notes = parsed.statement(url)
    assert time.perf_counter() - started < 0.5
    assert said is None
    assert len(notes) == 1
    assert "took more work than one check may" in notes[0]


def test_a_url_that_is_not_http_is_unset_with_a_note() -> None:
    said, notes = parse_file(SPEC_EXAMPLE).statement("ftp://example.com/directory-a/")
    assert said is None
    assert notes[0].startswith("tdmrep.json: not an absolute http(s) URL")


# -- headers and meta tags ----------------------------------------------------------------


def test_spec_a_header_says_reserved_with_a_policy() -> None:
    said = read([b"1"], [b"https://provider.com/policies/policy.json"])
    assert said.reservation == 1
    assert said.policy == "https://provider.com/policies/policy.json"
    assert said.statement is not None
    assert said.statement.origin == "header"
    assert str(said.statement) == 'header "tdm-reservation: 1"'


def test_spec_meta_tags_say_reserved_with_a_policy() -> None:
    head = read_head(
        b'<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">'
        b'<meta name="tdm-reservation" content="1">'
        b'<meta name="tdm-policy" content="https://provider.com/policies/policy.json">'
        b"<title>Document title</title></head><body>...</body></html>",
        meta_filter,
    )
    assert head.metas == (
        ("tdm-reservation", "1"),
        ("tdm-policy", "https://provider.com/policies/policy.json"),
    )
    said = read(metas=head.metas)
    assert said.statement is not None
    assert (said.reservation, said.statement.origin) == (1, "meta tag")
    assert str(said.statement) == 'meta tag "tdm-reservation: 1"'


def test_meta_tag_names_are_matched_case_insensitively_and_others_ignored() -> None:
    head = read_head(
        b"<head><meta name=' TDM-Reservation ' content=' 0 '>"
        b"<meta name=robots content=noai><meta name=tdm-reservation-x content=1>",
        meta_filter,
    )
    assert head.metas == ((" TDM-Reservation ", " 0 "),)
    assert read(metas=head.metas).reservation == 0
    # read() itself passes over names that are not TDMRep's.
    assert read(metas=[("robots", "1")]) is EMPTY


def test_spec_precedence_meta_over_header_over_file() -> None:
    file = TdmStatement("tdmrep.json", 1, None, 0, "/")
    assert read(file=file).statement == file
    header = read([b"0"], file=file)
    assert header.reservation == 0
    assert [s.origin for s in header.said] == ["header", "tdmrep.json"]
    meta = read([b"0"], metas=[("tdm-reservation", "1")], file=file)
    assert meta.statement is not None
    assert meta.statement.origin == "meta tag"
    assert meta.reservation == 1
    assert [s.origin for s in meta.said] == ["meta tag", "header", "tdmrep.json"]
    # The policy comes with the statement that decides.
    with_policy = read(
        [b"1"], [b"https://h.example/p"], metas=[("tdm-reservation", "1")]
    )
    assert with_policy.policy is None


@pytest.mark.parametrize(
    "value", [b"2", b"yes", b"true", b"", b"1, 1", b"01", b"-1", b"1.0", b"\xff"]
)
def test_spec_other_values_are_protocol_errors_and_the_next_technique_speaks(
    value: bytes,
) -> None:
    file = TdmStatement("tdmrep.json", 1, None, 0, "/")
    said = read([value], file=file)
    assert said.statement == file
    assert len(said.notes) == 1
    assert "not 0 or 1 (a protocol error): unset" in said.notes[0]
    alone = read([value])
    assert alone.statement is None
    assert alone.reservation is None
    assert decide(alone, "train-ai") == "unknown"


def test_whitespace_around_a_value_is_not_an_error() -> None:
    assert read([b" 1 \t"]).reservation == 1


def test_repeated_lines_that_agree_count_once_and_differing_ones_are_unset() -> None:
    assert read([b"1", b"1"]).reservation == 1
    differing = read([b"1", b"0"])
    assert differing.statement is None
    assert differing.notes == (
        "header tdm-reservation: differing values ('0', '1'): unset",
    )
    many = read([b"1"] * 1000)
    assert many.statement is None
    assert many.notes == ("header tdm-reservation: 1000 values, more than 16: unset",)


def test_a_policy_without_a_reservation_decides_nothing() -> None:
    assert read([], [b"https://h.example/p"]) is EMPTY


def test_a_100_kb_value_is_an_error_shown_short() -> None:
    said = read([b"1" * 100_000], [b"x" * 100_000])
    assert said.statement is None
    assert len(said.notes[0]) < 200
    policy = read([b"1"], [b"x" * 100_000])
    assert policy.reservation == 1
    assert policy.policy is None
    assert policy.notes == (
        "header tdm-policy: empty or over 2,048 characters: not kept",
    )


def test_nothing_said_is_the_shared_empty_answer() -> None:
    assert read() is EMPTY
    assert read([], [], []) is EMPTY
    assert EMPTY.usage_sources() == ()
    assert EMPTY.to_dict() == {
        "tdm-reservation": None,
        "tdm-policy": None,
        "from": None,
        "said": [],
        "notes": [],
    }


# -- as a usage source ---------------------------------------------------------------------


@pytest.mark.parametrize("purpose", ["train-ai", "ai-use", "ai-input"])
def test_reserved_is_no_and_not_reserved_is_yes_for_the_ai_purposes(
    purpose: str,
) -> None:
    assert decide(read([b"1"]), purpose) == "disallow"
    assert decide(read([b"0"]), purpose) == "allow"


def test_search_is_not_affected() -> None:
    for value in (b"0", b"1"):
        assert decide(read([value]), "search") == "unknown"


def test_tdmrep_combines_most_restrictively_with_the_other_sources() -> None:
    yes = UsagePreferences.unknown().with_headers(content_usage=[b"train-ai=y"])
    no = yes.with_sources(read([b"1"]).usage_sources())
    decision = no.decide("train-ai")
    assert decision.value == "disallow"
    assert [str(s) for s in decision.sources] == ['header "tdm-reservation: 1"']
    # TDMRep's 0 cannot lift another source's no.
    refused = UsagePreferences.unknown().with_headers(content_usage=[b"train-ai=n"])
    still = refused.with_sources(read([b"0"]).usage_sources())
    assert still.decide("train-ai").value == "disallow"
    assert [s.field for s in still.decide("train-ai").sources] == ["Content-Usage"]


def test_a_file_rule_names_its_index_and_location() -> None:
    said = read(file=file_says(SPEC_EXAMPLE, "/directory-b/html/x"))
    folded = UsagePreferences.unknown().with_sources(said.usage_sources())
    decision = folded.decide("train-ai")
    assert str(decision) == (
        "disallow for train-ai by tdmrep.json rule 1 (location '/directory-b/html/') "
        '"tdm-reservation: 1"'
    )
    source = folded.to_dict()["sources"][0]
    assert source["from"] == "tdmrep.json"
    assert source["rule"] == 1
    assert source["path"] == "/directory-b/html/"
    assert source["policy"] == "https://provider.com/policies/policy.json"
    assert source["members"] == {
        "tdm-reservation": "1",
        "tdm-policy": "https://provider.com/policies/policy.json",
        "location": "/directory-b/html/",
    }


def test_the_json_form() -> None:
    said = read([b"0"], metas=[("tdm-reservation", "1"), ("tdm-policy", "https://p")])
    assert said.to_dict() == {
        "tdm-reservation": 1,
        "tdm-policy": "https://p",
        "from": "meta tag",
        "said": [
            {
                "from": "meta tag",
                "tdm-reservation": 1,
                "tdm-policy": "https://p",
                "rule": None,
                "location": None,
            },
            {
                "from": "header",
                "tdm-reservation": 0,
                "tdm-policy": None,
                "rule": None,
                "location": None,
            },
        ],
        "notes": [],
    }
    json.dumps(said.to_dict())


# -- properties ------------------------------------------------------------------------------

_RANK = {"unknown": 0, "allow": 1, "disallow": 2}
_VALUES = st.sampled_from(["0", "1", " 1", "2", "yes", "", "\x00", "é", "1, 0"])
_JSON_VALUES = st.one_of(
    st.sampled_from([0, 1, 2, -1, True, None, 1.0, "1", [], {}]),
    st.integers(),
)
_LOCATIONS = st.one_of(
    st.sampled_from(["/", "/a", "/a*", "/*.pdf$", "*", "/%7Ea", "/caf\xe9", "a", ""]),
    st.text(max_size=20),
)
_RULE = st.one_of(
    st.fixed_dictionaries(
        {"location": _LOCATIONS, "tdm-reservation": _JSON_VALUES},
        optional={"tdm-policy": st.one_of(st.text(max_size=10), st.integers())},
    ),
    st.sampled_from([None, 1, "x", [], {"location": None}]),
)
_ROBOTS = st.sampled_from(
    [
        b"User-agent: *\nDisallow: /private\nContent-Usage: train-ai=y\n",
        b"User-agent: TestBot\nAllow: /\nContent-Signal: ai-train=yes, search=yes\n",
        b"User-agent: *\nDisallow: /\n",
        b"Content-Signal: search=no\nUser-agent: *\nDisallow: /a\n",
        b"",
    ]
)
_URLS = st.sampled_from(
    [
        "http://example.com/",
        "http://example.com/private/x",
        "http://example.com/a",
        "http://example.com/%7Ea/b.pdf",
    ]
)


@SETTINGS
@given(
    rules=st.lists(_RULE, max_size=8),
    garbage=st.binary(max_size=64),
    header=st.lists(_VALUES, max_size=3),
    policy=st.lists(st.text(max_size=8), max_size=2),
    metas=st.lists(
        st.tuples(st.sampled_from(["tdm-reservation", "TDM-Policy", "x"]), _VALUES),
        max_size=3,
    ),
    robots=_ROBOTS,
    url=_URLS,
)
def test_tdmrep_never_raises_and_never_changes_access_or_search(
    rules: list[object],
    garbage: bytes,
    header: list[str],
    policy: list[str],
    metas: list[tuple[str, str]],
    robots: bytes,
    url: str,
) -> None:
    for body in (json.dumps(rules).encode(), garbage, json.dumps(rules).encode()[:-1]):
        parsed = parse_file(body)
        assert isinstance(parsed, TdmFile)
        file, notes = parsed.statement(url)
        said = read(header, policy, metas, file=file, notes=notes)
        said.to_dict()
        assert len(said.notes) <= MAX_NOTES + 1
        # The deciding statement is the first of those said, by precedence.
        assert said.statement == (said.said[0] if said.said else None)
        order = ["meta tag", "header", "tdmrep.json"]
        assert [s.origin for s in said.said] == sorted(
            (s.origin for s in said.said), key=order.index
        )
        parsed_robots = RobotsTxt.parse(robots)
        allowed = parsed_robots.allowed(url, TOKEN)
        before = parsed_robots.usage(url, TOKEN)
        after = before.with_sources(said.usage_sources())
        # Access is robots.txt's alone; search is not TDM's; the AI categories
        # can only move toward the statement's value.
        assert parsed_robots.allowed(url, TOKEN) is allowed
        assert after.decide("search") == before.decide("search")
        if said.reservation == 1:
            assert after.decide("train-ai").value == "disallow"
            assert after.decide("ai-use").value == "disallow"
        for vocabulary in ("aipref", "content-signal"):
            for category, preference in before.table(vocabulary).items():
                now = after.table(vocabulary)[category].value
                assert _RANK[now] >= _RANK[preference.value]


@SETTINGS
@given(body=st.binary(max_size=2048))
def test_any_bytes_parse_to_a_file(body: bytes) -> None:
    parsed = parse_file(body)
    assert len(parsed.rules) <= MAX_RULES
    parsed.statement("http://example.com/a")
