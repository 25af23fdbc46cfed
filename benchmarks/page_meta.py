"""What reading page-level robots directives costs per HTML response (issue 25).

With ``ROBOTS_STD_PAGE_DIRECTIVES`` ``"tag"`` or ``"obey"``, the downloader
middleware reads every response's ``X-Robots-Tag`` lines and, for HTML, the robots
meta tags of its ``<head>`` (lxml's parser fed the body in chunks until the head
ends; ``scrapy_robots_std.pagehead``). This measures that step, as the middleware
runs it (``PageReader.read``: headers, the head, the directives, the stats and the
meta key), on Scrapy ``HtmlResponse`` objects of several shapes, built before the
clock starts. For comparison it also times what a spider's own selector costs for
the same tags: ``response.xpath("/html/head/meta[@name]")`` on a fresh response
(parsel parses the whole body: "cold") and on one whose selector is built already
("warm", what the query adds when the spider uses selectors anyway). With
``"off"`` (the default) the middleware does none of this: one attribute test.

Usage (from the repository root)::

    .venv/bin/python benchmarks/page_meta.py [--repeats 5] [--responses 100]
        [--markdown benchmarks/RESULTS.md]

About 2 minutes with the defaults (most of it the spider's cold selectors).

The pages are synthetic, shaped like common ones (see ``SHAPES``): no network.
"""

from __future__ import annotations

import argparse
import gc
import os
import platform
import sys
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any
from unittest import mock

REPO_ROOT = Path(__file__).resolve().parent.parent
if str(REPO_ROOT) not in sys.path:
    sys.path.insert(0, str(REPO_ROOT))

from scrapy import Request
from scrapy.http import HtmlResponse

from scrapy_robots_std.config import Config
from scrapy_robots_std.pagehead import HeadReader
from scrapy_robots_std.pagerules import meta_filter
from scrapy_robots_std.scrapy.page import PageReader
from scrapy_robots_std.scrapy.report import Report

if TYPE_CHECKING:
    from collections.abc import Callable

BEGIN = "<!-- page_meta.py: begin -->"
END = "<!-- page_meta.py: end -->"
TOKEN = "BenchBot"
#: responses whose selectors are built at once for the "warm" timing
_WARM_BATCH = 10
#: the load average when the run started (filled in by main)
LOAD_BEFORE: list[float] = []


def _head(extra_bytes: int, robots: bool) -> str:
    metas = [
        '<meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        '<meta name="description" content="' + "A page about things. " * 8 + '">',
        *(
            f'<meta property="og:{name}" content="{name} of the page">'
            for name in ("title", "type", "url", "image", "description")
        ),
        '<link rel="canonical" href="https://example.com/articles/page">',
        *(f'<link rel="stylesheet" href="/static/css/{n}.css">' for n in range(8)),
        *(f'<script src="/static/js/{n}.js" defer></script>' for n in range(4)),
        '<script type="application/ld+json">{"@context": "https://schema.org", '
        '"@type": "Article", "headline": "' + "x" * 800 + '"}</script>',
    ]
    if robots:
        metas.insert(3, '<meta name="robots" content="noindex, nofollow">')
    filler = (
        f"<style>{'.c{color:red}' * (extra_bytes // 12)}</style>" if extra_bytes else ""
    )
    return f"<head><title>A page</title>{''.join(metas)}{filler}</head>"


