"""TDMRep's ``/.well-known/tdmrep.json`` in real crawls (issue 25, point 4).

A local origin serves a robots.txt, pages and a tdmrep.json; the crawl declares a
purpose (or not). What the server saw (the file fetched once, or never), what
reached the spider, the drop lines, stats and ``meta`` are checked. The suite runs
these crawls under asyncio and again under Twisted's default reactor (``crawl``).
"""

from __future__ import annotations

import json
import time
from typing import TYPE_CHECKING, Any

import pytest
from scrapy.utils.defer import deferred_f_from_coro_f

from scrapy_robots_std import UsageDisallowed
from tests.helpers.crawl import MW_LOGGER, assert_no_errors, run_crawl, settings, stat
from tests.helpers.server import Reply

if TYPE_CHECKING:
    from pathlib import Path

    from tests.helpers.crawl import CrawlResult
    from tests.helpers.server import HostileServer

pytestmark = pytest.mark.crawl

WELL_KNOWN = "/.well-known/tdmrep.json"
HTML = {"Content-Type": "text/html; charset=utf-8"}
JSON = {"Content-Type": "application/json"}
DROP = {"ROBOTS_STD_USAGE_ENFORCE": "drop"}
PAGES = ("/private/a", "/private/b", "/open/c")
RULES = [
    {
        "location": "/private/*",
        "tdm-reservation": 1,
        "tdm-policy": "https://p.example/",
    },
    {"location": "/", "tdm-reservation": 0},
]


def serve(
    server: HostileServer, tdm: Any = None, *, page_headers: Any = None
) -> list[str]:
    """robots.txt, the pages, and ``tdm`` at the well-known path (a Reply, a JSON
    value, or ``None``: a 404)."""
    server.add_route("/robots.txt", Reply(200, {}, b"User-agent: *\nAllow: /\n"))
    for path in PAGES:
        server.add_route(
            path, Reply(200, {**HTML, **(page_headers or {})}, b"<p>x</p>")
        )
    if isinstance(tdm, Reply):
        server.add_route(WELL_KNOWN, tdm)
    elif tdm is not None:
        server.add_route(WELL_KNOWN, Reply(200, JSON, json.dumps(tdm).encode()))
    return [server.url(path) for path in PAGES]


def file_fetches(server: HostileServer) -> int:
    return len(server.requests_for(WELL_KNOWN))


def served(result: CrawlResult) -> list[str]:
    return sorted(
        url.rsplit("/", 2)[-2] + "/" + url.rsplit("/", 1)[1] for url in result.responses
    )


def usage_drops(result: CrawlResult) -> list[str]:
    return [
        m
        for m in result.messages(logger_prefix=MW_LOGGER)
        if "Forbidden by usage preference" in m
    ]


def file_stats(result: CrawlResult) -> dict[str, Any]:
    prefix = "robots_std/tdm/file/"
    return {
        k[len(prefix) :]: v for k, v in result.stats.items() if k.startswith(prefix)
    }


@pytest.mark.parametrize("purpose", ["train-ai", "ai-use"])
@deferred_f_from_coro_f
async def test_a_file_reservation_drops_the_request_before_it_is_sent(
    hostile: HostileServer, purpose: str
) -> None:
    urls = serve(hostile, RULES)
    result = await run_crawl(urls, settings(**DROP, ROBOTS_STD_USAGE_PURPOSE=purpose))
    assert_no_errors(result)
    assert served(result) == ["open/c"]
    # Never sent: the server saw no request for the reserved pages.
    assert not hostile.requests_for("/private/a")
    assert not hostile.requests_for("/private/b")
    assert file_fetches(hostile) == 1
    assert stat(result, "robots_std/dropped/usage-tdm-file") == 2
    assert file_stats(result) == {"requests": 1, "fetched": 1}
    port = hostile.port
    assert sorted(usage_drops(result)) == [
        f"Forbidden by usage preference: <GET http://127.0.0.1:{port}/private/{p}>: "
        f"disallow for {purpose} by tdmrep.json rule 0 (location '/private/*') "
        f'"tdm-reservation: 1" in http://127.0.0.1:{port}{WELL_KNOWN}'
        for p in "ab"
    ]
    assert all(isinstance(f, UsageDisallowed) for f in result.failures)
    summary = next(
        m for m in result.messages(logger_prefix=MW_LOGGER) if "dropped (" in m
    )
    assert "usage-tdm-file: 2" in summary
    # The rule that lets /open/c through is on its meta, and decided the response.
    (request,) = result.requests
    said = request.meta["robots_std_tdm"]
    assert (said.reservation, said.statement.origin, said.statement.rule) == (
        0,
        "tdmrep.json",
        1,
    )
    assert stat(result, "robots_std/tdm/from/file") == 1


