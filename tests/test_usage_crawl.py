"""AI usage preferences in real crawls (issue 18, points 3, 4 and 7; SPEC 6).

Two local origins state preferences in robots.txt, and some pages answer with
``Content-Usage`` headers. What the spider receives, what the server saw, the log
lines and the stats are checked for the edge cases of the research notes
(../shared/usage-prefs.md, last section) that need a crawl.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

import pytest
from scrapy import signals
from scrapy.utils.defer import deferred_f_from_coro_f

from scrapy_robots_std import PurposeDecision, UsagePreferences
from tests.helpers.crawl import (
    MW_LOGGER,
    LaterSpider,
    assert_no_errors,
    run_crawl,
    settings,
    stat,
)
from tests.helpers.server import Reply, Sequence

if TYPE_CHECKING:
    from tests.helpers.crawl import CrawlResult
    from tests.helpers.server import HostileServer

ROBOTS_A = b"""User-agent: *
Allow: /
Disallow: /never/
Content-Usage: train-ai=n
Content-Usage: /ai-ok/ train-ai=y
"""
ROBOTS_B = b"""Content-Signal: ai-train=yes
User-agent: *
Content-Usage: train-ai=y
Content-Signal: ai-train=no, search=yes, use=reference
"""
PAGE = b"<p>page</p>"
HTML = {"Content-Type": "text/html"}
DROP = {"ROBOTS_STD_USAGE_ENFORCE": "drop", "ROBOTS_STD_USAGE_PURPOSE": "train-ai"}


def serve(a: HostileServer, b: HostileServer | None = None) -> dict[str, str]:
    """The two demo origins; their page URLs by a short name."""
    a.add_route("/robots.txt", Reply(200, {}, ROBOTS_A))
    pages = {
        "a/test": Reply(200, HTML, PAGE),
        "a/ai-ok/page": Reply(200, HTML, PAGE),
        "a/ai-ok/header-n": Reply(200, {**HTML, "Content-Usage": "train-ai=n"}, PAGE),
        "a/header-y": Reply(200, {**HTML, "Content-Usage": "train-ai=y"}, PAGE),
        "a/never/x": Reply(200, HTML, PAGE),
    }
    urls = {}
    for name, reply in pages.items():
        path = name[1:]
        a.add_route(path, reply)
        urls[name] = a.url(path)
    if b is not None:
        b.add_route("/robots.txt", Reply(200, {}, ROBOTS_B))
        b.add_route("/page", Reply(200, HTML, PAGE))
        urls["b/page"] = b.url("/page")
    return urls


def received(result: CrawlResult) -> dict[str, dict[str, Any]]:
    """What reached the spider: each URL's request meta (the response's meta)."""
    return {
        url: request.meta
        for url, request in zip(result.responses, result.requests, strict=True)
    }


def served(server: HostileServer) -> set[str]:
    """The pages asked for: not robots.txt, nor TDMRep's tdmrep.json (fetched when a
    purpose is declared)."""
    files = ("/robots.txt", "/.well-known/tdmrep.json")
    return {r.path for r in server.requests if r.path not in files}


def usage_drops(result: CrawlResult) -> list[str]:
    return [
        m
        for m in result.messages(logger_prefix=MW_LOGGER)
        if "Forbidden by usage preference" in m
    ]


def value(meta: dict[str, Any], vocabulary: str, category: str) -> str:
    preferences = meta["robots_std_usage"]
    assert isinstance(preferences, UsagePreferences)
    return preferences.table(vocabulary)[category].value


# -- exposure (enforcement off, the default) -----------------------------------------


@pytest.mark.crawl
@deferred_f_from_coro_f
async def test_every_response_carries_its_preferences_and_nothing_is_dropped(
    hostile: HostileServer, hostile_b: HostileServer
) -> None:
    urls = serve(hostile, hostile_b)
    parsed: list[Any] = []

    def on_parsed(robotparser: Any, **_: Any) -> None:
        parsed.append(robotparser.usage_summary())

    result = await run_crawl(
        urls.values(),
        settings(),
        on_crawler=lambda crawler: crawler.signals.connect(
            on_parsed, signal=signals.robots_parsed, weak=False
        ),
    )
    assert_no_errors(result)
    # The robots_parsed signal tells which files state preferences.
    assert sorted((p.content_usage, p.content_signal, p.stated) for p in parsed) == [
        (1, 2, True),
        (2, 0, True),
    ]
    got = received(result)
    # Access is untouched: only the Disallow rule drops.
    assert set(got) == set(urls.values()) - {urls["a/never/x"]}
    assert stat(result, "robots_std/dropped/rule") == 1
    # The longest matching Content-Usage path wins; not combined with "/".
    assert value(got[urls["a/test"]], "aipref", "train-ai") == "disallow"
    assert value(got[urls["a/ai-ok/page"]], "aipref", "train-ai") == "allow"
    # A header "n" overrides a robots.txt "y"; a header "y" cannot lift an "n".
    assert value(got[urls["a/ai-ok/header-n"]], "aipref", "train-ai") == "disallow"
    assert value(got[urls["a/header-y"]], "aipref", "train-ai") == "disallow"
    # The Content-Signal group line; use=reference kept raw, with no effect.
    meta_b = got[urls["b/page"]]
    assert value(meta_b, "content-signal", "ai-train") == "disallow"
    assert value(meta_b, "content-signal", "search") == "allow"
    assert "use=reference" in str(meta_b["robots_std_usage"].to_dict())
    # The line before the group is file-wide: one of the sources, its yes no lift.
    assert [s.line for s in meta_b["robots_std_usage"].sources] == [3, 1, 4]
    # Off: no decision is recorded.
    assert all("robots_std_usage_decision" not in meta for meta in got.values())
    # Rules seen: A has 2 Content-Usage lines; B 1 and 2 (1 of them file-wide).
    assert stat(result, "robots_std/usage/rules/content_usage") == 3
    assert stat(result, "robots_std/usage/rules/content_signal") == 2
    assert stat(result, "robots_std/usage/outside_group") == 1
    assert stat(result, "robots_std/usage/origins") == 2
    assert stat(result, "robots_std/usage/header_seen") == 2
    summary = next(
        m for m in result.messages(logger_prefix=MW_LOGGER) if "states AI" in m
    )
    assert f"http://127.0.0.1:{hostile.port}" in summary
    assert f"http://127.0.0.1:{hostile_b.port}" in summary


# -- drop ----------------------------------------------------------------------------


@pytest.mark.crawl
@deferred_f_from_coro_f
async def test_drop_refuses_before_sending_and_after_a_header_says_no(
    hostile: HostileServer, hostile_b: HostileServer
) -> None:
    urls = serve(hostile, hostile_b)
    result = await run_crawl(urls.values(), settings(**DROP))
    assert_no_errors(result)
    # Only /ai-ok/page says yes to train-ai, and no header takes it back.
    assert set(received(result)) == {urls["a/ai-ok/page"]}
    # robots.txt's "no" is final before sending: those never reached the server.
    assert served(hostile) == {"/ai-ok/page", "/ai-ok/header-n"}
    assert served(hostile_b) == set()  # the conflict resolved to no, before sending
    assert stat(result, "robots_std/dropped/usage") == 3  # /test, /header-y, b/page
    assert stat(result, "robots_std/dropped/usage-header") == 1  # /ai-ok/header-n
    assert stat(result, "robots_std/dropped/rule") == 1
    assert stat(result, "robots_std/usage/conflict") == 1
    assert stat(result, "robots_std/usage/decision/train-ai/disallow") == 4
    assert stat(result, "robots_std/usage/decision/train-ai/allow") == 1
    lines = usage_drops(result)
    assert len(lines) == 4
    by_robots = next(line for line in lines if "/test>" in line)
    assert 'line 4 "Content-Usage: train-ai=n"' in by_robots
    assert f"http://127.0.0.1:{hostile.port}/robots.txt" in by_robots
    by_header = next(line for line in lines if "header-n" in line)
    assert "Content-Usage" in by_header
    assert "response headers" in by_header
    conflict = next(line for line in lines if f":{hostile_b.port}/page" in line)
    assert "conflict" in conflict
    assert "Content-Signal" in conflict
    # The errback got the package's IgnoreRequest with the decision.
    failures = [f for f in result.failures if "usage preference" in str(f)]
    assert len(failures) == 4
    assert all(
        isinstance(getattr(f, "decision", None), PurposeDecision) for f in failures
    )
    # The summary counts the usage drops with the others.
    summary = next(
        m for m in result.messages(logger_prefix=MW_LOGGER) if "dropped (" in m
    )
    assert "usage: 3" in summary
    assert "usage-header: 1" in summary


@pytest.mark.crawl
@deferred_f_from_coro_f
async def test_a_redirect_gets_the_final_urls_preferences(
    hostile: HostileServer, hostile_b: HostileServer
) -> None:
    urls = serve(hostile)
    hostile_b.add_route("/robots.txt", Reply(404))  # no preferences here
    hostile_b.add_route("/go", Reply(302, {"Location": urls["a/test"]}))
    hostile_b.add_route("/stay", Reply(200, HTML, PAGE))
    result = await run_crawl(
        [hostile_b.url("/go"), hostile_b.url("/stay")], settings(**DROP)
    )
    assert_no_errors(result)
    # The final URL's robots.txt said no: the redirected request was not sent.
    assert served(hostile) == set()
    assert set(received(result)) == {hostile_b.url("/stay")}
    assert stat(result, "robots_std/dropped/usage") == 1
    # A 404 robots.txt states nothing: unknown, allowed by default.
    meta = received(result)[hostile_b.url("/stay")]
    assert meta["robots_std_usage"].reason == "no-robots-txt"
    assert meta["robots_std_usage_decision"].value == "unknown"


@pytest.mark.crawl
@deferred_f_from_coro_f
async def test_unknown_is_denied_when_asked(
    hostile: HostileServer, hostile_b: HostileServer
) -> None:
    serve(hostile)
    hostile_b.add_route("/robots.txt", Reply(404))
    hostile_b.add_route("/page", Reply(200, HTML, PAGE))
    result = await run_crawl(
        [hostile_b.url("/page")], settings(**DROP, ROBOTS_STD_USAGE_UNKNOWN="deny")
    )
    assert_no_errors(result)
    # Unknown can only be judged once the headers are in: sent, then dropped.
    assert served(hostile_b) == {"/page"}
    assert received(result) == {}
    assert stat(result, "robots_std/dropped/usage-unknown") == 1
    assert "ROBOTS_STD_USAGE_UNKNOWN is deny" in usage_drops(result)[0]


@pytest.mark.crawl
@deferred_f_from_coro_f
async def test_dont_obey_robotstxt_keeps_header_preferences(
    hostile: HostileServer,
) -> None:
    urls = serve(hostile)
    result = await run_crawl(
        [urls["a/test"], urls["a/ai-ok/header-n"]],
        settings(**DROP),
        meta={"dont_obey_robotstxt": True},
    )
    assert_no_errors(result)
    # robots.txt is not consulted: its "no" for /test is unknown here ...
    got = received(result)
    assert set(got) == {urls["a/test"]}
    assert got[urls["a/test"]]["robots_std_usage"].reason == "no-robots-txt"
    assert value(got[urls["a/test"]], "aipref", "train-ai") == "unknown"
    # ... but a header's "no" still counts.
    assert stat(result, "robots_std/dropped/usage-header") == 1
    assert stat(result, "robotstxt/request_count") is None


# -- tag, the per-request purpose, dry run ----------------------------------------------


@pytest.mark.crawl
@deferred_f_from_coro_f
async def test_tag_records_decisions_and_drops_nothing(
    hostile: HostileServer, hostile_b: HostileServer
) -> None:
    urls = serve(hostile, hostile_b)
    result = await run_crawl(
        urls.values(),
        settings(ROBOTS_STD_USAGE_ENFORCE="tag", ROBOTS_STD_USAGE_PURPOSE="train-ai"),
    )
    assert_no_errors(result)
    got = received(result)
    assert len(got) == len(urls) - 1  # only the Disallow rule dropped
    decisions = {url: meta["robots_std_usage_decision"] for url, meta in got.items()}
    assert decisions[urls["a/ai-ok/page"]].value == "allow"
    assert decisions[urls["a/test"]].value == "disallow"
    assert decisions[urls["b/page"]].conflict
    assert usage_drops(result) == []
    assert stat(result, "robots_std/usage/decision/train-ai/disallow") == 4


@pytest.mark.crawl
@pytest.mark.parametrize(
    ("declared", "purpose", "value"),
    [
        # search=yes in B's Content-Signal: allowed for this request's purpose.
        ("search", "search", "allow"),
        # ai-input is ai-use: B says nothing of either (unknown, allowed).
        (" AI-Input", "ai-use", "unknown"),
    ],
)
@deferred_f_from_coro_f
async def test_a_request_may_declare_its_own_purpose(
    hostile: HostileServer,
    hostile_b: HostileServer,
    declared: str,
    purpose: str,
    value: str,
) -> None:
    urls = serve(hostile, hostile_b)
    result = await run_crawl(
        [urls["b/page"]],
        settings(**DROP),
        meta={"robots_std_usage_purpose": declared},
    )
    assert_no_errors(result)
    [meta] = received(result).values()
    assert meta["robots_std_usage_decision"].purpose == purpose
    assert meta["robots_std_usage_decision"].value == value
    assert stat(result, f"robots_std/usage/decision/{purpose}/{value}") == 1


@pytest.mark.crawl
@deferred_f_from_coro_f
async def test_dry_run_counts_usage_drops_without_dropping(
    hostile: HostileServer,
) -> None:
    urls = serve(hostile)
    result = await run_crawl(
        [urls["a/test"], urls["a/ai-ok/header-n"]],
        settings(**DROP, ROBOTS_STD_DRY_RUN=True),
    )
    assert_no_errors(result)
    assert set(received(result)) == {urls["a/test"], urls["a/ai-ok/header-n"]}
    assert stat(result, "robots_std/would_drop/usage") == 1
    assert stat(result, "robots_std/would_drop/usage-header") == 1
    assert stat(result, "robots_std/dropped/usage") is None


@pytest.mark.crawl
@deferred_f_from_coro_f
async def test_a_later_robots_txt_does_not_change_what_a_response_recorded(
    hostile: HostileServer, hostile_b: HostileServer
) -> None:
    """attach-05 3.3: the robots.txt current when a resource is fetched applies."""
    hostile.add_route(
        "/robots.txt",
        Sequence(
            Reply(200, {}, b"User-agent: *\nContent-Usage: train-ai=n\n"),
            Reply(200, {}, b"User-agent: *\nContent-Usage: train-ai=y\n"),
        ),
    )
    hostile.add_route("/early", Reply(200, HTML, PAGE))
    hostile.add_route("/late", Reply(200, HTML, PAGE))
    # The other origin's page takes longer than the 2 s a fresh verdict stands.
    hostile_b.add_route("/slow", Reply(200, HTML, PAGE, delay=2.5))
    result = await run_crawl(
        [],
        settings(ROBOTS_STD_CACHE_TTL=0, ROBOTS_STD_CACHE_MIN_TTL=0),
        spider_cls=LaterSpider,
        spider_kwargs={
            "first": (hostile.url("/early"),),
            "later": (hostile.url("/late"),),
            "slow": hostile_b.url("/slow"),
        },
    )
    assert_no_errors(result)
    assert len(hostile.requests_for("/robots.txt")) == 2
    got = received(result)
    assert value(got[hostile.url("/early")], "aipref", "train-ai") == "disallow"
    assert value(got[hostile.url("/late")], "aipref", "train-ai") == "allow"


# -- what a review found -------------------------------------------------------------


@pytest.mark.crawl
@deferred_f_from_coro_f
async def test_a_dry_run_counts_a_disallowed_url_once(hostile: HostileServer) -> None:
    hostile.add_route("/robots.txt", Reply(200, {}, b"User-agent: *\nDisallow: /x\n"))
    hostile.add_route("/x", Reply(200, {**HTML, "Content-Usage": "train-ai=n"}, PAGE))
    result = await run_crawl(
        [hostile.url("/x")],
        settings(**DROP, ROBOTS_STD_USAGE_UNKNOWN="deny", ROBOTS_STD_DRY_RUN=True),
    )
    assert_no_errors(result)
    # Sent (a dry run), and counted once, as the Disallow rule's.
    assert stat(result, "robots_std/would_drop/rule") == 1
    assert not any("usage" in key for key in result.stats if "drop" in key)
    summary = next(
        m for m in result.messages(logger_prefix=MW_LOGGER) if "dropped" in m
    )
    assert "1 request(s) would have been dropped (rule: 1)" in summary


@pytest.mark.crawl
@deferred_f_from_coro_f
async def test_an_unchecked_request_does_not_inherit_its_parents_preferences(
    hostile: HostileServer,
) -> None:
    urls = serve(hostile)
    parents = UsagePreferences.combine("rules", ()).with_headers(["train-ai=n"])
    result = await run_crawl(
        [urls["a/ai-ok/page"]],
        settings(**DROP),
        # As response.follow(..., meta=response.meta) would copy them.
        meta={"dont_obey_robotstxt": True, "robots_std_usage": parents},
    )
    assert_no_errors(result)
    [meta] = received(result).values()
    assert meta["robots_std_usage"].reason == "no-robots-txt"
    assert meta["robots_std_usage_decision"].value == "unknown"


@pytest.mark.crawl
@pytest.mark.parametrize("purpose", [["train-ai"], "training"])
@deferred_f_from_coro_f
async def test_a_bad_purpose_in_meta_is_one_warning_and_no_decision(
    hostile: HostileServer, purpose: object
) -> None:
    urls = serve(hostile)
    result = await run_crawl(
        [urls["a/test"], urls["a/ai-ok/page"]],
        settings(ROBOTS_STD_USAGE_ENFORCE="drop"),
        meta={"robots_std_usage_purpose": purpose},
    )
    assert_no_errors(result)
    assert len(received(result)) == 2  # no purpose, no drop
    warnings = [
        m
        for m in result.messages(level=logging.WARNING, logger_prefix=MW_LOGGER)
        if "is not a usage purpose" in m
    ]
    assert len(warnings) == 1
    assert stat(result, "robots_std/usage/bad_purpose") >= 2


@pytest.mark.crawl
@deferred_f_from_coro_f
async def test_a_drop_line_names_a_few_of_many_sources(hostile: HostileServer) -> None:
    lines = b"".join(b"Content-Signal: ai-train=no, x%d=no\n" % n for n in range(40))
    hostile.add_route("/robots.txt", Reply(200, {}, b"User-agent: *\n" + lines))
    hostile.add_route("/p", Reply(200, HTML, PAGE))
    result = await run_crawl([hostile.url("/p")], settings(**DROP))
    assert_no_errors(result)
    [line] = usage_drops(result)
    assert "(and 37 more)" in line
    assert len(line) < 1000


# -- a hostile file's usage lines (issue 27, point 6) ----------------------------------


@pytest.mark.crawl
@deferred_f_from_coro_f
async def test_a_usage_query_past_its_budget_is_counted_and_named_in_a_drop(
    hostile: HostileServer,
) -> None:
    from tests.helpers.bodies import USAGE_SHAPES, usage_wildcards

    SHAPE = USAGE_SHAPES[0]
    hostile.add_route("/robots.txt", Reply(200, {}, usage_wildcards()))
    path = SHAPE.path(2_000)
    hostile.add_route(path, Reply(200, HTML, PAGE))
    # Enforcement off (the default): exposed and counted, nothing dropped.
    result = await run_crawl([hostile.url(path)], settings())
    assert_no_errors(result)
    [meta] = received(result).values()
    assert meta["robots_std_usage"].reason == "too-complex"
    assert value(meta, "aipref", "train-ai") == "unknown"
    assert stat(result, "robots_std/usage/too_complex") == 1
    # Unknown denied: sent (robots.txt allows it), then dropped, saying why.
    result = await run_crawl(
        [hostile.url(path)], settings(**DROP, ROBOTS_STD_USAGE_UNKNOWN="deny")
    )
    assert_no_errors(result)
    assert received(result) == {}
    assert stat(result, "robots_std/usage/too_complex") == 1
    assert stat(result, "robots_std/usage/decision/train-ai/unknown") == 1
    assert stat(result, "robots_std/dropped/usage-unknown") == 1
    [line] = usage_drops(result)
    assert "Content-Usage paths take more work than one check may" in line
    assert "ROBOTS_STD_USAGE_UNKNOWN is deny" in line


@pytest.mark.crawl
@deferred_f_from_coro_f
async def test_a_file_without_usage_lines_is_never_queried_for_usage(
    hostile: HostileServer,
) -> None:
    from unittest import mock

    from scrapy_robots_std import RobotsTxt

    hostile.add_route("/robots.txt", Reply(200, {}, b"User-agent: *\nDisallow: /x\n"))
    hostile.add_route("/page", Reply(200, HTML, PAGE))
    # One attribute test per request (has_usage_rules), then a shared answer.
    with mock.patch.object(RobotsTxt, "usage", side_effect=AssertionError("queried")):
        result = await run_crawl([hostile.url("/page")], settings())
    assert_no_errors(result)
    [meta] = received(result).values()
    assert meta["robots_std_usage"].reason == "no-statement"
