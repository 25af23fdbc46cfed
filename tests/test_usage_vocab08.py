"""AIPREF vocab-08 and file-wide usage lines (issue 25, points 1 and 2).

vocab-08 (draft-ietf-aipref-vocab-08, 14 September 2026) has three categories,
``train-ai`` (4.1), ``ai-use`` (4.2) and ``search`` (4.3), and no hierarchy (5): an
unstated category is unknown.  A usage line before the first group (1994: outside
any record) is file-wide: it speaks with every group, most restrictively.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

import pytest

from scrapy_robots_std import USAGE_PURPOSES, RobotsTxt, UsagePreferences
from scrapy_robots_std.cli import main
from scrapy_robots_std.robotstxt.usage_rules import MAX_USAGE_LINES
from tests.helpers import usage_vocab07 as vocab07

if TYPE_CHECKING:
    from pathlib import Path

URL = "https://example.com"
TOKEN = "FooBot"


def values(robots: RobotsTxt, path: str, token: str = TOKEN) -> dict[str, str]:
    """Every category of both vocabularies, as ``aipref:train-ai`` and so on."""
    prefs = robots.usage(URL + path, token)
    return {
        f"{name}:{category}": preference.value
        for name in ("aipref", "content-signal")
        for category, preference in prefs.table(name).items()
    }


def lines(prefs: UsagePreferences) -> list[int | None]:
    return [source.line for source in prefs.sources]


# -- vocab-08 --------------------------------------------------------------------------


def test_vocab_07_statements_read_as_before() -> None:
    """Files and headers with vocab-07 labels only: every answer (the values, their
    sources, the decisions, the explanation) is what the vocab-07 code gave,
    vocab-08's ai-use aside, which they leave unknown."""
    expected = vocab07.GOLDEN.read_text().split()
    found = list(vocab07.records())
    assert len(found) == len(expected)
    for (name, record), digest in zip(found, expected, strict=True):
        assert vocab07.digest(record) == digest, (name, json.dumps(record))


def test_vocab_08_has_three_categories_in_robots_txt_and_headers() -> None:
    robots = RobotsTxt.parse(
        b"User-agent: *\nContent-Usage: train-ai=y, ai-use=n, search=y\n"
    )
    prefs = robots.usage(URL + "/", TOKEN)
    assert list(prefs.aipref) == ["train-ai", "ai-use", "search"]
    assert {c: p.value for c, p in prefs.aipref.items()} == {
        "train-ai": "allow",
        "ai-use": "disallow",
        "search": "allow",
    }
    header = UsagePreferences.unknown().with_headers(content_usage=[b"ai-use=n"])
    assert header.aipref["ai-use"].value == "disallow"
    # A header "y" cannot lift a robots.txt "n".
    lifted = prefs.with_headers(content_usage=[b"ai-use=y"])
    assert lifted.aipref["ai-use"].value == "disallow"


@pytest.mark.parametrize(
    ("statement", "expected"),
    [
        # vocab-08 section 5: no category stands in for another.
        (b"train-ai=n", {"train-ai": "disallow", "ai-use": "unknown", "search": "unknown"}),
        (b"search=n", {"train-ai": "unknown", "ai-use": "unknown", "search": "disallow"}),
        (b"ai-use=n", {"train-ai": "unknown", "ai-use": "disallow", "search": "unknown"}),
        # Labels of earlier revisions are unknown labels (6.4), no parents.
        (b"bots=n, all=n, ai-output=n", {"train-ai": "unknown", "ai-use": "unknown", "search": "unknown"}),
        (b"AI-USE=n", {"train-ai": "unknown", "ai-use": "unknown", "search": "unknown"}),
        (b'ai-use="n", search', {"train-ai": "unknown", "ai-use": "unknown", "search": "unknown"}),
    ],
)  # fmt: skip
def test_an_unstated_category_is_unknown_never_another_s_value(
    statement: bytes, expected: dict[str, str]
) -> None:
    prefs = UsagePreferences.unknown().with_headers(content_usage=[statement])
    assert {c: p.value for c, p in prefs.aipref.items()} == expected


