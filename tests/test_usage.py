"""Usage preferences (issue 18): Content-Usage and Content-Signal in robots.txt and
headers, the effective preference for (URL, token), and purpose decisions.

The edge cases listed at the end of shared/usage-prefs.md that need no crawl are
pinned here; the crawl-side ones (redirects, dont_obey_robotstxt, refreshes) belong
to the middleware's tests.
"""

from __future__ import annotations

import json

import pytest

from scrapy_robots_std import (
    USAGE_PURPOSES,
    USAGE_REVISIONS,
    RobotsTxt,
    UsagePreferences,
    UsageSummary,
)
from scrapy_robots_std.cli import main

URL = "https://example.com"
TOKEN = "FooBot"


def parse(body: bytes, standard: str = "rfc9309") -> RobotsTxt:
    return RobotsTxt.parse(body, standard=standard)


def aipref(robots: RobotsTxt, path: str, token: str = TOKEN) -> dict[str, str]:
    prefs = robots.usage(URL + path, token)
    return {category: p.value for category, p in prefs.aipref.items()}


def signals(robots: RobotsTxt, path: str, token: str = TOKEN) -> dict[str, str]:
    prefs = robots.usage(URL + path, token)
    return {category: p.value for category, p in prefs.content_signal.items()}


ATTACH_EXAMPLE = (
    b"User-Agent: *\n"
    b"Allow: /\n"
    b"Disallow: /never/\n"
    b"Content-Usage: train-ai=n\n"
    b"Content-Usage: /ai-ok/ train-ai=y\n"
)


@pytest.mark.parametrize("standard", ["rfc9309", "1994"])
def test_attach_05_example(standard: str) -> None:
    robots = parse(ATTACH_EXAMPLE, standard)
    assert aipref(robots, "/test")["train-ai"] == "disallow"
    assert aipref(robots, "/ai-ok/test")["train-ai"] == "allow"
    if standard == "rfc9309":  # in 1994 the first line, Allow: /, decides
        prefs = robots.usage(URL + "/never/test", TOKEN)
        assert prefs.reason == "disallowed"
        assert not prefs.stated
        assert prefs.sources == ()


def test_longest_match_is_not_combined_with_shorter() -> None:
    robots = parse(
        b"User-agent: *\nContent-Usage: / train-ai=n\nContent-Usage: /ai-ok/ train-ai=y\n"
    )
    prefs = robots.usage(URL + "/ai-ok/x", TOKEN)
    assert prefs.aipref["train-ai"].value == "allow"
    assert [s.line for s in prefs.sources] == [3]
    assert aipref(robots, "/other")["train-ai"] == "disallow"


def test_same_path_allow_and_disallow_give_disallow() -> None:
    robots = parse(
        b"User-agent: *\nContent-Usage: /a train-ai=y\nContent-Usage: /a train-ai=n\n"
    )
    prefs = robots.usage(URL + "/a/b", TOKEN)
    assert prefs.aipref["train-ai"].value == "disallow"
    assert [s.line for s in prefs.aipref["train-ai"].sources] == [3]
    assert [s.line for s in prefs.sources] == [2, 3]


def test_equal_length_different_patterns_combine_most_restrictive() -> None:
    robots = parse(
        b"User-agent: *\nContent-Usage: /a* train-ai=y\nContent-Usage: /ab train-ai=n\n"
    )
    assert aipref(robots, "/abc")["train-ai"] == "disallow"
    assert aipref(robots, "/ax")["train-ai"] == "allow"  # only /a* matches


def test_wildcard_and_anchor_as_in_allow_disallow() -> None:
    robots = parse(
        b"User-agent: *\n"
        b"Content-Usage: /*.pdf$ train-ai=n\n"
        b"Content-Usage: /exact$ search=n\n"
    )
    assert aipref(robots, "/a/b.pdf") == {
        "train-ai": "disallow",
        "ai-use": "unknown",
        "search": "unknown",
    }
    assert aipref(robots, "/a/b.pdf?x")["train-ai"] == "unknown"
    assert aipref(robots, "/exact")["search"] == "disallow"
    assert aipref(robots, "/exactly")["search"] == "unknown"


