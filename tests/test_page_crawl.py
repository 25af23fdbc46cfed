"""Page-level robots directives in real crawls (issue 25, points 3, 5 and 6).

Each source (an ``X-Robots-Tag`` line, a scoped one, ``<meta name="robots">``,
``<meta name="TESTBOT">``) is served by a local origin; what reached the server, the
spider and the item pipeline, the log lines and the stats are checked for each
``ROBOTS_STD_PAGE_DIRECTIVES`` mode. The suite runs these crawls under asyncio and
again under Twisted's default reactor (the ``crawl`` marker).
"""

from __future__ import annotations

import json
import logging
from typing import TYPE_CHECKING, Any

import pytest
from scrapy import Request, signals
from scrapy.http import TextResponse
from scrapy.utils.defer import deferred_f_from_coro_f
from scrapy.utils.test import get_crawler

from scrapy_robots_std import (
    PageDirectives,
    PageDirectivesMiddleware,
    PageNoindexPipeline,
    UsageDisallowed,
)
from scrapy_robots_std.pagerules import EMPTY
from scrapy_robots_std.scrapy import page as page_module
from scrapy_robots_std.usage import vocab as usage_vocab
from scrapy_robots_std.usage.vocab import PURPOSES
from tests.helpers.crawl import (
    MW_LOGGER,
    HostileSpider,
    assert_no_errors,
    run_crawl,
    settings,
    stat,
)
from tests.helpers.pages import Lines, meta
from tests.helpers.server import Reply

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Iterator
    from pathlib import Path

    from scrapy.crawler import Crawler
    from scrapy.http import Response

    from tests.helpers.crawl import CrawlResult
    from tests.helpers.server import HostileServer

pytestmark = pytest.mark.crawl

HTML = {"Content-Type": "text/html; charset=utf-8"}
ROBOTS = b"User-agent: *\nAllow: /\n"
PIPELINE = {"ITEM_PIPELINES": {"scrapy_robots_std.PageNoindexPipeline": 0}}
OBEY = {"ROBOTS_STD_PAGE_DIRECTIVES": "obey", **PIPELINE}


def html(*links: str, head: str = "") -> bytes:
    anchors = "".join(f'<a href="{link}">{link}</a>' for link in links)
    return f"<html><head><title>t</title>{head}</head><body>{anchors}</body></html>".encode()


class LinkSpider(HostileSpider):
    """Follows every link of an HTML page and yields an item per page; a link with
    ``keep`` in it carries ``dont_obey_robotstxt``."""

    name = "links"

    def parse(self, response: Response) -> Iterator[Any]:  # type: ignore[override]
        super().parse(response)
        yield {"url": response.url}
        if not isinstance(response, TextResponse):
            return
        for href in response.css("a::attr(href)").getall():
            meta = {"dont_obey_robotstxt": True} if "keep" in href else {}
            yield Request(
                response.urljoin(href),
                callback=self.parse,
                errback=self.on_error,
                meta=meta,
            )


class AsyncLinkSpider(LinkSpider):
    """The same, with an asynchronous callback: Scrapy then calls the spider
    middlewares' ``process_spider_output_async``."""

    name = "async-links"

    async def parse(self, response: Response) -> AsyncIterator[Any]:  # type: ignore[override]
        for output in LinkSpider.parse(self, response):
            yield output


class Items:
    """The items the pipelines let through, and those dropped (with why)."""

    def __init__(self) -> None:
        self.scraped: list[str] = []
        self.dropped: list[tuple[str, BaseException]] = []

    def connect(self, crawler: Crawler) -> None:
        crawler.signals.connect(self._scraped, signal=signals.item_scraped, weak=False)
        crawler.signals.connect(self._dropped, signal=signals.item_dropped, weak=False)

    def _scraped(self, item: dict[str, str], **_: Any) -> None:
        self.scraped.append(item["url"])

    def _dropped(
        self, item: dict[str, str], exception: BaseException, **_: Any
    ) -> None:
        self.dropped.append((item["url"], exception))