@deferred_f_from_coro_f
async def test_search_is_never_affected_and_the_policy_is_exposed(
    hostile: HostileServer,
) -> None:
    urls = serve(hostile, RULES)
    result = await run_crawl(urls, settings(**DROP, ROBOTS_STD_USAGE_PURPOSE="search"))
    assert_no_errors(result)
    assert len(result.responses) == len(PAGES)
    assert not any(k.startswith("robots_std/dropped/") for k in result.stats)
    policies = {
        r.url.rsplit("/", 1)[1]: r.meta["robots_std_tdm"].policy
        for r in result.requests
    }
    assert policies == {"a": "https://p.example/", "b": "https://p.example/", "c": None}
    # Exposed, never fetched.
    assert not [r for r in hostile.requests if r.path.startswith("/p.example")]


@deferred_f_from_coro_f
async def test_a_zero_lets_requests_through_and_the_file_is_fetched_once(
    hostile: HostileServer, tmp_path: Path
) -> None:
    urls = serve(hostile, [{"location": "/", "tdm-reservation": 0}])
    stored = settings(
        **DROP,
        ROBOTS_STD_USAGE_PURPOSE="train-ai",
        ROBOTS_STD_CACHE_BACKEND="scrapy_robots_std.cache.SqliteCache",
        ROBOTS_STD_CACHE_PATH=str(tmp_path / "cache.sqlite"),
    )
    result = await run_crawl(urls, stored)
    assert_no_errors(result)
    assert len(result.responses) == len(PAGES)
    assert file_fetches(hostile) == 1
    assert stat(result, "robots_std/usage/decision/train-ai/allow") == len(PAGES)
    # A second crawl finds it in the SQLite store: not fetched again.
    again = await run_crawl(urls, stored)
    assert_no_errors(again)
    assert len(again.responses) == len(PAGES)
    assert file_fetches(hostile) == 1
    assert stat(again, "robots_std/usage/decision/train-ai/allow") == len(PAGES)


@deferred_f_from_coro_f
async def test_a_missing_file_is_unset(hostile: HostileServer) -> None:
    urls = serve(hostile, None)
    result = await run_crawl(
        urls, settings(**DROP, ROBOTS_STD_USAGE_PURPOSE="train-ai")
    )
    assert_no_errors(result)
    assert len(result.responses) == len(PAGES)
    assert file_fetches(hostile) == 1
    assert file_stats(result) == {"requests": 1, "missing": 1}
    assert stat(result, "robots_std/usage/decision/train-ai/unknown") == len(PAGES)
    assert all(r.meta["robots_std_tdm"].reservation is None for r in result.requests)


@deferred_f_from_coro_f
async def test_no_purpose_never_fetches_the_file(hostile: HostileServer) -> None:
    urls = serve(hostile, RULES)
    result = await run_crawl(urls, settings(**DROP))
    assert_no_errors(result)
    assert len(result.responses) == len(PAGES)
    assert file_fetches(hostile) == 0
    assert file_stats(result) == {}


@deferred_f_from_coro_f
async def test_a_purpose_in_a_request_meta_fetches_the_file(
    hostile: HostileServer,
) -> None:
    urls = serve(hostile, RULES)
    result = await run_crawl(
        urls, settings(**DROP), meta={"robots_std_usage_purpose": "train-ai"}
    )
    assert_no_errors(result)
    assert served(result) == ["open/c"]
    assert file_fetches(hostile) == 1
    assert stat(result, "robots_std/dropped/usage-tdm-file") == 2


@deferred_f_from_coro_f
async def test_a_10_mb_file_is_capped_unset_and_counted(hostile: HostileServer) -> None:
    huge = b"[" + b'{"location": "/", "tdm-reservation": 1},' * 260_000 + b"{}]"
    assert len(huge) > 10_000_000
    urls = serve(hostile, Reply(200, JSON, huge))
    started = time.monotonic()
    result = await run_crawl(
        urls, settings(**DROP, ROBOTS_STD_USAGE_PURPOSE="train-ai"), timeout=30
    )
    assert time.monotonic() - started < 20
    assert_no_errors(result)
    assert len(result.responses) == len(PAGES)  # unset: nothing reserved
    assert file_stats(result) == {"requests": 1, "malformed": 1, "too_large": 1}
    (line,) = [
        m for m in result.messages(logger_prefix=MW_LOGGER) if "TDMRep file" in m
    ]
    assert "over the 512,000-byte limit" in line


@deferred_f_from_coro_f
async def test_a_file_that_redirects_is_followed(hostile: HostileServer) -> None:
    urls = serve(hostile, Reply(301, {"Location": "/moved/tdmrep.json"}))
    hostile.add_route(
        "/moved/tdmrep.json", Reply(200, JSON, json.dumps(RULES).encode())
    )
    result = await run_crawl(
        urls, settings(**DROP, ROBOTS_STD_USAGE_PURPOSE="train-ai")
    )
    assert_no_errors(result)
    assert served(result) == ["open/c"]
    assert len(hostile.requests_for("/moved/tdmrep.json")) == 1
    assert file_stats(result) == {"requests": 2, "fetched": 1}