def test_path_percent_encoding_as_in_allow_disallow() -> None:
    robots = parse(
        b"User-agent: *\n"
        b"Content-Usage: /caf\xc3\xa9 train-ai=n\n"
        b"Content-Usage: /%7Euser search=n\n"
        b"Content-Usage: /a%2Fb train-ai=y\n"
    )
    assert aipref(robots, "/caf%C3%A9/x")["train-ai"] == "disallow"
    assert aipref(robots, "/café")["train-ai"] == "disallow"
    assert aipref(robots, "/~user")["search"] == "disallow"
    assert aipref(robots, "/a/b")["train-ai"] == "unknown"  # %2F is not /
    assert aipref(robots, "/a%2fb")["train-ai"] == "allow"


def test_path_keeps_its_written_form_in_the_source() -> None:
    robots = parse(b"User-agent: *\nContent-Usage: /%7Ex\ttrain-ai=n\n")
    (source,) = robots.usage(URL + "/~x", TOKEN).sources
    assert source.path == "/%7Ex"
    assert source.value == "/%7Ex\ttrain-ai=n"
    assert str(source) == 'line 2 "Content-Usage: /%7Ex\ttrain-ai=n"'


def test_parse_failure_gives_every_category_unknown_and_a_diagnostic() -> None:
    robots = parse(b"User-agent: *\nContent-Usage: Train-AI=n, search=n\n")
    prefs = robots.usage(URL + "/", TOKEN)
    assert set(aipref(robots, "/").values()) == {"unknown"}
    assert prefs.reason == "rules"
    assert prefs.sources[0].error is not None
    (note,) = robots.diagnostics
    assert (note.line, note.kind) == (2, "usage-value-invalid")
    assert "every category unknown" in note.message
    assert robots.usage_summary().invalid == 1


def test_duplicate_key_last_wins() -> None:
    robots = parse(b"User-agent: *\nContent-Usage: train-ai=n, train-ai=y\n")
    assert aipref(robots, "/")["train-ai"] == "allow"


@pytest.mark.parametrize(
    "value",
    [b"train-ai", b'train-ai="n"', b"train-ai=no", b"train-ai=?0", b"train-ai=(n)"],
)
def test_anything_but_the_tokens_is_unknown(value: bytes) -> None:
    robots = parse(b"User-agent: *\nContent-Usage: " + value + b"\n")
    assert aipref(robots, "/")["train-ai"] == "unknown"
    assert robots.diagnostics == ()


def test_token_with_parameters_still_counts() -> None:
    robots = parse(b"User-agent: *\nContent-Usage: train-ai=n;x=1\n")
    assert aipref(robots, "/")["train-ai"] == "disallow"


def test_content_signal_lines_combine_most_restrictive_per_key() -> None:
    robots = parse(
        b"User-agent: *\n"
        b"Content-Signal: search=yes, ai-train=yes\n"
        b"Allow: /\n"
        b"content-signal : ai-train=no, ai-input=yes\n"
    )
    assert signals(robots, "/x") == {
        "search": "allow",
        "ai-input": "allow",
        "ai-train": "disallow",
    }


def test_raw_keys_stay_visible_without_effect() -> None:
    robots = parse(
        b"User-agent: *\n"
        b"Content-Signal: search=yes, ai-train=no, use=reference\n"
        b"Content-Usage: bots=n, train-genai=n\n"
    )
    prefs = robots.usage(URL + "/", TOKEN)
    assert prefs.aipref["train-ai"].value == "unknown"
    # Content-Usage sources first, then Content-Signal ones.
    usage, signal = prefs.sources
    assert dict(signal.members)["use"] == "reference"
    assert dict(usage.members) == {"bots": "n", "train-genai": "n"}
    assert usage.states == ()
    assert prefs.to_dict()["sources"][1]["members"]["use"] == "reference"


def test_usage_lines_before_the_first_user_agent_apply_to_every_group() -> None:
    robots = parse(
        b"Content-Signal: ai-train=no\n"
        b"Content-Usage: train-ai=n\n"
        b"User-agent: *\n"
        b"Allow: /\n"
        b"User-agent: BarBot\n"
        b"Content-Signal: search=yes\n"
    )
    for token in (TOKEN, "BarBot"):
        assert signals(robots, "/", token)["ai-train"] == "disallow"
        assert aipref(robots, "/", token)["train-ai"] == "disallow"
    assert signals(robots, "/", "BarBot")["search"] == "allow"
    # File-wide lines are neither ignored nor reported; they are counted.
    assert robots.diagnostics == ()
    assert robots.usage_summary() == UsageSummary(1, 2, 0, 2)