def served(server: HostileServer) -> set[str]:
    """The pages asked for: not robots.txt, nor TDMRep's tdmrep.json (fetched when a
    purpose is declared)."""
    files = ("/robots.txt", "/.well-known/tdmrep.json")
    return {r.path for r in server.requests if r.path not in files}


def pages(result: CrawlResult) -> dict[str, Any]:
    """What reached the spider: each URL's ``robots_std_page``."""
    return {
        url: request.meta.get("robots_std_page")
        for url, request in zip(result.responses, result.requests, strict=True)
    }


def page_stats(result: CrawlResult) -> dict[str, Any]:
    return {k: v for k, v in result.stats.items() if k.startswith("robots_std/page/")}


def drop_lines(result: CrawlResult, text: str) -> list[str]:
    return [m for m in result.messages(logger_prefix=MW_LOGGER) if text in m]


def serve_site(server: HostileServer) -> dict[str, str]:
    """A site whose pages say things to robots, linked from ``/``."""
    server.add_route("/robots.txt", Reply(200, {}, ROBOTS))
    routes = {
        "/": Reply(
            200, HTML, html("/follow-h", "/follow-m", "/plain", "/noindex-h", "/pdf")
        ),
        # X-Robots-Tag: nofollow; a link with dont_obey_robotstxt goes anyway
        "/follow-h": Reply(
            200, {**HTML, "X-Robots-Tag": "nofollow"}, html("/h1", "/h2?keep")
        ),
        # <meta name="robots" content="none">: nofollow and noindex
        "/follow-m": Reply(200, HTML, html("/m1", head=meta("robots", "none"))),
        "/plain": Reply(200, HTML, html("/p1")),
        # X-Robots-Tag: noindex: its links are followed, its item is dropped
        "/noindex-h": Reply(200, {**HTML, "X-Robots-Tag": "noindex"}, html("/x1")),
        # not HTML: the header counts, a meta tag in the body does not
        "/pdf": Reply(
            200,
            {"Content-Type": "application/pdf", "X-Robots-Tag": "noai"},
            html(head=meta("robots", "noindex")),
        ),
    }
    for path in ("/h1", "/h2", "/m1", "/p1", "/x1"):
        routes[path] = Reply(200, HTML, html())
    server.add_routes(routes)
    return {path: server.url(path) for path in routes}


async def _crawl_site(
    hostile: HostileServer,
    crawl_settings: dict[str, Any],
    *,
    start: tuple[str, ...] = ("/",),
    spider_cls: type[HostileSpider] = LinkSpider,
    **kwargs: Any,
) -> tuple[CrawlResult, Items]:
    """A crawl of the served site from ``start``, without errors, and its items."""
    urls = serve_site(hostile)
    items = Items()
    result = await run_crawl(
        [urls[path] for path in start],
        crawl_settings,
        spider_cls=spider_cls,
        on_crawler=items.connect,
        **kwargs,
    )
    assert_no_errors(result)
    return result, items


# -- off: nothing read, nothing done ---------------------------------------------------


