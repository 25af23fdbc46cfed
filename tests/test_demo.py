"""The demo (example_project/run_demo.py): its crawl keeps to the policy its site states.

``test_the_demo_crawl_keeps_to_each_pages_policy`` runs the demo's crawl in this
process, on loopback, with the project's settings and the demo's own: every origin
serves exactly the pages its robots.txt allows DemoBot to fetch (``Page.allowed`` in
example_project/demo_site.py, less those a usage preference drops before sending),
and the spider is kept away from exactly the others. The demo script itself runs
once more as README says, in a process of its own, and prints its report.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from scrapy.utils.defer import deferred_f_from_coro_f

import scrapy_robots_std
from tests.helpers.crawl import MW_LOGGER, run_crawl
from tests.helpers.processes import ROOT

if TYPE_CHECKING:
    from types import ModuleType

EXAMPLE = ROOT / "example_project"
#: The drop lines of the press origin's /ai/ links: each newer source decides one.
NEW_SOURCE_DROPS = (
    (
        r"/licensed/photo\.html>: disallow for ai-use by line 2 "
        r'"Content-Usage: /licensed/ ai-use=n" in http://127\.0\.0\.1:\d+/robots\.txt'
    ),
    (
        r"/reserved/essay\.html>: disallow for train-ai by tdmrep\.json rule 0 "
        r"\(location '/reserved/'\) \"tdm-reservation: 1\" in "
        r"http://127\.0\.0\.1:\d+/\.well-known/tdmrep\.json"
    ),
    r'/noai-header\.html>: disallow for train-ai by header "X-Robots-Tag: noai"',
    r'/noai-meta\.html>: disallow for train-ai by meta tag "robots: noai"',
    r'/tdm-header\.html>: disallow for train-ai by header "tdm-reservation: 1"',
    r'/tdm-meta\.html>: disallow for train-ai by meta tag "tdm-reservation: 1"',
)


@pytest.fixture
def demo(monkeypatch: pytest.MonkeyPatch) -> tuple[ModuleType, ModuleType, Any]:
    """``run_demo``, ``demo_site`` and the project's settings module, imported as the
    script imports them (example_project/ first on ``sys.path``)."""
    import importlib

    monkeypatch.syspath_prepend(str(EXAMPLE))
    return (
        importlib.import_module("run_demo"),
        importlib.import_module("demo_site"),
        importlib.import_module("example_project.settings"),
    )


@pytest.mark.crawl
@deferred_f_from_coro_f
async def test_the_demo_crawl_keeps_to_each_pages_policy(
    demo: tuple[ModuleType, ModuleType, Any], tmp_path: Path
) -> None:
    run_demo, demo_site, project = demo
    from example_project.spiders.demo import DemoSpider

    audit = tmp_path / "robots-audit.jsonl"
    settings = {name: getattr(project, name) for name in dir(project) if name.isupper()}
    settings.update(run_demo.demo_settings(audit))
    with demo_site.DemoSite(demo_site.SITE, base_port=0) as site:
        urls = [f"{site.url[origin.name]}/" for origin in site.origins]
        result = await run_crawl(
            settings=settings,
            spider_cls=DemoSpider,
            spider_kwargs={"start_urls": ",".join(urls)},
        )
    spider: Any = result.spider

    # The self-check the demo made of its own crawl.
    for origin in site.origins:
        served, kept_away = demo_site.outcome(site, origin, spider.refused)
        allowed = {path for path, page in origin.pages.items() if page.served}
        away = {path for path, page in origin.pages.items() if page.kept_away}
        away |= origin.refused
        assert served == allowed, origin.name
        assert kept_away == away, origin.name
    assert "log_count/ERROR" not in result.stats
    import page_origin  # example_project/ is on the path (the fixture above)

    asked = [path for _, path in site.log[page_origin.NAME]]
    assert page_origin.check(site.url[page_origin.NAME], asked, result.stats) == []

    stats = result.stats
    assert stats["robotstxt/forbidden"] == 10
    assert stats["robots_std/dropped/unreachable"] == 4
    # the demo declares the purpose "search" and drops on a no: once by a robots.txt
    # line (not sent), once by a response header (after download); the press
    # origin's /ai/ links declare AI purposes: a vocab-08 ai-use line before the
    # first group (not sent), and each newer source (page_origin.EXPECTED_STATS)
    assert stats["robots_std/dropped/usage"] == 2
    assert stats["robots_std/dropped/usage-header"] == 1
    drops = "\n".join(result.messages(logger_prefix=MW_LOGGER))
    for line in NEW_SOURCE_DROPS:
        assert re.search(line, drops), line
    assert re.search(
        r"Forbidden by usage preference: <GET http://127\.0\.0\.1:\d+/archive/old\.html>"
        r': disallow for search .* by line 6 "Content-Usage: /archive/ search=n"',
        drops,
    )
    # the moved origin's drops name the file its robots.txt redirected to
    assert re.search(
        r"/secret/launch\.html> by http://127\.0\.0\.1:\d+/moved-robots\.txt line 2 "
        r'"Disallow: /secret/"',
        drops,
    )
    # the audit file: one robots record per origin, one tdmrep record per origin
    # (the demo declares a purpose, so TDMRep's file is fetched), one origin record
    # each, close
    records = [json.loads(line) for line in audit.read_text().splitlines()]
    assert Counter(r["record"] for r in records) == {
        "close": 1,
        "origin": 8,
        "robots": 8,
        "tdmrep": 8,
    }
    # The media origin's tdmrep.json: fetched once, exposed on its pages; its
    # reservation does not speak to the demo's purpose (search).
    [tdm] = [
        r
        for r in records
        if r["record"] == "tdmrep" and r["origin"] == site.url["media"]
    ]
    assert (tdm["status"], tdm["rules"], tdm["reserved_rules"]) == (200, 2, 1)
    # The press origin's tdmrep.json reserves /reserved/ only: it decides one drop
    # (page_origin.EXPECTED_STATS) and no response of the others.
    assert result.stats["robots_std/tdm/file/fetched"] == 2
    assert result.stats["robots_std/tdm/from/file"] == 3
    [media] = [
        r
        for r in records
        if r["record"] == "robots" and r["origin"] == site.url["media"]
    ]
    assert media["usage"]["content_usage"] == 3  # the media origin's preferences


def test_the_demo_script_runs_as_readme_says(tmp_path: Path) -> None:
    """``example_project/run_demo.py`` runs from the repository root, exits 0 and
    prints its report."""
    package_root = str(Path(scrapy_robots_std.__file__).resolve().parent.parent)
    env = {**os.environ, "PYTHONPATH": package_root}
    env.pop("SCRAPY_SETTINGS_MODULE", None)
    result = subprocess.run(
        [
            sys.executable,
            str(EXAMPLE / "run_demo.py"),
            "--audit",
            str(tmp_path / "audit.jsonl"),
        ],
        capture_output=True,
        text=True,
        env=env,
        cwd=ROOT,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "robotstxt/forbidden: 10" in result.stdout
    assert "robots_std/dropped/unreachable: 4" in result.stdout
    assert (
        "Audit file (25 records: 1 close, 8 origin, 8 robots, 8 tdmrep)"
        in result.stdout
    )
    assert "robots_std/tdm/file/fetched: 2" in result.stdout
    assert '"content_usage": 3' in result.stdout
    assert "robots_std/dropped/usage: 2" in result.stdout
    assert "robots_std/dropped/usage-header: 1" in result.stdout
    for line in NEW_SOURCE_DROPS:
        assert re.search(line, result.stdout), line
    assert re.search(
        r"Forbidden by usage preference: <GET http://127\.0\.0\.1:\d+/archive/old\.html>"
        r': disallow for search .* by line 6 "Content-Usage: /archive/ search=n"',
        result.stdout,
    )
    assert re.search(
        r"/secret/launch\.html> by http://127\.0\.0\.1:\d+/moved-robots\.txt line 2 "
        r'"Disallow: /secret/"',
        result.stdout,
    )
    assert "Done: 15 pages fetched, 18 requests kept away." in result.stdout