def test_outside_a_record_in_1994_is_file_wide() -> None:
    robots = parse(
        b"User-agent: *\nDisallow: /x\n\nContent-Signal: ai-train=no\n", "1994"
    )
    assert signals(robots, "/")["ai-train"] == "disallow"
    assert robots.usage(URL + "/x", TOKEN).reason == "disallowed"
    assert robots.diagnostics == ()


def test_labels_are_not_unknown_fields_any_more() -> None:
    for standard in ("rfc9309", "1994"):
        robots = parse(b"User-agent: *\n CONTENT-USAGE\t:\ttrain-ai=n\n", standard)
        assert robots.diagnostics == ()
        assert aipref(robots, "/")["train-ai"] == "disallow"


def test_group_selection_named_group_then_star() -> None:
    robots = parse(
        b"User-agent: *\nContent-Usage: train-ai=n\n\n"
        b"User-agent: FooBot\nAllow: /\n\n"
        b"User-agent: BarBot\nContent-Signal: search=no\n"
    )
    # FooBot is named: the * group does not apply, and its own states nothing.
    prefs = robots.usage(URL + "/", "FooBot")
    assert (prefs.reason, prefs.stated) == ("no-statement", False)
    assert aipref(robots, "/", "Other")["train-ai"] == "disallow"
    assert signals(robots, "/", "barbot")["search"] == "disallow"


def test_repeated_groups_merge() -> None:
    robots = parse(
        b"User-agent: FooBot\nContent-Usage: train-ai=y\n"
        b"User-agent: Other\nDisallow: /private\n"
        b"User-agent: FooBot\nContent-Usage: train-ai=n\n"
    )
    assert aipref(robots, "/")["train-ai"] == "disallow"


def test_no_group_and_no_usage_lines() -> None:
    robots = parse(b"User-agent: BarBot\nContent-Usage: train-ai=n\n")
    assert robots.usage(URL + "/", TOKEN).reason == "no-group"
    plain = parse(b"User-agent: *\nDisallow: /x\n")
    assert plain.usage(URL + "/", TOKEN).reason == "no-statement"
    assert not plain.usage_summary().stated


def test_usage_line_ends_a_usage_group_but_access_groups_stay() -> None:
    # The reference parser (and so access) puts both agents in one group; for
    # usage, attach-05 makes the Content-Usage line a rule of FooBot's group.
    body = b"User-agent: FooBot\nContent-Usage: train-ai=n\nUser-agent: BarBot\nDisallow: /private\n"
    robots = parse(body)
    assert not robots.allowed(URL + "/private", "FooBot")
    assert robots.groups_for("FooBot") == (("FooBot", "BarBot"),)
    assert aipref(robots, "/", "FooBot")["train-ai"] == "disallow"
    assert aipref(robots, "/", "BarBot")["train-ai"] == "unknown"


def test_1994_first_record_naming_the_robot_wins() -> None:
    body = (
        b"User-agent: bot\nDisallow: /x\n\n"
        b"User-agent: FooBot\nContent-Usage: train-ai=n\n\n"
        b"User-agent: *\nContent-Usage: train-ai=y\n"
    )
    robots = parse(body, "1994")
    assert aipref(robots, "/", "FooBot")["train-ai"] == "unknown"  # "bot" is first
    assert aipref(robots, "/", "Spider")["train-ai"] == "allow"
    assert aipref(parse(body), "/", "FooBot")["train-ai"] == "disallow"  # rfc9309


def test_content_usage_matches_rfc9309_style_in_1994_mode() -> None:
    robots = parse(b"User-agent: *\nContent-Usage: /*.pdf train-ai=n\n", "1994")
    assert aipref(robots, "/a.pdf")["train-ai"] == "disallow"


def test_purpose_conflict_resolves_to_disallow() -> None:
    robots = parse(
        b"User-agent: *\nContent-Usage: train-ai=y\nContent-Signal: ai-train=no\n"
    )
    decision = robots.usage(URL + "/", TOKEN).decide("train-ai")
    assert (decision.value, decision.conflict) == ("disallow", True)
    assert [s.line for s in decision.sources] == [3]
    assert "conflict" in str(decision)
    search = robots.usage(URL + "/", TOKEN).decide("search")
    assert (search.value, search.conflict) == ("unknown", False)