def _body(size: int) -> str:
    block = (
        '<div class="p"><p>Some text of the article <a href="/x">a link</a>.</p></div>'
    )
    return "<body>" + block * (size // len(block)) + "</body>"


#: name -> (head filler bytes, body bytes, a robots meta tag, X-Robots-Tag value)
SHAPES: dict[str, tuple[int, int, bool, str | None]] = {
    "small page": (0, 10_000, False, None),
    "article, meta robots": (0, 60_000, True, None),
    "article, X-Robots-Tag": (0, 60_000, False, "noindex, noai"),
    "large page, meta robots": (0, 1_000_000, True, None),
    "heavy head (inline CSS), meta robots": (36_000, 100_000, True, None),
    "head past the bound (inline CSS)": (200_000, 10_000, True, None),
}


def head_bytes(shape: tuple[int, int, bool, str | None]) -> int:
    return len(_head(shape[0], shape[2]).encode())


def responses(
    shape: tuple[int, int, bool, str | None], count: int
) -> list[HtmlResponse]:
    extra, body_size, robots, header = shape
    body = (
        f"<!doctype html><html>{_head(extra, robots)}{_body(body_size)}</html>".encode()
    )
    headers = {"Content-Type": "text/html; charset=utf-8"}
    if header is not None:
        headers["X-Robots-Tag"] = header
    return [
        HtmlResponse(
            "https://example.com/articles/page",
            body=body,
            headers=headers,
            request=Request("https://example.com/articles/page"),
        )
        for _ in range(count)
    ]


class _Stats:
    """What Scrapy's MemoryStatsCollector does for ``inc_value``: a dict update."""

    def __init__(self) -> None:
        self.values: dict[str, int] = {}

    def inc_value(self, key: str, count: int = 1, start: int = 0) -> None:
        self.values[key] = self.values.setdefault(key, start) + count


def reader() -> PageReader:
    crawler: Any = mock.Mock()
    crawler.stats = _Stats()
    config = Config.from_settings(_settings())
    built = PageReader.build(crawler, config, lambda _: TOKEN, None, Report(5))
    assert built is not None
    return built


def _settings() -> Any:
    from scrapy.settings import Settings

    return Settings({"ROBOTS_STD_PAGE_DIRECTIVES": "obey"})


def per_response(
    run: Callable[[HtmlResponse], object],
    batch: list[HtmlResponse],
    *,
    collect: bool = False,
) -> float:
    """Microseconds per response for one pass over ``batch``, emptying it: each
    response is let go once used. ``collect``: run the garbage collector after
    each, outside the timing (a response and its selector refer to each other, so
    a parsed 1 MB page, tens of MB, waits for the collector)."""
    count, total = len(batch), 0.0
    while batch:
        response = batch.pop()
        started = time.perf_counter()
        run(response)
        total += time.perf_counter() - started
        if collect:
            del response
            gc.collect()
    return total / count * 1e6


#: page, its bytes, its head's bytes, then microseconds: PageReader.read, the head
#: alone, the spider's xpath cold and warm
Row = tuple[str, int, int, float, float, float, float]


def measure(repeats: int, count: int) -> list[Row]:
    page = reader()
    heads = HeadReader(meta_filter(TOKEN))
    rows: list[Row] = []
    for name, shape in SHAPES.items():
        best: dict[str, float] = {}
        for _ in range(repeats):
            for label, run in (
                ("read", lambda r: page.read(r.request, r)),
                ("head", lambda r: heads.read(r.body)),
                ("xpath-cold", lambda r: r.xpath("/html/head/meta[@name]")),
            ):
                batch = responses(shape, count)
                timed = per_response(run, batch, collect=label == "xpath-cold")
                best[label] = min(best.get(label, 1e18), timed)
            # A few at a time: each holds its parsed tree until it is measured.
            for _ in range(0, count, _WARM_BATCH):
                warm = responses(shape, min(count, _WARM_BATCH))
                for response in warm:
                    response.selector  # noqa: B018 -- built before the clock starts
                timed = per_response(lambda r: r.xpath("/html/head/meta[@name]"), warm)
                best["xpath-warm"] = min(best.get("xpath-warm", 1e18), timed)
                gc.collect()
        size = len(responses(shape, 1)[0].body)
        rows.append(
            (
                name,
                size,
                head_bytes(shape),
                best["read"],
                best["head"],
                best["xpath-cold"],
                best["xpath-warm"],
            )
        )
    return rows


def report(rows: list[Row], argv: list[str]) -> str:
    command = " ".join([".venv/bin/python benchmarks/page_meta.py", *argv])
    load = ", ".join(f"{x:.2f}" for x in LOAD_BEFORE)
    lines = [
        BEGIN,
        "## Page-level robots directives (`benchmarks/page_meta.py`)",
        "",
        (
            f"Date: {datetime.now(UTC):%Y-%m-%d %H:%M} UTC. Command (from "
            f"the repository root): `{command}`"
        ),
        "",
        (
            f"* machine: {platform.platform()}; cpu_count {os.cpu_count()}; python "
            f"{platform.python_version()}; load average before: {load}"
        ),
        (
            "* microseconds per HTML response, best of the repeats' means;"
            " `PageReader.read` is what `ROBOTS_STD_PAGE_DIRECTIVES` `tag` / `obey`"
            " adds to each response; `off` adds nothing"
        ),
        "",
        (
            "| page | bytes | head bytes | `PageReader.read` | of which the head"
            " (lxml) | spider's `xpath`, cold | spider's `xpath`, warm |"
        ),
        "| :--- | ---: | ---: | ---: | ---: | ---: | ---: |",
        *(
            f"| {name} | {size:,} | {head_size:,} | {read:,.0f} | {head:,.0f} | "
            f"{cold:,.0f} | {warm:,.1f} |"
            for name, size, head_size, read, head, cold, warm in rows
        ),
        "",
        END,
    ]
    return "\n".join(lines) + "\n"


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--responses", type=int, default=100, help="per pass")
    parser.add_argument("--markdown", type=Path, default=None)
    args = parser.parse_args()
    LOAD_BEFORE[:] = os.getloadavg()
    rows = measure(max(1, min(args.repeats, 100)), max(1, min(args.responses, 10_000)))
    text = report(rows, sys.argv[1:])
    print(text)
    if args.markdown is not None:
        from benchmarks.machine import write_section

        write_section(args.markdown, text, BEGIN, END)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
