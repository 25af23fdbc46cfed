"""Crawl a local site of several origins with the ``demo`` spider; show what robots.txt did.

From the repository root (no internet needed)::

    bash scripts/demo.sh                                   # creates .venv if needed
    .venv/bin/python example_project/run_demo.py            # the same, with .venv ready
    .venv/bin/python example_project/run_demo.py --verbose  # with Scrapy's log (INFO)
    .venv/bin/python example_project/run_demo.py --serve    # only serve the site

It starts seven origins on 127.0.0.1, one port each (a different port is a different
origin, with its own robots.txt), each a stdlib HTTP server in a daemon thread. Their
robots.txt files answer in seven different ways: rules, a 404, a 503, a redirect to
another origin, no restrictions, a slow answer, and usage preferences (AI training:
``Content-Usage`` / ``Content-Signal`` lines, and a ``Content-Usage`` response header
on one page). Then it crawls the site with the
project's settings (``example_project/settings.py``: ``ADDONS =
{"scrapy_robots_std.Addon": 0}``) and prints what the middleware logged, which pages
each origin served and which ones the spider was kept away from, and the stats.

The crawl writes an audit file (``ROBOTS_STD_AUDIT_PATH``, JSON Lines, see
docs/audit.md): by default ``example_project/output/robots-audit.jsonl``, emptied
at the start of each run (``--audit PATH`` to choose another file).

It exits 0 when each origin served exactly the pages its robots.txt allows DemoBot to
fetch (``Page.allowed`` below says which) and the spider was kept away from all the
others; 1 otherwise.

The same crawl with the ``scrapy`` command: start the site with ``--serve``, then,
in another shell, run the command it prints (from ``example_project/``)::

    ../.venv/bin/scrapy crawl demo -a start_urls=http://127.0.0.1:8431/,...
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys
import textwrap
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from scrapy.crawler import Crawler
    from typing_extensions import Self

HERE = Path(__file__).resolve().parent

#: The origins listen on BASE_PORT, BASE_PORT + 1, ... (on free ports if one is taken).
BASE_PORT = 8431
#: How long the "slow" origin takes to answer for its robots.txt.
SLOW_SECONDS = 1.5
#: Where the crawl's audit records go (ROBOTS_STD_AUDIT_PATH) unless --audit says.
AUDIT_PATH = HERE / "output" / "robots-audit.jsonl"


# -- the site ----------------------------------------------------------------------


@dataclass(frozen=True)
class Answer:
    """What the server answers for a file that is not a page."""

    status: int
    body: str = ""
    #: header values may name an origin's URL: "{cdn}/moved-robots.txt"
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0


@dataclass(frozen=True)
class Page:
    """An HTML page. A link is "/path" on the same origin or "name:/path" on another."""

    title: str
    links: tuple[str, ...] = ()
    #: the intended policy: whether DemoBot may fetch this page (checked at the end)
    allowed: bool = True
    #: response headers beside Content-Type (a Content-Usage header, say)
    headers: dict[str, str] = field(default_factory=dict)
    #: a usage-preference drop for the demo's purpose ("search", settings.py):
    #: "before" (robots.txt says no: never sent), "after" (its headers say no: sent,
    #: then dropped), or "" (none)
    usage: str = ""

    @property
    def served(self) -> bool:
        """The page reaches the server."""
        return self.allowed and self.usage != "before"

    @property
    def kept_away(self) -> bool:
        """The spider never gets the page."""
        return not self.allowed or bool(self.usage)


@dataclass(frozen=True)
class Origin:
    name: str
    #: what the demo shows with this origin
    note: str
    files: dict[str, Answer]
    pages: dict[str, Page]


ROBOTS = "text/plain; charset=utf-8"

SITE = (
    Origin(
        "shop",
        "DemoBot's own group applies, not *'s; the longest match allows the press kit",
        files={
            "/robots.txt": Answer(
                200,
                "# Everyone else: stay out.\n"
                "User-agent: *\n"
                "Disallow: /\n"
                "\n"
                "# DemoBot: all but /private/, except the press kit.\n"
                "User-agent: DemoBot\n"
                "Disallow: /private/\n"
                "Allow: /private/press-kit.html\n",
                {"Content-Type": ROBOTS},
            )
        },
        pages={
            "/": Page(
                "Shop",
                (
                    "/products.html",
                    "/private/",
                    "/private/press-kit.html",
                    "blog:/",
                    "status:/uptime.html",
                    "slow:/drafts/sale.html",
                ),
            ),
            "/products.html": Page(
                "Products", ("/", "/private/salaries.html", "cdn:/")
            ),
            "/private/press-kit.html": Page(
                "Press kit", ("/private/drafts.html", "moved:/secret/launch.html")
            ),
            "/private/": Page("Private", allowed=False),
            "/private/salaries.html": Page("Salaries", allowed=False),
            "/private/drafts.html": Page("Drafts", allowed=False),
        },
    ),
    Origin(
        "blog",
        "robots.txt answers 404: no restrictions, whatever its body says",
        files={
            "/robots.txt": Answer(
                404, "User-agent: *\nDisallow: /\n", {"Content-Type": ROBOTS}
            )
        },
        pages={
            "/": Page(
                "Blog",
                (
                    "/posts/hello.html",
                    "/posts/robots.html",
                    "shop:/products.html",
                    "status:/",
                ),
            ),
            "/posts/hello.html": Page("Hello", ("/", "moved:/")),
            "/posts/robots.html": Page(
                "About robots.txt", ("status:/incidents.html", "slow:/")
            ),
        },
    ),
    Origin(
        "status",
        "robots.txt answers 503 every time: unreachable, all disallowed for now",
        files={"/robots.txt": Answer(503, "Service Unavailable\n")},
        pages={
            "/": Page("Status", allowed=False),
            "/uptime.html": Page("Uptime", allowed=False),
            "/incidents.html": Page("Incidents", allowed=False),
            "/history.html": Page("History", allowed=False),
        },
    ),
    Origin(
        "moved",
        "robots.txt redirects to cdn: the file found there holds moved's rules",
        files={
            "/robots.txt": Answer(301, headers={"Location": "{cdn}/moved-robots.txt"})
        },
        pages={
            "/": Page("Moved", ("/about.html", "/secret/")),
            "/about.html": Page("About", ("status:/history.html", "shop:/")),
            "/secret/": Page("Secret", allowed=False),
            "/secret/launch.html": Page("Launch", allowed=False),
        },
    ),
    Origin(
        "cdn",
        "its own robots.txt allows all, /secret/ too; /moved-robots.txt is moved's",
        files={
            "/robots.txt": Answer(
                200, "User-agent: *\nDisallow:\n", {"Content-Type": ROBOTS}
            ),
            "/moved-robots.txt": Answer(
                200, "User-agent: *\nDisallow: /secret/\n", {"Content-Type": ROBOTS}
            ),
        },
        pages={
            "/": Page("CDN", ("/secret/",)),
            "/secret/": Page("Not secret here"),
        },
    ),
    Origin(
        "slow",
        "robots.txt answers late: its requests wait, and the other origins do not",
        files={
            "/robots.txt": Answer(
                200,
                "User-agent: DemoBot\nDisallow: /drafts/\n",
                {"Content-Type": ROBOTS},
                delay=SLOW_SECONDS,
            )
        },
        pages={
            "/": Page("Slow", ("/news.html", "shop:/")),
            "/news.html": Page("News", ("/",)),
            "/drafts/sale.html": Page("Sale (draft)", allowed=False),
        },
    ),
    Origin(
        "media",
        "states AI usage preferences (use, not access); the demo declares the "
        "purpose search and drops on a no",
        files={
            "/robots.txt": Answer(
                200,
                "# Crawl everything; do not train AI on it, except the open data.\n"
                "User-agent: *\n"
                "Allow: /\n"
                "Content-Usage: train-ai=n\n"
                "Content-Usage: /open/ train-ai=y\n"
                "Content-Usage: /archive/ search=n\n"
                "Content-Signal: search=yes, ai-train=no\n",
                {"Content-Type": ROBOTS},
            )
        },
        pages={
            "/": Page(
                "Media",
                (
                    "/open/dataset.html",
                    "/news/today.html",
                    "/archive/old.html",
                    "shop:/",
                ),
            ),
            # Content-Usage: /archive/ search=n: not sent, for the purpose search.
            "/archive/old.html": Page("Archive", ("/",), usage="before"),
            # Content-Usage: /open/ train-ai=y is the longest match here.
            "/open/dataset.html": Page("Open dataset", ("/",)),
            # The header can only make the preference stricter: search=n too.
            "/news/today.html": Page(
                "Today",
                ("/",),
                headers={"Content-Usage": "train-ai=n, search=n"},
                usage="after",
            ),
        },
    ),
)


class DemoSite:
    """One stdlib ThreadingHTTPServer per origin, on 127.0.0.1, each in a daemon thread.

    ``log[name]`` records each request the origin received: (time.time(), path).
    """

    def __init__(self, origins: tuple[Origin, ...]) -> None:
        self.origins = origins
        self.url: dict[str, str] = {}
        self.log: dict[str, list[tuple[float, str]]] = {o.name: [] for o in origins}
        self._servers = self._bind()
        self._threads = [
            threading.Thread(
                target=server.serve_forever,
                kwargs={"poll_interval": 0.05},  # how soon shutdown() is noticed
                daemon=True,
            )
            for server in self._servers
        ]

    def _bind(self) -> list[ThreadingHTTPServer]:
        for base in (BASE_PORT, 0):  # fixed ports keep the output stable; else any
            servers: list[ThreadingHTTPServer] = []
            try:
                for offset, origin in enumerate(self.origins):
                    port = base + offset if base else 0
                    server = ThreadingHTTPServer(
                        ("127.0.0.1", port), self._handler(origin)
                    )
                    server.daemon_threads = True
                    servers.append(server)
            except OSError:
                for server in servers:
                    server.server_close()
                continue
            for origin, server in zip(self.origins, servers, strict=True):
                self.url[origin.name] = f"http://127.0.0.1:{server.server_address[1]}"
            return servers
        raise OSError("cannot listen on 127.0.0.1")

    def _handler(self, origin: Origin) -> type[BaseHTTPRequestHandler]:
        site = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                site.log[origin.name].append((time.time(), self.path))
                answer = site.answer(origin, self.path)
                time.sleep(answer.delay)
                body = answer.body.encode()
                self.send_response(answer.status)
                for name, value in answer.headers.items():
                    self.send_header(name, value.format(**site.url))
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, format: str, *args: Any) -> None:
                pass  # the request log is site.log

        return Handler

    def answer(self, origin: Origin, path: str) -> Answer:
        if path in origin.files:
            return origin.files[path]
        page = origin.pages.get(path)
        if page is None:
            return Answer(404, "Not found\n")
        links = "".join(
            f'<li><a href="{self.link(link)}">{link}</a></li>' for link in page.links
        )
        html = (
            f"<html><head><title>{page.title}</title></head>"
            f"<body><h1>{page.title}</h1><ul>{links}</ul></body></html>"
        )
        headers = {"Content-Type": "text/html; charset=utf-8", **page.headers}
        return Answer(200, html, headers)

    def link(self, link: str) -> str:
        name, sep, path = link.partition(":")
        return f"{self.url[name]}{path}" if sep else link

    def __enter__(self) -> Self:
        for thread in self._threads:
            thread.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        for server in self._servers:
            server.shutdown()
            server.server_close()
        for thread in self._threads:
            thread.join()


def describe(site: DemoSite) -> None:
    print(f"The demo site: {len(site.origins)} origins on 127.0.0.1, one port each")
    for origin in site.origins:
        print(f"\n{origin.name:<7} {site.url[origin.name]}")
        print(f"        {origin.note}")
        for path, answer in origin.files.items():
            how = f"{answer.status}"
            if "Location" in answer.headers:
                how += f" to {answer.headers['Location'].format(**site.url)}"
            if answer.delay:
                how += f" after {answer.delay:g} s"
            print(f"        {path} -> {how}")
            for line in answer.body.splitlines():
                print(f"          | {line}".rstrip())
        for path, page in origin.pages.items():
            for name, value in page.headers.items():
                print(f"        {path} -> 200 with {name}: {value}")
    print()


# -- the crawl ---------------------------------------------------------------------


class Capture(logging.Handler):
    """Keeps every record of one logger, whatever Scrapy's LOG_LEVEL shows."""

    def __init__(self, logger_name: str) -> None:
        super().__init__(logging.DEBUG)
        self.records: list[logging.LogRecord] = []
        logger = logging.getLogger(logger_name)
        logger.setLevel(logging.DEBUG)
        logger.addHandler(self)

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)