def test_purpose_agreeing_vocabularies() -> None:
    robots = parse(
        b"User-agent: *\nContent-Usage: search=y\nContent-Signal: search=yes\n"
    )
    decision = robots.usage(URL + "/", TOKEN).decide("search")
    assert (decision.value, decision.conflict) == ("allow", False)
    assert [s.line for s in decision.sources] == [2, 3]
    ai_input = robots.usage(URL + "/", TOKEN).decide("ai-input")
    assert ai_input.value == "unknown"
    with pytest.raises(ValueError, match="unknown usage purpose"):
        robots.usage(URL + "/", TOKEN).decide("scraping")


def test_header_disallow_overrides_robots_allow() -> None:
    robots = parse(b"User-agent: *\nContent-Usage: train-ai=y\n")
    prefs = robots.usage(URL + "/", TOKEN).with_headers(content_usage=[b"train-ai=n"])
    assert prefs.aipref["train-ai"].value == "disallow"
    (source,) = prefs.aipref["train-ai"].sources
    assert (source.origin, source.line) == ("header", None)
    assert str(source) == 'header "Content-Usage: train-ai=n"'


def test_header_allow_cannot_lift_robots_disallow() -> None:
    robots = parse(b"User-agent: *\nContent-Usage: train-ai=n\n")
    prefs = robots.usage(URL + "/", TOKEN).with_headers(content_usage=[b"train-ai=y"])
    assert prefs.aipref["train-ai"].value == "disallow"
    assert [s.line for s in prefs.aipref["train-ai"].sources] == [2]


def test_header_field_lines_join_then_parse_once() -> None:
    prefs = UsagePreferences.unknown().with_headers(
        content_usage=[b"train-ai=n", b"", b" train-ai=y "],
        content_signal=["ai-input=no"],
    )
    assert prefs.aipref["train-ai"].value == "allow"  # a later duplicate wins
    assert prefs.content_signal["ai-input"].value == "disallow"
    assert prefs.sources[0].value == "train-ai=n, train-ai=y"
    assert prefs.reason == "no-robots-txt"


def test_header_parse_failure_adds_nothing() -> None:
    robots = parse(b"User-agent: *\nContent-Usage: train-ai=y\n")
    prefs = robots.usage(URL + "/", TOKEN).with_headers(content_usage=[b"train-ai=n,"])
    assert prefs.aipref["train-ai"].value == "allow"
    assert prefs.sources[-1].error is not None


def test_no_headers_returns_the_same_object() -> None:
    prefs = UsagePreferences.unknown()
    assert prefs.with_headers() is prefs
    assert prefs.with_headers(content_usage=[b"  "]) is prefs


def test_unknown_helper() -> None:
    prefs = UsagePreferences.unknown()
    assert prefs.reason == "no-robots-txt"
    assert {p.value for p in prefs.aipref.values()} == {"unknown"}
    assert set(prefs.content_signal) == {"search", "ai-input", "ai-train"}
    assert prefs.decide("train-ai").value == "unknown"


def test_data_tables() -> None:
    assert USAGE_REVISIONS["attach"] == "draft-ietf-aipref-attach-05"
    assert USAGE_REVISIONS["vocab"] == "draft-ietf-aipref-vocab-08"
    assert set(USAGE_PURPOSES) == {"train-ai", "search", "ai-use"}


def test_bad_input_raises_value_error_like_allowed() -> None:
    robots = parse(ATTACH_EXAMPLE)
    with pytest.raises(ValueError, match="token"):
        robots.usage(URL + "/", "Foo Bot")
    with pytest.raises(ValueError, match="URL"):
        robots.usage("/relative", TOKEN)


def test_nothing_is_compiled_before_a_query_and_copies_share_the_table() -> None:
    robots = parse(ATTACH_EXAMPLE)
    table = robots._parsed.usage
    assert table is not None
    assert not table.read
    copy = robots.without_diagnostics()
    assert aipref(copy, "/ai-ok/")["train-ai"] == "allow"
    assert table.read
    assert RobotsTxt.parse(b"User-agent: *\nDisallow: /\n")._parsed.usage is None


def test_to_dict_is_json() -> None:
    robots = parse(ATTACH_EXAMPLE + b"Content-Signal: search=yes\n")
    document = robots.usage(URL + "/", TOKEN).with_headers(
        content_signal=[b"ai-train=no"]
    )
    text = json.dumps(document.to_dict())
    assert json.loads(text)["content_signal"]["ai-train"]["value"] == "disallow"