def test_the_purpose_ai_use_reads_aipref_ai_use_and_content_signals_ai_input() -> None:
    assert USAGE_PURPOSES["ai-use"] == (
        ("aipref", "ai-use"),
        ("content-signal", "ai-input"),
    )
    robots = RobotsTxt.parse(
        b"User-agent: *\nContent-Usage: ai-use=n\nContent-Signal: ai-input=yes\n"
    )
    prefs = robots.usage(URL + "/", TOKEN)
    decision = prefs.decide("ai-use")
    assert (decision.purpose, decision.value, decision.conflict) == (
        "ai-use",
        "disallow",
        True,
    )
    assert lines(prefs) == [2, 3]
    assert [source.line for source in decision.sources] == [2]
    # ai-input stays accepted: the same decision, under the purpose's own name.
    assert prefs.decide("ai-input") == decision
    # Either vocabulary alone decides.
    only_signal = UsagePreferences.unknown().with_headers(
        content_signal=[b"ai-input=no"]
    )
    assert only_signal.decide("ai-input").value == "disallow"
    only_usage = UsagePreferences.unknown().with_headers(content_usage=[b"ai-use=y"])
    assert only_usage.decide("ai-use").value == "allow"


def test_an_unknown_purpose_names_the_accepted_ones() -> None:
    with pytest.raises(ValueError, match="train-ai, search, ai-use, ai-input"):
        UsagePreferences.unknown().decide("ai-inference")


def test_search_does_not_lift_another_purpose() -> None:
    """vocab-08 4.3: a use that is Search is governed by ``search``.  The purpose a
    crawl declares says which use it is; ``search=y`` says nothing of training."""
    prefs = UsagePreferences.unknown().with_headers(
        content_usage=[b"train-ai=n, ai-use=n, search=y"]
    )
    assert prefs.decide("search").value == "allow"
    assert prefs.decide("train-ai").value == "disallow"
    assert prefs.decide("ai-use").value == "disallow"


