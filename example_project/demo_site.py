"""The demo's local site: seven origins on 127.0.0.1, and what each page should get.

:data:`SITE` describes the origins, one port each (a different port is a different
origin, with its own robots.txt). Their robots.txt files answer in seven different
ways: rules, a 404, a 503, a redirect to another origin, no restrictions, a slow
answer, and usage preferences (AI training: ``Content-Usage`` / ``Content-Signal``
lines, and a ``Content-Usage`` response header on one page). Each :class:`Page`
states the intended policy: whether DemoBot may fetch it, and whether a usage
preference drops it for the demo's purpose, ``search``.

:class:`DemoSite` serves :data:`SITE`, a stdlib HTTP server per origin in a daemon
thread, and logs each request. ``run_demo.py`` crawls it and prints what happened;
``tests/test_demo.py`` runs the same crawl and checks it against the policy
(:func:`outcome`).
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import TYPE_CHECKING, Any, Final

import page_origin

if TYPE_CHECKING:
    from collections.abc import Iterable
    from typing import Self

#: The origins listen on BASE_PORT, BASE_PORT + 1, ... (on free ports if one is taken).
BASE_PORT = 8431
#: How long the "slow" origin takes to answer for its robots.txt.
SLOW_SECONDS = 1.5


#: TDMRep's file: fetched from every origin when a usage purpose is declared
TDMREP_PATH: Final = "/.well-known/tdmrep.json"


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
    #: paths served as files that the spider is kept away from (the press
    #: origin's usage drops); a page says it with ``Page.kept_away``
    refused: frozenset[str] = frozenset()


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
            ),
            # TDMRep (issue 25): text and data mining reserved but for /open/.
            # Fetched because a purpose is declared; search is not affected, so
            # it decides nothing here: see response.meta["robots_std_tdm"].
            TDMREP_PATH: Answer(
                200,
                '[{"location": "/open/", "tdm-reservation": 0},\n'
                ' {"location": "/", "tdm-reservation": 1,\n'
                '  "tdm-policy": "https://media.example/tdm-licence"}]\n',
                {"Content-Type": "application/json"},
            ),
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
    Origin(
        page_origin.NAME,
        page_origin.NOTE,
        files={
            path: Answer(status, body, headers)
            for path, (status, headers, body) in page_origin.ROUTES.items()
        },
        pages={},
        refused=page_origin.KEPT_AWAY,
    ),
)


class DemoSite:
    """One stdlib ThreadingHTTPServer per origin, on 127.0.0.1, each in a daemon thread.

    ``log[name]`` records each request the origin received: (time.time(), path).
    """

    def __init__(self, origins: tuple[Origin, ...], base_port: int = BASE_PORT) -> None:
        self.origins = origins
        self.base_port = base_port
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
        # fixed ports keep the output stable; else any
        for base in dict.fromkeys((self.base_port, 0)):
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


def outcome(
    site: DemoSite, origin: Origin, refused: Iterable[str]
) -> tuple[set[str], set[str]]:
    """The paths ``origin`` served (pages only, not its robots.txt files), and the
    paths of the requests the spider was kept away from (``refused``: URLs)."""
    base = site.url[origin.name]
    served = {
        path
        for _, path in site.log[origin.name]
        if path not in origin.files and path != TDMREP_PATH
    }
    kept_away = {
        url.removeprefix(base) for url in refused if url.startswith(f"{base}/")
    }
    return served, kept_away