@pytest.mark.parametrize(
    "usage",
    [{}, {"ROBOTS_STD_USAGE_PURPOSE": "train-ai", "ROBOTS_STD_USAGE_ENFORCE": "drop"}],
    ids=["no-purpose", "train-ai-drop"],
)
@deferred_f_from_coro_f
async def test_off_does_no_page_work_per_response(
    hostile: HostileServer, monkeypatch: pytest.MonkeyPatch, usage: dict[str, str]
) -> None:
    calls: list[str] = []

    def forbidden(name: str) -> Any:
        def call(*args: Any, **kwargs: Any) -> Any:
            calls.append(name)
            raise AssertionError(f"{name} called with page directives off")

        return call

    for name in ("read", "HeadReader"):
        monkeypatch.setattr(page_module, name, forbidden(name))
    monkeypatch.setattr(page_module.PageReader, "read", forbidden("PageReader.read"))
    monkeypatch.setattr(page_module.PageReader, "__init__", forbidden("PageReader"))
    result, items = await _crawl_site(hostile, settings(**PIPELINE, **usage))
    assert calls == []
    # Every link followed, every item kept, nothing exposed or counted.
    assert served(hostile) == {
        "/",
        *("/follow-h", "/follow-m", "/plain", "/noindex-h", "/pdf"),
        *("/h1", "/h2?keep", "/m1", "/p1", "/x1"),
    }
    assert len(items.scraped) == 11
    assert items.dropped == []
    assert all(page is None for page in pages(result).values())
    assert page_stats(result) == {}
    assert not any("by page directive" in m for m in result.messages())


def test_the_spider_middleware_and_the_pipeline_run_only_when_obeying() -> None:
    from scrapy.exceptions import NotConfigured

    for mode in ("off", "tag"):
        crawler = get_crawler(
            settings_dict={"ROBOTSTXT_OBEY": True, "ROBOTS_STD_PAGE_DIRECTIVES": mode}
        )
        for component in (PageDirectivesMiddleware, PageNoindexPipeline):
            with pytest.raises(NotConfigured):
                component.from_crawler(crawler)
    crawler = get_crawler(
        settings_dict={"ROBOTSTXT_OBEY": False, "ROBOTS_STD_PAGE_DIRECTIVES": "obey"}
    )
    with pytest.raises(NotConfigured):
        PageDirectivesMiddleware.from_crawler(crawler)
    crawler = get_crawler(
        settings_dict={"ROBOTSTXT_OBEY": True, "ROBOTS_STD_PAGE_DIRECTIVES": "obey"}
    )
    assert isinstance(
        PageDirectivesMiddleware.from_crawler(crawler), PageDirectivesMiddleware
    )


@deferred_f_from_coro_f
async def test_both_output_paths_of_the_spider_middleware_agree() -> None:
    """Scrapy calls ``process_spider_output_async`` in these crawls; the sync form
    (for a chain of sync middlewares) drops the same requests."""
    from scrapy.http import HtmlResponse

    from scrapy_robots_std.pagerules import read

    crawler = get_crawler(
        settings_dict={"ROBOTSTXT_OBEY": True, "ROBOTS_STD_PAGE_DIRECTIVES": "obey"}
    )
    assert crawler.stats is not None
    crawler.stats.open_spider()
    middleware = PageDirectivesMiddleware.from_crawler(crawler)
    page = read([b"nofollow"], (), "TestBot")
    request = Request("http://a.test/", meta={"robots_std_page": page})
    response = HtmlResponse("http://a.test/", body=b"", request=request)
    outputs = [
        {"item": 1},
        Request("http://a.test/x"),
        Request("http://a.test/keep", meta={"dont_obey_robotstxt": True}),
    ]

    async def result() -> AsyncIterator[Any]:
        for output in outputs:
            yield output

    kept_sync = list(middleware.process_spider_output(response, iter(outputs)))
    kept_async = [
        o async for o in middleware.process_spider_output_async(response, result())
    ]
    assert kept_sync == kept_async == [outputs[0], outputs[2]]
    assert crawler.stats.get_value("robots_std/dropped/nofollow-header") == 2


# -- tag: read and exposed ---------------------------------------------------------------


