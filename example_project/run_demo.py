"""Crawl a local site of several origins with the ``demo`` spider; show what robots.txt did.

From the repository root (no internet needed)::

    bash scripts/demo.sh                                   # creates .venv if needed
    .venv/bin/python example_project/run_demo.py            # the same, with .venv ready
    .venv/bin/python example_project/run_demo.py --verbose  # with Scrapy's log (INFO)
    .venv/bin/python example_project/run_demo.py --serve    # only serve the site

It serves the site of ``demo_site.py`` (eight origins on 127.0.0.1, whose robots.txt
files answer in seven different ways), crawls it with the project's settings
(``ADDONS = {"scrapy_robots_std.Addon": 0}``) and prints what the middleware logged,
what each origin served and what the spider was kept away from, the stats, and the
audit file (``--audit PATH``; by default ``example_project/output/robots-audit.jsonl``,
emptied first). ``tests/test_demo.py`` runs the same crawl and checks it against the
policy each page of ``demo_site.py`` states. With ``--serve``, crawl the site with the
``scrapy crawl demo ...`` command it prints (from ``example_project/``).
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys
import textwrap
import threading
from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING, Any

from demo_site import SITE, DemoSite, outcome

if TYPE_CHECKING:
    from scrapy.crawler import Crawler

HERE = Path(__file__).resolve().parent
#: Where the crawl's audit records go (ROBOTS_STD_AUDIT_PATH) unless --audit says.
AUDIT_PATH = HERE / "output" / "robots-audit.jsonl"
MW_LOGGER = "scrapy_robots_std.scrapy.middleware"


def describe(site: DemoSite) -> None:
    print(f"The demo site: {len(site.origins)} origins on 127.0.0.1, one port each")
    for origin in site.origins:
        print(f"\n{origin.name:<7} {site.url[origin.name]}\n        {origin.note}")
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


def demo_settings(audit: Path, verbose: bool = False) -> dict[str, Any]:
    """The demo's settings on top of the project's."""
    return {  # the origins share one host, 127.0.0.1, so one download slot:
        "CONCURRENT_REQUESTS_PER_DOMAIN": 16,  # not the project's 1 at a time
        "DOWNLOAD_DELAY": 0,
        "CLOSESPIDER_TIMEOUT": 20,  # a safety net: the crawl takes about 2 s
        "LOG_LEVEL": "INFO" if verbose else "ERROR",
        "TELNETCONSOLE_ENABLED": False,
        "REMOTE_CONTROL_ENABLED": False,
        "ROBOTS_STD_AUDIT_PATH": str(audit),
    }


def crawl(start_urls: list[str], verbose: bool, audit: Path) -> Crawler:
    """Run the ``demo`` spider with the project settings, as ``scrapy crawl`` would."""
    try:  # this checkout's scrapy_robots_std, if not installed
        import scrapy_robots_std  # noqa: F401
    except ImportError:
        sys.path.append(str(HERE.parent))
    os.environ["SCRAPY_SETTINGS_MODULE"] = "example_project.settings"
    from scrapy.crawler import AsyncCrawlerProcess
    from scrapy.utils.project import get_project_settings

    settings = get_project_settings()
    settings.setdict(demo_settings(audit, verbose), priority="cmdline")
    process = AsyncCrawlerProcess(settings)
    crawler = process.create_crawler("demo")
    process.crawl(crawler, start_urls=",".join(start_urls))
    process.start()
    return crawler


def report(site: DemoSite, crawler: Crawler, captured: Capture) -> None:
    logged = [(r.levelname, r.getMessage()) for r in captured.records]
    drops = [m for _, m in logged if m.startswith("Forbidden by")]
    print(f"Drops logged by {MW_LOGGER} (DEBUG; sorted by URL):")
    for message in sorted(drops):
        print(f"  {message}")
    print("\nIts other log lines, in order (the last one is the summary at close):")
    for level, message in logged:
        if message not in drops:
            print(f"  {level:<8} " + message.replace("\n", "\n" + " " * 11))

    assert crawler.stats is not None
    stats = crawler.stats.get_stats()
    started = stats["start_time"].timestamp()
    spider: Any = crawler.spider
    print("\nWhat each origin served, and what the spider was kept away from:")
    for origin in site.origins:
        base = site.url[origin.name]
        requested = [path for _, path in site.log[origin.name]]
        served, kept_away = outcome(site, origin, spider.refused)
        robots = ", ".join(
            f"{path} requested {requested.count(path)}x"
            for path in origin.files
            if path in requested
        )
        print(f"  {origin.name:<7} {base}  ({robots or 'no robots.txt requested'})")
        print(f"    served:    {', '.join(sorted(served)) or '-'}")
        print(f"    kept away: {', '.join(sorted(kept_away)) or '-'}")
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
    summary = ", ".join(f"{n} {kind}" for kind, n in sorted(kinds.items()))
    print(f"\nAudit file ({len(records)} records: {summary}):\n  {audit}")
    for record in records:
        if record["record"] == "robots" and record["origin"].startswith(
            site.url["media"]
        ):
            print("The media origin's robots.txt, as recorded:")
            print(textwrap.indent(json.dumps(record, indent=2), "  "))
    fetched = sum(len(outcome(site, o, ())[0]) for o in site.origins)
    print(f"\nDone: {fetched} pages fetched, {len(spider.refused)} requests kept away.")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    add = parser.add_argument
    add("-v", "--verbose", action="store_true", help="also show Scrapy's log (INFO)")
    add("--serve", action="store_true", help="only serve the site, until Ctrl-C")
    add("--audit", type=Path, default=AUDIT_PATH, help="the audit file, emptied first")
    args = parser.parse_args(argv)

    captured = Capture(MW_LOGGER)
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
        print(f"Crawling from {len(start_urls)} start pages, one per origin...\n")
        audit = args.audit.resolve()
        audit.unlink(missing_ok=True)  # the file is appended to: this run only
        print(f"Audit records go to {audit}\n", flush=True)
        crawler = crawl(start_urls, args.verbose, audit)
    report(site, crawler, captured)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