def test_the_command_line_names_vocab_08(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "robots.txt"
    path.write_bytes(
        b"Content-Signal: ai-input=no\nUser-agent: *\nContent-Usage: ai-use=y\n"
    )
    assert main([str(path), TOKEN, URL + "/", "--explain"]) == 0
    out = capsys.readouterr().out
    assert "usage (Content-Usage): train-ai=unknown, ai-use=allow (line 3)" in out
    assert "ai-input=disallow (line 1)" in out
    assert (
        "usage read as draft-ietf-aipref-vocab-08 and draft-ietf-aipref-attach-05"
        in out
    )
    assert main([str(path), TOKEN, URL + "/", "--json"]) == 0
    document = json.loads(capsys.readouterr().out)
    assert document["usage_lines"]["revisions"]["vocab"] == "draft-ietf-aipref-vocab-08"
    assert document["usage_lines"]["outside_group"] == 1
    usage = document["results"][0]["usage"]
    assert usage["aipref"]["ai-use"]["value"] == "allow"
    assert usage["content_signal"]["ai-input"]["sources"][0]["line"] == 1


# -- file-wide lines ---------------------------------------------------------------------


def test_a_group_line_cannot_lift_a_file_wide_no() -> None:
    """The stricter reading: file-wide and group lines are two statements,
    combined most restrictively, not one list where the longest path wins."""
    robots = RobotsTxt.parse(
        b"Content-Usage: train-ai=n\n"
        b"User-agent: *\n"
        b"Content-Usage: /ai-ok/ train-ai=y, search=y\n"
    )
    prefs = robots.usage(URL + "/ai-ok/x", TOKEN)
    assert prefs.aipref["train-ai"].value == "disallow"
    assert prefs.aipref["search"].value == "allow"
    assert lines(prefs) == [1, 3]
    assert [s.line for s in prefs.aipref["train-ai"].sources] == [1]
    assert [s.line for s in prefs.aipref["search"].sources] == [3]
    # ... and a group's "n" stands against a file-wide "y".
    robots = RobotsTxt.parse(
        b"Content-Usage: train-ai=y\nUser-agent: *\nContent-Usage: train-ai=n\n"
    )
    assert values(robots, "/x")["aipref:train-ai"] == "disallow"


def test_file_wide_content_usage_paths_take_the_longest_among_themselves() -> None:
    robots = RobotsTxt.parse(
        b"Content-Usage: train-ai=n\n"
        b"Content-Usage: /open/ train-ai=y\n"
        b"Content-Usage: /open/ ai-use=n\n"
        b"User-agent: *\n"
        b"Allow: /\n"
    )
    open_ = robots.usage(URL + "/open/data", TOKEN)
    assert open_.aipref["train-ai"].value == "allow"
    assert open_.aipref["ai-use"].value == "disallow"
    assert lines(open_) == [2, 3]
    assert values(robots, "/closed")["aipref:train-ai"] == "disallow"


def test_file_wide_content_signal_lines_speak_for_every_group() -> None:
    robots = RobotsTxt.parse(
        b"# Managed content signals\n"
        b"Content-Signal: search=yes, ai-train=no\n"
        b"\n"
        b"User-agent: *\n"
        b"Allow: /\n"
        b"\n"
        b"User-agent: GPTBot\n"
        b"Content-Signal: ai-input=no\n"
        b"Disallow: /private/\n"
    )
    for token in (TOKEN, "GPTBot"):
        said = values(robots, "/", token)
        assert said["content-signal:search"] == "allow"
        assert said["content-signal:ai-train"] == "disallow"
    assert values(robots, "/", "GPTBot")["content-signal:ai-input"] == "disallow"
    assert values(robots, "/", TOKEN)["content-signal:ai-input"] == "unknown"
    # A URL that may not be crawled carries nothing, file-wide lines included.
    private = robots.usage(URL + "/private/x", "GPTBot")
    assert (private.reason, private.sources) == ("disallowed", ())


def test_file_wide_lines_speak_for_a_token_no_group_names() -> None:
    """Our choice: a crawler no group speaks for (no ``*`` group, not named) gets
    the file-wide lines too.  They state the site's preference for its content,
    for whoever reads the file, not a group's; a file of them alone says the same."""
    robots = RobotsTxt.parse(
        b"Content-Signal: ai-train=no\nUser-agent: Googlebot\nDisallow: /x\n"
    )
    prefs = robots.usage(URL + "/x", TOKEN)
    assert robots.allowed(URL + "/x", TOKEN)
    assert (prefs.reason, lines(prefs)) == ("rules", [1])
    assert prefs.content_signal["ai-train"].value == "disallow"
    alone = RobotsTxt.parse(b"Content-Usage: train-ai=n\n")
    assert alone.usage(URL + "/", TOKEN).decide("train-ai").value == "disallow"
    assert not alone.groups_for(TOKEN)
    # Where they state nothing for the URL, the reason stays that no group applies.
    scoped = RobotsTxt.parse(b"Content-Usage: /x train-ai=n\nUser-agent: Googlebot\n")
    assert scoped.usage(URL + "/y", TOKEN).reason == "no-group"
    assert scoped.usage(URL + "/y", "Googlebot").reason == "no-statement"


def test_1994_usage_lines_outside_any_record_are_file_wide() -> None:
    robots = RobotsTxt.parse(
        b"Content-Usage: train-ai=n\n"
        b"\n"
        b"User-agent: foo\n"
        b"Disallow: /x\n"
        b"\n"
        b"Content-Signal: ai-train=no\n"
        b"\n"
        b"User-agent: *\n"
        b"Content-Usage: search=n\n",
        "1994",
    )
    for token in ("foobot", "Other"):
        said = values(robots, "/", token)
        assert said["aipref:train-ai"] == "disallow"
        assert said["content-signal:ai-train"] == "disallow"
    assert values(robots, "/", "foobot")["aipref:search"] == "unknown"
    assert values(robots, "/", "Other")["aipref:search"] == "disallow"
    assert robots.diagnostics == ()
    assert robots.usage_summary().outside_group == 2


def test_a_value_repeated_in_a_group_is_listed_once() -> None:
    robots = RobotsTxt.parse(
        b"Content-Signal: ai-train=no\nUser-agent: *\nContent-Signal: ai-train=no\n"
    )
    assert lines(robots.usage(URL + "/", TOKEN)) == [1]


def test_file_wide_lines_count_toward_the_limit_and_invalid_ones_are_reported() -> None:
    body = b"Content-Signal: ai-train=no\n" * MAX_USAGE_LINES + b"User-agent: *\n"
    robots = RobotsTxt.parse(body + b"Content-Usage: search=n\n")
    prefs = robots.usage(URL + "/", TOKEN)
    assert not prefs.stated
    [note] = robots.diagnostics
    assert note.line == MAX_USAGE_LINES + 2
    assert note.kind == "usage-value-invalid"
    assert RobotsTxt.parse(body).usage(URL + "/", TOKEN).stated
    invalid = RobotsTxt.parse(b"Content-Usage: Train-AI=n\nUser-agent: *\n")
    assert [(d.line, d.kind) for d in invalid.diagnostics] == [
        (1, "usage-value-invalid")
    ]
    assert invalid.usage_summary().invalid == 1