@deferred_f_from_coro_f
async def test_a_slow_file_holds_requests_no_longer_than_the_budget(
    hostile: HostileServer,
) -> None:
    urls = serve(hostile, Reply(200, JSON, json.dumps(RULES).encode(), delay=5.0))
    started = time.monotonic()
    result = await run_crawl(
        urls,
        settings(
            **DROP,
            ROBOTS_STD_USAGE_PURPOSE="train-ai",
            ROBOTS_STD_FETCH_TIMEOUT=0.5,
            ROBOTS_STD_MAX_WAIT=1,
        ),
        timeout=20,
    )
    assert time.monotonic() - started < 4
    assert_no_errors(result)
    # Unset: the file never arrived; the pages went after its deadline.
    assert len(result.responses) == len(PAGES)
    assert file_stats(result) == {"requests": 1, "failed": 1}
    (line,) = [
        m for m in result.messages(logger_prefix=MW_LOGGER) if "TDMRep file" in m
    ]
    assert WELL_KNOWN in line


@deferred_f_from_coro_f
async def test_a_bad_file_is_reported_once_with_safe_text(
    hostile: HostileServer,
) -> None:
    urls = serve(hostile, [{"location": "x\x1b[31m", "tdm-reservation": 1}])
    result = await run_crawl(
        urls, settings(**DROP, ROBOTS_STD_USAGE_PURPOSE="train-ai")
    )
    assert_no_errors(result)
    assert len(result.responses) == len(PAGES)
    assert file_stats(result) == {"requests": 1, "fetched": 1, "notes": 1}
    lines = [m for m in result.messages(logger_prefix=MW_LOGGER) if "TDMRep file" in m]
    assert len(lines) == 1
    assert "does not start with / or *" in lines[0]
    assert "\x1b" not in "".join(result.messages())


@deferred_f_from_coro_f
async def test_a_page_header_supersedes_the_file_when_not_dropping(
    hostile: HostileServer,
) -> None:
    urls = serve(hostile, RULES, page_headers={"tdm-reservation": "0"})
    result = await run_crawl(
        urls,
        settings(ROBOTS_STD_USAGE_PURPOSE="train-ai", ROBOTS_STD_USAGE_ENFORCE="tag"),
    )
    assert_no_errors(result)
    assert len(result.responses) == len(PAGES)
    decisions = {
        r.url.rsplit("/", 1)[1]: r.meta["robots_std_usage_decision"].value
        for r in result.requests
    }
    # meta over header over file: the header's 0 decides even under /private/.
    assert decisions == {"a": "allow", "b": "allow", "c": "allow"}
    said = {r.url.rsplit("/", 1)[1]: r.meta["robots_std_tdm"] for r in result.requests}
    assert said["a"].statement.origin == "header"
    assert [s.origin for s in said["a"].said] == ["header", "tdmrep.json"]


@deferred_f_from_coro_f
async def test_the_audit_file_has_a_tdmrep_record(
    hostile: HostileServer, tmp_path: Path
) -> None:
    urls = serve(hostile, RULES)
    audit = tmp_path / "audit.jsonl"
    result = await run_crawl(
        urls,
        settings(
            **DROP,
            ROBOTS_STD_USAGE_PURPOSE="train-ai",
            ROBOTS_STD_AUDIT_PATH=str(audit),
        ),
    )
    assert_no_errors(result)
    records = [json.loads(line) for line in audit.read_text().splitlines()]
    (tdm,) = [r for r in records if r["record"] == "tdmrep"]
    assert tdm["origin"] == f"http://127.0.0.1:{hostile.port}"
    assert tdm["url"] == hostile.url(WELL_KNOWN)
    assert (tdm["status"], tdm["rules"], tdm["reserved_rules"]) == (200, 2, 1)
    assert tdm["source"] == "download"
    # The robots.txt record is its own, under the origin's key.
    robots = [r for r in records if r["record"] == "robots"]
    assert [r["origin"] for r in robots] == [f"http://127.0.0.1:{hostile.port}"]
    # The origin's closing record names the file's version, the drops it decided
    # (before sending) and the responses whose TDMRep statement came from it.
    (origin,) = [r for r in records if r["record"] == "origin"]
    assert origin["tdmrep"] == {
        "url": hostile.url(WELL_KNOWN),
        "status": 200,
        "verdict": "parse",
        "sha256": tdm["sha256"],
        "rules": 2,
        "reserved_rules": 1,
    }
    assert origin["dropped"] == {"usage-tdm-file": 2}
    assert origin["tdm"] == {"file": 1}  # /open/c: the rule saying 0
    (close,) = [r for r in records if r["record"] == "close"]
    assert close["tdm"] == {"file": 1}