@deferred_f_from_coro_f
async def test_tag_exposes_each_source_and_counts_each_directive(
    hostile: HostileServer,
) -> None:
    hostile.add_route("/robots.txt", Reply(200, {}, ROBOTS))
    routes: dict[str, Any] = {
        "/pdf": Reply(
            200, {"Content-Type": "application/pdf", "X-Robots-Tag": "noindex, noai"}
        ),
        "/scoped": Lines(
            (
                (b"Content-Type", b"text/html"),
                (b"X-Robots-Tag", b"otherbot: noindex"),
                (b"X-Robots-Tag", b"testbot: nofollow"),
                (b"X-Robots-Tag", b"unavailable_after: 25 Jun 2030 15:00:00 PST"),
            ),
            html(),
        ),
        "/meta": Reply(
            200,
            HTML,
            html(
                head=meta("robots", "noindex, nofollow")
                + meta("TestBot", "noimageai, max-snippet: 20")
                + meta("googlebot", "noarchive")
            ),
        ),
        "/xhtml": Reply(
            200,
            {"Content-Type": "application/xhtml+xml"},
            b'<?xml version="1.0"?><html xmlns="http://www.w3.org/1999/xhtml"><head>'
            b'<meta name="robots" content="nosnippet"/></head><body/></html>',
        ),
        "/plain": Reply(200, HTML, html()),
        "/text": Reply(
            200, {"Content-Type": "text/plain"}, html(head=meta("robots", "noindex"))
        ),
    }
    hostile.add_routes(routes)
    result = await run_crawl(
        [hostile.url(path) for path in routes],
        settings(ROBOTS_STD_PAGE_DIRECTIVES="tag"),
    )
    assert_no_errors(result)
    got = {url.rsplit("/", 1)[1]: page for url, page in pages(result).items()}
    assert set(got) == {"pdf", "scoped", "meta", "xhtml", "plain", "text"}
    assert all(isinstance(page, PageDirectives) for page in got.values())
    assert got["plain"] is EMPTY
    assert got["text"] is EMPTY  # not HTML: no meta tag is read
    assert got["pdf"].directives == ("noindex", "noai")
    assert str(got["pdf"].statements[0]) == 'header "X-Robots-Tag: noindex, noai"'
    scoped = got["scoped"]
    assert scoped.other_crawlers == 1
    assert (scoped.noindex, scoped.nofollow) == (False, True)
    assert scoped.statements[0].scope == "testbot"
    assert scoped.unavailable_after == ("25 Jun 2030 15:00:00 PST",)
    said = got["meta"]
    assert [str(s) for s in said.statements] == [
        'meta tag "robots: noindex, nofollow"',
        'meta tag "TestBot: noimageai, max-snippet: 20"',
    ]
    assert (said.noindex, said.nofollow, said.noai) == (True, True, True)
    assert said.unknown == ("max-snippet",)
    assert got["xhtml"].directives == ("nosnippet",)
    assert page_stats(result) == {
        "robots_std/page/responses": 6,
        "robots_std/page/noindex": 2,
        "robots_std/page/nofollow": 2,
        "robots_std/page/noai": 1,
        "robots_std/page/noimageai": 1,
        "robots_std/page/nosnippet": 1,
        "robots_std/page/unavailable_after": 1,
        "robots_std/page/unknown": 1,
        "robots_std/page/other_crawler": 1,
    }
    # Tag only: the usage preferences leave the page out, and nothing is dropped.
    assert not any(k.startswith("robots_std/dropped/") for k in result.stats)
    for url, request in zip(result.responses, result.requests, strict=True):
        assert request.meta["robots_std_usage"].sources == (), url
    assert "page directives tag" in setup_line(result)


def setup_line(result: CrawlResult) -> str:
    return next(
        m for m in result.messages(logging.INFO, MW_LOGGER) if "standard rfc9309" in m
    )


# -- obey: nofollow, noindex -------------------------------------------------------------


