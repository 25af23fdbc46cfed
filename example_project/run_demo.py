"""Run the ``demo`` spider against a small local site and show what robots.txt did.

From the repository root (no internet needed)::

    .venv/bin/python example_project/run_demo.py            # summary only
    .venv/bin/python example_project/run_demo.py --verbose  # with Scrapy's log

It serves a demo site on 127.0.0.1 (a free port, in a thread), crawls it with the
project settings (``ROBOTSTXT_PARSER = "scrapy_robots_std.StdRobotParser"``), prints
which pages the site actually served, which ones robots.txt kept the spider away from,
and the ``robotstxt/*`` stats. Exit status 0, or 1 if a disallowed page was fetched.
"""

from __future__ import annotations

import argparse
import os
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from typing_extensions import Self

HERE = Path(__file__).resolve().parent

ROBOTS_TXT = """\
# Everyone else: stay out.
User-agent: *
Disallow: /

# DemoBot (the project's USER_AGENT is "DemoBot/1.0 (+...)"): all but /private/,
# except the press kit (the longest matching rule wins).
User-agent: DemoBot
Disallow: /private/
Allow: /private/press-kit.html

Sitemap: {base}/sitemap.xml
"""

PAGES = {
    "/": ("Home", ["/about.html", "/blog/", "/private/", "/private/press-kit.html"]),
    "/about.html": ("About", ["/", "/private/salaries.html"]),
    "/blog/": ("Blog", ["/blog/first-post.html", "/private/drafts.html"]),
    "/blog/first-post.html": ("First post", ["/blog/"]),
    "/private/": ("Private", ["/private/salaries.html"]),
    "/private/press-kit.html": ("Press kit", ["/"]),
    "/private/salaries.html": ("Salaries", []),
    "/private/drafts.html": ("Drafts", []),
}
#: pages that robots.txt allows DemoBot to fetch
EXPECTED = {
    "/",
    "/about.html",
    "/blog/",
    "/blog/first-post.html",
    "/private/press-kit.html",
}


def _page(title: str, links: list[str]) -> bytes:
    items = "".join(f'<li><a href="{href}">{href}</a></li>' for href in links)
    return f"<html><head><title>{title}</title></head><body><ul>{items}</ul></body></html>".encode()


class DemoSite:
    """The demo site: a stdlib ThreadingHTTPServer on 127.0.0.1, in a thread."""

    def __init__(self) -> None:
        self.served: list[str] = []
        site = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                site.served.append(self.path)
                if self.path == "/robots.txt":
                    body = ROBOTS_TXT.format(base=site.base_url).encode()
                    status, content_type = 200, "text/plain; charset=utf-8"
                elif self.path in PAGES:
                    body = _page(*PAGES[self.path])
                    status, content_type = 200, "text/html; charset=utf-8"
                else:
                    body, status, content_type = b"not found", 404, "text/plain"
                self.send_response(status)
                self.send_header("Content-Type", content_type)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True
        self.base_url = f"http://127.0.0.1:{self._httpd.server_address[1]}"
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)

    def __enter__(self) -> Self:
        self._thread.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join()


def _make_importable() -> None:
    """Find the project package, and this checkout's scrapy_robots_std if not installed."""
    if str(HERE) not in sys.path:
        sys.path.insert(0, str(HERE))
    try:
        import scrapy_robots_std  # noqa: F401
    except ImportError:
        sys.path.append(str(HERE.parent))
    os.environ.setdefault("SCRAPY_SETTINGS_MODULE", "example_project.settings")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "-v", "--verbose", action="store_true", help="show Scrapy's log"
    )
    args = parser.parse_args(argv)

    _make_importable()
    from scrapy.crawler import CrawlerProcess
    from scrapy.utils.project import get_project_settings

    settings = get_project_settings()
    settings.setdict(
        {
            "DOWNLOAD_DELAY": 0,  # a local site: no need to be slow
            "LOG_LEVEL": "DEBUG" if args.verbose else "WARNING",
            "TELNETCONSOLE_ENABLED": False,
            "REMOTE_CONTROL_ENABLED": False,
        },
        priority="cmdline",
    )

    with DemoSite() as site:
        process = CrawlerProcess(settings)
        crawler = process.create_crawler("demo")
        process.crawl(crawler, start_url=f"{site.base_url}/")
        process.start()

    spider: Any = crawler.spider
    served = [path for path in site.served if path != "/robots.txt"]
    print(
        f"Demo site: {site.base_url}  (robots.txt parser: {settings['ROBOTSTXT_PARSER']})"
    )
    print("\nrobots.txt:")
    print(
        "".join(
            f"  | {line}\n"
            for line in ROBOTS_TXT.format(base=site.base_url).splitlines()
        )
    )
    print("Pages the site served to the spider:")
    for path in served:
        print(f"  {path}")
    print("\nPages robots.txt kept the spider away from:")
    for url in spider.refused:
        print(f"  {url.removeprefix(site.base_url)}")
    assert crawler.stats is not None
    stats = crawler.stats.get_stats()
    print("\nStats:")
    for key in sorted(stats):
        if key.startswith("robotstxt/"):
            print(f"  {key}: {stats[key]}")

    if set(served) != EXPECTED:
        print(
            f"\nUNEXPECTED: served {sorted(set(served))}, expected {sorted(EXPECTED)}"
        )
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