@deferred_f_from_coro_f
async def test_the_origin_record_counts_each_tdm_source_and_null_without_a_file(
    hostile: HostileServer, tmp_path: Path
) -> None:
    hostile.add_route("/robots.txt", Reply(200, {}, b"User-agent: *\nAllow: /\n"))
    hostile.add_route("/h", Reply(200, {**HTML, "tdm-reservation": "0"}, b"<p>x</p>"))
    meta = b'<head><meta name="tdm-reservation" content="0"></head>'
    hostile.add_route("/m", Reply(200, HTML, meta))
    audit = tmp_path / "audit.jsonl"
    result = await run_crawl(
        [hostile.url("/h"), hostile.url("/m")],
        settings(ROBOTS_STD_USAGE_PURPOSE="ai-use", ROBOTS_STD_AUDIT_PATH=str(audit)),
    )
    assert_no_errors(result)
    records = [json.loads(line) for line in audit.read_text().splitlines()]
    (origin,) = [r for r in records if r["record"] == "origin"]
    assert origin["tdmrep"]["status"] == 404  # fetched: unset
    assert origin["tdmrep"]["rules"] is None
    assert origin["tdm"] == {"header": 1, "meta": 1}
    assert origin["dropped"] == {}


@pytest.mark.parametrize("purpose", ["train-ai", "ai-use"])
@deferred_f_from_coro_f
async def test_every_source_of_one_response_is_listed_and_a_yes_never_lifts_a_no(
    hostile: HostileServer, purpose: str
) -> None:
    # robots.txt: a file-wide "yes" and its group's Content-Signal "no" (a conflict
    # between the vocabularies); tdmrep.json: 0; the page: a Content-Usage "yes"
    # header, X-Robots-Tag noai, and a TDMRep meta tag 0 over the file.
    hostile.add_route(
        "/robots.txt",
        Reply(
            200,
            {},
            b"Content-Usage: train-ai=y, ai-use=y\nUser-agent: *\nAllow: /\n"
            b"Content-Signal: ai-train=no, ai-input=no\n",
        ),
    )
    hostile.add_route(
        WELL_KNOWN, Reply(200, JSON, b'[{"location": "/", "tdm-reservation": 0}]')
    )
    head = b'<head><meta name="tdm-reservation" content="0"></head>'
    headers = {**HTML, "X-Robots-Tag": "noai", "Content-Usage": "train-ai=y, ai-use=y"}
    hostile.add_route("/p", Reply(200, headers, head))
    headers = {**HTML, "Content-Usage": "train-ai=y, ai-use=y"}
    hostile.add_route("/q", Reply(200, headers, head))  # no noai
    result = await run_crawl(
        [hostile.url("/p"), hostile.url("/q")],
        settings(
            ROBOTS_STD_USAGE_PURPOSE=purpose,
            ROBOTS_STD_USAGE_ENFORCE="tag",
            ROBOTS_STD_PAGE_DIRECTIVES="obey",
        ),
    )
    assert_no_errors(result)
    meta = {r.url.rsplit("/", 1)[1]: r.meta for r in result.requests}
    usage = meta["p"]["robots_std_usage"]
    assert [(s.origin, s.field, s.line) for s in usage.sources] == [
        ("robots.txt", "Content-Usage", 1),
        ("robots.txt", "Content-Signal", 4),
        ("header", "Content-Usage", None),
        ("header", "X-Robots-Tag", None),
        ("meta tag", "tdm-reservation", None),
    ]
    # noai says no in both vocabularies: no conflict; the "no"s decide, each with
    # where it came from.
    decision = meta["p"]["robots_std_usage_decision"]
    assert (decision.purpose, decision.value, decision.conflict) == (
        purpose,
        "disallow",
        False,
    )
    assert [str(s) for s in decision.sources] == [
        'header "X-Robots-Tag: noai"',  # AIPREF's category first
        'line 4 "Content-Signal: ai-train=no, ai-input=no"',
    ]
    # Without it: AIPREF (robots.txt, the header, TDMRep's 0) says yes, Content
    # Signals no: a conflict, which is a no.
    decision = meta["q"]["robots_std_usage_decision"]
    assert (decision.value, decision.conflict) == ("disallow", True)
    assert [str(s) for s in decision.sources] == [
        'line 4 "Content-Signal: ai-train=no, ai-input=no"'
    ]
    # TDMRep's one statement is the meta tag's; the file's is kept under it.
    said = meta["q"]["robots_std_tdm"]
    assert [s.origin for s in said.said] == ["meta tag", "tdmrep.json"]