@pytest.mark.parametrize("spider_cls", [LinkSpider, AsyncLinkSpider])
@deferred_f_from_coro_f
async def test_obey_drops_the_links_of_nofollow_pages_and_the_items_of_noindex_ones(
    hostile: HostileServer, tmp_path: Path, spider_cls: type[LinkSpider]
) -> None:
    audit = tmp_path / "audit.jsonl"
    result, items = await _crawl_site(
        hostile,
        settings(**OBEY, ROBOTS_STD_AUDIT_PATH=str(audit)),
        spider_cls=spider_cls,
    )
    # The links of /follow-h (a header) and /follow-m (a meta tag) were never
    # requested, but the one that carries dont_obey_robotstxt was.
    assert served(hostile) == {
        "/",
        *("/follow-h", "/follow-m", "/plain", "/noindex-h", "/pdf"),
        *("/h2?keep", "/p1", "/x1"),
    }
    assert stat(result, "robots_std/dropped/nofollow-header") == 1
    assert stat(result, "robots_std/dropped/nofollow-meta") == 1
    assert stat(result, "robotstxt/forbidden") is None  # not robots.txt drops
    port = hostile.port
    h1 = (
        f"Forbidden by page directive: <GET http://127.0.0.1:{port}/h1> from "
        f'<200 http://127.0.0.1:{port}/follow-h>: nofollow by header "X-Robots-Tag: '
        'nofollow"'
    )
    m1 = (
        f"Forbidden by page directive: <GET http://127.0.0.1:{port}/m1> from "
        f'<200 http://127.0.0.1:{port}/follow-m>: none by meta tag "robots: none"'
    )
    assert sorted(drop_lines(result, "Forbidden by page directive")) == [h1, m1]
    # Items: /follow-m (none) and /noindex-h (noindex) dropped by the pipeline.
    assert sorted(url.rsplit("/", 1)[1] for url, _ in items.dropped) == [
        "follow-m",
        "noindex-h",
    ]
    reasons = {url.rsplit("/", 1)[1]: exc for url, exc in items.dropped}
    assert str(reasons["noindex-h"]) == (
        f'page directive noindex by header "X-Robots-Tag: noindex" on '
        f"<200 http://127.0.0.1:{port}/noindex-h>"
    )
    assert getattr(reasons["follow-m"], "reason", None) == "noindex-meta"
    assert len(items.scraped) == 7
    assert stat(result, "robots_std/page/items_dropped/noindex-header") == 1
    assert stat(result, "robots_std/page/items_dropped/noindex-meta") == 1
    assert stat(result, "item_dropped_count") == 2
    # The closing summary counts the link drops with the others.
    summary = next(
        m for m in result.messages(logger_prefix=MW_LOGGER) if "dropped (" in m
    )
    assert "nofollow-header: 1" in summary
    assert "nofollow-meta: 1" in summary
    # The audit file: the drops by reason, and the directives the origin's pages said.
    records = [json.loads(line) for line in audit.read_text().splitlines()]
    origin = next(r for r in records if r["record"] == "origin")
    assert origin["dropped"] == {"nofollow-header": 1, "nofollow-meta": 1}
    assert origin["page"] == {"noai": 1, "nofollow": 1, "noindex": 1, "none": 1}
    assert records[-1]["record"] == "close"
    assert records[-1]["page"] == origin["page"]


@deferred_f_from_coro_f
async def test_obey_in_a_dry_run_drops_nothing_and_counts_what_it_would(
    hostile: HostileServer,
) -> None:
    result, items = await _crawl_site(
        hostile, settings(**OBEY, ROBOTS_STD_DRY_RUN=True)
    )
    assert {"/h1", "/m1"} <= served(hostile)
    assert items.dropped == []
    assert stat(result, "robots_std/would_drop/nofollow-header") == 1
    assert stat(result, "robots_std/would_drop/nofollow-meta") == 1
    assert stat(result, "robots_std/page/items_would_drop/noindex-header") == 1
    assert stat(result, "robots_std/page/items_would_drop/noindex-meta") == 1
    assert not any(k.startswith("robots_std/dropped/") for k in result.stats)
    assert (
        len(drop_lines(result, "Would be forbidden by page directive (dry run)")) == 2
    )
    assert len(drop_lines(result, "Would be dropped by page directive (dry run)")) == 2


