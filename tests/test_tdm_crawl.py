"""TDMRep headers and meta tags in real crawls (issue 25, points 4 and 5).

Each technique (the ``tdm-reservation`` / ``tdm-policy`` headers, the meta tags of
those names) is served by a local origin; what reached the spider, the drop lines,
the stats and ``meta["robots_std_tdm"]`` / ``meta["robots_std_usage"]`` are checked.
The suite runs these crawls under asyncio and again under Twisted's default reactor
(the ``crawl`` marker). ``/.well-known/tdmrep.json`` has tests of its own
(test_tdm_file_crawl.py); here it is a 404.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

import pytest
from scrapy.utils.defer import deferred_f_from_coro_f

from scrapy_robots_std import UsageDisallowed
from scrapy_robots_std.scrapy import tdm as tdm_module
from scrapy_robots_std.tdmrep import EMPTY, TdmRep
from tests.helpers.crawl import MW_LOGGER, assert_no_errors, run_crawl, settings, stat
from tests.helpers.pages import Lines, meta
from tests.helpers.server import Reply

if TYPE_CHECKING:
    from tests.helpers.crawl import CrawlResult
    from tests.helpers.server import HostileServer

pytestmark = pytest.mark.crawl

HTML = {"Content-Type": "text/html; charset=utf-8"}
ROBOTS = b"User-agent: *\nAllow: /\n"
DROP = {"ROBOTS_STD_USAGE_ENFORCE": "drop"}
POLICY = "https://provider.example/policies/1"


def html(head: str = "", body: str = "") -> bytes:
    return (
        f"<html><head><title>t</title>{head}</head><body>{body}</body></html>".encode()
    )


def serve_site(server: HostileServer, robots: bytes = ROBOTS) -> dict[str, str]:
    """One page per technique and value, and one that says nothing."""
    server.add_route("/robots.txt", Reply(200, {}, robots))
    routes = {
        "/header-1": Reply(
            200, {**HTML, "tdm-reservation": "1", "tdm-policy": POLICY}, html()
        ),
        "/header-0": Reply(200, {**HTML, "tdm-reservation": "0"}, html()),
        "/meta-1": Reply(200, HTML, html(meta("tdm-reservation", "1"))),
        # the meta tag (0) supersedes the header (1)
        "/meta-over-header": Reply(
            200, {**HTML, "tdm-reservation": "1"}, html(meta("tdm-reservation", "0"))
        ),
        # an image: its header counts, a meta tag in the body does not
        "/image": Reply(
            200,
            {"Content-Type": "image/png", "tdm-reservation": "1"},
            html(meta("tdm-reservation", "0")),
        ),
        "/plain": Reply(200, HTML, html()),
    }
    server.add_routes(routes)
    return {path: server.url(path) for path in routes}


def by_page(result: CrawlResult, key: str) -> dict[str, Any]:
    return {
        url.rsplit("/", 1)[1]: request.meta.get(key)
        for url, request in zip(result.responses, result.requests, strict=True)
    }


def tdm_stats(result: CrawlResult) -> dict[str, Any]:
    return {k: v for k, v in result.stats.items() if k.startswith("robots_std/tdm/")}


def drop_lines(result: CrawlResult) -> list[str]:
    return [
        m
        for m in result.messages(logger_prefix=MW_LOGGER)
        if "Forbidden by usage preference" in m
    ]


# -- no purpose: nothing read ---------------------------------------------------------------


@deferred_f_from_coro_f
async def test_no_purpose_does_no_tdm_work_per_response(
    hostile: HostileServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls: list[str] = []

    def forbidden(name: str) -> Any:
        def call(*args: Any, **kwargs: Any) -> Any:
            calls.append(name)
            raise AssertionError(f"{name} called without a usage purpose")

        return call

    for name in ("read", "HeadReader"):
        monkeypatch.setattr(tdm_module, name, forbidden(name))
    monkeypatch.setattr(tdm_module.TdmReader, "read", forbidden("TdmReader.read"))
    urls = serve_site(hostile)
    result = await run_crawl(urls.values(), settings(**DROP))
    assert_no_errors(result)
    assert calls == []
    assert len(result.responses) == len(urls)
    assert all(said is None for said in by_page(result, "robots_std_tdm").values())
    assert tdm_stats(result) == {}
    for request in result.requests:
        assert request.meta["robots_std_usage"].sources == ()


# -- a purpose declared: read, exposed, dropped -----------------------------------------------


@pytest.mark.parametrize("purpose", ["train-ai", "ai-use", "ai-input"])
@deferred_f_from_coro_f
async def test_a_reservation_drops_the_response_for_the_ai_purposes(
    hostile: HostileServer, purpose: str
) -> None:
    urls = serve_site(hostile)
    result = await run_crawl(
        urls.values(), settings(**DROP, ROBOTS_STD_USAGE_PURPOSE=purpose)
    )
    assert_no_errors(result)
    # Fetched (the response says it), then dropped before the spider sees it.
    assert {r.path for r in hostile.requests} >= set(urls)
    assert sorted(url.rsplit("/", 1)[1] for url in result.responses) == [
        "header-0",
        "meta-over-header",
        "plain",
    ]
    assert stat(result, "robots_std/dropped/usage-tdm-header") == 2
    assert stat(result, "robots_std/dropped/usage-tdm-meta") == 1
    port = hostile.port
    shown = "ai-use" if purpose == "ai-input" else purpose

    def line(path: str, said: str, where: str) -> str:
        return (
            f"Forbidden by usage preference: <GET http://127.0.0.1:{port}{path}>: "
            f"disallow for {shown} by {said} {where}"
        )

    assert sorted(drop_lines(result)) == [
        line("/header-1", 'header "tdm-reservation: 1"', "(response headers)"),
        line("/image", 'header "tdm-reservation: 1"', "(response headers)"),
        line("/meta-1", 'meta tag "tdm-reservation: 1"', "(the page's meta tags)"),
    ]
    for failure in result.failures:
        assert isinstance(failure, UsageDisallowed)
        assert [s.field for s in failure.decision.sources] == ["tdm-reservation"]
    summary = next(
        m for m in result.messages(logger_prefix=MW_LOGGER) if "dropped (" in m
    )
    assert "usage-tdm-header: 2" in summary
    assert "usage-tdm-meta: 1" in summary
    assert tdm_stats(result) == {
        "robots_std/tdm/responses": 6,
        "robots_std/tdm/reserved": 3,
        "robots_std/tdm/not_reserved": 2,
        "robots_std/tdm/from/header": 3,
        "robots_std/tdm/from/meta": 2,
        "robots_std/tdm/policy": 1,
        # the origin's tdmrep.json was asked for once: a 404 (unset)
        "robots_std/tdm/file/requests": 1,
        "robots_std/tdm/file/missing": 1,
    }


@deferred_f_from_coro_f
async def test_search_is_not_affected(hostile: HostileServer) -> None:
    urls = serve_site(hostile)
    result = await run_crawl(
        urls.values(), settings(**DROP, ROBOTS_STD_USAGE_PURPOSE="search")
    )
    assert_no_errors(result)
    assert len(result.responses) == len(urls)
    assert not any(k.startswith("robots_std/dropped/") for k in result.stats)
    assert stat(result, "robots_std/usage/decision/search/unknown") == len(urls)
    # Read and exposed all the same.
    said = by_page(result, "robots_std_tdm")
    assert said["header-1"].reservation == 1


@deferred_f_from_coro_f
async def test_each_source_is_exposed_with_where_it_came_from(
    hostile: HostileServer,
) -> None:
    urls = serve_site(hostile, ROBOTS + b"Content-Usage: train-ai=y\n")
    result = await run_crawl(
        urls.values(),
        settings(ROBOTS_STD_USAGE_PURPOSE="train-ai", ROBOTS_STD_USAGE_ENFORCE="tag"),
    )
    assert_no_errors(result)
    said = by_page(result, "robots_std_tdm")
    assert all(isinstance(tdm, TdmRep) for tdm in said.values())
    assert said["plain"] is EMPTY
    assert said["header-1"].policy == POLICY
    assert said["header-1"].to_dict()["from"] == "header"
    over = said["meta-over-header"]
    assert over.reservation == 0
    assert [s.origin for s in over.said] == ["meta tag", "header"]
    assert said["image"].reservation == 1  # not HTML: the body is not read
    usage = by_page(result, "robots_std_usage")
    # robots.txt's yes is listed first, the response's statement after it.
    assert [(s.origin, s.field) for s in usage["header-1"].sources] == [
        ("robots.txt", "Content-Usage"),
        ("header", "tdm-reservation"),
    ]
    assert usage["header-1"].to_dict()["sources"][1]["policy"] == POLICY
    decisions = by_page(result, "robots_std_usage_decision")
    assert decisions["header-1"].value == "disallow"
    assert decisions["header-0"].value == "allow"
    assert decisions["meta-over-header"].value == "allow"
    assert decisions["plain"].value == "allow"
    assert not any(k.startswith("robots_std/dropped/") for k in result.stats)


@deferred_f_from_coro_f
async def test_a_purpose_in_the_request_meta_is_enough(hostile: HostileServer) -> None:
    urls = serve_site(hostile)
    result = await run_crawl(
        [urls["/header-1"], urls["/plain"]],
        settings(**DROP),
        meta={"robots_std_usage_purpose": "train-ai"},
    )
    assert_no_errors(result)
    assert [url.rsplit("/", 1)[1] for url in result.responses] == ["plain"]
    assert stat(result, "robots_std/dropped/usage-tdm-header") == 1


@deferred_f_from_coro_f
async def test_a_tdm_no_joins_a_page_directive_no(hostile: HostileServer) -> None:
    hostile.add_route("/robots.txt", Reply(200, {}, ROBOTS))
    hostile.add_route(
        "/both",
        Reply(
            200, {**HTML, "X-Robots-Tag": "noai"}, html(meta("tdm-reservation", "1"))
        ),
    )
    result = await run_crawl(
        [hostile.url("/both")],
        settings(
            ROBOTS_STD_PAGE_DIRECTIVES="obey",
            ROBOTS_STD_USAGE_PURPOSE="train-ai",
            ROBOTS_STD_USAGE_ENFORCE="drop",
        ),
    )
    assert_no_errors(result)
    assert result.responses == []
    (failure,) = result.failures
    assert isinstance(failure, UsageDisallowed)
    assert [str(s) for s in failure.decision.sources] == [
        'header "X-Robots-Tag: noai"',
        'meta tag "tdm-reservation: 1"',
    ]
    # The first source that came with the response names the drop.
    assert stat(result, "robots_std/dropped/usage-page-header") == 1


@deferred_f_from_coro_f
async def test_a_dry_run_counts_what_it_would_drop(hostile: HostileServer) -> None:
    urls = serve_site(hostile)
    result = await run_crawl(
        urls.values(),
        settings(**DROP, ROBOTS_STD_USAGE_PURPOSE="train-ai", ROBOTS_STD_DRY_RUN=True),
    )
    assert_no_errors(result)
    assert len(result.responses) == len(urls)
    assert stat(result, "robots_std/would_drop/usage-tdm-header") == 2
    assert stat(result, "robots_std/would_drop/usage-tdm-meta") == 1
    assert not any(k.startswith("robots_std/dropped/") for k in result.stats)


@deferred_f_from_coro_f
async def test_dont_obey_robotstxt_exposes_tdmrep_and_obeys_none(
    hostile: HostileServer,
) -> None:
    urls = serve_site(hostile)
    result = await run_crawl(
        [urls["/header-1"], urls["/meta-1"]],
        settings(**DROP, ROBOTS_STD_USAGE_PURPOSE="train-ai"),
        meta={"dont_obey_robotstxt": True},
    )
    assert_no_errors(result)
    assert len(result.responses) == 2
    said = by_page(result, "robots_std_tdm")
    assert said["header-1"].reservation == said["meta-1"].reservation == 1
    assert not any(k.startswith("robots_std/dropped/") for k in result.stats)


# -- hostile responses --------------------------------------------------------------------------


HOSTILE = {
    # 1,000 field lines: more than a property may have (a protocol error)
    "/lines": Lines(
        ((b"Content-Type", b"text/html"),) + ((b"tdm-reservation", b"1"),) * 1000,
        html().decode().encode(),
    ),
    # one value as long as Twisted's HTTP client takes a header line (16 KiB)
    "/long": Lines(
        ((b"Content-Type", b"text/html"), (b"tdm-reservation", b"1" * 16000)), html()
    ),
    # a policy too long to keep: the reservation still counts
    "/long-policy": Lines(
        (
            (b"Content-Type", b"text/html"),
            (b"tdm-reservation", b"1"),
            (b"tdm-policy", b"https://p.example/" + b"x" * 15000),
        ),
        html(),
    ),
    "/differ": Lines(
        (
            (b"Content-Type", b"text/html"),
            (b"tdm-reservation", b"1"),
            (b"tdm-reservation", b"0"),
        ),
        html(),
    ),
    "/ctrl": Lines(
        ((b"Content-Type", b"text/html"), (b"tdm-reservation", b"\x1b]0;pwn\x07")),
        html(),
    ),
    # meta tags: an error falls back to the header; one past the head is not read
    "/bad-meta": Reply(
        200, {**HTML, "tdm-reservation": "1"}, html(meta("tdm-reservation", "yes"))
    ),
    "/late-meta": Reply(
        200, HTML, b"<html><head>" + b"<noscript>" * 100_000 + b"</head>"
    ),
    "/in-body": Reply(200, HTML, html(body=meta("tdm-reservation", "1"))),
    "/many-metas": Reply(200, HTML, html(meta("tdm-reservation", "1") * 1000)),
    "/broken": Reply(200, HTML, bytes(range(256)) * 2000),
}


@deferred_f_from_coro_f
async def test_hostile_responses_give_a_bounded_answer_and_no_traceback(
    hostile: HostileServer,
) -> None:
    hostile.add_route("/robots.txt", Reply(200, {}, ROBOTS))
    hostile.add_routes(HOSTILE)
    result = await run_crawl(
        [hostile.url(path) for path in HOSTILE],
        settings(**DROP, ROBOTS_STD_USAGE_PURPOSE="train-ai"),
    )
    assert_no_errors(result)
    assert not any("Traceback" in m for m in result.messages())
    assert hostile.errors == []
    kept = {url.rsplit("/", 1)[1] for url in result.responses}
    # Dropped: /long-policy (1, policy not kept) and /bad-meta (the header's 1).
    assert kept == {
        "lines",
        "long",
        "differ",
        "ctrl",
        "late-meta",
        "in-body",
        "many-metas",
        "broken",
    }
    said = by_page(result, "robots_std_tdm")
    assert said["lines"].notes == (
        "header tdm-reservation: 1000 values, more than 16: unset",
    )
    assert said["long"].statement is None
    assert said["differ"].notes == (
        "header tdm-reservation: differing values ('0', '1'): unset",
    )
    assert said["late-meta"].notes == (
        "HTML head: cut at 131,072 bytes; meta tags after not read",
    )
    assert said["in-body"] is EMPTY
    assert said["many-metas"].notes == (
        "968 TDMRep meta tag(s) past the first 32 not read",
        "meta tag tdm-reservation: 32 values, more than 16: unset",
    )
    assert said["broken"] is EMPTY
    assert stat(result, "robots_std/dropped/usage-tdm-header") == 2
    assert stat(result, "robots_std/tdm/notes") == 8
    notes = [
        m
        for m in result.messages(logging.DEBUG, MW_LOGGER)
        if m.startswith("TDMRep of ")
    ]
    assert len(notes) == 8
    ctrl = next(m for m in notes if "/ctrl>" in m)
    assert "\\x1b]0;pwn\\x07" in ctrl
    assert "\x1b" not in ctrl
    assert all(len(m) < 600 for m in notes)


def wide(name: bytes, first: bytes, item: bytes) -> tuple[tuple[bytes, bytes], ...]:
    """100 KB of one field, a list: ``first``, then ``item`` again and again, in 7
    lines of about 15,000 bytes (Twisted's HTTP client takes at most 16 KiB)."""
    count = 15_000 // (len(item) + 2)
    lines = [b", ".join([first] + [item] * count)]
    lines += [b", ".join([item] * count)] * 6
    assert sum(map(len, lines)) > 100_000
    return tuple((name, line) for line in lines)


WIDE = {
    "/tdm-wide": Lines(
        ((b"Content-Type", b"text/html"), (b"tdm-reservation", b"1"))
        + ((b"tdm-policy", b"https://p.example/" + b"x" * 15_000),) * 7,
        html(),
    ),
    "/xrt-wide": Lines(
        ((b"Content-Type", b"text/html"), *wide(b"X-Robots-Tag", b"noai", b"zz")),
        html(),
    ),
    "/usage-wide": Lines(
        (
            (b"Content-Type", b"text/html"),
            *wide(b"Content-Usage", b"train-ai=n", b"k=y"),
        ),
        html(),
    ),
    # one line of 100 KB: over Twisted's limit, the download fails
    "/tdm-line": Lines(
        ((b"Content-Type", b"text/html"), (b"tdm-reservation", b"1" * 100_000)),
        html(),
    ),
    "/ok": Reply(200, HTML, html()),
}


@deferred_f_from_coro_f
async def test_100_kb_header_values_of_each_response_source_give_bounded_drops(
    hostile: HostileServer,
) -> None:
    hostile.add_route("/robots.txt", Reply(200, {}, ROBOTS))
    hostile.add_routes(WIDE)
    result = await run_crawl(
        [hostile.url(path) for path in WIDE],
        settings(
            **DROP,
            ROBOTS_STD_USAGE_PURPOSE="train-ai",
            ROBOTS_STD_PAGE_DIRECTIVES="obey",
        ),
    )
    assert_no_errors(result)
    assert not any("Traceback" in m for m in result.messages())
    assert hostile.errors == []
    assert [url.rsplit("/", 1)[1] for url in result.responses] == ["ok"]
    # Each wide field says no to train-ai: the response is dropped, by its source.
    for reason in ("usage-tdm-header", "usage-page-header", "usage-header"):
        assert stat(result, f"robots_std/dropped/{reason}") == 1, reason
    lines = drop_lines(result)
    assert len(lines) == 3
    assert all(len(line) < 1000 for line in lines)
    # The 100 KB line: Twisted refuses it; the download fails, not the crawl.
    dropped = [f for f in result.failures if isinstance(f, UsageDisallowed)]
    assert len(dropped) == 3
    assert len(result.failures) == 4
    for failure in dropped:
        for source in failure.decision.sources:
            # The page directives and TDMRep keep a value cut at 4,096 characters;
            # a Content-Usage header source keeps its value whole (the response
            # holds it anyway), and the drop line shows its start.
            if source.field != "Content-Usage":
                assert len(source.value) <= 4096, source.field