def _make_importable() -> None:
    """Find the project package, and this checkout's scrapy_robots_std if not installed."""
    if str(HERE) not in sys.path:
        sys.path.insert(0, str(HERE))
    try:
        import scrapy_robots_std  # noqa: F401
    except ImportError:
        sys.path.append(str(HERE.parent))
    os.environ["SCRAPY_SETTINGS_MODULE"] = "example_project.settings"


def crawl(start_urls: list[str], verbose: bool, audit: Path) -> Crawler:
    """Run the ``demo`` spider with the project settings, as ``scrapy crawl`` would."""
    _make_importable()
    from scrapy.crawler import AsyncCrawlerProcess
    from scrapy.utils.project import get_project_settings

    settings = get_project_settings()
    settings.setdict(
        {
            # Scrapy's download slots are per host, and every origin here is on
            # 127.0.0.1: the project's 1 request at a time, 1 s apart, would make
            # the origins take turns.
            "CONCURRENT_REQUESTS_PER_DOMAIN": 16,
            "DOWNLOAD_DELAY": 0,
            "CLOSESPIDER_TIMEOUT": 20,  # a safety net: the crawl takes about 2 s
            "LOG_LEVEL": "INFO" if verbose else "ERROR",
            "TELNETCONSOLE_ENABLED": False,
            "REMOTE_CONTROL_ENABLED": False,
            "ROBOTS_STD_AUDIT_PATH": str(audit),
        },
        priority="cmdline",
    )
    process = AsyncCrawlerProcess(settings)
    crawler = process.create_crawler("demo")
    process.crawl(crawler, start_urls=",".join(start_urls))
    process.start()
    return crawler