@deferred_f_from_coro_f
async def test_obey_without_the_pipeline_keeps_items_and_says_so(
    hostile: HostileServer,
) -> None:
    result, items = await _crawl_site(
        hostile, settings(ROBOTS_STD_PAGE_DIRECTIVES="obey")
    )
    assert items.dropped == []
    assert stat(result, "robots_std/dropped/nofollow-header") == 1
    assert any(
        "items from noindex pages are kept: PageNoindexPipeline is not in "
        "ITEM_PIPELINES" in m
        for m in result.messages(logging.INFO, MW_LOGGER)
    )


@deferred_f_from_coro_f
async def test_dont_obey_robotstxt_exposes_the_directives_and_obeys_none(
    hostile: HostileServer,
) -> None:
    result, items = await _crawl_site(
        hostile,
        settings(**OBEY),
        start=("/follow-m", "/noindex-h"),
        meta={"dont_obey_robotstxt": True},
    )
    got = {url.rsplit("/", 1)[1]: page for url, page in pages(result).items()}
    assert got["follow-m"].nofollow  # read and exposed ...
    assert got["noindex-h"].noindex
    assert {"/m1", "/x1"} <= served(hostile)  # ... not obeyed
    assert items.dropped == []
    assert not any(k.startswith("robots_std/dropped/") for k in result.stats)


# -- obey: noai and the usage preferences ------------------------------------------------


def serve_ai(server: HostileServer) -> dict[str, str]:
    server.add_route(
        "/robots.txt", Reply(200, {}, ROBOTS + b"Content-Usage: train-ai=y\n")
    )
    routes = {
        "/ai-h": Reply(200, {**HTML, "X-Robots-Tag": "noai"}, html()),
        "/ai-m": Reply(200, HTML, html(head=meta("testbot", "noimageai"))),
        "/ai-other": Reply(200, {**HTML, "X-Robots-Tag": "otherbot: noai"}, html()),
        "/plain": Reply(200, HTML, html()),
    }
    server.add_routes(routes)
    return {path: server.url(path) for path in routes}


#: vocab-08's AI Use purpose, where this checkout has it (ai-input its synonym)
_AI_USE = "ai-use" in PURPOSES


def shown(purpose: str) -> str:
    """The purpose as a decision names it (vocab-08 reads ``ai-input`` as ``ai-use``)."""
    return getattr(usage_vocab, "SYNONYMS", {}).get(purpose, purpose)


@pytest.mark.parametrize(
    ("mode", "purpose", "dropped"),
    [
        ("obey", "train-ai", {"ai-h", "ai-m"}),
        ("obey", "ai-input", {"ai-h", "ai-m"}),
        pytest.param(
            "obey",
            "ai-use",
            {"ai-h", "ai-m"},
            marks=pytest.mark.skipif(not _AI_USE, reason="no vocab-08 ai-use yet"),
        ),
        ("obey", "search", set()),
        ("tag", "train-ai", set()),  # read and exposed, not obeyed
    ],
)
@deferred_f_from_coro_f
async def test_noai_drops_the_response_for_the_ai_purposes(
    hostile: HostileServer, mode: str, purpose: str, dropped: set[str]
) -> None:
    urls = serve_ai(hostile)
    result = await run_crawl(
        urls.values(),
        settings(
            ROBOTS_STD_PAGE_DIRECTIVES=mode,
            ROBOTS_STD_USAGE_PURPOSE=purpose,
            ROBOTS_STD_USAGE_ENFORCE="drop",
        ),
    )
    assert_no_errors(result)
    # Sent (the page says it), then dropped before the spider sees it.
    assert served(hostile) == set(routes_of(urls))
    assert {u.rsplit("/", 1)[1] for u in result.responses} == (
        {"ai-h", "ai-m", "ai-other", "plain"} - dropped
    )
    if not dropped:
        assert not any(k.startswith("robots_std/dropped/") for k in result.stats)
        return
    assert stat(result, "robots_std/dropped/usage-page-header") == 1
    assert stat(result, "robots_std/dropped/usage-page-meta") == 1
    port = hostile.port
    by_header = (
        f"Forbidden by usage preference: <GET http://127.0.0.1:{port}/ai-h>: disallow "
        f'for {shown(purpose)} by header "X-Robots-Tag: noai" (response headers)'
    )
    by_meta = (
        f"Forbidden by usage preference: <GET http://127.0.0.1:{port}/ai-m>: disallow "
        f'for {shown(purpose)} by meta tag "testbot: noimageai" (the page\'s meta '
        "tags)"
    )
    assert sorted(drop_lines(result, "Forbidden by usage preference")) == [
        by_header,
        by_meta,
    ]
    assert len(result.failures) == 2
    for failure in result.failures:
        assert isinstance(failure, UsageDisallowed)
        origins = {source.origin for source in failure.decision.sources}
        assert origins <= {"header", "meta tag"}
    summary = next(
        m for m in result.messages(logger_prefix=MW_LOGGER) if "dropped (" in m
    )
    assert "usage-page-header: 1" in summary