def test_cli_explain_shows_usage_with_escaped_sources(
    tmp_path: object, capsys: pytest.CaptureFixture[str]
) -> None:
    from pathlib import Path

    path = Path(str(tmp_path)) / "robots.txt"
    path.write_bytes(ATTACH_EXAMPLE + b"Content-Signal: search=yes, x=\x1b[31m\n")
    status = main([str(path), TOKEN, URL + "/ai-ok/x", URL + "/never/", "--explain"])
    out = capsys.readouterr().out
    assert status == 1
    said = (
        "usage (Content-Usage): train-ai=allow (line 5), ai-use=unknown, search=unknown"
    )
    assert said in out
    assert "usage read as draft-ietf-aipref-vocab-08" in out
    assert 'line 5 "Content-Usage: /ai-ok/ train-ai=y"' in out
    assert "usage: none (a URL that may not be crawled carries no preferences)" in out
    assert "\x1b" not in out
    assert "\\x1b[31m" in out
    main([str(path), TOKEN, URL + "/ai-ok/x", "--json"])
    document = json.loads(capsys.readouterr().out)
    usage = document["results"][0]["usage"]
    assert usage["aipref"]["train-ai"]["value"] == "allow"
    assert usage["aipref"]["train-ai"]["sources"][0]["line"] == 5
    assert document["usage_lines"]["content_usage"] == 2


def test_cli_without_usage_lines_prints_as_before(
    tmp_path: object, capsys: pytest.CaptureFixture[str]
) -> None:
    from pathlib import Path

    path = Path(str(tmp_path)) / "robots.txt"
    path.write_bytes(b"User-agent: *\nDisallow: /x\n")
    main([str(path), TOKEN, URL + "/", "--explain"])
    assert "usage" not in capsys.readouterr().out


# -- bounds on hostile files (issue 16) ------------------------------------------------


def _kept_after_queries(body: bytes, tokens: tuple[str, ...]) -> tuple[int, RobotsTxt]:
    import gc
    import tracemalloc

    gc.collect()
    tracemalloc.start()
    try:
        robots = RobotsTxt.parse(body).without_diagnostics()
        for token in tokens:
            robots.usage("http://a.example/p5/q", token)
        gc.collect()
        kept = tracemalloc.get_traced_memory()[0]
    finally:
        tracemalloc.stop()
    return kept, robots


@pytest.mark.parametrize(
    "line",
    [b"Content-Signal: ai-train=no, x%d=no\n", b"Content-Usage: /p%d/* train-ai=n\n"],
)
def test_a_file_of_many_usage_lines_states_nothing_and_keeps_little(
    line: bytes,
) -> None:
    body = (b"User-agent: *\n" + b"".join(line % n for n in range(20_000)))[:512_000]
    robots = RobotsTxt.parse(body)
    said = robots.usage_summary()
    assert (said.content_usage, said.content_signal, said.stated) == (0, 0, False)
    assert said.invalid > 10_000
    assert any("more than 64" in str(d) for d in robots.diagnostics)
    preferences = robots.usage("http://a.example/p5/q", "Bot")
    assert not preferences.stated
    kept, robots = _kept_after_queries(body, ("Bot", "Other"))
    # Counts only: a few KiB, where reading every line would keep megabytes.
    assert kept < 16 * 1024
    assert robots.memory_bytes() < 16 * 1024


def test_usage_lines_under_the_cap_are_counted_from_above() -> None:
    lines = b"".join(
        b"Content-Signal: ai-train=no, x%d=no\nContent-Usage: /p%d/*$ train-ai=n\n"
        % (n, n)
        for n in range(32)
    )
    body = b"User-agent: *\n" + lines
    tokens = tuple(f"Bot{chr(97 + n)}" for n in range(20))
    kept, robots = _kept_after_queries(body, tokens)
    assert robots.usage_summary().stated
    # Each line read for a query keeps about 1 KiB: 64 lines, 20 tokens.
    assert kept < 160 * 1024
    assert robots.memory_bytes() >= kept


def test_a_long_header_value_is_shown_cut() -> None:
    """A drop line names its sources; an 8 KB header must not make it 8 KB
    (issue 27, point 3)."""
    from scrapy_robots_std.usage.preferences import UsageSource

    source = UsageSource("header", "Content-Usage", "train-ai=n, " + "x" * 8000)
    text = str(source)
    assert len(text) < 260
    assert text.startswith('header "Content-Usage: train-ai=n, xxx')
    assert text.endswith('..."')
    assert str(UsageSource("header", "Content-Usage", "train-ai=n")) == (
        'header "Content-Usage: train-ai=n"'
    )