# -- the report --------------------------------------------------------------------


def report(site: DemoSite, crawler: Crawler, captured: Capture) -> list[str]:
    """Print what happened; return the differences from the intended policy."""
    logged = [(r.levelname, r.getMessage()) for r in captured.records]
    drops = [m for _, m in logged if m.startswith("Forbidden by")]
    print("Drops logged by scrapy_robots_std.scrapy.middleware (DEBUG; sorted by URL):")
    for message in sorted(drops):
        print(f"  {message}")
    print("\nIts other log lines, in order (the last one is the summary at close):")
    for level, message in logged:
        if message not in drops:
            indented = message.replace("\n", "\n" + " " * 11)
            print(f"  {level:<8} {indented}")

    spider: Any = crawler.spider
    refused = set(spider.refused)
    problems: list[str] = []
    print("\nWhat each origin served, and what the spider was kept away from:")
    for origin in site.origins:
        base = site.url[origin.name]
        requested = [path for _, path in site.log[origin.name]]
        served = {path for path in requested if path not in origin.files}
        kept_away = {
            url.removeprefix(base) for url in refused if url.startswith(f"{base}/")
        }
        allowed = {path for path, page in origin.pages.items() if page.served}
        disallowed = set(origin.pages) - allowed
        away = {path for path, page in origin.pages.items() if page.kept_away}
        robots = ", ".join(
            f"{path} requested {requested.count(path)}x"
            for path in origin.files
            if path in requested
        )
        print(f"  {origin.name:<7} {base}  ({robots or 'no robots.txt requested'})")
        print(f"    served:    {', '.join(sorted(served)) or '-'}")
        print(f"    kept away: {', '.join(sorted(kept_away)) or '-'}")
        problems += [
            f"{base}{p} was fetched, but is disallowed" for p in served & disallowed
        ]
        problems += [
            f"{base}{p} is not a page of the site" for p in served - set(origin.pages)
        ]
        problems += [
            f"{base}{p} is allowed, but was not fetched" for p in allowed - served
        ]
        problems += [
            f"{base}{p} is disallowed, but the spider was not kept away from it"
            for p in away - kept_away
        ]
        problems += [
            f"{base}{p} reached the spider, but should not have"
            for p in kept_away - away
        ]

    assert crawler.stats is not None
    stats = crawler.stats.get_stats()
    started = stats["start_time"].timestamp()
    print(
        "\nFirst and last page each origin served, in seconds after the crawl started:"
    )
    for origin in site.origins:
        times = [t - started for t, p in site.log[origin.name] if p not in origin.files]
        when = f"{min(times):5.2f} .. {max(times):5.2f}" if times else "   - (none)"
        print(f"  {origin.name:<7} {when}")

    print("\nStats:")
    for key in sorted(stats):
        if key.startswith(("robotstxt/", "robots_std/")):
            varies = "  (a duration: varies)" if key.endswith("seconds") else ""
            print(f"  {key}: {stats[key]}{varies}")
    audit = Path(crawler.settings["ROBOTS_STD_AUDIT_PATH"])
    records = [json.loads(line) for line in audit.read_text().splitlines()]
    kinds = Counter(record["record"] for record in records)
    print(
        f"\nAudit file ({len(records)} records: "
        + ", ".join(f"{n} {kind}" for kind, n in sorted(kinds.items()))
        + f"):\n  {audit}"
    )
    media = site.url["media"]
    for record in records:
        if record["record"] == "robots" and record["origin"].startswith(media):
            print("The media origin's robots.txt, as recorded:")
            print(textwrap.indent(json.dumps(record, indent=2), "  "))
    if stats.get("log_count/ERROR"):
        problems.append(f"{stats['log_count/ERROR']} error(s) logged")
    return problems


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument(
        "-v", "--verbose", action="store_true", help="also show Scrapy's log (INFO)"
    )
    parser.add_argument(
        "--serve",
        action="store_true",
        help="only serve the site, until Ctrl-C, for a crawl with `scrapy crawl demo`",
    )
    parser.add_argument(
        "--audit",
        type=Path,
        default=AUDIT_PATH,
        help=f"the audit file, emptied first (default: {AUDIT_PATH})",
    )
    args = parser.parse_args(argv)

    captured = Capture("scrapy_robots_std.scrapy.middleware")
    with DemoSite(SITE) as site:
        describe(site)
        start_urls = [f"{site.url[origin.name]}/" for origin in site.origins]
        if args.serve:
            print("Serving until Ctrl-C. Crawl it from example_project/ with:\n")
            print(
                f"  ../.venv/bin/scrapy crawl demo -a start_urls={','.join(start_urls)}"
            )
            try:
                threading.Event().wait()
            except KeyboardInterrupt:
                return 0
        print(
            f"Crawling from {len(start_urls)} start pages, one per origin...\n",
            flush=True,
        )
        audit = args.audit.resolve()
        audit.unlink(missing_ok=True)  # the file is appended to: this run only
        print(f"Audit records go to {audit}\n", flush=True)
        crawler = crawl(start_urls, args.verbose, audit)

    problems = report(site, crawler, captured)
    if problems:
        print("\nUNEXPECTED:")
        for problem in sorted(problems):
            print(f"  {problem}")
        return 1
    print("\nOK: every page fetched was allowed; every disallowed page was kept away.")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