def routes_of(urls: dict[str, str]) -> list[str]:
    return list(urls)


@deferred_f_from_coro_f
async def test_the_page_source_is_listed_with_the_others_and_where_it_came_from(
    hostile: HostileServer,
) -> None:
    urls = serve_ai(hostile)
    result = await run_crawl(
        [urls["/ai-h"], urls["/ai-m"]],
        settings(
            ROBOTS_STD_PAGE_DIRECTIVES="obey",
            ROBOTS_STD_USAGE_PURPOSE="train-ai",
            ROBOTS_STD_USAGE_ENFORCE="tag",
        ),
    )
    assert_no_errors(result)
    by_page = {
        url.rsplit("/", 1)[1]: request.meta
        for url, request in zip(result.responses, result.requests, strict=True)
    }
    for name, origin, field in (
        ("ai-h", "header", "X-Robots-Tag"),
        ("ai-m", "meta tag", "testbot"),
    ):
        usage = by_page[name]["robots_std_usage"]
        # robots.txt's "yes" is still listed; the page's "no" comes after it.
        assert [(s.origin, s.field) for s in usage.sources] == [
            ("robots.txt", "Content-Usage"),
            (origin, field),
        ]
        decision = by_page[name]["robots_std_usage_decision"]
        assert decision.value == "disallow"
        assert [(s.origin, s.field) for s in decision.sources] == [(origin, field)]
    assert stat(result, "robots_std/usage/decision/train-ai/disallow") == 2


# -- hostile pages ------------------------------------------------------------------------


HOSTILE = {
    # 1,000 field lines: the first 64 are read
    "/lines": Lines(
        ((b"Content-Type", b"text/html"),)
        + ((b"X-Robots-Tag", b"noarchive"),) * 999
        + ((b"X-Robots-Tag", b"nofollow"),),
        html("/followed"),
    ),
    # 100 KB of X-Robots-Tag in 1,000 lines of 100 bytes
    "/wide": Lines(
        ((b"Content-Type", b"text/html"),)
        + ((b"X-Robots-Tag", b"otherbot: " + b"x" * 90),) * 1000,
        html(),
    ),
    # one value as long as Twisted's HTTP client takes a header line (16 KiB)
    "/long": Lines(
        (
            (b"Content-Type", b"text/html"),
            (b"X-Robots-Tag", b"nofollow, " + b"y" * 16000),
        ),
        html("/never"),
    ),
    # control characters: escaped in the drop line
    "/ctrl": Lines(
        (
            (b"Content-Type", b"text/html"),
            (b"X-Robots-Tag", b"nofollow, \x1b]0;pwn\x07"),
        ),
        html("/never"),
    ),
    "/nested": Reply(200, HTML, b"<html><head>" + b"<noscript>" * 100_000),
    "/divs": Reply(
        200, HTML, b"<head>" + b"<div>" * 100_000 + meta("robots", "noindex").encode()
    ),
    "/broken": Reply(200, HTML, bytes(range(256)) * 2000),
    "/unclosed": Reply(
        200, HTML, b"<head><meta name=robots content='nofollow" + b"<" * 300_000
    ),
}


@deferred_f_from_coro_f
async def test_hostile_pages_give_a_bounded_answer_and_no_traceback(
    hostile: HostileServer,
) -> None:
    hostile.add_route("/robots.txt", Reply(200, {}, ROBOTS))
    hostile.add_routes(HOSTILE)
    hostile.add_route("/never", Reply(200, HTML, html()))
    hostile.add_route("/followed", Reply(200, HTML, html()))
    result = await run_crawl(
        [hostile.url(path) for path in HOSTILE],
        settings(**OBEY),
        spider_cls=LinkSpider,
    )
    assert_no_errors(result)
    assert not any("Traceback" in m for m in result.messages())
    assert hostile.errors == []
    got = {url.rsplit("/", 1)[1]: page for url, page in pages(result).items()}
    assert set(got) == {path[1:] for path in HOSTILE} | {"followed"}
    for name, page in got.items():
        assert len(page.statements) <= 64, name
        assert all(len(s.value) <= 4096 for s in page.statements), name
    assert got["lines"].notes == (
        "X-Robots-Tag: 936 field line(s) past the first 64 not read",
    )
    # The 1,000th line (nofollow) was not read: the link of /lines was followed.
    assert not got["lines"].nofollow
    assert "/followed" in served(hostile)
    assert got["wide"].other_crawlers == 64
    assert got["long"].nofollow
    assert got["long"].notes == ("1 value(s) cut at 4,096 characters",)
    assert got["nested"].notes == (
        "HTML head: cut at 131,072 bytes; meta tags after not read",
    )
    assert (
        got["divs"] is EMPTY
    )  # a <div> opens the body: the meta after it is not the head's
    assert got["broken"] is EMPTY
    # An attribute value never closed: no tag ends within the bound.
    assert got["unclosed"].statements == ()
    assert got["unclosed"].notes == got["nested"].notes
    assert (
        stat(result, "robots_std/page/cut") == 5
    )  # lines, wide, long, nested, unclosed
    # /long and /ctrl say nofollow: their links were dropped, the line escaped.
    assert stat(result, "robots_std/dropped/nofollow-header") == 2
    assert "/never" not in served(hostile)
    ctrl = next(
        m for m in drop_lines(result, "Forbidden by page directive") if "ctrl" in m
    )
    assert "\\x1b]0;pwn\\x07" in ctrl
    assert "\x1b" not in ctrl
    assert "\x07" not in ctrl
    long_line = next(
        m for m in drop_lines(result, "Forbidden by page directive") if "/long>" in m
    )
    assert len(long_line) < 400


@deferred_f_from_coro_f
async def test_a_header_line_over_twisteds_limit_fails_the_download_not_the_crawl(
    hostile: HostileServer,
) -> None:
    hostile.add_route("/robots.txt", Reply(200, {}, ROBOTS))
    hostile.add_route(
        "/huge",
        Lines(
            ((b"Content-Type", b"text/html"), (b"X-Robots-Tag", b"n" * 100_000)), html()
        ),
    )
    hostile.add_route("/ok", Reply(200, HTML, html()))
    result = await run_crawl(
        [hostile.url("/huge"), hostile.url("/ok")],
        settings(ROBOTS_STD_PAGE_DIRECTIVES="obey"),
    )
    assert_no_errors(result)
    # Twisted's HTTP/1.1 client refuses a header line over 16 KiB: the download
    # fails (the errback gets it), and the other pages go on.
    assert [url.rsplit("/", 1)[1] for url in result.responses] == ["ok"]
    assert len(result.failures) == 1
    assert not any("Traceback" in m for m in result.messages())
